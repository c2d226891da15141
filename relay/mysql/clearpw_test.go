package mysql

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// withPlugin is handshake response b with its plugin name and first auth
// answer replaced.
func withPlugin(b []byte, plugin, answer string) []byte {
	p := bytes.Replace(b[4:], []byte("\x14"+"01234567890123456789"), append([]byte{byte(len(answer))}, answer...), 1)
	p = bytes.Replace(p, []byte("mysql_native_password\x00"), []byte(plugin+"\x00"), 1)
	return pkt(wire.Seq(b), p...)
}

// TestClearPasswordRefused: TLS from the client, plaintext to an upstream
// off the host (RefuseClearPassword). A method that would have the client
// send its password in clear is refused before the password is sent: the
// server's switch to it or caching_sha2_password's full-authentication
// request never reaches the client, a response that carries it never
// reaches the server; the client gets ER_ACCESS_DENIED_ERROR in sqlfw's
// words and the log says why. With the operator's opt-in, or a method
// that sends no clear password, the exchange passes.
func TestClearPasswordRefused(t *testing.T) {
	const password = "s3cret-in-clear"
	response := handshakeResponse(clientCaps|wire.CapSSL, "app", "shop")
	forwarded := handshakeResponse(clientCaps, "app", "shop") // seq 1, no CLIENT_SSL
	switchTo := func(plugin string) []byte {
		return pktS(2, wire.AuthSwitchRequest, plugin+"\x00abcdefghijklmnopqrst\x00")
	}
	clearAnswer := pkt(3, append([]byte(password), 0)...)
	refused := expectErr(3, errAccessDenied, sqlstateAccessDenied, "password in clear")
	cases := []struct {
		name    string
		refuse  bool
		server  []step
		client  []step
		refused bool
	}{
		{"switch to mysql_clear_password", true,
			[]step{expect(forwarded), send(switchTo("mysql_clear_password")), expectClosed()},
			[]step{send(withSeq(response, 2)), refused, expectClosed()}, true},
		{"switch to dialog", true,
			[]step{expect(forwarded), send(switchTo("dialog")), expectClosed()},
			[]step{send(withSeq(response, 2)), refused, expectClosed()}, true},
		{"caching_sha2_password full authentication", true,
			[]step{expect(forwarded), send(switchTo("caching_sha2_password")), expect(pktS(3, 'x', "0123456789012345678")),
				send(pkt(4, wire.AuthMoreData, 4)), expectClosed()},
			[]step{send(withSeq(response, 2)), expect(withSeq(switchTo("caching_sha2_password"), 3)),
				send(pktS(4, 'x', "0123456789012345678")), expectErr(5, errAccessDenied, sqlstateAccessDenied, "password in clear"), expectClosed()}, true},
		{"client's own sha256_password response", true,
			[]step{expectClosed()},
			[]step{send(withPlugin(withSeq(response, 2), "sha256_password", password+"\x00")), refused, expectClosed()}, true},
		{"opted in", false,
			[]step{expect(forwarded), send(switchTo("mysql_clear_password")), expect(clearAnswer), send(ok(4, autocommit))},
			[]step{send(withSeq(response, 2)), expect(withSeq(switchTo("mysql_clear_password"), 3)), send(withSeq(clearAnswer, 4)),
				expect(ok(5, autocommit))}, false},
		{"caching_sha2_password fast path", true,
			[]step{expect(forwarded), send(switchTo("caching_sha2_password")), expect(pktS(3, 'x', "0123456789012345678")),
				send(pkt(4, wire.AuthMoreData, 3)), send(ok(5, autocommit))},
			[]step{send(withSeq(response, 2)), expect(withSeq(switchTo("caching_sha2_password"), 3)),
				send(pktS(4, 'x', "0123456789012345678")), expect(pkt(5, wire.AuthMoreData, 3)), expect(ok(6, autocommit))}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _, cli := tlsHarness(t)
			h.Upstream = relay.Upstream{Network: "tcp", Addr: "db.example:3306", RefuseClearPassword: c.refuse}
			h.run(t, append([]step{send(greeting(serverCaps))}, c.server...),
				append([]step{expectFunc(checkTLSGreeting), send(sslRequest(clientCaps)), startTLS(cli, false)}, c.client...))
			logged := strings.Contains(h.Logs.String(), "refusing connection: the authentication would send the password in clear")
			if logged != c.refused {
				t.Errorf("refusal logged %v, want %v:\n%s", logged, c.refused, h.Logs.String())
			}
			if strings.Contains(h.Logs.String(), password) {
				t.Errorf("the password is in the log:\n%s", h.Logs.String())
			}
		})
	}
}

// On a plaintext client leg nothing is refused: the client chose to send
// its password in clear.
func TestClearPasswordPlaintextClient(t *testing.T) {
	h := newHarness(t)
	h.Upstream = relay.Upstream{Network: "tcp", Addr: "db.example:3306", RefuseClearPassword: true}
	switchReq := pktS(2, wire.AuthSwitchRequest, "mysql_clear_password\x00")
	answer := pkt(3, append([]byte("pw"), 0)...)
	h.run(t, []step{send(greeting(serverCaps)), expect(handshakeResponse(clientCaps, "app", "shop")), send(switchReq), expect(answer), send(ok(4, autocommit))},
		[]step{expect(greeting(serverCaps &^ wire.DefaultStrip)), send(handshakeResponse(clientCaps, "app", "shop")), expect(switchReq), send(answer), expect(ok(4, autocommit))})
}

// A COM_CHANGE_USER that already carries a clear-text password (the
// client chose mysql_clear_password) on a TLS client leg and a clear
// server leg off the host never reaches the server; the client gets
// ER_ACCESS_DENIED_ERROR and the session closes.
func TestClearPasswordChangeUserRefused(t *testing.T) {
	const password = "s3cret-change-user"
	h, _, cli := tlsHarness(t)
	h.Upstream = relay.Upstream{Network: "tcp", Addr: "db.example:3306", RefuseClearPassword: true}
	response := handshakeResponse(clientCaps|wire.CapSSL, "app", "shop")
	cu := append([]byte{wire.ComChangeUser}, "admin\x00"...)
	cu = append(cu, byte(len(password)+1))
	cu = append(cu, password+"\x00"...)
	cu = append(cu, "shop\x00"...)
	cu = append(cu, 45, 0)
	cu = append(cu, "mysql_clear_password\x00"...)
	h.run(t, []step{send(greeting(serverCaps)), expect(handshakeResponse(clientCaps, "app", "shop")), send(ok(2, autocommit)), expectClosed()},
		[]step{expectFunc(checkTLSGreeting), send(sslRequest(clientCaps)), startTLS(cli, false), send(withSeq(response, 2)), expect(ok(3, autocommit)),
			send(pkt(0, cu...)), expectErr(1, errAccessDenied, sqlstateAccessDenied, "password in clear"), expectClosed()})
	if strings.Contains(h.Logs.String(), password) {
		t.Errorf("the password is in the log:\n%s", h.Logs.String())
	}
}
