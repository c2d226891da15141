package pg

// Verdict memory: what a PostgreSQL session remembers of the statements and
// portals the server holds by name, so that a later use of one is judged by
// what the server will run.
//
// The server keeps, per session, prepared statements (a protocol Parse, or a
// SQL PREPARE: one namespace) and portals (a protocol Bind, or a SQL DECLARE
// ... CURSOR: one namespace). A Bind, an Execute, an EXECUTE, a FETCH or a
// MOVE names one and carries nothing of its text, so sqlfwd remembers the
// text and its verdict, with the engine (policy generation) that gave it. A
// use is judged again when the engine changed since (a reload); the current
// mode applies to the verdict at each use (a switch from monitor to enforce).
//
// A record changes only when the server confirms the message that changes
// it, never when the message is sent: a refused re-Parse or re-PREPARE of a
// name leaves the server's statement in place, and so the record. Server
// replies come in the order of the client's messages, so each message that
// changes a record is queued (pending) in sending order, with its batch (the
// number of sync points sent before it):
//   - a Parse commits on its ParseComplete, a Close on its CloseComplete;
//   - an Execute of a text that PREPAREs, DEALLOCATEs, DECLAREs, CLOSEs or
//     DISCARDs commits when a later message's completion proves it ran, or
//     at its batch's ReadyForQuery; a simple Query with such statements
//     commits at its ReadyForQuery;
//   - an ErrorResponse ends the batch: the server skips the rest, so what is
//     still pending in it is dropped; an Execute or a multi-statement Query
//     that may have run before the error is committed as uncertain: a
//     definition is added beside the old one (both are judged at a use),
//     a removal is not done.
//
// Portals (protocol Bind) are recorded when sent: a refused Bind (a portal
// name in use) is an error, which aborts the transaction and with it every
// portal but a WITH HOLD cursor, whose record a Bind never replaces.
// Portals and cursors die at the end of their transaction (a ReadyForQuery
// saying idle or failed), WITH HOLD cursors at CLOSE, CLOSE ALL or DISCARD
// ALL.
//
// A use is judged again, too, when the catalog in force (engine.Catalog)
// or the session's search_path changed since the verdict: PostgreSQL
// re-analyses and rewrites a prepared statement whose relations or
// functions were changed, or whose search_path differs from its last
// planning (plancache.c RevalidateCachedQuery), and a function's body is
// looked up when it is called, so the statement runs what the objects are
// at the use, not at the Parse. A portal's plan is made at its Bind (views
// expanded then), but the functions it calls run their bodies as they are
// at the Execute: its use keeps the stronger of its verdict at the Bind and
// the one with the current catalog.
//
// A use is judged against every text the name may stand for: the committed
// record, its uncertain alternatives, and definitions still pending from
// earlier batches; a definition pending in the use's own batch replaces them
// (if it fails, the server skips the use). Over-remembering only means
// judging more.
//
// Cost: toClient frames ParseComplete, CloseComplete and ErrorResponse only
// while something is pending; the unnamed statement and portal reuse their
// buffers, so per-message Parse/Bind/Execute traffic does not allocate.

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// maxAlternatives bounds the texts one name may stand for; past it a use
// is denied (memoryUnknown).
const maxAlternatives = 8

// maxRefDepth bounds EXECUTE of a statement that EXECUTEs another.
const maxRefDepth = 8

var memoryUnknown = engine.Verdict{
	Action:     engine.ActionDeny,
	RuleID:     "session-memory",
	Reason:     "sqlfw cannot tell which statement the server holds under this name (several were sent and their outcome is unknown)",
	Statements: 1,
}

// memoryUnread is the verdict for a name sqlfw does not know in a session
// that was let through (monitor mode) a text the engine could not read and
// that may have prepared or declared it.
var memoryUnread = engine.Verdict{
	Action:     engine.ActionDeny,
	RuleID:     "session-memory",
	Reason:     "this session earlier sent a statement sqlfw could not read that may have prepared or declared this name",
	Statements: 1,
}

