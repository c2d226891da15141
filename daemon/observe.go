package daemon

// The observer every protocol's sessions report to (relay.Observer): it
// counts into the database's counters and per-rule counts, keeps each
// session's tally for fwctl connections, logs verdicts (at most one line per
// rule and session every logRepeatEvery, logrl.go) and audits them.

import (
	"log/slog"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
)

// observer is one database's relay.Observer.
type observer struct {
	d  *Daemon
	db *database
}

// Count adds to one of the database's counters.
func (o *observer) Count(c relay.Counter, n uint64) {
	st := &o.db.stats
	switch c {
	case relay.ConnRefused:
		st.connRefused.Add(n)
	case relay.IdleClosed:
		st.idleClosed.Add(n)
	case relay.TLSClientOK:
		st.tlsClientOK.Add(n)
	case relay.TLSClientFail:
		st.tlsClientFail.Add(n)
	case relay.TLSServerOK:
		st.tlsServerOK.Add(n)
	case relay.TLSServerFail:
		st.tlsServerFail.Add(n)
	case relay.CancelRequests:
		st.cancels.Add(n)
	case relay.ProtocolErrors:
		st.protocolErrs.Add(n)
	case relay.BytesToServer:
		st.bytesToServer.Add(n)
	case relay.BytesToClient:
		st.bytesToClient.Add(n)
	default:
		switch {
		case c >= relay.TLSClientFailBy && c < relay.TLSServerFailBy:
			st.tlsFailBy[0][c-relay.TLSClientFailBy].Add(n)
		case c >= relay.TLSServerFailBy && c < relay.TLSServerFailBy+relay.Counter(relay.NumTLSFailures):
			st.tlsFailBy[1][c-relay.TLSServerFailBy].Add(n)
		}
	}
}

// Open registers a session and audits its start.
func (o *observer) Open(s relay.Session, log *slog.Logger) (relay.SessionObserver, bool) {
	so := &sessionObserver{d: o.d, db: o.db, s: s, log: log}
	so.tally.since = s.Info().Since
	if !o.d.register(s, so) {
		return nil, false
	}
	if a := o.d.audit; a != nil {
		a.record(auditRecord{at: time.Now(), event: "session_start", s: s})
	}
	return so, true
}

// sessionObserver is one session's: its tally, its log and the verdict
// lines it held back.
type sessionObserver struct {
	d     *Daemon
	db    *database
	s     relay.Session
	log   *slog.Logger
	tally sessionTally
	// logs limits repeated verdict lines (logrl.go); the session's
	// client-to-server goroutine is the only one that judges.
	logs logLimiter
}

// Judged counts, logs and audits a verdict.
func (so *sessionObserver) Judged(v engine.Verdict, typ byte, at time.Time, el time.Duration) {
	st := &so.db.stats
	st.evalNanos.Add(uint64(el))
	st.messages.Add(1)
	so.verdict(&v, typ, at, el)
}

// Applied counts, logs and audits a remembered verdict applied to an
// execution of a prepared statement.
func (so *sessionObserver) Applied(v engine.Verdict, typ byte, at time.Time) {
	so.db.stats.executions.Add(1)
	so.verdict(&v, typ, at, 0)
}

// verdict counts, logs and audits the verdict of one message.
func (so *sessionObserver) verdict(v *engine.Verdict, typ byte, at time.Time, el time.Duration) {
	db := so.db
	st := &db.stats
	st.statements.Add(uint64(v.Statements))
	so.tally.count(v, db.mode(v)) // per connection and per rule
	db.rules.count(v)
	if isDrift(v) {
		st.drift.Add(1)
	}
	if v.ParseError {
		st.parseErrors.Add(1)
	}
	outcome := "allowed"
	switch {
	case v.Action == engine.ActionAllow:
		st.allowed.Add(1)
	case v.Action == engine.ActionLog:
		st.logged.Add(1)
		outcome = "logged"
		if ok, n := so.logs.allow(logKey{outcome, v.RuleID}, at); ok {
			so.log.Info("statement logged", "rule", v.RuleID, "reason", v.Reason, "message", string(typ), "repeated", n)
		}
	case v.Action.Denies():
		mode := db.mode(v)
		if mode == ModeEnforce {
			st.denied.Add(1)
			outcome = "blocked"
		} else {
			st.wouldDeny.Add(1)
			outcome = "would_block"
		}
		// one line per rule and session every logRepeatEvery, with the
		// count of those in between (logrl.go)
		ok, n := so.logs.allow(logKey{outcome, v.RuleID}, at)
		if !ok {
			break
		}
		switch mode {
		case ModeEnforce:
			so.log.Warn("statement blocked", "rule", v.RuleID, "action", v.Action.String(), "reason", v.Reason, "message", string(typ), "statements", v.Statements, "repeated", n)
		case ModeMonitor:
			so.log.Warn("statement denied by policy, allowed by monitor mode", "rule", v.RuleID, "reason", v.Reason, "message", string(typ), "repeated", n)
		default:
			so.log.Warn("detect: enforce would block this statement", "rule", v.RuleID, "action", v.Action.String(), "reason", v.Reason, "message", string(typ), "eval", el, "repeated", n)
		}
	}
	if a := so.d.audit; a != nil {
		a.verdict(so.s, at, v, outcome)
	}
}

// Close logs the verdict lines held back, audits the session's end and
// unregisters it.
func (so *sessionObserver) Close() {
	so.logs.flush(func(k logKey, n int) {
		so.log.Info("verdict lines held back at the end of the session", "outcome", k.outcome, "rule", k.rule, "repeated", n)
	})
	if a := so.d.audit; a != nil {
		a.record(auditRecord{at: time.Now(), event: "session_end", s: so.s})
	}
	so.d.unregister(so.s)
}
