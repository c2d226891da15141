package daemon

// The observer every protocol's sessions report to (relay.Observer): it
// counts into the database's counters and per-rule counts, keeps each
// session's tally for fwctl connections, logs verdicts (bounded per daemon,
// database, outcome and rule, logrl.go) and audits them.

import (
	"errors"
	"fmt"
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
func (o *observer) Open(s relay.Session, log *slog.Logger) (relay.SessionObserver, *relay.Refusal) {
	so := &sessionObserver{d: o.d, db: o.db, s: s, log: log}
	info := s.Info()
	so.tally.since = info.Since
	end, err := o.d.catalogSession(o.db, info.DBName)
	if err != nil {
		log.Warn("session refused: its database's objects cannot be judged", "dbname", info.DBName, "err", err)
		return nil, catalogRefusal(info.DBName, err)
	}
	so.endCatalog = end
	if !o.d.register(s, so) {
		end()
		return nil, relay.RefuseShuttingDown
	}
	if a := o.d.audit; a != nil {
		a.record(auditRecord{at: time.Now(), event: "session_start", s: s})
	}
	return so, nil
}

// catalogRefusal is what a client whose database's catalog cannot be had
// is told: which database, and whether the bound or the read stopped it;
// the read's own error (which may name hosts) stays in sqlfwd's log.
func catalogRefusal(dbname string, err error) *relay.Refusal {
	why := "its catalog could not be read in time (the reason is in sqlfwd's log)"
	if errors.Is(err, errCatalogsFull) {
		why = err.Error()
	}
	return &relay.Refusal{Reason: relay.Unavailable, Msg: fmt.Sprintf("sqlfw: the objects of database %q cannot be judged now: %s; try again later", dbname, why)}
}

// sessionObserver is one session's: its tally and its log.
type sessionObserver struct {
	d     *Daemon
	db    *database
	s     relay.Session
	log   *slog.Logger
	tally sessionTally
	// endCatalog ends the session's use of its database's catalog
	// (catalogdb.go).
	endCatalog func()
}

// Judged counts, logs and audits a verdict.
func (so *sessionObserver) Judged(v engine.Verdict, typ byte, at time.Time, el time.Duration) {
	st := &so.db.stats
	if v.ChangesSchema {
		if so.db.catalog != nil {
			if dbname := so.s.Info().DBName; dbname != "" && so.db.catalog.others.has(dbname) {
				so.db.schemaChangedIn(dbname)
			} else {
				so.db.unsettle()
				so.db.catalog.schemaChanged()
			}
		}
	}
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
		if so.d.logs.allow(logKey{db.cfg.Name, outcome, v.RuleID}, at) {
			so.log.Info(msgLoggedByPol, "rule", v.RuleID, "reason", v.Reason, "message", string(typ), "application_name", so.s.Info().Application)
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
		// bounded per daemon, database, outcome and rule, with a summary
		// of what was held back (logrl.go). The session's logger already
		// names the session, client, process (pid, uid, comm, cgroup),
		// user and db; application_name can change during the session
		// and is read here. No literal: the reason is the rule's.
		if !so.d.logs.allow(logKey{db.cfg.Name, outcome, v.RuleID}, at) {
			break
		}
		app := so.s.Info().Application
		switch mode {
		case ModeEnforce:
			so.log.Warn(msgBlocked, "rule", v.RuleID, "action", v.Action.String(), "reason", v.Reason, "message", string(typ), "statements", v.Statements, "application_name", app)
		case ModeMonitor:
			so.log.Warn(msgWouldBlock, "rule", v.RuleID, "reason", v.Reason, "message", string(typ), "application_name", app)
		default:
			so.log.Warn(msgDetect, "rule", v.RuleID, "action", v.Action.String(), "reason", v.Reason, "message", string(typ), "eval", el, "application_name", app)
		}
	}
	if a := so.d.audit; a != nil {
		a.verdict(so.s, at, v, outcome)
	}
}

// Close audits the session's end and unregisters it.
func (so *sessionObserver) Close() {
	if a := so.d.audit; a != nil {
		a.record(auditRecord{at: time.Now(), event: "session_end", s: so.s})
	}
	so.d.unregister(so.s)
	if so.endCatalog != nil {
		so.endCatalog()
		so.endCatalog = nil
	}
}