// stmtRec is a remembered text: a prepared statement, a portal's statement
// or a cursor's query.
type stmtRec struct {
	sql     []byte
	lex     engine.LexState // how the server lexed sql (lexstate.go)
	verdict engine.Verdict
	eng     *engine.Engine // nil: not judged yet
	// cat and path are the catalog in force and the session's search_path
	// verdict was judged with: a use with others judges again.
	cat  *engine.Catalog
	path string
	// portal: the record is a portal's or a cursor's, whose views were
	// expanded when it was made.
	portal bool
	// app is the application_name verdict was judged under: a rule's
	// applications scope decides it, and the session may change it.
	app string
	// ops are the text's SQL-level operations on named objects (nil for
	// most texts).
	ops []memoOp
	// defines: some op PREPAREs, DEALLOCATEs, DECLAREs, CLOSEs or DISCARDs.
	defines bool
	// alt are other texts the server may hold under the same name.
	alt     []*stmtRec
	unknown bool // past maxAlternatives
}

// memoOp is one SQL-level operation of a text (engine.SQLOp), with the
// PREPAREd or DECLAREd text.
type memoOp struct {
	kind  engine.SQLOpKind
	name  string
	stmt  int
	inner *stmtRec
	hold  bool
}

// portalRec is a portal or a cursor.
type portalRec struct {
	stmtRec
	batch uint64 // the batch that created it
	hold  bool   // WITH HOLD: survives its transaction
	gen   uint64 // bumped when the record is reused for another Bind
}

type pendKind uint8

const (
	pendParse pendKind = iota + 1
	pendClose
	pendExec
	pendQuery
)

// pending is a message whose effect on the records waits for the server.
type pending struct {
	kind  pendKind
	batch uint64
	name  string
	rec   *stmtRec // pendParse: the statement
	ops   []memoOp // pendExec, pendQuery
	stmts int      // pendQuery: statements in the text
	// pendClose: 'S' or 'P'; for 'P', the record and generation closed
	closeKind byte
	portal    *portalRec
	gen       uint64
}

// memo is the session's verdict memory. toServer adds to it, toClient
// commits. toClient changes records only for a pending message, so while
// nothing is pending (active is false, and only toServer can make it true)
// toServer reads and writes them without mu; otherwise mu guards them and
// the queue. ready and started are toClient's, scratch is toServer's.
type memo struct {
	mu            sync.Mutex
	stmts         map[string]*stmtRec
	unnamed       *stmtRec
	portals       map[string]*portalRec
	unnamedPortal portalRec
	portalOK      bool // unnamedPortal holds a live Bind
	q             []pending
	qh            int
	ready         uint64 // ReadyForQuery messages after startup
	started       bool
	// desync: the count of sync points may have run ahead (a Sync the
	// server ignored during COPY FROM STDIN, a Query it skipped after an
	// error): set at a CopyInResponse, at a Query inside an open extended
	// batch (memoTrack), or when a completion comes for a message queued
	// with a later batch than the server is answering. From then on an error settles what is
	// pending as uncertain instead of dropping it.
	desync  bool
	free    []*stmtRec
	scratch []*stmtRec
	// scratchNew: the batch asking for the candidates in scratch changes
	// the name itself (a Parse, Close, PREPARE... of it in the same
	// batch). toServer's.
	scratchNew bool
	// rejudged counts rejudge's engine calls (toServer's): a Bind that
	// caused one was counted as a judged message.
	rejudged uint64
	// opsBuf and nameBuf are toServer's scratch for a text's operations
	opsBuf  []memoOp
	nameBuf []byte
	// extOpen: an extended-protocol message was sent since the last Sync
	// (toServer's)
	extOpen bool
	// unread is set once a text the engine could not judge fully (a parse
	// error, a limit, an unconfirmed lexing state) that mentions PREPARE or
	// DECLARE was let through: a name sqlfw does not know may then be
	// one it prepared. toServer's.
	unread bool
	// active is set while something is pending: toClient then frames
	// ParseComplete, CloseComplete and ErrorResponse.
	active atomic.Bool
	// txEnd is the number of the last ReadyForQuery that said idle or
	// failed: portals created in batches before it are gone.
	txEnd atomic.Uint64
}

// lock takes mu if something is pending; unlock undoes it.
func (m *memo) lock() bool {
	if m.active.Load() {
		m.mu.Lock()
		return true
	}
	return false
}

