package daemon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/wire/pg"
)

// upstreamFunc runs serve for every connection to a new listener and
// returns its address.
func upstreamFunc(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// scriptedUpstream reads the startup packet and then sends hello (nil:
// nothing at all) and reads and discards whatever comes, without ever
// answering more: a server that went silent.
func scriptedUpstream(t *testing.T, hello []byte) string {
	t.Helper()
	return upstreamFunc(t, func(c net.Conn) {
		if hello != nil {
			if _, err := pg.ReadStartup(c, nil); err != nil {
				return
			}
			c.Write(hello)
		}
		io.Copy(io.Discard, c)
	})
}

func startupMsg() []byte {
	b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "u", "database": "d"}}).Encode(nil)
	return b
}

func wantFatal(t *testing.T, rc *rawClient, code string) []byte {
	t.Helper()
	m, err := rc.readMsg()
	for err == nil && m[0] != pg.MsgErrorResponse {
		m, err = rc.readMsg()
	}
	if err != nil || string(pg.ErrorField(m, 'S')) != "FATAL" || string(pg.ErrorField(m, 'C')) != code {
		t.Fatalf("got %q, %v; want FATAL %s", m, err, code)
	}
	if _, err := rc.readMsg(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after the FATAL error the connection is still open (%v)", err)
	}
	return m
}

// A server that accepts and never answers, or asks for a password and then
// goes silent, gets the client 08006 within the configured bounds instead
// of a wait without end.
func TestSilentUpstreamTimesOut(t *testing.T) {
	askPassword, _ := (&pgproto3.AuthenticationCleartextPassword{}).Encode(nil)
	for _, tc := range []struct {
		name  string
		hello []byte
		want  string
	}{
		{"accepts and never answers", nil, "did not answer the connection"},
		{"asks for a password, then silence", askPassword, "did not complete authentication"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := scriptedUpstream(t, tc.hello)
			d := startConfig(t, &Config{ControlSocket: "none", Databases: []Database{{
				Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up,
				ServerReplyTimeout: 300 * time.Millisecond, AuthTimeout: 800 * time.Millisecond,
			}}})
			rc := dialRaw(t, d.Addr("t").String())
			rc.write(startupMsg())
			if tc.hello != nil {
				m, err := rc.readMsg()
				if err != nil || m[0] != 'R' {
					t.Fatalf("want the password request relayed, got %q, %v", m, err)
				}
				pw, _ := (&pgproto3.PasswordMessage{Password: "secret"}).Encode(nil)
				rc.write(pw)
			}
			m := wantFatal(t, rc, sqlstateConnectionFailure)
			if !bytes.Contains(pg.ErrorField(m, 'M'), []byte(tc.want)) {
				t.Errorf("message %q, want it to say %q", pg.ErrorField(m, 'M'), tc.want)
			}
		})
	}
}

// A client that half-closes after sending still gets the answer.
func TestHalfCloseAnswered(t *testing.T) {
	fs := newFakeServer(t, cannedResult(3))
	_, addr := startDaemon(t, fs.ln.Addr().String(), ModeEnforce)
	for i := 0; i < 20; i++ {
		rc := dialRaw(t, addr)
		rc.startup()
		rc.write(append(query("select 1"), query("select 2")...))
		if err := rc.c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		var types []byte
		for {
			m, err := rc.readMsg()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("round %d: %v after %q", i, err, types)
				}
				break
			}
			types = append(types, m[0])
		}
		if string(types) != "TDDDCZTDDDCZ" {
			t.Fatalf("round %d: got messages %q after a half-close, want both answers (TDDDCZ twice)", i, types)
		}
	}
}

// Message types a client may not send and malformed small messages close
// the session; the server never sees them.
func TestGarbageAfterLoginNotRelayed(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	fs.got = []string{"(recording)"}
	_, addr := startDaemon(t, fs.ln.Addr().String(), ModeEnforce)
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"unknown type", []byte{'!', 0, 0, 0, 8, 'j', 'u', 'n', 'k'}},
		{"backend type from a client", []byte{'Z', 0, 0, 0, 5, 'I'}},
		{"Execute with a junk body", []byte{'E', 0, 0, 0, 7, 'a', 'b', 'c'}},
		{"Describe with a junk body", []byte{'D', 0, 0, 0, 6, 'X', 0}},
		{"Sync with a body", []byte{'S', 0, 0, 0, 6, 'x', 'y'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialRaw(t, addr)
			rc.startup()
			// the junk rides behind a valid Query in one write: nothing of
			// the write may reach the server
			rc.write(append(query("select 'before junk'"), tc.msg...))
			wantFatal(t, rc, sqlstateProtocolViolation)
			for _, q := range fs.queries() {
				if q == "select 'before junk'" {
					t.Fatalf("the server received the Query that came with the junk")
				}
			}
		})
	}
}

