// Package pg frames the PostgreSQL frontend/backend protocol (version 3) and
// decodes the few message bodies that the firewall must read.
//
// It knows bytes, not rules: the daemon decides what to do with a message.
// The relay path reads with a Framer, which hands over only the messages the
// caller asked to see and passes every other byte over without copying or
// decoding it, so a result set streams through with no allocation per row.
//
// Message layouts and limits follow the PostgreSQL 15 documentation,
// "Message Formats" (protocol.sgml), and src/include/libpq/pqcomm.h.
package pg