func (m *memo) unlock(locked bool) {
	if locked {
		m.mu.Unlock()
	}
}

// live reports whether a portal outlived the end of its transaction.
func (m *memo) live(p *portalRec) bool {
	return p.hold || p.batch >= m.txEnd.Load()
}

// push queues a pending message; mu must be held.
func (m *memo) push(p pending) {
	m.q = append(m.q, p)
	m.active.Store(true)
}

func (m *memo) pop() {
	m.q[m.qh] = pending{}
	m.qh++
	if m.qh == len(m.q) {
		m.q, m.qh = m.q[:0], 0
		m.active.Store(false)
	}
}

func (m *memo) newRec() *stmtRec {
	if n := len(m.free); n > 0 {
		r := m.free[n-1]
		m.free = m.free[:n-1]
		return r
	}
	return &stmtRec{}
}

// recycle keeps an unnamed statement's record for the next Parse.
func (m *memo) recycle(r *stmtRec) {
	if r == nil || len(m.free) >= 4 {
		return
	}
	*r = stmtRec{sql: r.sql[:0]}
	m.free = append(m.free, r)
}

func (s *session) enforced(v *engine.Verdict) bool {
	return v.Action.Denies() && s.env.Enforces(v.Mode)
}

// stronger is the verdict of a message when b is also run: an enforced
// deny, then any deny, then a. It keeps a's statement count.
func (s *session) stronger(a, b engine.Verdict) engine.Verdict {
	if !b.Action.Denies() || s.enforced(&a) || (a.Action.Denies() && !s.enforced(&b)) {
		return a
	}
	b.Statements = a.Statements
	return b
}

// rejudge judges a remembered text, lexed as the server lexed it, and
// counts the verdict.
func (s *session) rejudge(eng *engine.Engine, r *stmtRec, typ byte) engine.Verdict {
	j := relay.StartJudging(eng, s.meter, &s.sess)
	s.followApp()
	sess := s.sess
	sess.Lex = r.lex
	sess.SchemaPending = s.ddlBatch.Load() != 0
	r.cat, r.path = eng.Catalog(), sess.SearchPath // before judging: a read may end meanwhile
	v := eng.Judge(r.sql, &sess)
	j.End(s.meter, s.obs, &v, typ)
	s.memo.rejudged++
	return v
}

// verdictOf is the verdict of a remembered text under eng, with what it
// runs by name. Called with m.mu held.
func (s *session) verdictOf(r *stmtRec, eng *engine.Engine, typ byte, batch uint64, depth int) engine.Verdict {
	s.followApp()
	app := s.sess.Application
	same := r.eng == eng && r.app == app
	objects := r.cat == eng.Catalog() && r.path == s.sess.SearchPath
	if same && objects && r.alt == nil && r.ops == nil && !r.unknown {
		return r.verdict // the usual case: nothing changed
	}
	if r.unknown || depth > maxRefDepth {
		return memoryUnknown
	}
	if !same || !objects {
		old := r.verdict
		r.verdict, r.eng, r.app = s.rejudge(eng, r, typ), eng, app
		if same && r.portal {
			// its views are the ones of its Bind
			r.verdict = s.stronger(r.verdict, old)
		}
	}
	v := r.verdict
	for _, a := range r.alt {
		v = s.stronger(v, s.verdictOf(a, eng, typ, batch, depth+1))
	}
	return s.refsVerdict(v, r.ops, nil, eng, typ, batch, depth)
}

// refsVerdict adds to v the verdicts of what ops EXECUTE and FETCH. local
// are the definitions made earlier in the same message.
func (s *session) refsVerdict(v engine.Verdict, ops, local []memoOp, eng *engine.Engine, typ byte, batch uint64, depth int) engine.Verdict {
	for i := range ops {
		op := &ops[i]
		var cands []*stmtRec
		m := &s.memo
		m.nameBuf = append(m.nameBuf[:0], op.name...)
		switch op.kind {
		case engine.SQLExecute:
			cands = s.stmtCands(m.nameBuf, batch)
		case engine.SQLFetch:
			cands = s.portalCands(m.nameBuf, batch)
		default:
			continue
		}
		// copied: verdictOf may look names up again
		var buf [4]*stmtRec
		cands = append(buf[:0], cands...)
		for _, l := range local {
			if l.name == op.name && l.inner != nil && l.stmt < op.stmt &&
				(l.kind == engine.SQLPrepare) == (op.kind == engine.SQLExecute) {
				cands = append(cands, l.inner)
			}
		}
		if len(cands) == 0 && s.memo.unread {
			v = s.stronger(v, memoryUnread)
		}
		for _, c := range cands {
			v = s.stronger(v, s.verdictOf(c, eng, typ, batch, depth+1))
		}
	}
	return v
}