// Before authentication a client may not make sqlfwd hold a large message.
func TestPreAuthMessageBounded(t *testing.T) {
	askPassword, _ := (&pgproto3.AuthenticationCleartextPassword{}).Encode(nil)
	up := scriptedUpstream(t, askPassword)
	d := startConfig(t, &Config{ControlSocket: "none", Databases: []Database{{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up,
	}}})
	// a Query claiming 60 MB, and 8 MB of it; one payload for all clients
	// so that the test's own heap stays small
	payload := append(binary.BigEndian.AppendUint32([]byte{'Q'}, 60<<20), make([]byte, 8<<20)...)
	liveHeap := func() int64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	before := liveHeap()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := dialRaw(t, d.Addr("t").String())
			rc.write(startupMsg())
			if m, err := rc.readMsg(); err != nil || m[0] != 'R' {
				t.Errorf("password request: %q, %v", m, err)
				return
			}
			go rc.c.Write(payload)
			m, err := rc.readMsg()
			if err != nil || string(pg.ErrorField(m, 'C')) != sqlstateProtocolViolation {
				t.Errorf("a 60 MB message before authentication: got %q, %v; want FATAL %s", m, err, sqlstateProtocolViolation)
			}
		}()
	}
	wg.Wait()
	// 8 × 8 MB would be 64 MB held
	if grew := liveHeap() - before; grew > 8<<20 {
		t.Errorf("the live heap grew by %d MiB for 8 unauthenticated sessions, want well under their 64 MiB", grew>>20)
	}
}

// All sessions together hold at most max_buffered_bytes of messages being
// read whole; beyond it a session waits, then gets 53200.
func TestBufferBudgetBoundsMemory(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	const bound = 32 << 20
	d := startConfig(t, &Config{ControlSocket: "none", MaxBufferedBytes: bound, Databases: []Database{{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.ln.Addr().String(),
	}}})
	addr := d.Addr("t").String()
	const sessions = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	peak := int64(0)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { // the budget's own account of what is held
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			mu.Lock()
			peak = max(peak, d.budget.inUse())
			mu.Unlock()
		}
	}()
	// The live heap, measured when the sessions are quiet (every client
	// stalled, every session holding its memory or waiting for some), so
	// that no garbage made since the collection is counted.
	liveHeap := func() int64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	conns := make([]*rawClient, sessions)
	for i := range conns {
		conns[i] = dialRaw(t, addr)
		conns[i].startup()
	}
	// a Query claiming 30 MB; 8 MB of it arrive, then the client stalls.
	// One payload for all, so that the test's own heap stays small.
	payload := append(binary.BigEndian.AppendUint32([]byte{'Q'}, 30<<20), make([]byte, 8<<20)...)
	before := liveHeap()
	for _, rc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			go rc.c.Write(payload)
			_ = rc.c.SetReadDeadline(time.Now().Add(4 * time.Second))
			m, err := rc.readMsg()
			if err == nil && string(pg.ErrorField(m, 'C')) == sqlstateOutOfMemory {
				mu.Lock()
				refused++
				mu.Unlock()
			}
		}()
	}
	time.Sleep(600 * time.Millisecond) // the data is in; the waiters have not given up yet
	grew := liveHeap() - before
	wg.Wait()
	close(stop)
	<-stopped                           // peak is ours from here
	grew = max(grew, liveHeap()-before) // the refused are gone, the rest hold on
	// Without the bound the sessions would hold 20 × 8 MB; with it the
	// live heap grows by the bound plus the sessions' small fixed buffers.
	if grew > bound+(8<<20) {
		t.Errorf("the live heap grew by %d MiB, want at most the %d MiB bound plus 8 MiB", grew>>20, bound>>20)
	}
	t.Logf("the live heap grew by %d MiB; the budget held %d MiB at most", grew>>20, peak>>20)
	if peak > bound {
		t.Errorf("the sessions held %d MiB at the peak, over the %d MiB bound", peak>>20, bound>>20)
	}
	// 20 sessions × 8 MB cannot all fit in 32 MB
	if refused < sessions/2 {
		t.Errorf("%d of %d sessions were refused with %s, want most (the bound holds about four)", refused, sessions, sqlstateOutOfMemory)
	}
	for _, rc := range conns {
		rc.c.Close()
	}
	// Closed sessions give their memory back.
	deadline := time.Now().Add(5 * time.Second)
	for d.budget.inUse() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := d.budget.inUse(); n != 0 {
		t.Errorf("%d bytes of the budget still held after every session closed", n)
	}
	// and the daemon serves on
	rc := dialRaw(t, addr)
	rc.startup()
	rc.write(query("select 1"))
	rc.readUntilReady()
}

