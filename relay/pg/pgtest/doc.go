// Package pgtest holds the PostgreSQL peers the tests of relay/pg and of
// the daemon talk to: Script, a scripted peer that plays either side of a
// session step by step (as pgx's internal/pgmock scripts a server); Server,
// a fake backend over TCP that answers every Query with one canned result
// and, with Named, keeps prepared statements and portals by name; and
// Client, a client that speaks the protocol by hand so that a test can send
// anything.
package pgtest
