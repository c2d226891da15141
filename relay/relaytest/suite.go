package relaytest

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/relay"
)

// Peer is what the conformance suite needs of one protocol: its messages
// and its peers' parts in a login, and nothing of the relay.
type Peer interface {
	// New returns a fresh relay.
	New() relay.Protocol
	// Framing frames the protocol's messages after login (either side's).
	Framing() Framing
	// Login is the server's and the client's steps up to the end of
	// authentication, after which the session is idle. A leg whose config
	// is set runs TLS: the client's part asks for it and handshakes with
	// tls.Client(legs.Client), the server's answers the relay's request
	// and handshakes with tls.Server(legs.Server) (StartTLS).
	Login(legs Legs) (server, client []Step)
	// TLSRequest is a session whose client asks for TLS and then sends
	// nothing: the client's steps up to where its handshake would begin,
	// and the server's whole part (which may never be dialled).
	TLSRequest() (server, client []Step)
	// Query is the message that carries sql as the client sends it; Done
	// the server's whole answer to such a statement, as it also reaches
	// the client.
	Query(sql string) []byte
	Done() []byte
	// Blocked is a statement blocked by rule: the server's steps for what
	// the relay sends in its place (none when it sends nothing) and for
	// its answer to that, and the client's for the relay's answer.
	Blocked(rule string) (expect, answer, client Step)
	// IdleClosed is the client's step for the relay's word that it closes
	// an idle session.
	IdleClosed() Step
	// TooLarge is the client's step for the relay's answer to a message
	// larger than max_message_bytes.
	TooLarge() Step
}

// Legs are the scripted peers' TLS configurations (nil: that leg in
// clear).
type Legs struct{ Client, Server *tls.Config }

// Statements the suite sends (Policy): one allowed, one denied by
// no-delete.
const (
	allowed = "select 1"
	denied  = "delete from t"
	rule    = "no-delete"
)

// TestRelay runs the relay of p through the behaviours every relay keeps.
func TestRelay(t *testing.T, p Peer) {
	cases := []struct {
		name string
		run  func(t *testing.T, p Peer)
	}{
		{"BlockedAnsweredConnectionKept", testBlockedKept},
		{"Pipelined", testPipelined},
		{"OneBytePerWrite", testBytewise},
		{"HalfClose", testHalfClose},
		{"DrainIdle", testDrainIdle},
		{"DrainBusy", testDrainBusy},
		{"IdleTimeout", testIdleTimeout},
		{"TLSClientLeg", func(t *testing.T, p Peer) { testTLS(t, p, true, false) }},
		{"TLSServerLeg", func(t *testing.T, p Peer) { testTLS(t, p, false, true) }},
		{"TLSBothLegs", func(t *testing.T, p Peer) { testTLS(t, p, true, true) }},
		{"TLSHandshakeBoundByStartupTimeout", testTLSStall},
		{"Oversized", testOversized},
		{"Truncated", testTruncated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, p) })
	}
}

func harness(t *testing.T, p Peer) *Harness {
	return NewHarness(t, p.New())
}

func login(p Peer) (server, client []Step) { return p.Login(Legs{}) }

func wantVerdicts(t *testing.T, h *Harness, rules ...string) {
	t.Helper()
	h.Mu.Lock()
	defer h.Mu.Unlock()
	var got []string
	for _, v := range h.Verdicts {
		got = append(got, v.RuleID)
	}
	if strings.Join(got, ",") != strings.Join(rules, ",") {
		t.Errorf("verdicts' rules %q, want %q", got, rules)
	}
}

// A blocked statement gets the protocol's error, nothing of it reaches
// the server, and the next statement runs on the same connection.
func testBlockedKept(t *testing.T, p Peer) {
	h := harness(t, p)
	f := p.Framing()
	srv, cli := login(p)
	bx, ba, bc := p.Blocked(rule)
	h.Run(t,
		append(srv, bx, ba, Expect(f, p.Query(allowed)), Send(p.Done()), ExpectClosed()),
		append(cli, Send(p.Query(denied)), bc, Send(p.Query(allowed)), Expect(f, p.Done())))
	wantVerdicts(t, h, rule, "")
}

// Statements sent in one write are answered in order, the blocked one's
// error among the server's answers.
func testPipelined(t *testing.T, p Peer) {
	h := harness(t, p)
	f := p.Framing()
	srv, cli := login(p)
	bx, ba, bc := p.Blocked(rule)
	h.Run(t,
		append(srv, Expect(f, p.Query(allowed)), bx, Expect(f, p.Query("select 2")),
			Send(p.Done()), ba, Send(p.Done()), ExpectClosed()),
		append(cli, Send(p.Query(allowed), p.Query(denied), p.Query("select 2")),
			Expect(f, p.Done()), bc, Expect(f, p.Done())))
	wantVerdicts(t, h, "", rule, "")
}

// Every read of either leg returning one byte changes nothing.
func testBytewise(t *testing.T, p Peer) {
	h := harness(t, p)
	f := p.Framing()
	srv, cli := login(p)
	bx, ba, bc := p.Blocked(rule)
	h.Run(t,
		append(srv, Expect(f, p.Query(allowed)), bx, SendBytewise(p.Done()), ba, ExpectClosed()),
		append(cli, SendBytewise(p.Query(allowed), p.Query(denied)), Expect(f, p.Done()), bc))
	wantVerdicts(t, h, "", rule)
}

