package engine

import (
	"slices"
	"strconv"
)

// precompute records, for every statement of a freshly analysed text, the
// rules whose conditions on the text hold. Those depend only on the text and
// the policy, so they are computed once per cached text; a cache hit then
// checks only scope, time and rate, and its cost does not grow with the
// number of rules a statement does not match.
func (p *Policy) precompute(tf *textFacts, text string) {
	if tf.parseError || tf.unparsed {
		return
	}
	var prints []uint64
	if p.usesFingerprints {
		prints = tf.fingerprints(text)
	}
	var cand []int32
	for i := range tf.stmts {
		st := &tf.stmts[i]
		cand = p.candidates(st, cand[:0])
		var fp uint64
		if prints != nil {
			fp = prints[i]
		}
		for _, ri := range cand {
			r := &p.rules[ri]
			if ok, reason := p.staticMatch(r, st, tf, fp); ok {
				st.matched = append(st.matched, ruleMatch{rule: ri, reason: reason})
			}
		}
	}
}

// candidates returns, in policy order, the rules that could match st.
func (p *Policy) candidates(st *stmtFacts, out []int32) []int32 {
	for k := stmtKind(0); k < numKinds; k++ {
		if st.kinds.has(k) {
			out = append(out, p.index.byKind[k]...)
		}
	}
	if len(p.index.byTable) > 0 {
		for i := range st.tables {
			out = append(out, p.index.byTable[st.tables[i].name]...)
		}
	}
	if len(p.index.byFunc) > 0 {
		for i := range st.funcs {
			out = append(out, p.index.byFunc[st.funcs[i].name]...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// staticMatch reports whether the statement satisfies every condition of
// the rule that depends on the text alone, and the verdict reason.
func (p *Policy) staticMatch(r *rule, f *stmtFacts, tf *textFacts, fp uint64) (bool, string) {
	if r.kinds != 0 && f.kinds&r.kinds == 0 {
		return false, ""
	}
	if r.kinds != 0 && r.action == ActionAllow {
		// An allow rule lets through only what it names: a WITH (DELETE
		// ...) SELECT is not allowed by kind [select].
		rest := f.kinds &^ r.kinds
		if f.kind != kindExplain {
			rest &^= 1 << kindExplain
		}
		if rest != 0 {
			return false, ""
		}
	}
	if r.verbs != 0 && (f.verb == verbNone || r.verbs&(1<<f.verb) == 0) {
		return false, ""
	}
	if r.objects != nil {
		if _, ok := r.objects[f.object]; !ok || f.object == "" {
			return false, ""
		}
	}
	if r.withoutWhere {
		want := r.kinds & (1<<kindUpdate | 1<<kindDelete)
		if want == 0 {
			want = 1<<kindUpdate | 1<<kindDelete
		}
		if f.unfiltered&want == 0 {
			return false, ""
		}
	}
	if r.copy != 0 && f.copy&r.copy == 0 {
		return false, ""
	}
	if r.copyDir != 0 && f.copyDir&r.copyDir == 0 {
		return false, ""
	}
	if r.tautology && !f.tautology {
		return false, ""
	}
	if r.catalogUnion && !f.catalogUnion {
		return false, ""
	}
	if r.timeProbe && !f.timeProbe {
		return false, ""
	}
	if r.commentTrick && !tf.lex.commentTrick {
		return false, ""
	}
	if r.dynamicSQL && !f.dynamicSQL {
		return false, ""
	}
	if r.unparsedBody && f.unparsed == "" {
		return false, ""
	}
	if r.roleAttrs != 0 && f.roleAttrs&r.roleAttrs == 0 {
		return false, ""
	}
	if r.effects != 0 && f.effects&r.effects == 0 {
		return false, ""
	}
	if r.stackedAfter != 0 {
		// Judged by everything the statement does: a WITH (DELETE ...)
		// SELECT after a SELECT is a delete.
		exempt := r.stackedAfter | 1<<kindTransaction | 1<<kindSetStmt
		if f.kind != kindExplain {
			exempt |= 1 << kindExplain
		}
		if f.prevKinds&r.stackedAfter == 0 || f.kinds&^exempt == 0 {
			return false, ""
		}
	}
	if !r.functions.empty() {
		found := false
		for i := range f.funcs {
			if r.functions.match(f.funcs[i].schema, f.funcs[i].name) {
				found = true
				break
			}
		}
		if !found {
			return false, ""
		}
	}
	if !r.tables.empty() && !p.anyTable(r, f, func(t *tableRef) bool { return r.tables.match(t.schema, t.name) }) {
		return false, ""
	}
	if !r.tablesOutside.empty() && !p.anyTable(r, f, func(t *tableRef) bool { return !r.tablesOutside.match(t.schema, t.name) }) {
		return false, ""
	}
	if !r.languages.empty() && !r.languages.matchAny(f.languages) {
		return false, ""
	}
	if !r.extensions.empty() && !r.extensions.matchAny(f.extensions) {
		return false, ""
	}
	if !r.settings.empty() && !r.settings.matchAny(f.settings) {
		return false, ""
	}
	if !r.grantedRoles.empty() && !r.grantedRoles.matchAny(f.roles) {
		return false, ""
	}
	if len(r.columns) > 0 && !p.columnsMatch(r, f) {
		return false, ""
	}
	if r.fingerprints != nil {
		if _, ok := r.fingerprints[fp]; !ok || fp == 0 {
			return false, ""
		}
	}
	reason := r.reason
	if r.limits.set() {
		m := exceeded(&r.limits, f, &tf.lex)
		if m == "" {
			return false, ""
		}
		reason += " (" + m + ")"
	}
	if r.unparsedBody {
		reason += " (" + f.unparsed + ")"
	}
	return true, reason
}

// anyTable reports whether some relation of the statement, with the rule's
// access, satisfies pred. CTE names are not relations.
func (p *Policy) anyTable(r *rule, f *stmtFacts, pred func(*tableRef) bool) bool {
	for i := range f.tables {
		t := &f.tables[i]
		if (r.access == accessRead && t.write) || (r.access == accessWrite && !t.write) {
			continue
		}
		if t.cte {
			continue
		}
		if pred(t) {
			return true
		}
	}
	return false
}

// columnsMatch reports whether the statement reads a denied column: by name
// (unqualified, or qualified by the table's name or alias), through a star
// or a whole-row reference to the table, unless table_columns lists the
// table's columns and none of them is denied.
func (p *Policy) columnsMatch(r *rule, f *stmtFacts) bool {
	for ti := range f.tables {
		t := &f.tables[ti]
		if t.cte {
			continue
		}
		for ci := range r.columns {
			cp := &r.columns[ci]
			if !cp.table.empty() && !cp.table.match(t.schema, t.name) {
				continue
			}
			for k := range f.cols {
				c := &f.cols[k]
				ours := c.qual == "" || c.qual == t.name || (t.alias != "" && c.qual == t.alias)
				if !ours {
					continue
				}
				star := c.name == "*" || (c.qual == "" && (c.name == t.name || (t.alias != "" && c.name == t.alias)))
				if star {
					if cols, ok := p.columnsOf(t); ok {
						if slices.ContainsFunc(cols, func(col string) bool { return glob(cp.column, col) }) {
							return true
						}
						continue
					}
					return true
				}
				if glob(cp.column, c.name) {
					return true
				}
			}
		}
	}
	return false
}

func (p *Policy) columnsOf(t *tableRef) ([]string, bool) {
	if p.tableColumns == nil {
		return nil, false
	}
	if t.schema != "" {
		if c, ok := p.tableColumns[t.schema+"."+t.name]; ok {
			return c, true
		}
	}
	c, ok := p.tableColumns[t.name]
	return c, ok
}

// exceeded names the first limit the statement exceeds, with the measured
// value ("in_list 10000 > 5000"), or "".
func exceeded(l *limits, f *stmtFacts, lex *lexStats) string {
	if m := exceededLex(&l.lexLimits, lex); m != "" {
		return m
	}
	if f == nil {
		return ""
	}
	switch {
	case l.list > 0 && int(f.codeList) > l.list: // in code in strings (body.go)
		return limitText("in_list", int(f.codeList), l.list)
	case l.depth > 0 && int(f.codeDepth) > l.depth:
		return limitText("depth", int(f.codeDepth), l.depth)
	case l.joins > 0 && int(f.joins) > l.joins:
		return limitText("joins", int(f.joins), l.joins)
	case l.unionArms > 0 && int(f.unionArms) > l.unionArms:
		return limitText("union_arms", int(f.unionArms), l.unionArms)
	case l.ctes > 0 && int(f.ctes) > l.ctes:
		return limitText("ctes", int(f.ctes), l.ctes)
	case l.boolTerms > 0 && int(f.boolTerms) > l.boolTerms:
		return limitText("bool_terms", int(f.boolTerms), l.boolTerms)
	case l.seriesRows > 0 && f.seriesRows == unboundedRows:
		return "series_rows unbounded (recursive CTE without a terminating condition) > " + strconv.FormatInt(l.seriesRows, 10)
	case l.seriesRows > 0 && f.seriesRows > l.seriesRows:
		return "series_rows " + strconv.FormatInt(f.seriesRows, 10) + " > " + strconv.FormatInt(l.seriesRows, 10)
	case l.stringBytes > 0 && f.stringBytes > l.stringBytes:
		return "string_bytes " + strconv.FormatInt(f.stringBytes, 10) + " > " + strconv.FormatInt(l.stringBytes, 10)
	}
	return ""
}

func exceededLex(l *lexLimits, lex *lexStats) string {
	switch {
	case l.bytes > 0 && lex.bytes > l.bytes:
		return limitText("bytes", lex.bytes, l.bytes)
	case l.list > 0 && lex.maxList > l.list:
		return limitText("in_list", lex.maxList, l.list)
	case l.depth > 0 && lex.maxDepth > l.depth:
		return limitText("depth", lex.maxDepth, l.depth)
	}
	return ""
}

func limitText(name string, got, limit int) string {
	return name + " " + strconv.Itoa(got) + " > " + strconv.Itoa(limit)
}

// beyondGuard reports whether a pre-parse measure exceeds the smallest
// limit of any rule, so the text is judged without parsing.
func (p *Policy) beyondGuard(lex *lexStats) bool {
	return exceededLex(&p.guard, lex) != ""
}
