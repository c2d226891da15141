package mysql

import wire "github.com/sqlfw/sqlfw/wire/mysql"

// ambiguousResponse says why a handshake response (parsed with caps, the
// client's flags within what the greeting offered, as the server reads
// it: wire.ParseHandshakeResponseFor) could be read by the server with a
// different user, database, plugin or attributes than sqlfw's, or "" when
// it cannot. Such a response is refused: the engine would judge the
// session as someone else's.
//
// CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA without CLIENT_SECURE_CONNECTION:
// MySQL reads a length-encoded auth response, MariaDB a zero-terminated
// one (parse_client_handshake_packet, sql/sql_acl.cc), so the database
// after it differs. No client sends that combination.
func ambiguousResponse(caps wire.Caps) string {
	if caps.Has(wire.CapPluginAuthLenencData) && !caps.Has(wire.CapSecureConnection) {
		return "CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA without CLIENT_SECURE_CONNECTION"
	}
	return ""
}
