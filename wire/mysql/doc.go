// Package mysql frames the MySQL / MariaDB client/server protocol (protocol
// 4.1, the only one a server since MySQL 4.1 speaks) and decodes the few
// packet bodies a firewall must read: the server's greeting and the
// client's handshake response, the command packets a relay judges, and
// the response packets that say when a command's answer is complete.
//
// It knows bytes, not rules: it has no SQL parser and imports nothing of
// sqlfw's (not engine/, relay/, daemon/, nor wire/pg). The relay path reads
// with a Framer, which hands over only the packets the caller asked to see
// and passes every other byte over without copying or decoding it, so a
// result set streams through with no allocation per row; Response follows
// the response phase from the few packets it needs (OK, ERR, EOF, column
// counts, LOCAL INFILE requests, PREPARE_OK), as a pure state machine.
//
// What a relay strips from the server's greeting (DefaultStrip), and why:
// CLIENT_ZSTD_COMPRESSION_ALGORITHM (MySQL 8's zstd), because it does not
// inflate it (zlib's CLIENT_COMPRESS, the only compression MariaDB has, it
// reads and writes with Decompressor and Compressor, so a relay sees the
// plain packets); CLIENT_SSL, until the relay terminates TLS itself, because after an
// SSLRequest the bytes are TLS records it cannot judge (a client that
// requires TLS then fails cleanly instead of talking through an unjudged
// tunnel); and MariaDB's COM_MULTI, which packs several commands into one
// packet. Everything clients rely on stays: DEPRECATE_EOF, MULTI_STATEMENTS,
// MULTI_RESULTS, PS_MULTI_RESULTS, PLUGIN_AUTH, CONNECT_ATTRS,
// SESSION_TRACK, QUERY_ATTRIBUTES, LOCAL_FILES and MariaDB's extended
// capabilities (progress reports, bulk operations, metadata caching).
//
// Packet layouts follow MySQL's source documentation, "Client/Server
// Protocol" (dev.mysql.com/doc/dev/mysql-server/latest/PAGE_PROTOCOL.html),
// and MariaDB's "Clients & Connectors / Client/Server Protocol"; named
// limits cite the header that defines them upstream.
package mysql
