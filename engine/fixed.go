package engine

// A fixed verdict is one a text gets in every session: computed once, when
// the text's rules are (precompute), and returned by a cache hit without
// walking the statements again. Most of an application's statements are
// such texts: no rule they match has a scope, a time window or a rate, and
// nothing of their facts depends on the session's user, database, lexing
// state or the catalog.

// marks are the verdict's fields that depend on the text alone.
type marks struct {
	sessionOps, dynamicSQL, changesSchema, bareParams bool
}

func (m marks) into(v *Verdict) {
	v.SessionOps, v.DynamicSQL, v.ChangesSchema, v.BareParams = m.sessionOps, m.dynamicSQL, m.changesSchema, m.bareParams
}

func textMarks(tf *TextFacts) marks {
	m := marks{sessionOps: len(tf.SQLOps) > 0}
	for i := range tf.Stmts {
		st := &tf.Stmts[i]
		m.changesSchema = m.changesSchema || st.Kinds&(1<<KindDDL) != 0
		m.dynamicSQL = m.dynamicSQL || st.DynamicSQL
		m.bareParams = m.bareParams || len(st.BareParams) > 0 || st.ParamWrite
	}
	return m
}

// fix records in tf its marks and, when the text is judged alike in every
// session, its verdict (tf.fixed). It runs after the rules are matched.
func (p *Policy) fix(tf *TextFacts) {
	tf.marks = textMarks(tf)
	tf.fixed = false
	if tf.Unparsed || tf.ParseError {
		return
	}
	pk := pick{denyR: -1}
	for i := range tf.Stmts {
		st := &tf.Stmts[i]
		if len(st.AsUser) > 0 || len(st.InDatabase) > 0 || len(st.Bodies) > 0 || st.CreatesGrantee != GranteeNever {
			return
		}
		if len(st.matched) == 0 {
			continue
		}
		// decide takes the first matched rule whose scope and rate apply:
		// the first one's, in every session, when it has neither.
		m := st.matched[0]
		r := &p.rules[m.rule]
		if !r.scope.empty() || r.rate != nil {
			return
		}
		p.take(&pk, r, m.reason)
	}
	p.verdictInto(&tf.verdict, &pk, len(tf.Stmts))
	tf.marks.into(&tf.verdict)
	for i := range tf.Stmts {
		// Without a catalog (a fixed verdict is used only then), what the
		// text does to the search_path is its own facts' (judgeStmts).
		tf.verdict.ChangesPath = tf.verdict.ChangesPath || tf.Stmts[i].PathChange != PathKept || tf.Stmts[i].PathMay
	}
	tf.fixed = true
}
