package daemon

import "time"

// logRepeatEvery is how often one session logs the same rule's verdict: the
// first one at once, then one line per interval with the count of those in
// between ("repeated"). A pgbench run in monitor mode would otherwise write
// a line per statement, more than journald keeps (its default rate limit
// drops lines beyond 10,000 in 30 s). Every verdict is still counted and
// audited.
const logRepeatEvery = 5 * time.Second

// logLimiter belongs to one session's toServer goroutine (no lock).
type logLimiter struct {
	entries map[logKey]*logEntry
}

// logKey is what makes two verdict lines the same event.
type logKey struct{ outcome, rule string }

type logEntry struct {
	last     time.Time
	repeated int // verdicts since the last line
}

// allow reports whether the event key may be logged at now, and how many
// events of that key were held back since the last line.
func (l *logLimiter) allow(key logKey, now time.Time) (bool, int) {
	e := l.entries[key]
	if e == nil {
		if l.entries == nil {
			l.entries = map[logKey]*logEntry{}
		}
		l.entries[key] = &logEntry{last: now}
		return true, 0
	}
	if now.Sub(e.last) < logRepeatEvery {
		e.repeated++
		return false, 0
	}
	n := e.repeated
	e.last, e.repeated = now, 0
	return true, n
}

// flush calls f for every key with events held back, and forgets them.
func (l *logLimiter) flush(f func(key logKey, repeated int)) {
	for k, e := range l.entries {
		if e.repeated > 0 {
			f(k, e.repeated)
		}
	}
	l.entries = nil
}
