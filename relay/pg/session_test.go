package pg

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	wire "github.com/sqlfw/sqlfw/wire/pg"
)

func TestBlockedQueryNeverReachesServerAndSessionGoesOn(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	fs.Record()
	_, addr := startProxy(t, fs.Addr(), modeEnforce)
	rc := dialRaw(t, addr)
	rc.Startup()

	rc.Write(query("delete from accounts"))
	msgs := rc.ReadUntilReady()
	// The fake server answers the poison like any query; a real server
	// answers it with a syntax error, which the e2e tests cover. Here we
	// check what the server received.
	_ = msgs
	rc.Write(query("select 1"))
	rc.ReadUntilReady()

	got := fs.Queries()
	if len(got) != 2 || !strings.HasPrefix(got[0], "sqlfw_blocked_") || got[1] != "select 1" {
		t.Fatalf("server received %q, want the poison then \"select 1\"", got)
	}
	for _, q := range got {
		if strings.Contains(q, "accounts") {
			t.Fatalf("the blocked statement reached the server: %q", q)
		}
	}
}

func TestMonitorModeForwardsDenied(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	fs.Record()
	_, addr := startProxy(t, fs.Addr(), modeMonitor)
	rc := dialRaw(t, addr)
	rc.Startup()
	rc.Write(query("delete from accounts"))
	rc.ReadUntilReady()
	if got := fs.Queries(); len(got) != 1 || got[0] != "delete from accounts" {
		t.Fatalf("server received %q, want the statement as sent", got)
	}
}

// A malformed message closes that one connection with a protocol error;
// the daemon and the other connections live on.
func TestMalformedInputClosesOnlyThatConnection(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	_, addr := startProxy(t, fs.Addr(), modeEnforce)

	other := dialRaw(t, addr)
	other.Startup()

	tests := []struct {
		name      string
		startup   bool
		send      []byte
		wantFatal bool
	}{
		{"message length below 4", true, []byte{'Q', 0, 0, 0, 2}, true},
		{"Query too large", true, []byte{'Q', 0x7f, 0, 0, 0}, true},
		{"Query without terminator", true, []byte{'Q', 0, 0, 0, 6, 'a', 'b'}, true},
		{"Parse with bad parameter count", true, []byte{'P', 0, 0, 0, 9, 0, 'x', 0, 0, 9}, true},
		{"startup length absurd", false, []byte{0x7f, 0, 0, 0, 0, 3, 0, 0}, true},
		{"startup length too small", false, []byte{0, 0, 0, 4}, true},
		{"unknown protocol", false, []byte{0, 0, 0, 8, 0, 9, 0, 0}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := dialRaw(t, addr)
			if tt.startup {
				rc.Startup()
			}
			rc.Write(tt.send)
			m, err := rc.ReadMsg()
			if tt.wantFatal {
				if err != nil || m[0] != wire.MsgErrorResponse || string(wire.ErrorField(m, 'S')) != "FATAL" || string(wire.ErrorField(m, 'C')) != sqlstateProtocolViolation {
					t.Fatalf("sent %x: got %q, %v; want FATAL %s", tt.send, m, err, sqlstateProtocolViolation)
				}
			}
			// closed: EOF, or a reset when the daemon left our bytes unread
			if _, err := rc.ReadMsg(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("sent %x: connection still open (%v), want closed", tt.send, err)
			}
		})
	}
	// the first connection still works
	other.Write(query("select 1"))
	if msgs := other.ReadUntilReady(); len(msgs) != 4 {
		t.Fatalf("other connection: got %d messages, want 4", len(msgs))
	}
}

func TestSSLRequestAnsweredN(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	_, addr := startProxy(t, fs.Addr(), modeEnforce)
	rc := dialRaw(t, addr)
	req := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), wire.CodeSSLRequest)
	rc.Write(req)
	var b [1]byte
	if _, err := io.ReadFull(rc.Conn, b[:]); err != nil || b[0] != 'N' {
		t.Fatalf("SSLRequest: got %q, %v; want 'N'", b[0], err)
	}
	rc.Startup()
}

// BenchmarkSession measures a simple Query round trip through the daemon
// (client → sqlfwd → fake server and back, over loopback) with a cached
// verdict, for a 1-row and a 100-row result. allocs/op counts the whole
// process: client, daemon and fake server.
func BenchmarkSession1Row(b *testing.B)    { benchSession(b, 1) }
func BenchmarkSession100Rows(b *testing.B) { benchSession(b, 100) }

func benchSession(b *testing.B, rows int) {
	res := cannedResult(rows)
	fs := newFakeServer(b, res)
	_, addr := startProxy(b, fs.Addr(), modeEnforce)
	rc := dialRaw(b, addr)
	rc.Startup()
	_ = rc.Conn.SetDeadline(time.Time{})
	q := query("SELECT abalance FROM pgbench_accounts WHERE aid = 4242")
	buf := make([]byte, len(res))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rc.Conn.Write(q); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(rc.Conn, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func TestGSSENCRequestAnsweredN(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	_, addr := startProxy(t, fs.Addr(), modeEnforce)
	rc := dialRaw(t, addr)
	// libpq may ask for GSS encryption, then TLS, then start up.
	for _, code := range []uint32{wire.CodeGSSENCRequest, wire.CodeSSLRequest} {
		rc.Write(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), code))
		var b [1]byte
		if _, err := io.ReadFull(rc.Conn, b[:]); err != nil || b[0] != 'N' {
			t.Fatalf("request %d: got %q, %v; want 'N'", code, b[0], err)
		}
	}
	rc.Startup()
}

// BenchmarkSessionExtended* measure an extended-protocol round trip through
// the daemon: Parse of the unnamed statement, Bind, Execute, Sync (what
// JDBC and pgx's exec modes send), and Bind/Execute/Sync of a statement
// prepared once (pgx's statement cache), for a 1-row result.
func BenchmarkSessionExtendedUnnamed(b *testing.B) { benchExtended(b, false) }
func BenchmarkSessionExtendedNamed(b *testing.B)   { benchExtended(b, true) }

func benchExtended(b *testing.B, named bool) {
	res := cannedResult(1)
	fs := newFakeServer(b, res)
	_, addr := startProxy(b, fs.Addr(), modeEnforce)
	rc := dialRaw(b, addr)
	rc.Startup()
	_ = rc.Conn.SetDeadline(time.Time{})
	const sql = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"
	var msg []byte
	reply := len(res) + 5 // BindComplete, the rows, ReadyForQuery
	if named {
		rc.Write(append(wire.AppendParse(nil, "s1", sql), 'S', 0, 0, 0, 4))
		rc.ReadUntilReady()
	} else {
		msg = wire.AppendParse(nil, "", sql)
		reply += 5 // ParseComplete
	}
	stmt := ""
	if named {
		stmt = "s1"
	}
	msg = wire.AppendBind(msg, "", stmt)
	msg = wire.AppendExecute(msg, "")
	msg = append(msg, 'S', 0, 0, 0, 4)
	buf := make([]byte, reply)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rc.Conn.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(rc.Conn, buf); err != nil {
			b.Fatal(err)
		}
	}
}
