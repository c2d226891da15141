package daemon

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/wire/pg"
)

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func query(sql string) []byte { return pg.AppendQuery(nil, sql) }

func TestBlockedQueryNeverReachesServerAndSessionGoesOn(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	fs.got = []string{"(recording)"}
	_, addr := startDaemon(t, fs.ln.Addr().String(), ModeEnforce)
	rc := dialRaw(t, addr)
	rc.startup()

	rc.write(query("delete from accounts"))
	msgs := rc.readUntilReady()
	// The fake server answers the poison like any query; a real server
	// answers it with a syntax error, which the e2e tests cover. Here we
	// check what the server received.
	_ = msgs
	rc.write(query("select 1"))
	rc.readUntilReady()

	got := fs.queries()
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
	fs.got = []string{"(recording)"}
	_, addr := startDaemon(t, fs.ln.Addr().String(), ModeMonitor)
	rc := dialRaw(t, addr)
	rc.startup()
	rc.write(query("delete from accounts"))
	rc.readUntilReady()
	if got := fs.queries(); len(got) != 1 || got[0] != "delete from accounts" {
		t.Fatalf("server received %q, want the statement as sent", got)
	}
}

// A malformed message closes that one connection with a protocol error;
// the daemon and the other connections live on.
func TestMalformedInputClosesOnlyThatConnection(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	_, addr := startDaemon(t, fs.ln.Addr().String(), ModeEnforce)

	other := dialRaw(t, addr)
	other.startup()

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
				rc.startup()
			}
			rc.write(tt.send)
			m, err := rc.readMsg()
			if tt.wantFatal {
				if err != nil || m[0] != pg.MsgErrorResponse || string(pg.ErrorField(m, 'S')) != "FATAL" || string(pg.ErrorField(m, 'C')) != sqlstateProtocolViolation {
					t.Fatalf("sent %x: got %q, %v; want FATAL %s", tt.send, m, err, sqlstateProtocolViolation)
				}
			}
			// closed: EOF, or a reset when the daemon left our bytes unread
			if _, err := rc.readMsg(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("sent %x: connection still open (%v), want closed", tt.send, err)
			}
		})
	}
	// the first connection still works
	other.write(query("select 1"))
	if msgs := other.readUntilReady(); len(msgs) != 4 {
		t.Fatalf("other connection: got %d messages, want 4", len(msgs))
	}
}

func TestSSLRequestAnsweredN(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	_, addr := startDaemon(t, fs.ln.Addr().String(), ModeEnforce)
	rc := dialRaw(t, addr)
	req := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), pg.CodeSSLRequest)
	rc.write(req)
	var b [1]byte
	if _, err := io.ReadFull(rc.c, b[:]); err != nil || b[0] != 'N' {
		t.Fatalf("SSLRequest: got %q, %v; want 'N'", b[0], err)
	}
	rc.startup()
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
	_, addr := startDaemon(b, fs.ln.Addr().String(), ModeEnforce)
	rc := dialRaw(b, addr)
	rc.startup()
	_ = rc.c.SetDeadline(time.Time{})
	q := query("SELECT abalance FROM pgbench_accounts WHERE aid = 4242")
	buf := make([]byte, len(res))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rc.c.Write(q); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(rc.c, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func TestGSSENCRequestAnsweredN(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	_, addr := startDaemon(t, fs.ln.Addr().String(), ModeEnforce)
	rc := dialRaw(t, addr)
	// libpq may ask for GSS encryption, then TLS, then start up.
	for _, code := range []uint32{pg.CodeGSSENCRequest, pg.CodeSSLRequest} {
		rc.write(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), code))
		var b [1]byte
		if _, err := io.ReadFull(rc.c, b[:]); err != nil || b[0] != 'N' {
			t.Fatalf("request %d: got %q, %v; want 'N'", code, b[0], err)
		}
	}
	rc.startup()
}

// Two databases from one configuration: each listener reaches its own
// upstream with its own mode.
func TestSeveralDatabases(t *testing.T) {
	a := newFakeServer(t, cannedResult(1))
	a.got = []string{"(recording)"}
	b := newFakeServer(t, cannedResult(2))
	b.got = []string{"(recording)"}
	cfg := &Config{ControlSocket: "none", Databases: []Database{
		{Name: "a", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: a.ln.Addr().String()},
		{Name: "b", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: b.ln.Addr().String(), Mode: ModeMonitor},
	}}
	d := startConfig(t, cfg)
	for _, name := range []string{"a", "b"} {
		rc := dialRaw(t, d.Addr(name).String())
		rc.startup()
		rc.write(query("delete from t"))
		rc.readUntilReady()
	}
	if got := a.queries(); len(got) != 1 || !strings.HasPrefix(got[0], "sqlfw_blocked_") {
		t.Errorf("database a (enforce) received %q, want the poison", got)
	}
	if got := b.queries(); len(got) != 1 || got[0] != "delete from t" {
		t.Errorf("database b (monitor) received %q, want the statement", got)
	}
	st := d.Snapshot()
	if len(st.Databases) != 2 || st.Databases[0].Denied != 1 || st.Databases[1].WouldDeny != 1 {
		t.Errorf("stats %+v, want a: 1 denied, b: 1 would deny", st.Databases)
	}
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
	_, addr := startDaemon(b, fs.ln.Addr().String(), ModeEnforce)
	rc := dialRaw(b, addr)
	rc.startup()
	_ = rc.c.SetDeadline(time.Time{})
	const sql = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"
	var msg []byte
	reply := len(res) + 5 // BindComplete, the rows, ReadyForQuery
	if named {
		rc.write(append(pg.AppendParse(nil, "s1", sql), 'S', 0, 0, 0, 4))
		rc.readUntilReady()
	} else {
		msg = pg.AppendParse(nil, "", sql)
		reply += 5 // ParseComplete
	}
	stmt := ""
	if named {
		stmt = "s1"
	}
	msg = pg.AppendBind(msg, "", stmt)
	msg = pg.AppendExecute(msg, "")
	msg = append(msg, 'S', 0, 0, 0, 4)
	buf := make([]byte, reply)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rc.c.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(rc.c, buf); err != nil {
			b.Fatal(err)
		}
	}
}