// stmtCands lists the texts a statement name may stand for when a message
// of batch uses it. The slice is m.scratch.
func (s *session) stmtCands(name []byte, batch uint64) []*stmtRec {
	m := &s.memo
	out := m.scratch[:0]
	if len(name) == 0 {
		if m.unnamed != nil {
			out = append(out, m.unnamed)
		}
	} else if r := m.stmts[string(name)]; r != nil {
		out = append(out, r)
	}
	c := candList{out: out}
	for i := m.qh; i < len(m.q); i++ {
		p := &m.q[i]
		var def *stmtRec
		rm := false
		switch p.kind {
		case pendParse:
			if p.name == string(name) {
				def = p.rec
			}
		case pendClose:
			rm = p.closeKind == 'S' && p.name == string(name)
		case pendExec, pendQuery:
			for j := range p.ops {
				op := &p.ops[j]
				switch {
				case op.kind == engine.SQLPrepare && op.name == string(name) && len(name) > 0:
					def, rm = op.inner, false
				case (op.kind == engine.SQLDeallocate && (op.name == string(name) || op.name == "") && len(name) > 0) ||
					(op.kind == engine.SQLDiscardAll && len(name) > 0):
					def, rm = nil, true
				}
			}
		}
		if def != nil || rm {
			c.add(def, p.batch == batch)
		}
	}
	m.scratch, m.scratchNew = c.done(), c.curSet
	return m.scratch
}

// candList gathers the texts a name may stand for: the remembered one, then
// the pending definitions and removals in send order. The first pending
// change in the current batch drops what came before it (the batch replaces
// it if it succeeds), and changes in the current batch replace each other.
// A nil def is a removal.
type candList struct {
	out    []*stmtRec
	cur    int // index in out where this batch's definition starts
	curSet bool
}

func (c *candList) add(def *stmtRec, sameBatch bool) {
	if sameBatch {
		if !c.curSet {
			c.cur, c.curSet = len(c.out), true
		}
		c.out = c.out[:c.cur]
		if def != nil {
			c.out = append(c.out, def)
		}
	} else if def != nil && !c.curSet {
		c.out = append(c.out, def)
	}
}

func (c *candList) done() []*stmtRec {
	if c.curSet {
		c.out = append(c.out[:0], c.out[c.cur:]...)
	}
	return c.out
}

// portalCands is stmtCands for portals and cursors.
func (s *session) portalCands(name []byte, batch uint64) []*stmtRec {
	m := &s.memo
	out := m.scratch[:0]
	if len(name) == 0 {
		if m.portalOK && m.live(&m.unnamedPortal) {
			out = append(out, &m.unnamedPortal.stmtRec)
		}
	} else if p := m.portals[string(name)]; p != nil && m.live(p) {
		out = append(out, &p.stmtRec)
	}
	c := candList{out: out}
	for i := m.qh; i < len(m.q); i++ {
		p := &m.q[i]
		var def *stmtRec
		rm := false
		switch p.kind {
		case pendClose:
			rm = p.closeKind == 'P' && p.name == string(name)
		case pendExec, pendQuery:
			for j := range p.ops {
				op := &p.ops[j]
				switch {
				case op.kind == engine.SQLDeclare && op.name == string(name):
					def, rm = op.inner, false
				case (op.kind == engine.SQLClose && (op.name == string(name) || op.name == "")) || op.kind == engine.SQLDiscardAll:
					def, rm = nil, true
				}
			}
		}
		if def != nil || rm {
			c.add(def, p.batch == batch)
		}
	}
	m.scratch = c.done()
	return m.scratch
}

