package engine

import (
	"errors"
	"sync/atomic"
)

// DefaultCacheBytes is the fact cache bound used when Options.CacheBytes is 0.
const DefaultCacheBytes = 32 << 20

// Options tunes an Engine.
type Options struct {
	// CacheBytes bounds the statement-fact caches (an estimate of the
	// memory they hold: three quarters for exact texts, a quarter for the
	// shapes of bulk INSERTs). 0 means DefaultCacheBytes; negative disables
	// both, so every statement is parsed.
	CacheBytes int64
	// RateKeys bounds the token buckets kept for rate rules (one per rule
	// and session key). 0 means DefaultRateKeys.
	RateKeys int
	// MaxParseBytes and MaxParseDepth bound the texts parsed (parsebound.go);
	// a text beyond them is denied unparsed. 0 means DefaultMaxParseBytes,
	// DefaultMaxParseDepth.
	MaxParseBytes, MaxParseDepth int
}

// Engine judges statements of one dialect against one policy. It is safe
// for concurrent use by many goroutines. Its caches and rate state belong
// to the policy: a reload builds a new Engine.
type Engine struct {
	policy    *Policy
	dialect   Dialect
	shaper    Shaper          // the dialect's, or nil
	matcher   ShapeMatcher    // the dialect's, or nil; with shapes
	effector  SessionEffector // the dialect's, or nil
	implicit  ImplicitSchemer // the dialect's, or nil
	cache     *factCache      // nil when disabled
	shapes    *factCache      // INSERT ... VALUES shapes (shapes.go); nil when the cache is disabled or the dialect has none
	shapeSeen doorkeeper      // shapes seen once
	hints     *shapeHints     // shape entries last hit (shapehint.go); with shapes
	textSeen  doorkeeper      // shaped texts seen once
	rates     *rateTable      // nil when the policy has no rate rules
	bound     parseBound      // the largest and deepest text parsed (parsebound.go)
	// creation is the rules the dialect's account creation matches
	// (GranteeCreator), in policy order; nil without one.
	creation []ruleMatch
	learner  atomic.Pointer[Learner]
	// catalog is what the engine knows of the database's own objects
	// (catalog.go); nil: the text alone.
	catalog atomic.Pointer[Catalog]
	// dbCatalogs are catalogs read in other databases than catalog's
	// (SetDatabaseCatalogs), by database name.
	dbCatalogs atomic.Pointer[map[string]*Catalog]
	// unsettles counts Unsettle calls (catalog.go).
	unsettles atomic.Uint64
}

// New returns an engine that judges the SQL of dialect d against p. It
// fails when p uses what d cannot tell (Policy.Check).
func New(p *Policy, d Dialect, opts Options) (*Engine, error) {
	if p == nil {
		return nil, errors.New("new engine: nil policy")
	}
	if d == nil {
		return nil, errors.New("new engine: nil dialect")
	}
	if err := p.Check(d); err != nil {
		return nil, err
	}
	e := &Engine{policy: p, dialect: d, bound: newParseBound(opts)}
	e.effector, _ = d.(SessionEffector)
	e.implicit, _ = d.(ImplicitSchemer)
	size := opts.CacheBytes
	if size == 0 {
		size = DefaultCacheBytes
	}
	if size > 0 {
		e.cache = newFactCache(size - size/4)
		e.textSeen = newDoorkeeper()
		if sh, ok := d.(Shaper); ok {
			// A quarter for shapes: few, each as large as its statement.
			e.shaper = sh
			e.shapes = newFactCache(size / 4)
			e.shapeSeen = newDoorkeeper()
			e.hints = newShapeHints()
			e.matcher, _ = d.(ShapeMatcher)
		}
	}
	if gc, ok := d.(GranteeCreator); ok {
		f := gc.GranteeCreation()
		p.match(&f, &TextFacts{}, 0, e.implicit, nil)
		e.creation = f.matched
	}
	for i := range p.rules {
		if p.rules[i].rate != nil {
			e.rates = newRateTable(opts.RateKeys)
			break
		}
	}
	return e, nil
}

