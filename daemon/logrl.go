package daemon

// Log lines bounded per daemon and reason. A verdict line (blocked, would
// block, logged) is keyed by database, outcome and rule; a session's
// warning or error line by database, level and message. Each key has a
// token bucket of logBurst lines refilled one every logRefill, shared by
// every session of the daemon: a client that opens one connection per
// statement gets no more lines than one that keeps a single session. What
// a bucket holds back is counted and said every logSummaryEvery in one
// line per key ("suppressed similar log lines", suppressed=N,
// reason=...). Every verdict is still counted in the metrics and audited.
// journald's own default limit (10,000 lines in 30 s per unit) drops lines
// without saying which; this one keeps the first of each kind and says
// what it dropped.

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

const (
	logBurst        = 10
	logRefill       = 5 * time.Second
	logSummaryEvery = 30 * time.Second
	// logMaxKeys bounds the limiter's memory: past it, new keys share one
	// bucket per kind ("(other reasons)"). Keys idle for a whole summary
	// period with a full bucket are forgotten at the summary.
	logMaxKeys = 512
)

// logKey is what makes two lines the same event. Its strings are the
// policy's rule ids, the database's name and the code's constant
// messages: a key never holds a statement's text.
type logKey struct{ db, kind, reason string }

type logBucket struct {
	tokens     float64
	last       time.Time
	suppressed uint64
}

// logLimiter is the daemon's (one for every session; safe for concurrent
// use). A suppressed line costs a map lookup under a mutex and no
// allocation (BenchmarkLogLimiterSuppressed).
type logLimiter struct {
	mu       sync.Mutex
	burst    float64
	refill   time.Duration // 0: buckets never refill (tests)
	keys     map[logKey]*logBucket
	overflow map[string]*logBucket // by kind, once keys is full
	since    time.Time             // start of the current summary period
	// total counts every suppressed line (sqlfw_log_lines_suppressed_total).
	total atomic.Uint64
}

func newLogLimiter(burst int, refill time.Duration) *logLimiter {
	return &logLimiter{burst: float64(burst), refill: refill,
		keys: map[logKey]*logBucket{}, overflow: map[string]*logBucket{}}
}

func (l *logLimiter) fill(b *logBucket, now time.Time) {
	if l.refill > 0 && now.After(b.last) {
		b.tokens += float64(now.Sub(b.last)) / float64(l.refill)
		if b.tokens > l.burst {
			b.tokens = l.burst
		}
	}
	if now.After(b.last) {
		b.last = now
	}
}

// allow reports whether a line of key may be written at now; when not, it
// is counted for the next summary. A nil limiter allows every line (a
// Daemon made without New, in tests).
func (l *logLimiter) allow(k logKey, now time.Time) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.since.IsZero() {
		l.since = now
	}
	b := l.keys[k]
	if b == nil {
		if len(l.keys) < logMaxKeys {
			b = &logBucket{tokens: l.burst, last: now}
			l.keys[k] = b
		} else if b = l.overflow[k.kind]; b == nil {
			b = &logBucket{tokens: l.burst, last: now}
			l.overflow[k.kind] = b
		}
	}
	l.fill(b, now)
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	b.suppressed++
	l.total.Add(1)
	return false
}

// suppressed is the count of every line held back since start.
func (l *logLimiter) suppressed() uint64 {
	if l == nil {
		return 0
	}
	return l.total.Load()
}

// summary calls f for every key with lines suppressed since the last
// summary (and how long that period was), resets the counts and forgets
// the keys that are idle.
func (l *logLimiter) summary(now time.Time, f func(k logKey, n uint64, period time.Duration)) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	period := now.Sub(l.since)
	if l.since.IsZero() {
		period = 0
	}
	for k, b := range l.keys {
		if b.suppressed > 0 {
			f(k, b.suppressed, period)
			b.suppressed = 0
			continue
		}
		if l.refill > 0 {
			l.fill(b, now)
			if b.tokens >= l.burst { // forgetting a full bucket changes nothing
				delete(l.keys, k)
			}
		}
	}
	for kind, b := range l.overflow {
		if b.suppressed > 0 {
			f(logKey{kind: kind, reason: "(other reasons)"}, b.suppressed, period)
		}
		delete(l.overflow, kind)
	}
	l.since = now
}

// logSummary writes the summary lines.
func (d *Daemon) logSummary(now time.Time) {
	d.logs.summary(now, func(k logKey, n uint64, period time.Duration) {
		d.log.Warn("suppressed similar log lines", "database", k.db, "kind", k.kind, "reason", k.reason,
			"suppressed", n, "in_last", period.Round(time.Second))
	})
}

// startLogSummary starts the periodic summary; the returned function stops
// it and writes the last one.
func (d *Daemon) startLogSummary() func() {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(logSummaryEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				d.logSummary(time.Now())
				return
			case now := <-tick.C:
				d.logSummary(now)
			}
		}
	}()
	return func() { close(stop); <-done }
}

// The verdict lines' messages: the observer limits them itself, before
// their attributes are built, so limitHandler lets them through.
const (
	msgBlocked     = "statement blocked"
	msgWouldBlock  = "statement denied by policy, allowed by monitor mode"
	msgDetect      = "detect: enforce would block this statement"
	msgLoggedByPol = "statement logged"
)

// limitHandler is the handler of the logger lent to a database's sessions
// (relay.Env.Log): it passes warnings and errors through the daemon's
// limiter, keyed by database, level and message (the code's constant
// messages: "cannot reach the database server", ...). Lower levels pass.
type limitHandler struct {
	next slog.Handler
	l    *logLimiter
	db   string
}

func (h *limitHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return h.next.Enabled(ctx, lv)
}

func (h *limitHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		switch r.Message {
		case msgBlocked, msgWouldBlock, msgDetect, msgLoggedByPol:
		default:
			if !h.l.allow(logKey{h.db, r.Level.String(), r.Message}, r.Time) {
				return nil
			}
		}
	}
	return h.next.Handle(ctx, r)
}

func (h *limitHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &limitHandler{next: h.next.WithAttrs(as), l: h.l, db: h.db}
}

func (h *limitHandler) WithGroup(name string) slog.Handler {
	return &limitHandler{next: h.next.WithGroup(name), l: h.l, db: h.db}
}
