package daemon

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// The limiter, on a clock the test moves: a burst per key, one line per
// refill after it, every suppressed line counted once in a summary, and
// bounded memory.
func TestLogLimiter(t *testing.T) {
	l := newLogLimiter(3, time.Second)
	t0 := time.Unix(1000, 0)
	k := logKey{"shop", "blocked", "no-unfiltered-writes"}
	lines := 0
	for i := 0; i < 100; i++ { // 100 lines at one instant
		if l.allow(k, t0) {
			lines++
		}
	}
	if lines != 3 {
		t.Errorf("%d of 100 lines of one reason at one instant written, want the burst of 3", lines)
	}
	if !l.allow(logKey{"shop", "blocked", "other-rule"}, t0) {
		t.Error("another rule's first line was held back")
	}
	if !l.allow(logKey{"other-db", "blocked", "no-unfiltered-writes"}, t0) {
		t.Error("another database's first line was held back")
	}
	// 2.5 s later: two tokens back, the rest counted
	later := 0
	for i := 0; i < 10; i++ {
		if l.allow(k, t0.Add(2500*time.Millisecond)) {
			later++
		}
	}
	if later != 2 {
		t.Errorf("%d lines 2.5 s later with one line a second, want 2", later)
	}
	got := map[logKey]uint64{}
	var period time.Duration
	l.summary(t0.Add(30*time.Second), func(k logKey, n uint64, p time.Duration) { got[k] = n; period = p })
	if len(got) != 1 || got[k] != 97+8 {
		t.Errorf("summary %v, want only %v with 105 suppressed", got, k)
	}
	if period != 30*time.Second {
		t.Errorf("summary period %v, want 30s", period)
	}
	// reported once: the next summary is empty, and the idle full buckets
	// are forgotten
	l.summary(t0.Add(60*time.Second), func(k logKey, n uint64, p time.Duration) {
		t.Errorf("second summary reports %v %d again", k, n)
	})
	if len(l.keys) != 0 {
		t.Errorf("%d idle keys kept after a summary, want 0", len(l.keys))
	}

	// memory: many distinct reasons fill logMaxKeys, then share one bucket
	t1 := t0.Add(time.Hour)
	written := 0
	for i := 0; i < 3*logMaxKeys; i++ {
		for j := 0; j < 5; j++ {
			if l.allow(logKey{"shop", "ERROR", fmt.Sprint("reason ", i)}, t1) {
				written++
			}
		}
	}
	if len(l.keys) > logMaxKeys || len(l.overflow) != 1 {
		t.Errorf("%d keys and %d overflow buckets, want at most %d and 1", len(l.keys), len(l.overflow), logMaxKeys)
	}
	if want := logMaxKeys*3 + 3; written != want {
		t.Errorf("%d lines written, want %d (a burst per key, one for all the rest)", written, want)
	}
	var sum uint64
	other := false
	l.summary(t1, func(k logKey, n uint64, p time.Duration) {
		sum += n
		other = other || k.reason == "(other reasons)"
	})
	if total := uint64(written) + sum; total != 15*logMaxKeys || !other {
		t.Errorf("written %d + suppressed %d = %d, want all %d accounted for, with an (other reasons) line (%v)", written, sum, total, 15*logMaxKeys, other)
	}
}

// A suppressed line allocates nothing.
func TestLogLimiterSuppressedAllocs(t *testing.T) {
	l := newLogLimiter(1, time.Minute)
	k := logKey{"shop", "blocked", "no-unfiltered-writes"}
	now := time.Now()
	l.allow(k, now)
	if n := testing.AllocsPerRun(1000, func() {
		if l.allow(k, now) {
			t.Fatal("allowed past the burst")
		}
	}); n != 0 {
		t.Errorf("%v allocations per suppressed line, want 0", n)
	}
}

func BenchmarkLogLimiterSuppressed(b *testing.B) {
	l := newLogLimiter(1, time.Minute)
	k := logKey{"shop", "blocked", "no-unfiltered-writes"}
	now := time.Now()
	l.allow(k, now)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.allow(k, now)
		}
	})
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

