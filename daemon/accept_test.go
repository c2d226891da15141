package daemon

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"sync"
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
