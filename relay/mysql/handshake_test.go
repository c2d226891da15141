package mysql

import (
	"testing"

	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// The client's handshake response is read as the server reads it: with
// the client's flags within what the greeting offered, the quotes off a
// quoted user. A client that claims CLIENT_CONNECT_WITH_DB or
// CLIENT_CONNECT_ATTRS the greeting did not offer sends bytes the server
// skips: the session has no database and no program_name, as on the
// server.
func TestHandshakeReadAsServer(t *testing.T) {
	any := func([]byte) error { return nil }
	for _, tc := range []struct {
		name             string
		offered          wire.Caps
		user             string
		wantUser, wantDB string
		wantApp          string
	}{
		{"everything offered", serverCaps, "app", "app", "shop", "test"},
		{"database not offered", serverCaps &^ wire.CapConnectWithDB &^ wire.CapPluginAuth &^ wire.CapConnectAttrs, "app", "app", "", ""},
		{"attributes not offered", serverCaps &^ wire.CapConnectAttrs, "app", "app", "shop", ""},
		{"quoted user", serverCaps, "'app'", "app", "shop", "test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			hello := handshakeResponse(clientCaps, tc.user, "shop")
			s := h.run(t, []step{send(greeting(tc.offered)), expect(hello), send(ok(2, autocommit))},
				[]step{expectFunc(any), send(hello), expect(ok(2, autocommit))})
			if s == nil {
				t.Fatal("no session")
			}
			in := s.Info()
			if in.User != tc.wantUser || in.DBName != tc.wantDB || in.Application != tc.wantApp {
				t.Errorf("session of user %q database %q application %q, want %q %q %q", in.User, in.DBName, in.Application, tc.wantUser, tc.wantDB, tc.wantApp)
			}
		})
	}
}

// CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA without CLIENT_SECURE_CONNECTION:
// MariaDB and MySQL read the auth response, and so the database after it,
// differently; the response is refused and never reaches the server.
func TestHandshakeAmbiguousRefused(t *testing.T) {
	h := newHarness(t)
	hello := handshakeResponse(clientCaps&^wire.CapSecureConnection, "app", "shop")
	h.run(t, []step{send(greeting(serverCaps)), expectClosed()},
		[]step{expectFunc(checkGreeting), send(hello), expectErr(2, errHandshake, "08S01", "malformed handshake response"), expectClosed()})
}
