package engine

// Bare parameters: a prepared statement's condition that is a parameter
// on its own (MySQL: DELETE FROM t WHERE ?, SELECT ... WHERE a = 1 OR ?)
// is always true or never, by the value bound when it is executed. The
// dialect reports such parameters (StmtFacts.BareParams); the text's
// facts are judged as they are, and an execution whose values make one of
// those conditions true is judged by the facts with the condition always
// true (the WHERE-less UPDATE or DELETE, the always-true OR arm), made
// once per text and cached with it.

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

// ParamTruth says what a bound value may be as a condition: true, false
// (NULL is neither), or both when it is not known (a user variable in
// EXECUTE ... USING, a value sent as long data).
type ParamTruth func(i int) (canBeTrue, canBeFalse bool)

// UnknownParams is the ParamTruth of values that are not known.
func UnknownParams(int) (bool, bool) { return true, true }

// JudgeBound judges the text of a prepared statement executed with values
// that truth describes: as Judge does, and, when the values can make a
// bare parameter's condition always true, as the statement with that
// condition always true.
func (e *Engine) JudgeBound(sql []byte, s *Session, truth ParamTruth) Verdict {
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
	if !tf.boundHolds(truth) {
		return v
	}
	tf.boundOnce.Do(func() { tf.bound = e.boundFacts(tf, string(read)) })
	bv := e.judge(tf.bound, s)
	bv.SessionOps, bv.DynamicSQL, bv.BareParams = v.SessionOps, v.DynamicSQL, true
	if bv.Action.Denies() && (!v.Action.Denies() || denyRank(bv.Action, bv.Mode) > denyRank(v.Action, v.Mode)) {
		return bv
	}
	return v
}

// boundHolds reports whether the values can make some statement's bare
// condition always true.
func (tf *TextFacts) boundHolds(truth ParamTruth) bool {
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
