// Package mysql is MySQL's and MariaDB's dialect for the engine: it turns SQL
// text, as a MySQL or MariaDB server reads it, into the engine's facts, with
// TiDB's MySQL parser (github.com/pingcap/tidb/pkg/parser, pooled: a parser
// is not safe for concurrent use). Dialect is the value engine.New takes;
// DefaultPolicy is the policy sqlfw uses for MySQL and MariaDB when none is
// configured (default_policy.yaml).
//
// The parts, in the order a text meets them: lex.go (Read: the text the
// server executes under the session's sql_mode and character set, with
// executable comments resolved as the session's server reads them, refused
// where the server's reading cannot be known), charset.go (multibyte client
// character sets converted to UTF-8 along the server's character
// boundaries), prescan.go (the measures before parsing and the comment
// tricks, and the tokens unparsed.go reads), facts.go (the parser pool and
// the walker over each statement), mariadb.go and body.go (MariaDB's own
// syntax where TiDB's grammar stops: a text the parser rejects is read
// again as the server's statements, each rewritten to TiDB's spelling of
// the same facts, stored programs header and body statement by statement),
// unparsed.go (what is certain of a text nothing reads; EXECUTE IMMEDIATE
// of a literal judged as its statement), definer.go (DEFINER = the
// session's own user read as CURRENT_USER for that session), routine.go (a
// routine's body counts as what its statements are), probes.go (the
// shapes of injected catalog, server-information and error-based probes,
// and disguised waits),
// ddl.go (statement kind, DDL verb and object type), taut.go (always-true
// conditions folded as MariaDB and MySQL evaluate them), writes.go (the
// rows an UPDATE, DELETE, REPLACE or ON DUPLICATE KEY UPDATE writes: the
// whole table or not), effects.go (what a statement makes
// the server do, in the effect names engine/pgsql uses too), currentdb.go
// (what it does when the session's current database is one of the
// server's own, and the names a GRANT matches as patterns), sqlprepare.go
// (what a text does to SQL-level prepared statements by name: PREPARE,
// EXECUTE, DEALLOCATE, CALL, which relay/mysql follows), shape.go (the
// shapes of bulk INSERTs and why a shape hit is sound: Dialect is an
// engine.Shaper) and dialect.go (the Dialect methods and the default
// policy).
//
// What neither TiDB's parser nor mariadb.go reads (system-versioned
// tables, HANDLER, XA; INSTALL PLUGIN, CREATE FUNCTION ... SONAME, CHANGE
// MASTER, CREATE SERVER) is a parse error and gets the policy's
// on_parse_error, unless what is certain of it from its words
// (unparsed.go) matches a deny rule: docs/policy.md lists it, measured on
// MariaDB's own test suite (suite_test.go).
//
// It imports the engine core and TiDB's parser; it never imports a
// protocol's bytes or session (wire, relay), the daemon, engine/pgsql or
// pg_query.
package mysql
