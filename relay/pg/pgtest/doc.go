// Package pgtest holds the PostgreSQL peers the tests of relay/pg and of
// the daemon talk to: relaytest's Script with steps that read PostgreSQL's
// messages and startup packets; Server, a fake backend over TCP that
// answers every Query with one canned result and, with Named, keeps
// prepared statements and portals by name; and Client, a client that
// speaks the protocol by hand so that a test can send anything.
package pgtest
