package engine

import (
	"errors"
)

// DefaultCacheBytes is the fact cache bound used when Options.CacheBytes is 0.
const DefaultCacheBytes = 32 << 20

// Options tunes an Engine.
type Options struct {
	// CacheBytes bounds the statement-fact cache (an estimate of the memory
	// it holds). 0 means DefaultCacheBytes; negative disables the cache, so
	// every statement is parsed.
	CacheBytes int64
}

// Engine judges statements against one policy. It is safe for concurrent
// use by many goroutines.
type Engine struct {
	policy *Policy
	cache  *factCache // nil when disabled
}

// New returns an engine for p.
func New(p *Policy, opts Options) (*Engine, error) {
	if p == nil {
		return nil, errors.New("new engine: nil policy")
	}
	e := &Engine{policy: p}
	switch {
	case opts.CacheBytes == 0:
		e.cache = newFactCache(DefaultCacheBytes)
	case opts.CacheBytes > 0:
		e.cache = newFactCache(opts.CacheBytes)
	}
	return e, nil
}

// Policy returns the policy the engine enforces.
func (e *Engine) Policy() *Policy { return e.policy }

// JudgePostgres judges the SQL text of a simple Query message (which may hold
// several statements) or of one Parse message. Every statement is judged; the
// verdict is the first deny in statement order, else the first log, else
// allow. Text the parser rejects gets the policy's on_parse_error action.
func (e *Engine) JudgePostgres(sql []byte, s *Session) Verdict {
	if s == nil {
		s = &Session{}
	}
	return e.policy.judge(e.facts(sql), s)
}

func (e *Engine) facts(sql []byte) *textFacts {
	if e.cache == nil {
		return analyze(string(sql))
	}
	f, h, ok := e.cache.get(sql)
	if ok {
		return f
	}
	text := string(sql)
	f = analyze(text)
	e.cache.put(h, text, f)
	return f
}

func (p *Policy) judge(tf *textFacts, s *Session) Verdict {
	if tf.parseError {
		return Verdict{Action: p.onParseError, RuleID: "parse-error", Reason: tf.parseReason, ParseError: true}
	}
	n := len(tf.stmts)
	var logged, allowed *rule
	for i := range tf.stmts {
		r := p.decide(&tf.stmts[i], s)
		if r == nil {
			continue
		}
		switch r.action {
		case ActionDeny:
			return Verdict{Action: ActionDeny, RuleID: r.id, Reason: r.reason, Statements: n}
		case ActionLog:
			if logged == nil {
				logged = r
			}
		default:
			if allowed == nil {
				allowed = r
			}
		}
	}
	if logged != nil {
		return Verdict{Action: ActionLog, RuleID: logged.id, Reason: logged.reason, Statements: n}
	}
	if allowed != nil {
		return Verdict{Action: ActionAllow, RuleID: allowed.id, Reason: allowed.reason, Statements: n}
	}
	return Verdict{Action: ActionAllow, Statements: n}
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
		return Verdict{Action: ActionAllow, Statements: 1}
	}
	return Verdict{Action: ActionDeny, RuleID: fastpathRuleID, Reason: fastpathReason, Statements: 1}
}