// Policy returns the policy the engine enforces.
func (e *Engine) Policy() *Policy { return e.policy }

// Dialect returns the dialect the engine reads SQL in.
func (e *Engine) Dialect() Dialect { return e.dialect }

// SetLearner starts recording every judged statement into l (nil stops).
// On a reload, pass the old engine's Learner() to the new one.
func (e *Engine) SetLearner(l *Learner) { e.learner.Store(l) }

// Learner returns the learner set with SetLearner, or nil.
func (e *Engine) Learner() *Learner { return e.learner.Load() }

// Learn records the statements of sql into the engine's learner (if any)
// without judging them. Judge already does this for every text it judges:
// call Learn only for texts that are not judged.
func (e *Engine) Learn(sql []byte, s *Session) {
	if l := e.learner.Load(); l != nil {
		if s != nil {
			var ok bool
			if sql, _, _, ok = e.dialect.Read(sql, &s.Lex); !ok {
				return // the text cannot be read as the server reads it
			}
		}
		l.record(e.dialect, e.facts(sql), sql, s, "", false)
	}
}

var noSession Session

// Judge judges the SQL text of one protocol message (PostgreSQL: a simple
// Query, which may hold several statements, or one Parse). Every statement
// is judged. The verdict is the strongest deny (see docs/policy.md: a rule
// with mode enforce before one without a mode before monitor/detect;
// deny_and_close before deny), else the first log, else the first allow.
// Text the parser rejects gets the policy's on_parse_error action.
func (e *Engine) Judge(sql []byte, s *Session) Verdict {
	if s == nil {
		s = &noSession
	}
	// Judge the text the server will lex (Dialect.Read).
	sql, id, reason, ok := e.dialect.Read(sql, &s.Lex)
	if !ok {
		v := e.lexDeny(id, reason)
		v.ChangesPath = true // what it does is not known
		return v
	}
	tf := e.facts(sql)
	if tf.Unparsed {
		if v, ok := e.judgeUnparsed(tf, s); ok {
			v.ChangesPath = true
			return v
		}
		// No limit rule applies to this session: parse after all, once,
		// unless the text is beyond the parse bound.
		var bv Verdict
		if tf, bv, ok = e.parseUnjudged(tf, string(sql)); !ok {
			return bv
		}
	}
	var v Verdict
	if tf.fixed && e.catalog.Load() == nil {
		v = tf.verdict // the same in every session (fixed.go)
	} else {
		v = e.judge(tf, s)
		tf.marks.into(&v)
	}
	if l := e.learner.Load(); l != nil {
		l.record(e.dialect, tf, sql, s, v.RuleID, v.Action.Denies())
	}
	return v
}

// A PathSetter is a Dialect whose sessions have a search path the relay
// follows (Session.SearchPath; engine/pgsql searchpath.go).
type PathSetter interface {
	// SearchPathSet returns the path a text sets when it is one plain
	// SET search_path (SearchPathDefault for RESET), false otherwise.
	SearchPathSet(tf *TextFacts) (string, bool)
}

// SearchPathSet returns the search path a text judged in session s sets
// when it is nothing but a plain SET search_path (SearchPathDefault for
// RESET search_path): the relay's Session.SearchPath once it has run. A
// text the dialect does not read so gives false; after it, a verdict with
// ChangesPath leaves the path unknown.
func (e *Engine) SearchPathSet(sql []byte, s *Session) (string, bool) {
	ps, ok := e.dialect.(PathSetter)
	if !ok {
		return "", false
	}
	if s != nil {
		if sql, _, _, ok = e.dialect.Read(sql, &s.Lex); !ok {
			return "", false
		}
	}
	return ps.SearchPathSet(e.facts(sql))
}

// lexDeny is the verdict on a text whose reading Dialect.Read cannot tell:
// not a policy rule, like parse-error: the engine cannot judge what it
// cannot read.
func (e *Engine) lexDeny(id, reason string) Verdict {
	return Verdict{Action: ActionDeny, RuleID: id, Reason: reason, Mode: e.policy.mode, Statements: 1}
}

