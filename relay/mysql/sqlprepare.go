package mysql

// The verdict memory of SQL-level prepared statements: PREPARE name FROM
// '...' in a COM_QUERY, run later by EXECUTE name [USING ...], which
// carries nothing of what it runs. The dialect reports what a text does
// by name (engine.SQLOp, engine/mysql sqlprepare.go); the session applies
// it when the server answers, as the server does:
//
//   - a PREPARE the server accepts replaces the name's statement; one it
//     refuses leaves the name without one (MariaDB and MySQL deallocate
//     the old statement before they prepare the new one);
//   - DEALLOCATE PREPARE and DROP PREPARE remove it; COM_RESET_CONNECTION
//     and COM_CHANGE_USER remove them all;
//   - a text of several statements that fails part-way may have run any
//     of them: every name it prepares or deallocates is forgotten, so that
//     a later EXECUTE of one is refused rather than judged by a text the
//     server may not hold.
//
// An EXECUTE is judged, at the moment it is sent, by the PREPARE statement
// remembered under its name, judged again when the policy was reloaded
// since (or when the policy has time windows), and under the current
// mode: a name prepared in monitor or detect mode, or before a reload,
// does not run unjudged in enforce. One prepared under another client
// character set than the session's now is refused (relexed): the server
// may prepare its text again as it reads it now. A PREPARE still unanswered (pipelined)
// counts as well. An EXECUTE in the same text as the PREPARE of its name
// is judged with that text. An EXECUTE of a name sqlfw holds nothing for
// was prepared where sqlfw cannot follow it (inside a stored procedure,
// whose body was judged at CREATE PROCEDURE, or in a text it could not
// read): it is refused (memoryUnknown). A CALL, now or when a prepared
// statement runs (COM_STMT_PREPARE of CALL p(), PREPARE s FROM 'CALL
// p()'), may EXECUTE any of the names, so it is judged with all of them.
//
// Names are compared as the server compares them, case-insensitively
// (the dialect folds them); what the server's comparison equates of
// non-ASCII letters is not copied, so a name with a non-ASCII byte may be
// any other name: a lookup judges every such record too, and only an exact
// match is replaced or removed. Over-remembering only means judging more.
//
// Statements without SQL-level operations (Verdict.SessionOps false) pay
// nothing here.

import (
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
)

// maxNames bounds the names one session's memory holds (the server's
// max_prepared_stmt_count bounds what it holds: 16382 by default); past
// it a PREPARE of a new name evicts one, whose EXECUTE is then refused.
const maxNames = 1024

const ruleSessionMemory = "session-memory"

// memoryUnknown decides an EXECUTE of a name the session holds no record
// for.
var memoryUnknown = engine.Verdict{
	Action: engine.ActionDeny, RuleID: ruleSessionMemory, Statements: 1,
	Reason: "sqlfw did not see this name prepared in this session (a PREPARE inside a stored procedure, in a text sqlfw could not read, or forgotten after a failed statement), so what it runs was never judged",
}

// unsupportedPS is reported for a COM_STMT_PREPARE of PREPARE, EXECUTE or
// DEALLOCATE, which the server refuses (ER_UNSUPPORTED_PS) and sqlfw
// answers as the server does, in every mode, without sending it.
var unsupportedPS = engine.Verdict{
	Action: engine.ActionDeny, RuleID: ruleSessionMemory, Statements: 1,
	Reason: "PREPARE, EXECUTE and DEALLOCATE PREPARE are not prepared by the server (ER_UNSUPPORTED_PS), and sqlfw would not follow the names they act on",
}

// nameRec is the statement the server holds under a name. text is never
// changed after it is made; v and eng are under the session's mu.
type nameRec struct {
	name string // folded as the dialect folds it
	// text is the PREPARE statement as the engine read it (judged again
	// with the default lexing state: engine.SQLOps), db the database it
	// was prepared in.
	text  []byte
	db    string
	calls bool // it calls a routine when executed
	v     engine.Verdict
	eng   *engine.Engine // nil: not judged alone yet
	// auto is the session's engine.LexState.AutoCreateUser v was judged
	// with: the sql_mode at the EXECUTE decides whether a GRANT creates
	// its grantee.
	auto bool
	// mode and charset are the session's lexing state at the PREPARE
	// (engine.LexState's SQLMode and ClientEncoding): an EXECUTE under
	// another may run the text as that one reads it (relexed).
	mode, charset string
}

