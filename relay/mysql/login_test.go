package mysql

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/relay/relaytest"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

func TestHandshakeRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hello  []byte
		reason string
	}{
		{"TLS not configured", sslRequest(clientCaps), "offers no TLS"},
		{"zstd compression", handshakeResponse(clientCaps|wire.CapZstdCompression, "app", "shop"), "compression is not offered"},
		{"malformed", pkt(1, 1, 2, 3), "malformed handshake response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.run(t, []step{send(greeting(serverCaps)), expectClosed()},
				[]step{expectFunc(checkGreeting), send(tc.hello), expectErr(2, errHandshake, "08S01", tc.reason), expectClosed()})
		})
	}
}

// The server's refusal instead of a greeting reaches the client as sent.
func TestServerRefuses(t *testing.T) {
	h := newHarness(t)
	refusal := wire.AppendErr(nil, 0, 1040, "08004", "Too many connections")
	h.run(t, []step{send(refusal), expectClosed()}, []step{expect(refusal), expectClosed()})
	if h.Counts[relay.ConnRefused].Load() != 1 {
		t.Errorf("ConnRefused %d, want 1", h.Counts[relay.ConnRefused].Load())
	}
}

// Every authentication round passes untouched: an auth switch, the
// client's answer, caching_sha2_password's more-data packets.
func TestAuthRounds(t *testing.T) {
	hello := handshakeResponse(clientCaps, "app", "shop")
	switchReq := pktS(2, wire.AuthSwitchRequest, "client_ed25519\x00nonce-nonce-nonce-nonce-nonce-32")
	signature := pktS(3, 's', "ignature-of-64-bytes")
	more := pkt(4, wire.AuthMoreData, 4) // perform full authentication
	pubkeyReq := pkt(5, 2)
	pubkey := pktS(6, wire.AuthMoreData, "-----BEGIN PUBLIC KEY-----")
	encrypted := pktS(7, 'e', "ncrypted")
	h := newHarness(t)
	h.run(t, []step{send(greeting(serverCaps)), expect(hello), send(switchReq), expect(signature), send(more), expect(pubkeyReq),
		send(pubkey), expect(encrypted), send(ok(8, autocommit)), expect(query("select 1")), send(resultSet(autocommit))},
		[]step{expectFunc(checkGreeting), send(hello), expect(switchReq), send(signature), expect(more), send(pubkeyReq),
			expect(pubkey), send(encrypted), expect(ok(8, autocommit)), send(query("select 1")), expect(resultSet(autocommit))})
}

// A failed authentication reaches the client and ends the session.
func TestAuthFails(t *testing.T) {
	hello := handshakeResponse(clientCaps, "app", "shop")
	denied := wire.AppendErr(nil, 2, 1045, "28000", "Access denied for user 'app'")
	h := newHarness(t)
	h.run(t, []step{send(greeting(serverCaps)), expect(hello), send(denied), expectClosed()},
		[]step{expectFunc(checkGreeting), send(hello), expect(denied), expectClosed()})
}

// The session's user and schema follow COM_INIT_DB, USE (session
// tracking) and COM_CHANGE_USER, and the rules scoped to the user are
// re-evaluated.
func TestLoginChanges(t *testing.T) {
	h := newHarness(t)
	srv, cli := login()
	info := func(user, db string) step {
		return relaytest.StepFunc(func(net.Conn) error {
			s := h.Session()
			if s == nil {
				t.Fatal("no session registered")
			}
			if i := s.Info(); i.User != user || i.DBName != db || i.Application != "test" {
				t.Errorf("Info %+v, want user %q db %q application test", i, user, db)
			}
			return nil
		})
	}
	// USE under session tracking: the OK says the schema changed
	useOK := func() []byte {
		p := []byte{0, 0, 0}
		p = binary.LittleEndian.AppendUint16(p, autocommit|wire.StatusSessionStateChanged)
		p = append(p, 0, 0, 0) // warnings, empty info
		change := append([]byte{wire.TrackSchema}, wire.AppendLenInt(nil, 5)...)
		change = append(change, 4, 'l', 'o', 'g', 's')
		p = wire.AppendLenInt(p, uint64(len(change)))
		p = append(p, change...)
		return pkt(1, p...)
	}()
	cu := pkt(0, append([]byte{wire.ComChangeUser}, "admin\x00\x1401234567890123456789other\x00\x2d\x00mysql_native_password\x00\x00"...)...)
	switchReq := pktS(1, wire.AuthSwitchRequest, "mysql_native_password\x00abcdefghijklmnopqrst\x00")
	answer := pktS(2, 'x', "0123456789012345678")
	h.run(t, append(srv,
		expect(pktS(0, wire.ComInitDB, "sales")), send(ok(1, autocommit)),
		expect(query("use logs")), send(useOK),
		expect(cu), send(switchReq), expect(answer), send(ok(3, autocommit)),
		expect(query("show tables")), send(resultSet(autocommit))),
		append(cli,
			info("app", "shop"),
			send(pktS(0, wire.ComInitDB, "sales")), expect(ok(1, autocommit)), info("app", "sales"),
			send(query("use logs")), expect(useOK), info("app", "logs"),
			send(query("show tables")), expectErr(1, errBlocked, "42000", "admin-only"),
			send(cu), expect(switchReq), send(answer), expect(ok(3, autocommit)), info("admin", "other"),
			send(query("show tables")), expect(resultSet(autocommit))))
}