func (e *Engine) facts(sql []byte) *TextFacts {
	if e.cache == nil || e.cache.tooBig(len(sql)) {
		return e.analyze(string(sql))
	}
	f, h, ok := e.cache.get(sql)
	if ok {
		return f
	}
	var k shapeKey
	defer k.release()
	if e.shapes != nil {
		if f := e.shapeHit(sql, &k); f != nil {
			if e.textSeen.admit(h) {
				e.cache.put(h, string(sql), f)
			}
			return f
		}
	}
	text := string(sql)
	f = e.analyzeKeyed(text, &k)
	// A text analysed through its shape enters the exact cache only when
	// it repeats: bulk INSERTs rarely do, and would evict what does.
	if !f.shaped || e.textSeen.admit(h) {
		e.cache.put(h, text, f)
	}
	return f
}

// analyze measures, parses (unless a pre-parse limit is exceeded) and
// matches the policy's text conditions.
func (e *Engine) analyze(text string) *TextFacts {
	var k shapeKey
	defer k.release()
	return e.analyzeKeyed(text, &k)
}

// analyzeKeyed is analyze with the text's shape in k when it was scanned
// already (shapeHit).
func (e *Engine) analyzeKeyed(text string, k *shapeKey) *TextFacts {
	p := e.policy
	lex := e.prescan(text)
	if e.beyond(&lex) {
		return &TextFacts{Unparsed: true, Lex: lex}
	}
	if e.shapes != nil {
		if tf := e.analyzeShaped(text, lex, k); tf != nil {
			return tf
		}
	}
	tf := e.dialect.Analyze(text, lex)
	p.precompute(e.dialect, tf, text)
	return tf
}

// judgeUnparsed decides a text that was not parsed because it exceeds a
// pre-parse limit: the first limit rule that applies to the session and is
// exceeded decides.
func (e *Engine) judgeUnparsed(tf *TextFacts, s *Session) (Verdict, bool) {
	p := e.policy
	for i := range p.rules {
		r := &p.rules[i]
		if !r.limits.set() || !r.scope.applies(s) {
			continue
		}
		if m := exceededLex(&r.limits.lexLimits, &tf.Lex); m != "" {
			return Verdict{Action: r.action, RuleID: r.id, Reason: r.reason + " (" + m + ")", Mode: p.modeOf(r), Statements: 1}, true
		}
	}
	return Verdict{}, false
}

func (p *Policy) modeOf(r *rule) Mode {
	if r.mode != "" {
		return r.mode
	}
	return p.mode
}

// denyRank orders deny verdicts of several statements: the one most likely
// to be enforced wins, so that a monitor-mode rule on one statement cannot
// let another statement's enforce-mode deny through.
func denyRank(a Action, mode Mode) int {
	r := 0
	switch mode {
	case ModeEnforce:
		r = 4
	case "":
		r = 2
	}
	if a == ActionDenyClose {
		r++
	}
	return r
}

func (e *Engine) judge(tf *TextFacts, s *Session) Verdict {
	p := e.policy
	if !tf.ParseError {
		return e.judgeStmts(tf, s)
	}
	v := Verdict{Action: p.onParseError, RuleID: "parse-error", Reason: tf.ParseReason, ParseError: true, Mode: p.mode, ChangesPath: true}
	// The facts a dialect is sure of in a text it could not parse
	// (Dialect.Analyze) are a part of what the text does: a deny rule they
	// match decides when it is at least as strong as on_parse_error (so
	// that on_parse_error: allow does not let INSTALL PLUGIN through), and
	// no allow or log rule does.
	if len(tf.Stmts) > 0 {
		if d := e.judgeStmts(tf, s); d.Action.Denies() && (!v.Action.Denies() || denyRank(d.Action, d.Mode) >= denyRank(v.Action, v.Mode)) {
			d.ParseError, d.ChangesPath = true, true
			return d
		}
	}
	return v
}

