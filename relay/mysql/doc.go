// Package mysql is the MySQL / MariaDB relay: the session the daemon hands
// a client connection to (Protocol.Serve). The server speaks first, so a
// session goes:
//
//   - start: the server dialled, its greeting read and its capabilities
//     rewritten in place (wire/mysql's DefaultStrip: MySQL 8's zstd
//     compression, MariaDB's COM_MULTI, and the server's
//     CLIENT_SSL, which is offered again when sqlfw has a certificate for
//     the client leg: tls.go), then forwarded; the client's SSL request and
//     TLS handshake when it asks for them, its handshake response read
//     (user, default schema, the program_name connection attribute) as the
//     server reads it (handshake.go: with the client's flags within those
//     the greeting offered, a quoted user without its quotes), the
//     client admitted against the connection limits (only now, so a health
//     probe holds no slot), the server leg's own TLS (upstream_tls), and
//     the response forwarded with CLIENT_SSL saying what the server leg
//     is. A client that asks for TLS where none is configured, or for a
//     compression the greeting did not offer, gets an ERR and is closed
//     (zlib compression the server offers is followed on both legs from
//     the login's OK on: compress.go); so does a packet before
//     login whose header claims more than sqlfw holds then (64 KiB and the
//     rest of a handshake response): it gets the server's own answer to a
//     packet too large (ER_NET_PACKET_TOO_LARGE, 1153, SQLSTATE 08S01) as
//     soon as the header is read, as after login a command beyond
//     max_message_bytes does;
//   - authentication: every round (mysql_native_password,
//     caching_sha2_password's fast and full paths, client_ed25519, auth
//     switches) passes through untouched up to the server's OK or ERR
//     (but a clear-text password on a clear server leg: clearpw.go)
//     (renumbered when only one leg carried an SSL request); a command the
//     client sends before that end (sequence id 0, no round of the
//     exchange) waits for it and is then decided as a command;
//   - commands (commands.go, one handler a command; toServer in
//     toserver.go reads them, toClient in toclient.go follows the
//     answers): every command is read whole and decided
//     before a byte of it reaches the server. COM_QUERY and
//     COM_STMT_PREPARE are judged by the engine (every statement of a
//     multi-statement text); the COM_STMT_* commands that name a statement
//     id are decided by what its prepare was (prepared.go), a
//     COM_STMT_EXECUTE only with a parameter block that holds the
//     statement's parameters (execparams.go); an EXECUTE of a SQL-level
//     name by what the server holds under it (sqlprepare.go); COM_FIELD_LIST is
//     judged as the SHOW COLUMNS it amounts to, COM_REFRESH as the FLUSH
//     and RESET statements its bits stand for (FLUSH LOGS, ...); COM_INIT_DB,
//     COM_CHANGE_USER, COM_RESET_CONNECTION, COM_SET_OPTION, COM_PING,
//     COM_QUIT and COM_STATISTICS pass; every other command
//     (replication, COM_SHUTDOWN, COM_PROCESS_KILL, ...) is refused
//     whatever the mode, since no application needs it and the relay could
//     not follow its answer.
//
// A blocked command is never sent: sqlfw answers it with an ERR packet
// (error 1227, ER_SPECIFIC_ACCESS_DENIED_ERROR, SQLSTATE 42000, "sqlfw:
// statement blocked by rule <id>") whose sequence id follows the command's,
// in its place among the server's answers to the commands before it. The
// connection stays usable and an open transaction stays open, as after any
// statement error. There is no poison statement as in relay/pg: MySQL
// commands are request and response, with no server-side batch to keep in
// step.
//
// The server's answers are followed with wire/mysql's Response (OK, ERR,
// EOF, result sets, SERVER_MORE_RESULTS_EXISTS, LOCAL INFILE requests,
// PREPARE_OK), for the statement ids, the session's user and schema
// (COM_INIT_DB, COM_CHANGE_USER, USE through session-state tracking), the
// transaction state a drain waits for, the meter's timing and the client
// leg's framing (a LOCAL INFILE upload, which the server asks for only
// after an allowed statement, and the rounds of a COM_CHANGE_USER).
// A client that half-closes its side after sending still gets the answers
// to every command it sent whole (guard.go): the server leg is half-closed
// after them, and the session ends when the server closes.
// The session tells the engine the lexing state the server reads its text
// with (lexstate.go: sql_mode's NO_BACKSLASH_ESCAPES and ANSI_QUOTES, the
// client character set) and closes idle sessions (guard.go).
// Verdicts are reported to the observer with PostgreSQL's letters for the
// same messages: 'Q' COM_QUERY, 'P' COM_STMT_PREPARE, 'E' a re-judged
// COM_STMT_EXECUTE, 'C' a refused command.
//
// It frames bytes with wire/mysql and asks the engine core for verdicts;
// it never imports the daemon, bpf, cgroupstats, a dialect package
// (engine/mysql, engine/pgsql) or relay/pg.
package mysql
