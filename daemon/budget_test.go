package daemon

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/relay/pg/pgtest"
)

// The daemon's bounds across sessions (budget.go), through PostgreSQL
// sessions: 53200 is the SQLSTATE a session gets when the budget is spent,
// 53300 the one of a connection refused by max_connections.

// All sessions together hold at most max_buffered_bytes of messages being
// read whole; beyond it a session waits, then gets 53200.
func TestBufferBudgetBoundsMemory(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	const bound = 32 << 20
	d := startConfig(t, &Config{ControlSocket: "none", MaxBufferedBytes: bound, Databases: []Database{{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.Addr(),
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
	conns := make([]*pgtest.Client, sessions)
	for i := range conns {
		conns[i] = dialRaw(t, addr)
		conns[i].Startup()
	}
	// a Query claiming 30 MB; 8 MB of it arrive, then the client stalls.
	// One payload for all, so that the test's own heap stays small.
	payload := append(binary.BigEndian.AppendUint32([]byte{'Q'}, 30<<20), make([]byte, 8<<20)...)
	before := liveHeap()
	for _, rc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			go rc.Conn.Write(payload)
			_ = rc.Conn.SetReadDeadline(time.Now().Add(4 * time.Second))
			m, err := rc.ReadMsg()
			if err == nil && string(pgtest.Field(m, 'C')) == "53200" {
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
		t.Errorf("%d of %d sessions were refused with %s, want most (the bound holds about four)", refused, sessions, "53200")
	}
	for _, rc := range conns {
		rc.Conn.Close()
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
	rc.Startup()
	rc.Write(query("select 1"))
	rc.ReadUntilReady()
}

func TestConnectionLimits(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	up := fs.Addr()
	d := startConfig(t, &Config{ControlSocket: "none", MaxClientConnections: 3, Databases: []Database{
		{Name: "a", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up, MaxConnections: 2},
		{Name: "b", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up},
	}})
	// Connections that have sent no startup message hold no slot: a
	// health probe, a client still opening.
	p1, p2 := dialRaw(t, d.Addr("a").String()), dialRaw(t, d.Addr("a").String())
	defer p1.Conn.Close()
	defer p2.Conn.Close()
	for d.databases()[0].stats.connActive.Load() != 2 {
		time.Sleep(10 * time.Millisecond)
	}
	a1, a2 := dialRaw(t, d.Addr("a").String()), dialRaw(t, d.Addr("a").String())
	a1.Startup()
	a2.Startup()
	a3 := dialRaw(t, d.Addr("a").String())
	a3.Write(pgtest.StartupMsg())
	if m := pgtest.WantFatal(t, a3, "53300"); !bytes.Contains(pgtest.Field(m, 'M'), []byte("max_connections 2")) {
		t.Errorf("third connection to a: %q, want it to name max_connections", pgtest.Field(m, 'M'))
	}
	b1 := dialRaw(t, d.Addr("b").String())
	b1.Startup()
	b2 := dialRaw(t, d.Addr("b").String())
	b2.Write(pgtest.StartupMsg())
	if m := pgtest.WantFatal(t, b2, "53300"); !bytes.Contains(pgtest.Field(m, 'M'), []byte("max_client_connections 3")) {
		t.Errorf("fourth connection overall: %q, want it to name max_client_connections", pgtest.Field(m, 'M'))
	}
	a1.Conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for d.databases()[0].admitted.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	a4 := dialRaw(t, d.Addr("a").String())
	a4.Startup() // room again
	a4.Write(query("select 1"))
	a4.ReadUntilReady()
	if n := d.databases()[0].stats.connLimited.Load() + d.databases()[1].stats.connLimited.Load(); n != 2 {
		t.Errorf("connections_limited %d, want 2", n)
	}
}
