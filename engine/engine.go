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
}

// Engine judges statements against one policy. It is safe for concurrent
// use by many goroutines. Its caches and rate state belong to the policy:
// a reload builds a new Engine.
type Engine struct {
	policy    *Policy
	cache     *factCache // nil when disabled
	shapes    *factCache // INSERT ... VALUES shapes (shape.go); nil when the cache is disabled
	shapeSeen doorkeeper // shapes seen once
	textSeen  doorkeeper // shaped texts seen once
	rates     *rateTable // nil when the policy has no rate rules
	learner   atomic.Pointer[Learner]
}

// New returns an engine for p.
func New(p *Policy, opts Options) (*Engine, error) {
	if p == nil {
		return nil, errors.New("new engine: nil policy")
	}
	e := &Engine{policy: p}
	size := opts.CacheBytes
	if size == 0 {
		size = DefaultCacheBytes
	}
	if size > 0 {
		// A quarter for shapes: few, each as large as its statement.
		e.cache = newFactCache(size - size/4)
		e.shapes = newFactCache(size / 4)
		e.shapeSeen, e.textSeen = newDoorkeeper(), newDoorkeeper()
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

// SetLearner starts recording every judged statement into l (nil stops).
// On a reload, pass the old engine's Learner() to the new one.
func (e *Engine) SetLearner(l *Learner) { e.learner.Store(l) }

// Learner returns the learner set with SetLearner, or nil.
func (e *Engine) Learner() *Learner { return e.learner.Load() }

// Learn records the statements of sql into the engine's learner (if any)
// without judging them. JudgePostgres already does this for every text it
// judges: call Learn only for texts that are not judged.
func (e *Engine) Learn(sql []byte, s *Session) {
	if l := e.learner.Load(); l != nil {
		if s != nil && !s.Lex.readsAsIs() {
			var ok bool
			if sql, _, ok = e.lexRead(sql, &s.Lex); !ok {
				return // the text cannot be read as the server reads it
			}
		}
		l.record(e.facts(sql), string(sql), s)
	}
}

var noSession Session

// JudgePostgres judges the SQL text of a simple Query message (which may hold
// several statements) or of one Parse message. Every statement is judged.
// The verdict is the strongest deny (see docs/policy.md: a rule with mode
// enforce before one without a mode before monitor/detect; deny_and_close
// before deny), else the first log, else the first allow. Text the parser
// rejects gets the policy's on_parse_error action.
func (e *Engine) JudgePostgres(sql []byte, s *Session) Verdict {
	if s == nil {
		s = &noSession
	}
	if !s.Lex.readsAsIs() {
		// Judge the text the server will lex (lexstate.go).
		var v Verdict
		var ok bool
		if sql, v, ok = e.lexRead(sql, &s.Lex); !ok {
			return v
		}
	}
	tf := e.facts(sql)
	if tf.Unparsed {
		if v, ok := e.judgeUnparsed(tf, s); ok {
			return v
		}
		// No limit rule applies to this session: parse after all, once.
		tf = analyzeLex(string(sql), tf.Lex)
		e.policy.precompute(tf, string(sql))
	}
	v := e.judge(tf, s)
	v.SessionOps = len(tf.SQLOps) > 0 // sqlprepare.go
	if l := e.learner.Load(); l != nil {
		l.record(tf, string(sql), s)
	}
	return v
}

func (e *Engine) facts(sql []byte) *TextFacts {
	if e.cache == nil || e.cache.tooBig(len(sql)) {
		return e.analyze(string(sql))
	}
	f, h, ok := e.cache.get(sql)
	if ok {
		return f
	}
	text := string(sql)
	f = e.analyze(text)
	// A text analysed through its shape enters the exact cache only when
	// it repeats: bulk INSERTs rarely do, and would evict what does.
	if !f.Shaped || e.textSeen.admit(h) {
		e.cache.put(h, text, f)
	}
	return f
}

// analyze measures, parses (unless a pre-parse limit is exceeded) and
// matches the policy's text conditions.
func (e *Engine) analyze(text string) *TextFacts {
	p := e.policy
	lex := prescan(text, p.guard.bytes)
	if p.beyondGuard(&lex) {
		return &TextFacts{Unparsed: true, Lex: lex}
	}
	if e.shapes != nil && startsWithInsert(text) {
		if tf := e.analyzeShaped(text, lex); tf != nil {
			return tf
		}
	}
	tf := analyzeLex(text, lex)
	p.precompute(tf, text)
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

func (p *Policy) modeOf(r *rule) string {
	if r.mode != "" {
		return r.mode
	}
	return p.mode
}

// denyRank orders deny verdicts of several statements: the one most likely
// to be enforced wins, so that a monitor-mode rule on one statement cannot
// let another statement's enforce-mode deny through.
func denyRank(a Action, mode string) int {
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
	if tf.ParseError {
		return Verdict{Action: p.onParseError, RuleID: "parse-error", Reason: tf.ParseReason, ParseError: true, Mode: p.mode}
	}
	n := len(tf.Stmts)
	var deny, logged, allowed *rule
	var denyReason, logReason, allowReason string
	denyR := -1
	for i := range tf.Stmts {
		st := &tf.Stmts[i]
		for _, m := range st.matched {
			r := &p.rules[m.rule]
			if !r.scope.applies(s) {
				continue
			}
			if r.rate != nil && !e.rates.over(m.rule, r.rate, s) {
				continue
			}
			switch r.action {
			case ActionDeny, ActionDenyClose:
				if rk := denyRank(r.action, p.modeOf(r)); rk > denyR {
					deny, denyReason, denyR = r, m.reason, rk
				}
			case ActionLog:
				if logged == nil {
					logged, logReason = r, m.reason
				}
			default:
				if allowed == nil {
					allowed, allowReason = r, m.reason
				}
			}
			break // first match decides the statement
		}
	}
	switch {
	case deny != nil:
		return Verdict{Action: deny.action, RuleID: deny.id, Reason: denyReason, Mode: p.modeOf(deny), Statements: n}
	case logged != nil:
		return Verdict{Action: ActionLog, RuleID: logged.id, Reason: logReason, Mode: p.modeOf(logged), Statements: n}
	case allowed != nil:
		return Verdict{Action: ActionAllow, RuleID: allowed.id, Reason: allowReason, Mode: p.modeOf(allowed), Statements: n}
	}
	return Verdict{Action: ActionAllow, Statements: n, Mode: p.mode}
}

// Large-object functions that libpq's lo_* client API invokes through the
// fast-path FunctionCall message. OIDs from PostgreSQL's
// src/include/catalog/pg_proc.dat (checked against a PostgreSQL 15 server).
var fastpathAllowed = map[uint32]string{
	715:  "lo_create",
	952:  "lo_open",
	953:  "lo_close",
	954:  "loread",
	955:  "lowrite",
	956:  "lo_lseek",
	957:  "lo_creat",
	958:  "lo_tell",
	964:  "lo_unlink",
	1004: "lo_truncate",
	3170: "lo_lseek64",
	3171: "lo_tell64",
	3172: "lo_truncate64",
}

const (
	fastpathRuleID = "fastpath-function"
	fastpathReason = "fast-path function calls are limited to the client large-object API; others bypass statement inspection"
)

// JudgeFastpath judges a PostgreSQL FunctionCall ('F') message for the
// function with OID fnOID: only the large-object functions libpq's lo_* API
// uses are allowed, because the call carries no SQL to inspect.
func (e *Engine) JudgeFastpath(fnOID uint32, s *Session) Verdict {
	if _, ok := fastpathAllowed[fnOID]; ok {
		return Verdict{Action: ActionAllow, Statements: 1, Mode: e.policy.mode}
	}
	return Verdict{Action: ActionDeny, RuleID: fastpathRuleID, Reason: fastpathReason, Statements: 1, Mode: e.policy.mode}
}
