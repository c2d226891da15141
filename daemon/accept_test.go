package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/relay"
)

// failingListener fails Accept with EMFILE fails times, then hands out one
// connection, then reports closed.
type failingListener struct {
	mu    sync.Mutex
	fails int
	conn  net.Conn
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	if c := l.conn; c != nil {
		l.conn = nil
		return c, nil
	}
	return nil, net.ErrClosed
}
func (l *failingListener) Close() error   { return nil }
func (l *failingListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

func TestAcceptBacksOffAndLogsSparingly(t *testing.T) {
	var logBuf bytes.Buffer
	var sleeps []time.Duration
	d := &Daemon{log: slog.New(slog.NewTextHandler(&logBuf, nil)), sessions: map[relay.Session]*sessionObserver{}}
	d.sleep = func(w time.Duration) { sleeps = append(sleeps, w) }
	c1, c2 := net.Pipe()
	defer c2.Close()
	ln := &failingListener{fails: 300, conn: c1}
	identified := 0
	d.wg.Add(1)
	d.acceptLoop(ln, func(c net.Conn) (arrival, error) {
		identified++
		c.Close()
		return arrival{}, net.ErrClosed // refused: nothing to serve
	})
	if len(sleeps) != 300 {
		t.Fatalf("%d back-off waits for 300 failures, want 300", len(sleeps))
	}
	want := acceptBackoffMin
	for i, w := range sleeps {
		if w != want {
			t.Fatalf("wait %d is %v, want %v (waits %v…)", i, w, want, sleeps[:min(len(sleeps), 12)])
		}
		want = min(2*want, acceptBackoffMax)
	}
	if identified != 1 {
		t.Errorf("identified %d connections after the failures, want 1", identified)
	}
	// The fake sleeps take no time, so the whole run falls in one log
	// interval: one line for the run, one when accepting again.
	if n := strings.Count(logBuf.String(), "accept failed"); n != 1 {
		t.Errorf("%d accept-failure log lines for one run of 300 failures, want 1:\n%s", n, logBuf.String())
	}
	if !strings.Contains(logBuf.String(), "accepting again") || !strings.Contains(logBuf.String(), "failures=300") {
		t.Errorf("no recovery line with the count:\n%s", logBuf.String())
	}
}

func TestAcceptBackoffLogsOncePerInterval(t *testing.T) {
	var b acceptBackoff
	t0 := time.Unix(1000, 0)
	logs := 0
	for i := 0; i < 1000; i++ {
		// 1,000 failures over 5 s
		if _, logNow, _ := b.fail(t0.Add(time.Duration(i) * 5 * time.Millisecond)); logNow {
			logs++
		}
	}
	if logs < 5 || logs > 6 {
		t.Errorf("%d log lines for 1,000 failures over 5 s, want one per second", logs)
	}
	if n := b.ok(); n != 1000 {
		t.Errorf("ok() = %d, want the run's 1000 failures", n)
	}
	if w, _, _ := b.fail(t0); w != acceptBackoffMin {
		t.Errorf("after a success the wait restarts at %v, got %v", acceptBackoffMin, w)
	}
}

// The sessions' dialer waits out a descriptor shortage (EMFILE) rather
// than telling a client that got in that the database is unreachable, and
// gives up on other errors at once, and on EMFILE when its context ends.
func TestDialRetriesAtFdLimit(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var failing atomic.Int32
	d := &Daemon{}
	d.dialer.Control = func(network, address string, c syscall.RawConn) error {
		if failing.Add(-1) >= 0 {
			return &os.SyscallError{Syscall: "socket", Err: syscall.EMFILE}
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	failing.Store(3)
	c, err := d.dial(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("three EMFILE, then room: %v, want a connection", err)
	}
	c.Close()
	if n := failing.Load(); n != -1 {
		t.Errorf("attempts: %d left over, want all three failures used and one success", n)
	}

	failing.Store(1 << 20) // never room
	short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	start := time.Now()
	if _, err := d.dial(short, "tcp", ln.Addr().String()); !errors.Is(err, syscall.EMFILE) {
		t.Errorf("EMFILE until the context ends: %v, want EMFILE", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("the dialer kept retrying after its context ended")
	}

	failing.Store(0)
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln2.Addr().String()
	ln2.Close() // nothing listens: ECONNREFUSED, not retried
	if _, err := d.dial(ctx, "tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a refused connection: %v, want ECONNREFUSED at once", err)
	}
}