// judgeStmts judges the statements of tf: the strongest deny, else the
// first log, else the first allow.
func (e *Engine) judgeStmts(tf *TextFacts, s *Session) Verdict {
	n := len(tf.Stmts)
	pk := pick{denyR: -1}
	cat := e.catalog.Load()
	for i := range tf.Stmts {
		base := &tf.Stmts[i]
		st := base.asUser(s.User).inDatabase(s.Database)
		if cat != nil {
			st = e.throughCatalog(tf, i, st, e.catalogFor(cat, s), s)
		}
		if st.PathChange != PathKept || st.PathMay {
			pk.path = true
		}
		e.decide(&pk, st.matched, s)
		if base.creates(&s.Lex) || st.creates(&s.Lex) {
			// A GRANT that creates its grantee is judged also as that
			// creation (GranteeCreator): the stronger of the two decides.
			e.decide(&pk, e.creation, s)
		}
		if len(st.Bodies) > 0 {
			// Code the statement stores, judged as it will run (body.go).
			e.decideBodies(&pk, st.Bodies, s)
		}
	}
	var v Verdict
	e.policy.verdictInto(&v, &pk, n)
	v.ChangesPath = pk.path
	return v
}

// verdict is the verdict pk found for n statements: the strongest deny,
// else the first log, else the first allow.
func (e *Engine) verdict(pk *pick, n int) Verdict {
	var v Verdict
	e.policy.verdictInto(&v, pk, n)
	return v
}

// verdictInto is verdict written into v: judgeStmts builds its result in
// place (a returned struct cost about 11 ns of 80 in
// BenchmarkVerdictRepeatedPointSelect).
func (p *Policy) verdictInto(v *Verdict, pk *pick, n int) {
	switch {
	case pk.deny != nil:
		*v = Verdict{Action: pk.deny.action, RuleID: pk.deny.id, Reason: pk.denyReason, Mode: p.modeOf(pk.deny), Statements: n}
	case pk.logged != nil:
		*v = Verdict{Action: ActionLog, RuleID: pk.logged.id, Reason: pk.logReason, Mode: p.modeOf(pk.logged), Statements: n}
	case pk.allowed != nil:
		*v = Verdict{Action: ActionAllow, RuleID: pk.allowed.id, Reason: pk.allowReason, Mode: p.modeOf(pk.allowed), Statements: n}
	default:
		*v = Verdict{Action: ActionAllow, Statements: n, Mode: p.mode}
	}
}

// pick is the verdict judgeStmts is finding: the strongest deny so far,
// the first log and the first allow.
type pick struct {
	deny, logged, allowed              *rule
	denyReason, logReason, allowReason string
	denyR                              int
	body                               bool // deciding stored code (decideBodies)
	path                               bool // a statement changes or may change the search_path
}

// decide adds to pk the first of a statement's matched rules whose scope
// and rate apply to s.
func (e *Engine) decide(pk *pick, ms []ruleMatch, s *Session) {
	p := e.policy
	for _, m := range ms {
		r := &p.rules[m.rule]
		if !r.scope.applies(s) {
			continue
		}
		if r.rate != nil && !e.rates.over(m.rule, r.rate, s) {
			continue
		}
		p.take(pk, r, m.reason)
		return // first match decides the statement
	}
}

// take adds to pk the rule r that decides a statement, for reason.
func (p *Policy) take(pk *pick, r *rule, reason string) {
	switch r.action {
	case ActionDeny, ActionDenyClose:
		if rk := denyRank(r.action, p.modeOf(r)); rk > pk.denyR || pk.body && r == pk.deny {
			// Stored code's deny by the rule that already denies
			// gives its reason, which says where the deny comes from.
			pk.deny, pk.denyReason, pk.denyR = r, reason, rk
		}
	case ActionLog:
		if pk.logged == nil {
			pk.logged, pk.logReason = r, reason
		}
	default:
		if pk.allowed == nil {
			pk.allowed, pk.allowReason = r, reason
		}
	}
}

