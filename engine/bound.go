package engine

// Bare parameters: a prepared statement's condition that is a parameter
// on its own (MySQL: DELETE FROM t WHERE ?, SELECT ... WHERE a = 1 OR ?)
// is always true or never, by the value bound when it is executed. The
// dialect reports such parameters (StmtFacts.BareParams); the text's
// facts are judged as they are, and an execution whose values make one of
// those conditions true is judged by the facts with the condition always
// true (the WHERE-less UPDATE or DELETE, the always-true OR arm), made
// once per text and cached with it.
//
// A write whose rows a condition made of parameters and constants decides
// (MySQL: DELETE FROM t WHERE ? = 1, UPDATE t SET a = 1 WHERE ? IS NULL OR
// id = ?, DELETE FROM t WHERE name LIKE ?) is reported as ParamWrite: an
// execution of it is judged as the statement with its values written in
// place (ParamBinder), folded as the server folds them; with values that
// are not known, as the statement with each one a value that is the same
// for every row and unknown (the dialect's spelling of a user variable),
// made once per text. Only a deny of that judgment counts: the text's own
// verdict stands otherwise.

// BareParam is one parameter that stands alone in a condition. The
// condition is true for every row when, in some Arm, every parameter
// holds: is true, or, Negated (NOT ?, ? IS FALSE), is false (not NULL).
type BareParam struct {
	// Index is the parameter's position among the statement's
	// parameters, from 0, in text order.
	Index int32
	Arm   int32
	// Negated: the condition holds when the value is false.
	Negated bool
}

// ParamValues are the values bound at one execution of a prepared
// statement.
type ParamValues interface {
	// Truth says what value i may be as a condition: true, false (NULL
	// is neither), or both when it is not known (a user variable in
	// EXECUTE ... USING, a value sent as long data).
	Truth(i int) (canBeTrue, canBeFalse bool)
	// AppendSQL appends value i as SQL text that the server reads as that
	// value (a number, a quoted string, NULL, a user variable); false
	// when it is not known, or cannot be written so.
	AppendSQL(dst []byte, i int) ([]byte, bool)
	// Count is the number of values; -1 when not known.
	Count() int
}

// A ParamBinder is a Dialect that can write a prepared statement's text
// with its parameters' values in place, for a ParamWrite's execution.
type ParamBinder interface {
	// Bind returns the statement that text (a statement, or a PREPARE of
	// one) runs with vals in place of its parameters, each value not
	// known written as one that is the same for every row and unknown;
	// false when it cannot, or the count of values is not the count of
	// parameters (the engine then takes every such condition as true).
	Bind(text string, vals ParamValues) (string, bool)
}

type unknownParams struct{}

func (unknownParams) Truth(int) (bool, bool)                     { return true, true }
func (unknownParams) AppendSQL(dst []byte, _ int) ([]byte, bool) { return dst, false }
func (unknownParams) Count() int                                 { return -1 }

// UnknownParams are values not known at all (COM_STMT_BULK_EXECUTE rows
// not read, EXECUTE ... USING of a name prepared elsewhere).
var UnknownParams ParamValues = unknownParams{}

// JudgeBound judges the text of a prepared statement executed with vals:
// as Judge does, and, when the values can make a bare parameter's
// condition always true, as the statement with that condition always
// true; a ParamWrite as the statement with its values in place.
func (e *Engine) JudgeBound(sql []byte, s *Session, vals ParamValues) Verdict {
	v := e.Judge(sql, s)
	if !v.BareParams {
		return v
	}
	if s == nil {
		s = &noSession
	}
	read, _, _, ok := e.dialect.Read(sql, &s.Lex)
	if !ok {
		return v
	}
	tf := e.facts(read)
	out := v
	if tf.boundHolds(vals.Truth) {
		tf.boundOnce.Do(func() { tf.bound = e.boundFacts(tf, string(read)) })
		out = strongerBound(out, e.judge(tf.bound, s))
	}
	if tf.paramWrite() {
		var vf *TextFacts
		if vals.Count() < 0 {
			tf.unknownOnce.Do(func() { tf.unknown = e.valuesFacts(tf, string(read), vals) })
			vf = tf.unknown
		} else {
			vf = e.valuesFacts(tf, string(read), vals)
		}
		out = strongerBound(out, e.judge(vf, s))
	}
	out.SessionOps, out.DynamicSQL, out.BareParams = v.SessionOps, v.DynamicSQL, true
	return out
}

