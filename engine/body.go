package engine

import "strings"

// Code a statement stores in the database for later runs: a function's or
// procedure's body, a view's query, a trigger's, rule's or event's action.
// What the code does when it runs is judged when it is created, like the
// statements in it would be if they were sent, against the same rules and
// scopes, in the user it will run as (StmtFacts.Bodies): a CREATE FUNCTION
// whose body deletes every row meets the rule DELETE FROM t meets, and the
// verdict's reason says that it was the body.
//
// The dialects fill Bodies when they analyse a text (so a body's facts are
// cached with the text's and matched once), and read stored code on its
// own for callers that learn it elsewhere (BodyReader; the server's
// catalog): Engine.Body reads and matches one, Engine.JudgeBody judges it in
// a session.

// Body is what stored code does when it runs.
type Body struct {
	// Of says what the code is, for verdict reasons: each matched rule's
	// reason gets " (" + Of + ")". Literal-free (no object names either).
	Of string
	// RunsAs is the user the code runs as when it is not the session's
	// (MySQL's DEFINER = u); "" means the session's user.
	RunsAs string
	// Facts are the facts of the code's statements merged as if they ran
	// now (a SELECT's kind included): the rules read them as a statement's.
	Facts StmtFacts
}

// A BodyReader is a Dialect that can read stored code on its own: a body
// as the server's catalog holds it (PostgreSQL's pg_proc.prosrc with its
// language, a view's definition; MySQL's ROUTINE_DEFINITION, a trigger's
// ACTION_STATEMENT, a view's VIEW_DEFINITION).
type BodyReader interface {
	// ReadBody returns what code in language lang does when it runs (the
	// dialect's package documents the languages). ok is false when the
	// engine cannot read it; the Body's facts then say why (Unparsed).
	ReadBody(lang, text string) (b Body, ok bool)
}

// Body reads stored code through the dialect (BodyReader) and matches it
// against the policy, once: JudgeBody then judges it per session. of is
// Body.Of (what the code is, for the reason); "" keeps the dialect's. A
// dialect that cannot read bodies gives a Body that is unparsed. The Body
// belongs to this engine's policy: after a reload, read it again with the
// new engine.
func (e *Engine) Body(lang, text, of string) *Body {
	var b Body
	if br, ok := e.dialect.(BodyReader); ok {
		b, _ = br.ReadBody(lang, text)
	} else {
		b.Facts.Unparsed = e.dialect.Name() + " cannot read stored code"
	}
	if of != "" {
		b.Of = of
	}
	e.policy.matchBody(&b, &TextFacts{}, e.implicit, nil)
	return &b
}

// JudgeBody judges code read by Body in session s as a statement that runs
// it: the first of its matched rules whose scope and rate apply decides.
func (e *Engine) JudgeBody(b *Body, s *Session) Verdict {
	if s == nil {
		s = &noSession
	}
	pk := pick{denyR: -1}
	e.decideBodies(&pk, []Body{*b}, s)
	return e.verdict(&pk, 1)
}

// matchBody fills the rules the body's facts match, each reason saying what
// the code is; cand is scratch space, returned for reuse.
func (p *Policy) matchBody(b *Body, tf *TextFacts, im ImplicitSchemer, cand []int32) []int32 {
	f := &b.Facts
	if f.Kinds == 0 {
		// Code that runs no statement of its own (an assignment, RETURN
		// NEW) is still matched, by the rules without a kind.
		f.Kinds = 1 << f.Kind
	}
	f.matched = f.matched[:0]
	cand = p.match(f, tf, 0, im, cand)
	// A learned policy's rules (fingerprints, scopes, learned-drift) are
	// of what an application sends; stored code has no fingerprint and
	// was never sent, so they do not judge it: the policy's own rules do.
	kept := f.matched[:0]
	for _, m := range f.matched {
		r := &p.rules[m.rule]
		if r.fingerprints != nil || r.within != nil || strings.HasPrefix(r.id, LearnedRulePrefix) {
			continue
		}
		if b.Of != "" {
			m.reason += " (" + b.Of + ")"
		}
		kept = append(kept, m)
	}
	f.matched = kept
	for i := range f.Bodies {
		cand = p.matchBody(&f.Bodies[i], tf, im, cand)
	}
	return cand
}

// decideBodies adds to pk what the bodies decide, each in the session of
// the user it runs as.
func (e *Engine) decideBodies(pk *pick, bodies []Body, s *Session) {
	was := pk.body
	pk.body = true
	defer func() { pk.body = was }()
	for i := range bodies {
		b := &bodies[i]
		if b.RunsAs != "" && b.RunsAs != s.User {
			as := *s
			as.User = b.RunsAs
			e.decide(pk, b.Facts.matched, &as)
			e.decideBodies(pk, b.Facts.Bodies, &as)
			continue
		}
		e.decide(pk, b.Facts.matched, s)
		e.decideBodies(pk, b.Facts.Bodies, s)
	}
}

// BodyKind is the Kind of a body's facts that do all of ks: the last kind
// in StmtKind order among them (a body that reads and deletes is a delete),
// select for none.
func BodyKind(ks KindSet) StmtKind {
	for k := NumKinds - 1; k > KindUtility; k-- {
		if k != KindExplain && ks.Has(k) {
			return k
		}
	}
	if ks.Has(KindUtility) {
		return KindUtility
	}
	return KindSelect
}