// nameOp is what a text does to a name once the server has run it.
type nameOp struct {
	kind engine.SQLOpKind // SQLPrepare, SQLDeallocate, or SQLCallRoutine: every name forgotten
	name string
	rec  *nameRec // SQLPrepare's
}

// names is the session's records, by folded name (under mu).
type names struct {
	recs map[string]*nameRec
	// wide counts the records whose name has a non-ASCII byte.
	wide int
}

func wideName(n string) bool {
	for i := 0; i < len(n); i++ {
		if n[i] >= 0x80 {
			return true
		}
	}
	return false
}

// set replaces name's record.
func (ns *names) set(r *nameRec) {
	if ns.recs == nil {
		ns.recs = make(map[string]*nameRec)
	}
	if _, ok := ns.recs[r.name]; !ok && len(ns.recs) >= maxNames {
		for n := range ns.recs {
			ns.remove(n)
			break
		}
	}
	if _, ok := ns.recs[r.name]; !ok && wideName(r.name) {
		ns.wide++
	}
	ns.recs[r.name] = r
}

func (ns *names) remove(name string) {
	if _, ok := ns.recs[name]; ok {
		delete(ns.recs, name)
		if wideName(name) {
			ns.wide--
		}
	}
}

func (ns *names) reset() {
	clear(ns.recs)
	ns.wide = 0
}

// apply applies a text's operations after the server's answer (under mu).
func (ns *names) apply(ops []nameOp, failed bool) {
	for _, op := range ops {
		switch {
		case op.kind == engine.SQLCallRoutine:
			// a routine ran, or may have run part-way: it may have
			// prepared or deallocated any name
			ns.reset()
		case failed:
			// a refused PREPARE deallocated the old statement; in a text
			// of several statements which ran is not known
			ns.remove(op.name)
		case op.kind == engine.SQLPrepare:
			ns.set(op.rec)
		case op.kind == engine.SQLDeallocate:
			ns.remove(op.name)
		}
	}
}

// candidates appends the records an EXECUTE of name may run (under mu):
// the name's, any with a non-ASCII name that the server may take for it,
// and PREPAREs of it not answered yet (queue[head:]).
func (s *session) candidates(out []*nameRec, name string) []*nameRec {
	ns := &s.memo.names
	if r := ns.recs[name]; r != nil {
		out = append(out, r)
	}
	if ns.wide > 0 || wideName(name) {
		for n, r := range ns.recs {
			if n != name && (wideName(n) || wideName(name)) {
				out = append(out, r)
			}
		}
	}
	for i := s.head; i < len(s.queue); i++ {
		for _, op := range s.queue[i].nameOps {
			if op.kind == engine.SQLPrepare && (op.name == name || wideName(op.name) || wideName(name)) {
				out = append(out, op.rec)
			}
		}
	}
	return out
}

// allRecords appends every record and pending PREPARE (under mu).
func (s *session) allRecords(out []*nameRec) []*nameRec {
	for _, r := range s.memo.names.recs {
		out = append(out, r)
	}
	for i := s.head; i < len(s.queue); i++ {
		for _, op := range s.queue[i].nameOps {
			if op.kind == engine.SQLPrepare {
				out = append(out, op.rec)
			}
		}
	}
	return out
}

// forgetNames is the operations of an execution that calls a routine
// (read only).
var forgetNames = []nameOp{{kind: engine.SQLCallRoutine}}

// callPending reports whether a command sent and not yet answered calls a
// routine (under mu): what it prepares is not known yet.
func (s *session) callPending() bool {
	for i := s.head; i < len(s.queue); i++ {
		for _, op := range s.queue[i].nameOps {
			if op.kind == engine.SQLCallRoutine {
				return true
			}
		}
	}
	return false
}

