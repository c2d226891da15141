package daemon

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLogLimiter(t *testing.T) {
	var l logLimiter
	t0 := time.Unix(1000, 0)
	k := logKey{"would_block", "no-unfiltered-writes"}
	lines, held := 0, 0
	for i := 0; i < 1000; i++ { // 1,000 verdicts over 20 s
		if ok, n := l.allow(k, t0.Add(time.Duration(i)*20*time.Millisecond)); ok {
			lines++
			held += n
		}
	}
	if lines != 4 {
		t.Errorf("%d lines for 1,000 verdicts of one rule over 20 s, want 4 (one per %v)", lines, logRepeatEvery)
	}
	if ok, _ := l.allow(logKey{"would_block", "other-rule"}, t0); !ok {
		t.Error("another rule's first verdict was held back")
	}
	rest := 0
	l.flush(func(key logKey, n int) { rest += n })
	if held+rest+lines != 1000 {
		t.Errorf("lines %d + counted in lines %d + flushed %d = %d, want every one of the 1,000 verdicts accounted for", lines, held, rest, held+rest+lines)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A monitor-mode session that sends the same denied statement 300 times
// writes one line for it, and one at its end with the count.
func TestMonitorModeLogsRepeatsOnce(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	var logs syncBuffer
	d, err := New(&Config{ControlSocket: "none", Databases: []Database{{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.Addr(), Mode: ModeMonitor,
	}}}, slog.New(slog.NewTextHandler(&logs, nil)), "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := contextWithTimeout(5 * time.Second)
		defer cancel()
		d.Stop(ctx)
	}()
	rc := dialRaw(t, d.Addr("t").String())
	rc.Startup()
	for i := 0; i < 300; i++ {
		rc.Write(query("delete from t"))
		rc.ReadUntilReady()
	}
	rc.Conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "held back") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out := logs.String()
	if n := strings.Count(out, "statement denied by policy, allowed by monitor mode"); n != 1 {
		t.Errorf("%d monitor-mode lines for 300 identical verdicts within %v, want 1", n, logRepeatEvery)
	}
	if !strings.Contains(out, "repeated=299") {
		t.Errorf("no end-of-session line with repeated=299:\n%s", out)
	}
	if got := d.databases()[0].stats.wouldDeny.Load(); got != 300 {
		t.Errorf("would-deny counter %d, want all 300 counted", got)
	}
}