func TestConnectionLimits(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	up := fs.ln.Addr().String()
	d := startConfig(t, &Config{ControlSocket: "none", MaxClientConnections: 3, Databases: []Database{
		{Name: "a", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up, MaxConnections: 2},
		{Name: "b", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up},
	}})
	a1, a2 := dialRaw(t, d.Addr("a").String()), dialRaw(t, d.Addr("a").String())
	a1.startup()
	a2.startup()
	a3 := dialRaw(t, d.Addr("a").String())
	a3.write(startupMsg())
	if m := wantFatal(t, a3, sqlstateTooManyConnections); !bytes.Contains(pg.ErrorField(m, 'M'), []byte("max_connections 2")) {
		t.Errorf("third connection to a: %q, want it to name max_connections", pg.ErrorField(m, 'M'))
	}
	b1 := dialRaw(t, d.Addr("b").String())
	b1.startup()
	b2 := dialRaw(t, d.Addr("b").String())
	b2.write(startupMsg())
	if m := wantFatal(t, b2, sqlstateTooManyConnections); !bytes.Contains(pg.ErrorField(m, 'M'), []byte("max_client_connections 3")) {
		t.Errorf("fourth connection overall: %q, want it to name max_client_connections", pg.ErrorField(m, 'M'))
	}
	a1.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for d.dbs[0].stats.connActive.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	a4 := dialRaw(t, d.Addr("a").String())
	a4.startup() // room again
	a4.write(query("select 1"))
	a4.readUntilReady()
	if n := d.dbs[0].stats.connLimited.Load() + d.dbs[1].stats.connLimited.Load(); n != 2 {
		t.Errorf("connections_limited %d, want 2", n)
	}
}

// slowUpstream answers startup at once and every Query after wait, with a
// ReadyForQuery of status tx.
func slowUpstream(t *testing.T, wait time.Duration, tx byte) string {
	t.Helper()
	result := cannedResult(1)
	result[len(result)-1] = tx
	var hello []byte
	hello, _ = (&pgproto3.AuthenticationOk{}).Encode(hello)
	hello, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(hello)
	return upstreamFunc(t, func(c net.Conn) {
		if _, err := pg.ReadStartup(c, nil); err != nil {
			return
		}
		c.Write(hello)
		fr := pg.NewFramer(c, 0, 0, 0)
		for fr.Fill() == nil {
			for {
				m, err := fr.Next(wantAll())
				if err != nil || m == nil {
					break
				}
				if m[0] == pg.MsgQuery {
					time.Sleep(wait)
					c.Write(result)
				}
			}
			fr.Take()
		}
	})
}

func TestIdleTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		tx   byte
		code string
	}{
		{"idle session", 'I', sqlstateIdleSession},
		{"idle in transaction", 'T', sqlstateIdleInTransaction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The server takes 600 ms per query, longer than either
			// timeout: a session waiting for its answer is not idle.
			up := slowUpstream(t, 600*time.Millisecond, tc.tx)
			d := startConfig(t, &Config{ControlSocket: "none", Databases: []Database{{
				Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up,
				IdleTimeout: 300 * time.Millisecond, IdleInTransactionTimeout: 200 * time.Millisecond,
			}}})
			rc := dialRaw(t, d.Addr("t").String())
			rc.startup()
			rc.write(query("select slow"))
			if msgs := rc.readUntilReady(); len(msgs) != 4 {
				t.Fatalf("the slow query's answer: %d messages, want 4 (the session was closed while busy?)", len(msgs))
			}
			// now idle, in the state the answer left
			m := wantFatal(t, rc, tc.code)
			if !bytes.Contains(pg.ErrorField(m, 'M'), []byte("timeout")) {
				t.Errorf("message %q", pg.ErrorField(m, 'M'))
			}
			if n := d.dbs[0].stats.idleClosed.Load(); n != 1 {
				t.Errorf("idle_closed %d, want 1", n)
			}
		})
	}
	// without timeouts an idle session stays
	fs := newFakeServer(t, cannedResult(1))
	_, addr := startDaemon(t, fs.ln.Addr().String(), ModeEnforce)
	rc := dialRaw(t, addr)
	rc.startup()
	time.Sleep(500 * time.Millisecond)
	rc.write(query("select 1"))
	rc.readUntilReady()
}