// namesJudged adds to a COM_QUERY's verdict what the text runs by name
// and returns what it defines, to apply when the server answers. It is
// called only for a text with SQL-level operations.
func (s *session) namesJudged(sql []byte, v engine.Verdict, eng *engine.Engine) (engine.Verdict, []nameOp) {
	ops, text := eng.SQLOps(sql, &s.sess)
	if text == nil {
		return v, nil // not readable: v denies it
	}
	var defs []nameOp
	for _, o := range ops {
		switch o.Kind {
		case engine.SQLPrepare:
			lo, hi := o.InnerLo, o.InnerHi
			if hi <= lo || hi > len(text) {
				lo, hi = 0, len(text) // not located: the whole text
			}
			r := &nameRec{name: o.Name, text: append([]byte(nil), text[lo:hi]...), db: s.sess.Database,
				mode: s.sess.Lex.SQLMode, charset: s.sess.Lex.ClientEncoding}
			for _, c := range ops {
				// its own CALL (PREPARE s FROM 'CALL p()'), or, to be sure
				// where statements are not told apart, any in the text
				r.calls = r.calls || c.Kind == engine.SQLCallRoutine
			}
			defs = append(defs, nameOp{kind: engine.SQLPrepare, name: o.Name, rec: r})
		case engine.SQLDeallocate:
			defs = append(defs, nameOp{kind: engine.SQLDeallocate, name: o.Name})
		case engine.SQLExecute:
			r, forgotten := preparedHere(defs, o.Name)
			switch {
			case r != nil:
				// its PREPARE is a statement of this text, judged with it;
				// alone, for the values EXECUTE binds
				if r.v.BareParams || v.BareParams {
					v = s.stronger(v, s.recordsVerdict([]*nameRec{r}, 0, o.Using))
				}
				if r.calls {
					defs = append(defs, forgetNames...)
				}
			case forgotten:
				// a CALL before it in this text may have prepared it
				s.obs.Judged(memoryUnknown, observeExecute, time.Now(), 0)
				v = s.stronger(v, memoryUnknown)
			default:
				v = s.stronger(v, s.executeVerdict(o.Name, 0, o.Using))
				if s.namesCall(o.Name) {
					defs = append(defs, forgetNames...)
				}
			}
		case engine.SQLCallRoutine:
			if !preparedCall(ops, o.Stmt) {
				v = s.stronger(v, s.callVerdict(0))
				defs = append(defs, forgetNames...)
			}
		}
	}
	return v, defs
}

// preparedHere returns the record of name that defs (the operations
// before) prepare, unless a later one deallocates it; forgotten when a
// call among them came after its PREPARE, or before none.
func preparedHere(defs []nameOp, name string) (here *nameRec, forgotten bool) {
	for _, d := range defs {
		switch {
		case d.kind == engine.SQLCallRoutine:
			here, forgotten = nil, true
		case d.name == name:
			here, forgotten = d.rec, false
		}
	}
	return here, forgotten
}

// namesCall reports whether a record an EXECUTE of name may run calls a
// routine.
func (s *session) namesCall(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.candidates(nil, name) {
		if r.calls {
			return true
		}
	}
	return false
}

// preparedCall: the call of statement i is a PREPARE's, which calls when
// it is executed.
func preparedCall(ops []engine.SQLOp, i int) bool {
	for _, o := range ops {
		if o.Stmt == i && o.Kind == engine.SQLPrepare {
			return true
		}
	}
	return false
}

// executeVerdict is the verdict on running what the server holds under
// name, with the values of its USING (nil: none). depth bounds CALLs
// followed through prepared statements.
func (s *session) executeVerdict(name string, depth int, using []string) engine.Verdict {
	s.mu.Lock()
	cands := s.candidates(nil, name)
	pending := s.callPending()
	s.mu.Unlock()
	if len(cands) == 0 || pending {
		s.obs.Judged(memoryUnknown, observeExecute, time.Now(), 0)
		return memoryUnknown
	}
	return s.recordsVerdict(cands, depth, using)
}

// callVerdict is the verdict on a CALL: the procedure may EXECUTE any
// name.
func (s *session) callVerdict(depth int) engine.Verdict {
	s.mu.Lock()
	cands := s.allRecords(nil)
	s.mu.Unlock()
	return s.recordsVerdict(cands, depth, nil)
}

// relexed decides an EXECUTE of a name prepared under another client
// character set than the session's now (lexstate.go sameLexing). MariaDB
// prepares a statement again when a table it uses has changed since
// (ALTER TABLE, another session's DDL), and reads its text again then in
// the session's character set of that moment: a condition that was one
// string in utf8mb4 may be a tautology in gbk (measured on MariaDB 10.11:
// e2e TestRound10Reprepare). The text sqlfw kept is the one read at the
// PREPARE, and a PREPARE's text is always quoted, so its reading may
// differ: it is refused; a PREPARE in the session's present character set
// runs.
var relexed = engine.Verdict{
	Action: engine.ActionDeny, RuleID: ruleSessionMemory, Statements: 1,
	Reason: "this name was prepared under another client character set than the session's now, and the server reads its text again in the present one when a table it uses has changed; PREPARE it again",
}

