package mysql

import (
	"bytes"

	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// A client that half-closes after sending gets the answer to every command
// it sent whole, in order with sqlfw's own replies among them; the server
// sees the end only after the commands, never a command sent in part; the
// session ends when the server closes.
func TestHalfCloseAnswered(t *testing.T) {
	blocked := expectErr(1, errBlocked, "42000", "no-delete")
	for _, tc := range []struct {
		name           string
		server, client []step
	}{
		{"one query, then the end of the client's side (printf … | nc)",
			[]step{expect(query("select 1")), expectClosed(), send(resultSet(autocommit))},
			[]step{send(query("select 1")), closeWrite(), expect(resultSet(autocommit)), expectClosed()}},
		{"pipelined, with a blocked command among them",
			[]step{expect(query("select 1")), expect(query("select 2")), expectClosed(), send(resultSet(autocommit), resultSet(autocommit))},
			[]step{send(query("select 1"), query("delete from t"), query("select 2")), closeWrite(),
				expect(resultSet(autocommit)), blocked, expect(resultSet(autocommit)), expectClosed()}},
		{"one byte at a time",
			[]step{expect(query("select 1")), expect(query("select 2")), expectClosed(), sendBytewise(resultSet(autocommit), resultSet(autocommit))},
			[]step{sendBytewise(query("select 1"), query("delete from t"), query("select 2")), closeWrite(),
				expect(resultSet(autocommit)), blocked, expect(resultSet(autocommit)), expectClosed()}},
		{"a blocked command last, nothing owed by the server",
			[]step{expect(query("select 1")), send(resultSet(autocommit)), expectClosed()},
			[]step{send(query("select 1")), expect(resultSet(autocommit)), send(query("delete from t")), closeWrite(), blocked, expectClosed()}},
		{"a command sent in part is never forwarded",
			[]step{expect(query("select 1")), expectClosed(), send(resultSet(autocommit))},
			[]step{send(query("select 1"), query("select 2")[:7]), closeWrite(), expect(resultSet(autocommit)), expectClosed()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.TCP = true // a pipe cannot be half-closed
			srv, cli := login()
			h.run(t, append(srv, tc.server...), append(cli, tc.client...))
		})
	}
}

// A packet longer than sqlfw accepts before login (the handshake response,
// an authentication round) is answered as MariaDB answers a packet beyond
// max_allowed_packet: ERR 1153, SQLSTATE 08S01, the sequence id after the
// packet's, as soon as its header claims the length; then the connection
// closes, and the server never sees it. It is counted and logged once.
func TestOversizedBeforeLogin(t *testing.T) {
	hdr := func(n, seq int) []byte { return []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(seq)} }
	tooLarge := func(seq int) step {
		return expectErr(seq, errPacketTooLarge, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes")
	}
	hello := handshakeResponse(clientCaps, "app", "shop")
	big := append(bytes.Clone(hello[:4]), hello[4:]...)
	big = append(big, make([]byte, preAuthMaxPacket+1-len(hello[4:]))...)
	copy(big, hdr(preAuthMaxPacket+1, 1))
	switchReq := pktS(2, wire.AuthSwitchRequest, "mysql_native_password\x00abcdefghijklmnopqrst\x00")
	for _, tc := range []struct {
		name           string
		server, client []step
	}{
		{"a first packet with a 16 MiB header",
			[]step{send(greeting(serverCaps)), expectClosed()},
			[]step{expectFunc(checkGreeting), send(hdr(wire.MaxFragment, 1)), tooLarge(2), expectClosed()}},
		{"a first packet with a 16 MiB header, one byte at a time",
			[]step{send(greeting(serverCaps)), expectClosed()},
			[]step{expectFunc(checkGreeting), sendBytewise(hdr(wire.MaxFragment, 1)), tooLarge(2), expectClosed()}},
		{"a handshake response one byte over the limit, sent whole",
			[]step{send(greeting(serverCaps)), expectClosed()},
			[]step{expectFunc(checkGreeting), send(big), tooLarge(2), expectClosed()}},
		{"an authentication round over the limit",
			[]step{send(greeting(serverCaps)), expect(hello), send(switchReq), expectClosed()},
			[]step{expectFunc(checkGreeting), send(hello), expect(switchReq), send(hdr(preAuthMaxPacket+1, 3), make([]byte, 64)), tooLarge(4), expectClosed()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.TCP = true // the whole oversized response is written while the relay answers
			h.run(t, tc.server, tc.client)
			checkCounted(t, h)
		})
	}
	t.Run("a handshake response over the limit after TLS", func(t *testing.T) {
		h, _, cli := tlsHarness(t)
		h.run(t, []step{send(greeting(serverCaps)), expectClosed()},
			[]step{expectFunc(checkTLSGreeting), send(sslRequest(clientCaps)), startTLS(cli, false),
				send(hdr(wire.MaxFragment, 2)), tooLarge(3), expectClosed()})
		checkCounted(t, h)
	})
}

// checkCounted wants one protocol error counted and one log line.
func checkCounted(t *testing.T, h *harness) {
	t.Helper()
	if n := h.Counts[relay.ProtocolErrors].Load(); n != 1 {
		t.Errorf("protocol errors counted: %d, want 1", n)
	}
	if n := strings.Count(h.Logs.String(), "closing connection"); n != 1 {
		t.Errorf("%d log lines say the connection closes, want 1:\n%s", n, h.Logs)
	}
}

// After login, a command longer than max_message_bytes gets the same
// ER_NET_PACKET_TOO_LARGE the server would answer it with.
func TestOversizedCommand(t *testing.T) {
	h := newHarness(t)
	h.TCP = true
	h.Env.Limits.MaxMessageBytes = 1 << 10
	srv, cli := login()
	huge := pktS(0, wire.ComQuery, "select '"+strings.Repeat("x", 2<<10)+"'")
	h.run(t, append(srv, expectClosed()),
		append(cli, send(huge), expectErr(1, errPacketTooLarge, "08S01", "max_allowed_packet"), expectClosed()))
	if n := h.Counts[relay.ProtocolErrors].Load(); n != 1 {
		t.Errorf("protocol errors counted: %d, want 1", n)
	}
}