// memoOps turns a judged text's SQL-level operations into memoOps. The
// PREPAREd and DECLAREd texts are cut from the text the engine judged,
// which reads as is (engine.SQLOps).
func memoOps(ops []memoOp, eng *engine.Engine, sql []byte, sess *engine.Session) ([]memoOp, bool) {
	defines := false
	all, sql := eng.SQLOps(sql, sess)
	for _, o := range all {
		op := memoOp{kind: o.Kind, name: o.Name, stmt: o.Stmt, hold: o.Hold}
		switch o.Kind {
		case engine.SQLPrepare, engine.SQLDeclare:
			if o.InnerHi <= o.InnerLo {
				// not located: judge the whole statement text instead
				op.inner = &stmtRec{sql: append([]byte(nil), sql...)}
			} else {
				op.inner = &stmtRec{sql: append([]byte(nil), sql[o.InnerLo:o.InnerHi]...)}
			}
			defines = true
		case engine.SQLDeallocate, engine.SQLClose, engine.SQLDiscardAll:
			defines = true
		}
		ops = append(ops, op)
	}
	return ops, defines
}

// memoJudged adds to a Query's or Parse's verdict what the text runs by
// name, and, unless the message is blocked, queues what it defines. batch
// is the number of sync points sent before the message.
func (s *session) memoJudged(msg []byte, v engine.Verdict, eng *engine.Engine, batch uint64) (engine.Verdict, bool) {
	var sql, name []byte
	if msg[0] == wire.MsgParse {
		name, sql, _ = wire.ParseFields(msg) // validated by judge
	} else {
		sql, _ = wire.QueryText(msg)
	}
	var ops []memoOp
	defines := false
	if v.SessionOps {
		// in the scratch first: an EXECUTE or FETCH keeps nothing
		ops, defines = memoOps(s.memo.opsBuf[:0], eng, sql, &s.sess)
		s.memo.opsBuf = ops[:0]
		if defines || msg[0] == wire.MsgParse {
			ops = append([]memoOp(nil), ops...)
		}
	}
	m := &s.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	if !v.SessionOps && (v.Action.Denies() || v.ParseError) && !s.enforced(&v) && eng.SessionEffects(sql, false).MayDefine {
		m.unread = true
	}
	own := v // the text's own verdict: what it runs by name is looked up at each use
	if len(ops) > 0 {
		v = s.refsVerdict(v, ops, ops, eng, msg[0], batch, 0)
	}
	if s.enforced(&v) {
		return v, true // the poison leaves the server's records as they were
	}
	if msg[0] == wire.MsgQuery {
		if defines {
			m.push(pending{kind: pendQuery, batch: batch, ops: ops, stmts: v.Statements})
		}
		return v, false
	}
	var r *stmtRec
	if len(name) == 0 {
		r = m.newRec()
	} else {
		r = &stmtRec{}
	}
	r.sql = append(r.sql[:0], sql...)
	r.verdict, r.eng, r.ops, r.defines, r.lex, r.app = own, eng, ops, defines, s.sess.Lex, s.sess.Application
	r.cat, r.path = s.parseCat, s.parsePath
	p := pending{kind: pendParse, batch: batch, rec: r}
	if len(name) > 0 {
		p.name = string(name)
	}
	m.push(p)
	return v, false
}

// memoClose queues a Close.
func (s *session) memoClose(msg []byte, batch uint64) error {
	kind, name, err := wire.CloseTarget(msg)
	if err != nil {
		return err
	}
	m := &s.memo
	m.mu.Lock()
	p := pending{kind: pendClose, batch: batch, closeKind: kind, name: string(name)}
	if kind == 'P' {
		if len(name) == 0 {
			if m.portalOK {
				p.portal, p.gen = &m.unnamedPortal, m.unnamedPortal.gen
			}
		} else if r := m.portals[p.name]; r != nil && m.live(r) {
			p.portal, p.gen = r, r.gen
		}
	}
	m.push(p)
	m.mu.Unlock()
	return nil
}

