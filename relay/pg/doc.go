// Package pg is the PostgreSQL relay: the session the daemon hands a
// client connection to (Protocol.Serve). A session goes through three
// phases, then the relay:
//
//   - encryption (negotiate): SSLRequest answered 'S' and the client's TLS
//     handshake run when the database has a certificate, else 'N', as is
//     every GSSENCRequest; a direct TLS record (sslnegotiation=direct);
//     a CancelRequest forwarded to the server that issued its key, of any
//     length (cancel.go); then the startup message;
//   - start: the startup parameters judged, the client admitted against
//     the connection limits, the server dialled (with TLS when the
//     upstream asks for it) and the session registered with the daemon;
//     the protocol version capped at 3.2 and its negotiation checked when
//     the server first answers (protover.go);
//   - authentication (auth.go): the exchange between client and server,
//     passed on untouched, up to the server's first ReadyForQuery, with its
//     own bounds on message size and time;
//   - relay: two loops (toServer, toClient, which carry the authentication
//     phase too) that judge every statement, replace a blocked one by a
//     poison the server fails on, keep the verdict memory of prepared
//     statements and portals (prepared.go) and follow the lexing state
//     (lexstate.go).
//
// It frames bytes with wire/pg and asks the engine for verdicts; it never
// imports the daemon, bpf, cgroupstats or a dialect package, and relay/pg
// never imports relay/mysql. pgtest holds the scripted peers its tests and
// the daemon's talk to.
package pg