// strongerBound returns bv when it denies more strongly than v.
func strongerBound(v, bv Verdict) Verdict {
	if bv.Action.Denies() && (!v.Action.Denies() || denyRank(bv.Action, bv.Mode) > denyRank(v.Action, v.Mode)) {
		return bv
	}
	return v
}

// paramWrite reports whether a statement of tf is a ParamWrite.
func (tf *TextFacts) paramWrite() bool {
	for i := range tf.Stmts {
		if tf.Stmts[i].ParamWrite {
			return true
		}
	}
	return false
}

// valuesFacts returns tf's facts with the rows its writes change as the
// statement text runs with vals in place writes them (ParamBinder; the
// bound text analysed but not cached: values rarely repeat). Only what
// the values decide is taken from it: a literal in place is no injected
// text, so the rules on text shapes (tautology, probes) read tf's own
// facts. When the dialect cannot write it, every ParamWrite writes every
// row.
func (e *Engine) valuesFacts(tf *TextFacts, text string, vals ParamValues) *TextFacts {
	var bf *TextFacts
	if b, ok := e.dialect.(ParamBinder); ok {
		if bound, ok := b.Bind(text, vals); ok {
			if f := e.analyze(bound); !f.Unparsed && !f.ParseError && len(f.Stmts) == len(tf.Stmts) {
				bf = f
			}
		}
	}
	out := &TextFacts{Stmts: make([]StmtFacts, len(tf.Stmts)), ParseError: tf.ParseError, ParseReason: tf.ParseReason,
		Lex: tf.Lex, SQLOps: tf.SQLOps}
	for i := range tf.Stmts {
		st := tf.Stmts[i]
		st.matched = nil
		var rows, limited KindSet
		switch {
		case bf != nil:
			rows, limited = bf.Stmts[i].Unfiltered, bf.Stmts[i].LimitedWhole
		case st.ParamWrite:
			rows = 1<<KindUpdate | 1<<KindDelete
		}
		// an INSERT that rewrites every row counts as the update or
		// delete it is (writes.go)
		st.Kinds |= rows
		st.Unfiltered |= rows
		st.LimitedWhole |= limited
		if len(st.InDatabase) > 0 {
			in := make([]DatabaseFacts, len(st.InDatabase))
			copy(in, st.InDatabase)
			for j := range in {
				in[j].Facts.matched = nil
				in[j].Facts.Kinds |= rows
				in[j].Facts.Unfiltered |= rows
				in[j].Facts.LimitedWhole |= limited
			}
			st.InDatabase = in
		}
		st.AsUser = nil // judged as the session's own facts above
		out.Stmts[i] = st
	}
	e.policy.precompute(e.dialect, out, text)
	return out
}

// boundHolds reports whether the values can make some statement's bare
// condition always true.
func (tf *TextFacts) boundHolds(truth func(int) (bool, bool)) bool {
	for i := range tf.Stmts {
		ps := tf.Stmts[i].BareParams
		for j := 0; j < len(ps); {
			arm, all := ps[j].Arm, true
			for ; j < len(ps) && ps[j].Arm == arm; j++ {
				t, f := truth(int(ps[j].Index))
				if ps[j].Negated && !f || !ps[j].Negated && !t {
					all = false
				}
			}
			if all {
				return true
			}
		}
	}
	return false
}

// boundFacts returns tf's facts with every bare condition always true,
// matched against the policy.
func (e *Engine) boundFacts(tf *TextFacts, text string) *TextFacts {
	out := &TextFacts{Stmts: make([]StmtFacts, len(tf.Stmts)), ParseError: tf.ParseError, ParseReason: tf.ParseReason,
		Lex: tf.Lex, SQLOps: tf.SQLOps}
	for i := range tf.Stmts {
		st := tf.Stmts[i]
		st.matched = nil
		bare(&st)
		if len(st.InDatabase) > 0 {
			in := make([]DatabaseFacts, len(st.InDatabase))
			copy(in, st.InDatabase)
			for j := range in {
				in[j].Facts.matched = nil
				in[j].Facts.BareParams, in[j].Facts.BareWhere, in[j].Facts.BareOr = st.BareParams, st.BareWhere, st.BareOr
				bare(&in[j].Facts)
			}
			st.InDatabase = in
		}
		out.Stmts[i] = st
	}
	e.policy.precompute(e.dialect, out, text)
	return out
}

// bare makes st's bare conditions always true.
func bare(st *StmtFacts) {
	if len(st.BareParams) == 0 {
		return
	}
	st.Unfiltered |= st.BareWhere
	st.Tautology = st.Tautology || st.BareOr
}