// memoBind returns the verdict for the statement a Bind names, judged
// again when the policy changed since, and records the portal unless the
// Bind is blocked. known is false for a name the session never saw
// prepared (the server will reject the Bind). A Bind of a statement an
// earlier batch prepared is counted as an execution (relay.SessionObserver
// Applied), as MySQL's COM_STMT_EXECUTE is: pgbench -M prepared's
// statements are such Binds, and were counted nowhere.
func (s *session) memoBind(msg []byte, batch uint64) (v engine.Verdict, known, blocked bool, err error) {
	portal, name, err := wire.BindNames(msg)
	if err != nil {
		return v, false, false, err
	}
	eng := s.env.Engine()
	m := &s.memo
	defer m.unlock(m.lock())
	cands := s.stmtCands(name, batch)
	if len(cands) == 0 {
		if m.unread {
			v = memoryUnread
			return v, true, s.enforced(&v), nil
		}
		return v, false, false, nil
	}
	first := cands[0]
	// prepared by an earlier batch: this Bind is an execution of it,
	// counted with the remembered verdict (counted as judged instead when
	// a reload made verdictOf judge it again); a Bind in the batch that
	// parses its statement is the running of the Parse judged there
	execution, rejudged := !m.scratchNew, m.rejudged
	var more []*stmtRec
	if len(cands) > 1 {
		for _, c := range cands[1:] {
			more = append(more, c)
		}
	}
	v = s.verdictOf(first, eng, wire.MsgBind, batch, 0)
	for _, c := range more {
		v = s.stronger(v, s.verdictOf(c, eng, wire.MsgBind, batch, 0))
	}
	if execution && m.rejudged == rejudged {
		s.obs.Applied(v, wire.MsgBind, time.Now())
	}
	if s.enforced(&v) {
		return v, true, true, nil
	}
	// record the portal
	var p *portalRec
	if len(portal) == 0 {
		p = &m.unnamedPortal
		m.portalOK = true
	} else {
		if m.portals == nil {
			m.portals = make(map[string]*portalRec)
		} else if len(m.portals) >= 64 {
			for n, p := range m.portals {
				if !m.live(p) {
					delete(m.portals, n)
				}
			}
		}
		if p = m.portals[string(portal)]; p != nil && p.hold && !s.closingPortal(string(portal), batch) {
			// The name is a WITH HOLD cursor: the Bind fails on the server.
			return v, true, false, nil
		}
		if p == nil {
			p = &portalRec{}
			m.portals[string(portal)] = p
		}
	}
	p.gen++
	p.sql = append(p.sql[:0], first.sql...)
	p.verdict, p.eng, p.ops, p.defines, p.lex, p.app = first.verdict, first.eng, first.ops, first.defines, first.lex, first.app
	p.cat, p.path, p.portal = first.cat, first.path, true
	p.alt, p.unknown = first.alt, first.unknown
	for _, c := range more {
		cl := *c
		cl.sql = append([]byte(nil), c.sql...)
		p.alt = append(p.alt[:len(p.alt):len(p.alt)], &cl)
	}
	p.batch, p.hold = batch, false
	return v, true, false, nil
}

// closingPortal: a Close or CLOSE of the portal is pending in this batch.
func (s *session) closingPortal(name string, batch uint64) bool {
	m := &s.memo
	for i := m.qh; i < len(m.q); i++ {
		p := &m.q[i]
		if p.batch != batch {
			continue
		}
		if p.kind == pendClose && p.closeKind == 'P' && p.name == name {
			return true
		}
		for _, op := range p.ops {
			if (op.kind == engine.SQLClose && (op.name == name || op.name == "")) || op.kind == engine.SQLDiscardAll {
				return true
			}
		}
	}
	return false
}

// memoExecute returns the verdict for the portal an Execute names, judged
// again when the policy changed since the Bind, and queues what the
// portal's text defines. known is false for a portal the session did not
// see created.
func (s *session) memoExecute(msg []byte, batch uint64) (v engine.Verdict, known, blocked bool, err error) {
	portal, err := wire.ExecutePortal(msg)
	if err != nil {
		return v, false, false, err
	}
	eng := s.env.Engine()
	m := &s.memo
	locked := m.lock()
	defer func() { m.unlock(locked) }()
	cands := s.portalCands(portal, batch)
	if len(cands) == 0 {
		if m.unread {
			v = memoryUnread
			return v, true, s.enforced(&v), nil
		}
		return v, false, false, nil
	}
	first := cands[0]
	var ops []memoOp
	if first.defines {
		ops = first.ops
	}
	more := append([]*stmtRec(nil), cands[1:]...)
	v = s.verdictOf(first, eng, wire.MsgExecute, batch, 0)
	for _, c := range more {
		v = s.stronger(v, s.verdictOf(c, eng, wire.MsgExecute, batch, 0))
	}
	if s.enforced(&v) {
		return v, true, true, nil
	}
	if ops != nil {
		if !locked {
			m.mu.Lock()
			locked = true
		}
		m.push(pending{kind: pendExec, batch: batch, ops: ops})
	}
	return v, true, false, nil
}