// JudgeFastpath judges a call of function fn by id, without SQL text
// (PostgreSQL's FunctionCall message): the dialect decides (Fastpather),
// and a dialect without such calls denies them.
func (e *Engine) JudgeFastpath(fn uint32, s *Session) Verdict {
	fp, ok := e.dialect.(Fastpather)
	if !ok {
		return Verdict{Action: ActionDeny, RuleID: "fastpath-function", Reason: e.dialect.Name() + " has no function calls without SQL text", Statements: 1, Mode: e.policy.mode}
	}
	if id, reason := fp.Fastpath(fn); id != "" {
		return Verdict{Action: ActionDeny, RuleID: id, Reason: reason, Statements: 1, Mode: e.policy.mode}
	}
	return Verdict{Action: ActionAllow, Statements: 1, Mode: e.policy.mode}
}

// SQLOps returns the named-object operations of a text Judge judged
// in session s (Verdict.SessionOps says whether there are any), and the text
// their spans refer to: sql itself, or, when the session's settings change
// how the server lexes it, the text the engine judged in its place (a text
// to judge again with the default LexState). The slice is shared: callers
// must not modify it.
func (e *Engine) SQLOps(sql []byte, s *Session) ([]SQLOp, []byte) {
	if s != nil {
		var ok bool
		if sql, _, _, ok = e.dialect.Read(sql, &s.Lex); !ok {
			return nil, nil
		}
	}
	return e.facts(sql).SQLOps, sql
}

// JudgeStartup judges the session parameters a connection sets before its
// first statement (name, value pairs as sent; PostgreSQL's StartupMessage)
// for the session s, as the statements they amount to (Starter). The
// verdict is the first deny, or allow.
func (e *Engine) JudgeStartup(params [][2]string, s *Session) Verdict {
	st, ok := e.dialect.(Starter)
	if !ok {
		return Verdict{Action: ActionAllow, Mode: e.policy.mode}
	}
	sqls, id, reason := st.StartupSQL(params)
	if id != "" {
		return Verdict{Action: ActionDeny, RuleID: id, Reason: reason, Statements: 1, Mode: e.policy.mode}
	}
	if s == nil {
		s = &noSession
	}
	// The statements are written by the dialect, in UTF-8 with standard
	// strings, whatever the session lexes its own statements with; they are
	// not statements of the session, so the learner does not see them.
	sess := *s
	sess.Lex = LexState{}
	for _, sql := range sqls {
		tf := e.facts([]byte(sql))
		if tf.Unparsed {
			if v, ok := e.judgeUnparsed(tf, &sess); ok {
				return v
			}
			var bv Verdict
			if tf, bv, ok = e.parseUnjudged(tf, sql); !ok {
				return bv
			}
		}
		if v := e.judge(tf, &sess); v.Action.Denies() {
			return v
		}
	}
	return Verdict{Action: ActionAllow, Mode: e.policy.mode}
}

// Stats is what an engine's caches hold, for metrics and tests.
type Stats struct {
	Texts, Shapes         int   // entries of the exact-text and the shape cache
	TextBytes, ShapeBytes int64 // their estimated memory
	RateKeys              int   // token buckets of rate rules
}

// Stats reports what the engine's caches hold now.
func (e *Engine) Stats() Stats {
	var st Stats
	if e.cache != nil {
		st.Texts, st.TextBytes = e.cache.len()
	}
	if e.shapes != nil {
		st.Shapes, st.ShapeBytes = e.shapes.len()
	}
	if e.rates != nil {
		st.RateKeys = e.rates.len()
	}
	return st
}

// Cached reports whether the facts of exactly sql are in the fact cache.
func (e *Engine) Cached(sql []byte) bool {
	if e.cache == nil {
		return false
	}
	_, _, ok := e.cache.get(sql)
	return ok
}

// Analyze returns the facts of text as a cache miss finds them: measured,
// analysed through the shape cache when it has a shape, and matched against
// the policy's text conditions. It does not use or fill the exact-text
// cache; it is for benchmarks and diagnostics.
func (e *Engine) Analyze(text string) *TextFacts { return e.analyze(text) }