// recordsVerdict is the strongest verdict of the records, executed with
// the values of using (nil: not known).
func (s *session) recordsVerdict(recs []*nameRec, depth int, using []string) engine.Verdict {
	v := engine.Verdict{Action: engine.ActionAllow, Statements: 1}
	for _, r := range recs {
		rv := s.recordVerdict(r)
		if rv.BareParams && using != nil {
			// its values decide (bound.go): judged with them, not kept
			rv = s.usingVerdict(r, using)
		}
		v = s.stronger(v, rv)
		if !sameLexing(r.mode, r.charset, &s.sess.Lex) {
			s.obs.Judged(relexed, observeExecute, time.Now(), 0)
			v = s.stronger(v, relexed)
		}
		if r.calls && depth == 0 {
			v = s.stronger(v, s.callVerdict(depth+1))
		}
	}
	return v
}

// recordVerdict judges a record alone, again when the engine changed
// since or the policy reads the time, and reports the verdict when it
// judged.
func (s *session) recordVerdict(r *nameRec) engine.Verdict {
	cur := s.env.Engine()
	s.mu.Lock()
	v, eng, auto := r.v, r.eng, r.auto
	s.mu.Unlock()
	if eng == cur && !cur.Policy().UsesTime() && auto == s.sess.Lex.AutoCreateUser {
		s.obs.Applied(v, observeExecute, time.Now())
		return v
	}
	// as the engine read it at the PREPARE (the default lexing state), in
	// the database the server prepared it in, under the sql_mode of now
	sess := s.sess
	sess.Lex, sess.Database = engine.LexState{AutoCreateUser: s.sess.Lex.AutoCreateUser}, r.db
	j := relay.StartJudging(cur, s.meter, &sess)
	// EXECUTE ... USING binds values sqlfw does not know (bound.go)
	v = cur.JudgeBound(r.text, &sess, engine.UnknownParams)
	j.End(s.meter, s.obs, &v, observeExecute)
	s.mu.Lock()
	r.v, r.eng, r.auto = v, cur, sess.Lex.AutoCreateUser
	s.mu.Unlock()
	return v
}

// usingVerdict judges record r executed with the values of EXECUTE ...
// USING, as recordVerdict judges it with values not known.
func (s *session) usingVerdict(r *nameRec, using []string) engine.Verdict {
	cur := s.env.Engine()
	sess := s.sess
	sess.Lex, sess.Database = engine.LexState{}, r.db
	j := relay.StartJudging(cur, s.meter, &sess)
	v := cur.JudgeBound(r.text, &sess, usingValues(using))
	j.End(s.meter, s.obs, &v, observeExecute)
	return v
}

// stronger returns the verdict that blocks, of a and b: the enforced
// deny, else a deny, else a; with a's statement count.
func (s *session) stronger(a, b engine.Verdict) engine.Verdict {
	ea, eb := s.enforced(&a), s.enforced(&b)
	if (eb && !ea) || (!ea && b.Action.Denies() && !a.Action.Denies()) {
		b.Statements = a.Statements
		return b
	}
	return a
}

// prepareCalls reports what a COM_STMT_PREPARE's text does by name: an
// execution of it calls a routine (calls), or it is a PREPARE, EXECUTE or
// DEALLOCATE, which the server does not prepare (unsupported).
// e is the text's engine.SessionEffects.
func prepareCalls(eng *engine.Engine, sql []byte, sess *engine.Session, e *engine.SessionEffects) (calls, unsupported bool) {
	ops, _ := eng.SQLOps(sql, sess)
	for _, o := range ops {
		if o.Kind == engine.SQLCallRoutine {
			calls = true
		} else if e.SessionOpLead {
			// the statement itself, not one of a routine body it creates
			// (CREATE PROCEDURE p() BEGIN EXECUTE s; END prepares); one
			// that starts otherwise (a comment first) the server refuses
			// as well
			unsupported = true
		}
	}
	return calls, unsupported
}