// memoComplete handles a ParseComplete or CloseComplete from the server.
func (s *session) memoComplete(typ byte) {
	m := &s.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	want := pendParse
	if typ == wire.MsgCloseComplete {
		want = pendClose
	}
	if m.qh < len(m.q) && m.q[m.qh].batch > m.ready {
		// Every Parse and Close sent is queued, so the one answered is;
		// it is labelled with a later batch than it is in.
		m.desync = true
	}
	for m.qh < len(m.q) && (m.desync || m.q[m.qh].batch <= m.ready) {
		p := &m.q[m.qh]
		switch p.kind {
		case pendExec:
			// a later message completed: this Execute ran
			s.commitOps(p.ops, p.batch, false)
			m.pop()
			continue
		case want:
			if want == pendParse {
				s.commitParse(p)
			} else {
				s.commitClose(p)
			}
			m.pop()
			return
		}
		return // out of step; ReadyForQuery settles it
	}
}

// memoTrack follows the client's extended-protocol batches. A Query or
// FunctionCall sent while one is open (no Sync since its last message) is
// skipped by the server if an earlier message of the batch failed, and
// then answers no ReadyForQuery: the count of sync points may run ahead.
// No client library does this.
func (s *session) memoTrack(typ byte) {
	m := &s.memo
	switch typ {
	case wire.MsgSync:
		m.extOpen = false
	case wire.MsgParse, wire.MsgBind, wire.MsgExecute, wire.MsgClose, wire.MsgDescribe:
		m.extOpen = true
	case wire.MsgQuery, wire.MsgFunctionCall:
		if m.extOpen {
			m.mu.Lock()
			m.desync = true
			m.mu.Unlock()
		}
	}
}

// memoCopyIn handles a CopyInResponse: the server ignores the Syncs the
// client sends until CopyDone or CopyFail, and a client may send one, so
// the count of sync points may run ahead from here on.
func (s *session) memoCopyIn() {
	m := &s.memo
	m.mu.Lock()
	m.desync = true
	m.mu.Unlock()
}

// memoError handles an ErrorResponse: the server skips the rest of the
// batch.
func (s *session) memoError() {
	m := &s.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.desync {
		// which batch failed is not known: whatever is pending may or
		// may not have run
		for m.qh < len(m.q) {
			p := &m.q[m.qh]
			switch p.kind {
			case pendExec, pendQuery:
				s.commitOps(p.ops, p.batch, true)
			case pendParse:
				s.commitParseUncertain(p)
			}
			m.pop()
		}
		return
	}
	first := true
	for m.qh < len(m.q) && m.q[m.qh].batch <= m.ready {
		p := &m.q[m.qh]
		switch {
		case p.kind == pendExec && first:
			s.commitOps(p.ops, p.batch, true)
		case p.kind == pendQuery && p.stmts > 1:
			s.commitOps(p.ops, p.batch, true)
		case p.kind == pendParse:
			if p.name == "" {
				m.recycle(p.rec)
			}
			first = false
		default:
			first = false
		}
		m.pop()
	}
}