// startLogged starts a daemon with one database in mode whose log is logs
// and whose limiter never refills (the test does not depend on how long it
// takes).
func startLogged(t *testing.T, upstream string, mode Mode, logs *syncBuffer) *Daemon {
	t.Helper()
	d, err := New(&Config{ControlSocket: "none", Databases: []Database{{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: upstream, Mode: mode,
	}}}, slog.New(slog.NewTextHandler(logs, nil)), "test")
	if err != nil {
		t.Fatal(err)
	}
	d.logs.refill = 0
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := contextWithTimeout(5 * time.Second)
		defer cancel()
		d.Stop(ctx)
	})
	return d
}

// Many sessions, each blocked once (one connection per request): the
// daemon writes its burst of block lines, each naming the application,
// user, database and client, and one summary with the count of the rest.
func TestManySessionsBlockedOnceLogBounded(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	var logs syncBuffer
	d := startLogged(t, fs.Addr(), ModeEnforce, &logs)
	const sessions = 60
	for i := 0; i < sessions; i++ {
		rc := dialRaw(t, d.Addr("t").String())
		b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
			Parameters: map[string]string{"user": "app", "database": "shop", "application_name": "billing"}}).Encode(nil)
		rc.Write(b)
		rc.ReadUntilReady()
		rc.Write(query("delete from t"))
		rc.ReadUntilReady()
		rc.Conn.Close()
	}
	if got := d.databases()[0].stats.denied.Load(); got != sessions {
		t.Fatalf("denied counter %d, want %d", got, sessions)
	}
	d.logSummary(time.Now())
	out := logs.String()
	blocked := regexp.MustCompile(`(?m)^.*msg="statement blocked".*$`).FindAllString(out, -1)
	if len(blocked) != logBurst {
		t.Errorf("%d block lines for %d sessions each blocked once, want the burst of %d", len(blocked), sessions, logBurst)
	}
	for _, l := range blocked {
		for _, want := range []string{"application_name=billing", "user=app", "db=shop", "database=t", "client=", "rule="} {
			if !strings.Contains(l, want) {
				t.Errorf("block line without %s: %s", want, l)
			}
		}
		if strings.Contains(l, "delete from t") {
			t.Errorf("block line carries the statement's text: %s", l)
		}
	}
	m := regexp.MustCompile(`msg="suppressed similar log lines" database=t kind=blocked reason=(\S+) suppressed=(\d+)`).FindStringSubmatch(out)
	if m == nil || m[2] != fmt.Sprint(sessions-logBurst) {
		t.Errorf("no summary with suppressed=%d for the block lines (%q):\n%s", sessions-logBurst, m, out)
	}
	if got := d.logs.total.Load(); got != sessions-logBurst {
		t.Errorf("sqlfw_log_lines_suppressed_total's source is %d, want %d", got, sessions-logBurst)
	}
}

// A session error repeated by every session (an upstream that refuses,
// as in a redirect loop) is bounded the same way.
func TestSessionErrorsLogBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	var logs syncBuffer
	d := startLogged(t, dead, ModeEnforce, &logs)
	const sessions = 40
	for i := 0; i < sessions; i++ {
		rc := dialRaw(t, d.Addr("t").String())
		b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
			Parameters: map[string]string{"user": "app", "database": "shop"}}).Encode(nil)
		rc.Write(b)
		buf := make([]byte, 512)
		rc.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		for { // the session answers with an error and closes
			if _, err := rc.Conn.Read(buf); err != nil {
				break
			}
		}
		rc.Conn.Close()
	}
	// each session logs (or counts) its error before it answers the client
	d.logSummary(time.Now())
	out := logs.String()
	if n := strings.Count(out, `msg="cannot reach the database server"`); n != logBurst {
		t.Errorf("%d error lines for %d sessions, want the burst of %d:\n%s", n, sessions, logBurst, out)
	}
	if !strings.Contains(out, fmt.Sprintf(`kind=ERROR reason="cannot reach the database server" suppressed=%d`, sessions-logBurst)) {
		t.Errorf("no summary of the %d suppressed error lines:\n%s", sessions-logBurst, out)
	}
}