// A client that half-closes after sending gets the answers to what it
// sent; the server sees the end after the statement.
func testHalfClose(t *testing.T, p Peer) {
	h := harness(t, p)
	h.TCP = true
	f := p.Framing()
	srv, cli := login(p)
	h.Run(t,
		append(srv, Expect(f, p.Query(allowed)), ExpectClosed(), Send(p.Done())),
		append(cli, Send(p.Query(allowed)), CloseWrite(), Expect(f, p.Done()), ExpectClosed()))
}

// Drain closes an idle session at once.
func testDrainIdle(t *testing.T, p Peer) {
	h := harness(t, p)
	srv, cli := login(p)
	h.Run(t, append(srv, ExpectClosed()), append(cli, Do(func() { h.Session().Drain() }), ExpectClosed()))
}

// Drain closes a busy session once the answer it waits for is delivered.
func testDrainBusy(t *testing.T, p Peer) {
	h := harness(t, p)
	f := p.Framing()
	srv, cli := login(p)
	h.Run(t,
		append(srv, Expect(f, p.Query(allowed)), Do(func() { h.Session().Drain() }), Send(p.Done()), ExpectClosed()),
		append(cli, Send(p.Query(allowed)), Expect(f, p.Done()), ExpectClosed()))
}

// idle_timeout closes an idle session with the protocol's word for it.
func testIdleTimeout(t *testing.T, p Peer) {
	h := harness(t, p)
	h.Env.Limits.IdleTimeout = 50 * time.Millisecond
	f := p.Framing()
	srv, cli := login(p)
	h.Run(t,
		append(srv, Expect(f, p.Query(allowed)), Send(p.Done()), ExpectClosed()),
		append(cli, Send(p.Query(allowed)), Expect(f, p.Done()), p.IdleClosed(), ExpectClosed()))
	if n := h.Counted(relay.IdleClosed); n != 1 {
		t.Errorf("%d sessions closed idle, want 1", n)
	}
}

// TLS on the client leg (the relay's certificate), the server leg
// (upstream_tls require) or both.
func testTLS(t *testing.T, p Peer, client, server bool) {
	h := harness(t, p)
	h.TCP = true
	pki := NewPKI(t)
	var legs Legs
	if client {
		cfg := pki.ServerConfig(t, "sqlfw.test")
		h.Env.ClientTLS = func() *tls.Config { return cfg }
		legs.Client = pki.ClientConfig("sqlfw.test")
	}
	if server {
		h.Upstream = relay.Upstream{Network: "tcp", Addr: "db.test:1", TLS: pki.ClientConfig("db.test"), TLSMode: "require"}
		legs.Server = pki.ServerConfig(t, "db.test")
	}
	f := p.Framing()
	srv, cli := p.Login(legs)
	s := h.Run(t,
		append(srv, Expect(f, p.Query(allowed)), Send(p.Done()), ExpectClosed()),
		append(cli, Send(p.Query(allowed)), Expect(f, p.Done())))
	if s == nil {
		t.Fatal("no session registered")
	}
	info := s.Info()
	if (info.ClientTLS != "") != client || (info.ServerTLS != "") != server {
		t.Errorf("session's TLS: client %q, server %q; want client %v, server %v", info.ClientTLS, info.ServerTLS, client, server)
	}
	var wantC, wantS uint64
	if client {
		wantC = 1
	}
	if server {
		wantS = 1
	}
	if c, s := h.Counted(relay.TLSClientOK), h.Counted(relay.TLSServerOK); c != wantC || s != wantS {
		t.Errorf("handshakes: client %d, server %d; want %d and %d", c, s, wantC, wantS)
	}
}

// A client that asks for TLS and then stalls its handshake is closed after
// startup_timeout, not a fixed time of the relay's own (the script's reads
// wait 5 s).
func testTLSStall(t *testing.T, p Peer) {
	h := harness(t, p)
	h.TCP = true
	cfg := SelfSigned(t)
	h.Env.ClientTLS = func() *tls.Config { return cfg }
	h.Env.Limits.StartupTimeout = 100 * time.Millisecond
	srv, cli := p.TLSRequest()
	h.Run(t, srv, append(cli, ExpectClosed()))
	if n := h.Counted(relay.TLSClientFail); n != 1 {
		t.Errorf("%d client handshakes failed, want 1", n)
	}
}

// A message larger than max_message_bytes gets the protocol's answer and
// the session closes; nothing of it reaches the server.
func testOversized(t *testing.T, p Peer) {
	h := harness(t, p)
	h.Env.Limits.MaxMessageBytes = 1024
	srv, cli := login(p)
	h.Run(t, append(srv, ExpectClosed()),
		append(cli, SendAside(p.Query("select '"+strings.Repeat("x", 2048)+"'")), p.TooLarge(), ExpectClosed()))
	if n := h.Counted(relay.ProtocolErrors); n != 1 {
		t.Errorf("%d protocol errors, want 1", n)
	}
}

// A message cut short by the client's end never reaches the server.
func testTruncated(t *testing.T, p Peer) {
	h := harness(t, p)
	h.TCP = true
	srv, cli := login(p)
	q := p.Query("select 1")
	h.Run(t, append(srv, ExpectClosed()),
		append(cli, Send(q[:len(q)-3]), CloseWrite(), ExpectClosed()))
}