// memoReady handles a ReadyForQuery: its batch is over.
func (s *session) memoReady(status byte) {
	m := &s.memo
	if !m.started {
		m.started = true
		return
	}
	m.ready++
	if status == wire.TxIdle || status == wire.TxFailed {
		// the transaction is over: its portals are gone
		m.txEnd.Store(m.ready)
		if d := s.ddlBatch.Load(); d != 0 && m.ready >= d && s.ddlBatch.CompareAndSwap(d, 0) {
			// and its DDL committed (or will not): what the catalog
			// holds may be out of date until its next read
			s.env.Engine().Unsettle()
		}
	}
	if !m.active.Load() {
		return // entries pushed from now on are of later batches
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.qh < len(m.q) && m.q[m.qh].batch < m.ready {
		p := &m.q[m.qh]
		switch p.kind {
		case pendExec, pendQuery:
			s.commitOps(p.ops, p.batch, false) // no error came: it ran
		case pendParse:
			// Neither its ParseComplete nor an error came in its batch:
			// the count of sync points is off (a Sync the server ignored
			// during COPY FROM STDIN). Whether it ran is unknown.
			s.commitParseUncertain(p)
		}
		// a Close left over likewise: the record stays
		m.pop()
	}
}

func (s *session) commitParse(p *pending) {
	m := &s.memo
	if p.name == "" {
		m.recycle(m.unnamed)
		m.unnamed = p.rec
		return
	}
	if m.stmts == nil {
		m.stmts = make(map[string]*stmtRec)
	}
	m.stmts[p.name] = p.rec
}

func (s *session) commitParseUncertain(p *pending) {
	m := &s.memo
	if p.name == "" {
		m.unnamed = beside(m.unnamed, p.rec, true)
		return
	}
	if m.stmts == nil {
		m.stmts = make(map[string]*stmtRec)
	}
	m.stmts[p.name] = beside(m.stmts[p.name], p.rec, true)
}

func (s *session) commitClose(p *pending) {
	m := &s.memo
	if p.closeKind == 'S' {
		if p.name == "" {
			m.recycle(m.unnamed)
			m.unnamed = nil
		} else {
			delete(m.stmts, p.name)
		}
		return
	}
	if p.portal == nil || p.portal.gen != p.gen {
		return // closed a portal the session did not know, or rebound since
	}
	if p.name == "" {
		if p.portal == &m.unnamedPortal {
			m.portalOK = false
		}
	} else if m.portals[p.name] == p.portal {
		delete(m.portals, p.name)
	}
}

// commitOps applies what a text that ran defines. uncertain: it may not
// have run; a definition is then added beside the old one, a removal not
// done.
func (s *session) commitOps(ops []memoOp, batch uint64, uncertain bool) {
	m := &s.memo
	for i := range ops {
		op := &ops[i]
		switch op.kind {
		case engine.SQLPrepare:
			if m.stmts == nil {
				m.stmts = make(map[string]*stmtRec)
			}
			m.stmts[op.name] = beside(m.stmts[op.name], op.inner, uncertain)
		case engine.SQLDeallocate:
			if uncertain {
				continue
			}
			if op.name == "" {
				clear(m.stmts)
			} else {
				delete(m.stmts, op.name)
			}
		case engine.SQLDeclare:
			if m.portals == nil {
				m.portals = make(map[string]*portalRec)
			}
			old := m.portals[op.name]
			if old != nil && !m.live(old) {
				old = nil
			}
			var oldRec *stmtRec
			if old != nil {
				oldRec = &old.stmtRec
			}
			r := beside(oldRec, op.inner, uncertain)
			p := &portalRec{stmtRec: *r, batch: batch, hold: op.hold}
			p.portal = true
			if uncertain && old != nil && old.hold {
				p.hold = true
			}
			m.portals[op.name] = p
		case engine.SQLClose:
			if uncertain {
				continue
			}
			if op.name == "" {
				clear(m.portals)
				m.portalOK = false
			} else {
				delete(m.portals, op.name)
			}
		case engine.SQLDiscardAll:
			if uncertain {
				continue
			}
			clear(m.stmts)
			clear(m.portals)
			m.portalOK = false
		}
	}
}

// beside returns the record for a name defined as r: r itself, or, when
// the definition is uncertain, r with the old record as an alternative.
func beside(old, r *stmtRec, uncertain bool) *stmtRec {
	if !uncertain || old == nil {
		return r
	}
	if bytes.Equal(old.sql, r.sql) {
		return old // the same text again (a repeated PREPARE that failed)
	}
	for _, a := range old.alt {
		if bytes.Equal(a.sql, r.sql) {
			return old
		}
	}
	o := *old
	o.alt = nil
	n := *r
	n.alt = append(append([]*stmtRec(nil), old.alt...), &o)
	n.unknown = old.unknown || len(n.alt) > maxAlternatives
	return &n
}
