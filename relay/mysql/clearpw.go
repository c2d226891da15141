package mysql

// Clear-text passwords on a clear server leg. When the client's leg is TLS
// and the server's is not, to an upstream off this host
// (relay.Upstream.RefuseClearPassword), an authentication method that has
// the client send its password in clear would send it across the network
// unencrypted while the client believes its connection is encrypted to
// the end (a client sends such passwords only over TLS, or over a socket).
// sqlfwd refuses the exchange before the password is sent, with
// ER_ACCESS_DENIED_ERROR's code in sqlfw's words and a log line, unless
// the operator allows it (upstream_tls.allow_clear_password). The methods:
//
//   - mysql_clear_password (PAM, LDAP: the password itself);
//   - dialog (MariaDB's PAM: the answers to the server's prompts);
//   - sha256_password (over TLS the password itself, else RSA);
//   - caching_sha2_password's full authentication (the server's
//     AuthMoreData 0x04 "perform full authentication": over TLS the client
//     answers with the password itself).
//
// A handshake response or COM_CHANGE_USER that already carries such a
// response (the client chose the plugin) is never forwarded; a server's
// AuthSwitchRequest to such a plugin, or the full-authentication request,
// never reaches the client.

import (
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

const (
	// errAccessDenied is ER_ACCESS_DENIED_ERROR.
	errAccessDenied      = 1045
	sqlstateAccessDenied = "28000"
	msgClearPassword     = "sqlfw: the authentication would send the password in clear, and sqlfw's connection to the database server is not encrypted: refused (configure upstream_tls, or upstream_tls.allow_clear_password)"
	pluginCachingSHA2    = "caching_sha2_password"
	// cachingSHA2FullAuth is caching_sha2_password's "perform full
	// authentication" (perform_full_authentication, sql/auth/sha2_password.h).
	cachingSHA2FullAuth = 4
)

// clearPlugin reports whether an authentication plugin's client side
// sends the password in clear over TLS.
func clearPlugin(name []byte) bool {
	switch string(name) {
	case "mysql_clear_password", "dialog", "sha256_password":
		return true
	}
	return false
}

// clearRefused reports whether this session refuses clear-text
// authentication: TLS from the client, plaintext to an upstream off the
// host, no opt-in.
func (s *session) clearRefused() bool {
	return s.conn.Upstream.RefuseClearPassword && s.clientTLS() && !s.serverTLS()
}

// refuseClear logs the refusal; the caller writes the client's ERR.
func (s *session) refuseClear(plugin []byte) {
	s.log.Warn("refusing connection: the authentication would send the password in clear, and the server leg is not encrypted while the client's is (set upstream_tls, or upstream_tls.allow_clear_password)",
		"plugin", string(plugin), "upstream", s.conn.Upstream.Addr)
}

// clearAuthRound is toClient's for a packet of the server's in an
// authentication exchange (m, not its last): it follows the plugin in use
// and reports false when the packet asks for the password in clear and the
// session refuses that (clearRefused); the client then has its ERR in the
// packet's place.
func (s *session) clearAuthRound(fr *wire.Framer, m []byte) bool {
	p := wire.FirstFragment(m)
	if len(p) == 0 {
		return true
	}
	switch p[0] {
	case wire.AuthSwitchRequest:
		plugin, _, err := wire.ParseAuthSwitch(p)
		if err != nil {
			return true
		}
		s.authPlugin = append(s.authPlugin[:0], plugin...)
		if !clearPlugin(plugin) {
			return true
		}
	case wire.AuthMoreData:
		if string(s.authPlugin) != pluginCachingSHA2 || len(p) != 2 || p[1] != cachingSHA2FullAuth {
			return true
		}
	default:
		return true
	}
	if !s.clearRefused() {
		return true
	}
	s.refuseClear(s.authPlugin)
	if s.WriteClient(fr.TakeBefore(m)) != nil {
		return false
	}
	s.Tell(errPacket(wire.Seq(m), errAccessDenied, sqlstateAccessDenied, msgClearPassword))
	return false
}