// A drain closes an idle session at once, and a busy one once its answer
// and its transaction are done.
func TestDrain(t *testing.T) {
	h := newHarness(t)
	srv, cli := login()
	drain := relaytest.StepFunc(func(net.Conn) error {
		h.Session().Drain()
		return nil
	})
	h.run(t, append(srv, expect(query("begin")), send(ok(1, autocommit|inTx)), expect(query("commit")),
		relaytest.StepFunc(func(c net.Conn) error { time.Sleep(20 * time.Millisecond); return nil }), send(ok(1, autocommit)), expectClosed()),
		append(cli, send(query("begin")), expect(ok(1, autocommit|inTx)), drain, send(query("commit")), expect(ok(1, autocommit)), expectClosed()))
}

// An idle session is closed with MySQL 8's idle error; one that keeps
// talking is not.
func TestIdleTimeout(t *testing.T) {
	h := newHarness(t)
	h.Env.Limits.IdleTimeout = 100 * time.Millisecond
	srv, cli := login()
	pause := func(d time.Duration) step {
		return relaytest.StepFunc(func(net.Conn) error { time.Sleep(d); return nil })
	}
	h.run(t, append(srv, expect(pkt(0, wire.ComPing)), send(ok(1, autocommit)), expectClosed()),
		append(cli, pause(60*time.Millisecond), send(pkt(0, wire.ComPing)), expect(ok(1, autocommit)),
			expectErr(0, errClientInteractionTimeout, "HY000", "idle"), expectClosed()))
	if n := h.Counts[relay.IdleClosed].Load(); n != 1 {
		t.Errorf("IdleClosed %d, want 1", n)
	}
}

// MySQL 8's query attributes (CLIENT_QUERY_ATTRIBUTES): the statement after
// them is what is judged.
func TestQueryAttributes(t *testing.T) {
	h := newHarness(t)
	hello := handshakeResponse(clientCaps|wire.CapQueryAttributes, "app", "shop")
	withAttrs := func(sql string) []byte {
		// one attribute: null bitmap, bound, type string, name "a", value "b"
		p := []byte{wire.ComQuery, 1, 1, 0, 1, wire.TypeVarString, 0, 1, 'a', 1, 'b'}
		return pkt(0, append(p, sql...)...)
	}
	h.run(t, []step{send(greeting(serverCaps | wire.CapQueryAttributes)), expect(hello), send(ok(2, autocommit)),
		expect(withAttrs("select 1")), send(resultSet(autocommit))},
		[]step{expectFunc(func([]byte) error { return nil }), send(hello), expect(ok(2, autocommit)),
			send(withAttrs("delete from t")), expectErr(1, errBlocked, "42000", "no-delete"),
			send(withAttrs("select 1")), expect(resultSet(autocommit))})
}

// A client turned away by the connection limits, which count it once its
// handshake response is read, gets the server's own error for the
// refusal in place of the server's answer (sequence id 2); the server
// never gets the response. Refused before its session (Protocol.Refuse),
// it gets the ERR a server sends instead of its greeting (sequence id 0).
func TestRefuse(t *testing.T) {
	for _, tc := range []struct {
		r     relay.Refusal
		code  uint16
		state string
	}{
		{relay.Refusal{Reason: relay.TooManyConnections, Msg: "sqlfw: too many connections"}, errConCount, sqlstateConCount},
		{relay.Refusal{Reason: relay.ShuttingDown, Msg: "sqlfw: the firewall is shutting down"}, errServerShutdown, sqlstateShutdown},
	} {
		t.Run(tc.r.Msg, func(t *testing.T) {
			h := newHarness(t)
			h.Env.Admit = func() (func(), error) { r := tc.r; return nil, &r }
			h.run(t, []step{send(greeting(serverCaps)), expectClosed()},
				[]step{expectFunc(checkGreeting), send(handshakeResponse(clientCaps, "app", "shop")),
					expectErr(2, tc.code, tc.state, tc.r.Msg), expectClosed()})

			ours, theirs := net.Pipe()
			defer ours.Close()
			go func() { h.Proto.Refuse(theirs, &tc.r); theirs.Close() }()
			if err := expectErr(0, tc.code, tc.state, tc.r.Msg).Play(ours); err != nil {
				t.Errorf("Refuse: %v", err)
			}
		})
	}
}

// A health probe that connects, reads the greeting and closes holds no
// connection slot: admission counts clients from their handshake response.
func TestProbeTakesNoSlot(t *testing.T) {
	h := newHarness(t)
	var admitted atomic.Int32
	h.Env.Admit = func() (func(), error) {
		admitted.Add(1)
		return func() { admitted.Add(-1) }, nil
	}
	probe := relaytest.StepFunc(func(net.Conn) error {
		if n := admitted.Load(); n != 0 {
			return fmt.Errorf("%d admitted after the greeting, want 0", n)
		}
		return nil
	})
	h.run(t, []step{send(greeting(serverCaps)), expectClosed()}, []step{expectFunc(checkGreeting), probe})
	h.WG.Wait()
	if n := admitted.Load(); n != 0 {
		t.Errorf("%d slots held after the probe closed, want 0", n)
	}
	// and a client that logs in is admitted, then released
	h = newHarness(t)
	var peak atomic.Int32
	h.Env.Admit = func() (func(), error) {
		peak.Add(1)
		return func() {}, nil
	}
	srv, cli := login()
	h.run(t, srv, cli)
	if peak.Load() != 1 {
		t.Errorf("a client that logged in was admitted %d times, want 1", peak.Load())
	}
}
