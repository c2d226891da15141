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
func (p *Policy) precompute(d Dialect, tf *TextFacts, text string) {
	im, _ := d.(ImplicitSchemer)
	defer p.fix(tf)
	if tf.Unparsed {
		return
	}
	var prints []uint64
	if p.usesFingerprints {
		prints = tf.fingerprints(d, text)
	}
	var cand []int32
	for i := range tf.Stmts {
		st := &tf.Stmts[i]
		var fp uint64
		if prints != nil {
			fp = prints[i]
		}
		cand = p.matchStmt(st, tf, fp, im, cand)
		for j := range st.InDatabase {
			cand = p.matchStmt(&st.InDatabase[j].Facts, tf, fp, im, cand)
		}
		for j := range st.AsUser {
			u := &st.AsUser[j].Facts
			cand = p.matchStmt(u, tf, fp, im, cand)
			for k := range u.InDatabase {
				cand = p.matchStmt(&u.InDatabase[k].Facts, tf, fp, im, cand)
			}
		}
	}
}

// matchStmt fills st.matched and the matched rules of the code it stores
// (body.go).
func (p *Policy) matchStmt(st *StmtFacts, tf *TextFacts, fp uint64, im ImplicitSchemer, cand []int32) []int32 {
	cand = p.match(st, tf, fp, im, cand)
	for i := range st.Bodies {
		cand = p.matchBody(&st.Bodies[i], tf, im, cand)
	}
	return cand
}

// match fills st.matched; cand is scratch space, returned for reuse.
func (p *Policy) match(st *StmtFacts, tf *TextFacts, fp uint64, im ImplicitSchemer, cand []int32) []int32 {
	cand = p.candidates(st, cand[:0])
	for _, ri := range cand {
		r := &p.rules[ri]
		if ok, reason := p.staticMatch(r, st, tf, fp, im); ok {
			st.matched = append(st.matched, ruleMatch{rule: ri, reason: reason})
		}
	}
	return cand
}

// candidates returns, in policy order, the rules that could match st.
func (p *Policy) candidates(st *StmtFacts, out []int32) []int32 {
	for k := StmtKind(0); k < NumKinds; k++ {
		if st.Kinds.Has(k) {
			out = append(out, p.index.byKind[k]...)
		}
	}
	if len(p.index.byTable) > 0 {
		for i := range st.Tables {
			out = append(out, p.index.byTable[st.Tables[i].Name]...)
		}
	}
	if len(p.index.byFunc) > 0 {
		for i := range st.Funcs {
			out = append(out, p.index.byFunc[st.Funcs[i].Name]...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// staticMatch reports whether the statement satisfies every condition of
// the rule that depends on the text alone, and the verdict reason.
func (p *Policy) staticMatch(r *rule, f *StmtFacts, tf *TextFacts, fp uint64, im ImplicitSchemer) (bool, string) {
	if r.kinds != 0 && f.Kinds&r.kinds == 0 {
		return false, ""
	}
	if r.kinds != 0 && r.action == ActionAllow {
		// An allow rule lets through only what it names: a WITH (DELETE
		// ...) SELECT is not allowed by kind [select].
		rest := f.Kinds &^ r.kinds
		if f.Kind != KindExplain {
			rest &^= 1 << KindExplain
		}
		if rest != 0 {
			return false, ""
		}
	}
	if r.verbs != 0 && (f.Verb == VerbNone || r.verbs&(1<<f.Verb) == 0) {
		return false, ""
	}
	if r.objects != nil {
		if _, ok := r.objects[f.Object]; !ok || f.Object == "" {
			return false, ""
		}
	}
	if r.withoutWhere {
		want := r.kinds & (1<<KindUpdate | 1<<KindDelete)
		if want == 0 {
			want = 1<<KindUpdate | 1<<KindDelete
		}
		if f.Unfiltered&want == 0 {
			return false, ""
		}
	}
	if r.copy != 0 && f.Copy&r.copy == 0 {
		return false, ""
	}
	if r.copyDir != 0 && f.CopyDir&r.copyDir == 0 {
		return false, ""
	}
	if r.tautology && !f.Tautology {
		return false, ""
	}
	if r.catalogUnion && !f.CatalogUnion {
		return false, ""
	}
	if r.timeProbe && !f.TimeProbe {
		return false, ""
	}
	if r.commentTrick && !tf.Lex.CommentTrick {
		return false, ""
	}
	if r.dynamicSQL && !f.DynamicSQL {
		return false, ""
	}
	if r.unparsedBody && f.Unparsed == "" {
		return false, ""
	}
	if r.unknownObject && f.UnknownObject == "" {
		return false, ""
	}
	if r.roleAttrs != 0 && f.RoleAttrs&r.roleAttrs == 0 {
		return false, ""
	}
	if r.effects != 0 && f.Effects&r.effects == 0 {
		return false, ""
	}
	if r.probes != 0 && f.Probes&r.probes == 0 {
		return false, ""
	}
	if r.stackedAfter != 0 {
		// Judged by everything the statement does: a WITH (DELETE ...)
		// SELECT after a SELECT is a delete.
		exempt := r.stackedAfter | 1<<KindTransaction | 1<<KindSetStmt
		if f.Kind != KindExplain {
			exempt |= 1 << KindExplain
		}
		if f.PrevKinds&r.stackedAfter == 0 || f.Kinds&^exempt == 0 {
			return false, ""
		}
	}
	if !r.functions.empty() {
		found := false
		for i := range f.Funcs {
			if r.functions.match(im, f.Funcs[i].Schema, f.Funcs[i].Name) {
				found = true
				break
			}
		}
		if !found {
			return false, ""
		}
	}
	if !r.tables.empty() && !p.anyTable(r, f, func(t *TableRef) bool { return r.tables.match(im, t.Schema, t.Name) }) {
		return false, ""
	}
	if !r.tablesOutside.empty() && !p.anyTable(r, f, func(t *TableRef) bool { return !r.tablesOutside.match(im, t.Schema, t.Name) }) {
		return false, ""
	}
	if !r.languages.empty() && !r.languages.matchAny(im, f.Languages) {
		return false, ""
	}
	if !r.extensions.empty() && !r.extensions.matchAny(im, f.Extensions) {
		return false, ""
	}
	if !r.settings.empty() && !r.settings.matchAny(im, f.Settings) {
		return false, ""
	}
	if !r.grantedRoles.empty() && !r.grantedRoles.matchAny(im, f.Roles) {
		return false, ""
	}
	if len(r.columns) > 0 && !p.columnsMatch(r, f, im) {
		return false, ""
	}
	if r.fingerprints != nil {
		if _, ok := r.fingerprints[fp]; !ok || fp == 0 {
			return false, ""
		}
	}
	if r.within != nil && !r.within.holds(f) {
		return false, ""
	}
	reason := r.reason
	if r.limits.set() {
		m := exceeded(&r.limits, f, &tf.Lex)
		if m == "" {
			return false, ""
		}
		reason += " (" + m + ")"
	}
	if r.unparsedBody {
		reason += " (" + f.Unparsed + ")"
	}
	if r.unknownObject {
		reason += " (" + f.UnknownObject + ")"
	}
	return true, reason
}

// anyTable reports whether some relation of the statement, with the rule's
// access, satisfies pred. CTE names are not relations.
func (p *Policy) anyTable(r *rule, f *StmtFacts, pred func(*TableRef) bool) bool {
	for i := range f.Tables {
		t := &f.Tables[i]
		if (r.access == accessRead && t.Write) || (r.access == accessWrite && !t.Write) {
			continue
		}
		if t.CTE {
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
func (p *Policy) columnsMatch(r *rule, f *StmtFacts, im ImplicitSchemer) bool {
	for ti := range f.Tables {
		t := &f.Tables[ti]
		if t.CTE {
			continue
		}
		for ci := range r.columns {
			cp := &r.columns[ci]
			if !cp.table.empty() && !cp.table.match(im, t.Schema, t.Name) {
				continue
			}
			for k := range f.Cols {
				c := &f.Cols[k]
				ours := c.Qual == "" || c.Qual == t.Name || (t.Alias != "" && c.Qual == t.Alias)
				if !ours {
					continue
				}
				star := c.Name == "*" || (c.Qual == "" && (c.Name == t.Name || (t.Alias != "" && c.Name == t.Alias)))
				if star {
					if cols, ok := p.columnsOf(t); ok {
						if slices.ContainsFunc(cols, func(col string) bool { return glob(cp.column, col) }) {
							return true
						}
						continue
					}
					return true
				}
				if glob(cp.column, c.Name) {
					return true
				}
			}
		}
	}
	return false
}

func (p *Policy) columnsOf(t *TableRef) ([]string, bool) {
	if p.tableColumns == nil {
		return nil, false
	}
	if t.Schema != "" {
		if c, ok := p.tableColumns[t.Schema+"."+t.Name]; ok {
			return c, true
		}
	}
	c, ok := p.tableColumns[t.Name]
	return c, ok
}

// exceeded names the first limit the statement exceeds, with the measured
// value ("in_list 10000 > 5000"), or "".
func exceeded(l *limits, f *StmtFacts, lex *LexStats) string {
	if m := exceededLex(&l.lexLimits, lex); m != "" {
		return m
	}
	if f == nil {
		return ""
	}
	switch {
	case l.list > 0 && int(f.CodeList) > l.list: // in code in strings (body.go)
		return limitText("in_list", int(f.CodeList), l.list)
	case l.depth > 0 && int(f.CodeDepth) > l.depth:
		return limitText("depth", int(f.CodeDepth), l.depth)
	case l.joins > 0 && int(f.Joins) > l.joins:
		return limitText("joins", int(f.Joins), l.joins)
	case l.unionArms > 0 && int(f.UnionArms) > l.unionArms:
		return limitText("union_arms", int(f.UnionArms), l.unionArms)
	case l.ctes > 0 && int(f.CTEs) > l.ctes:
		return limitText("ctes", int(f.CTEs), l.ctes)
	case l.boolTerms > 0 && int(f.BoolTerms) > l.boolTerms:
		return limitText("bool_terms", int(f.BoolTerms), l.boolTerms)
	case l.seriesRows > 0 && f.SeriesRows == UnboundedRows:
		return "series_rows unbounded (recursive CTE without a terminating condition) > " + strconv.FormatInt(l.seriesRows, 10)
	case l.seriesRows > 0 && f.SeriesRows > l.seriesRows:
		return "series_rows " + strconv.FormatInt(f.SeriesRows, 10) + " > " + strconv.FormatInt(l.seriesRows, 10)
	case l.stringBytes > 0 && f.StringBytes > l.stringBytes:
		return "string_bytes " + strconv.FormatInt(f.StringBytes, 10) + " > " + strconv.FormatInt(l.stringBytes, 10)
	}
	return ""
}

func exceededLex(l *lexLimits, lex *LexStats) string {
	switch {
	case l.bytes > 0 && lex.Bytes > l.bytes:
		return limitText("bytes", lex.Bytes, l.bytes)
	case l.list > 0 && lex.MaxList > l.list:
		return limitText("in_list", lex.MaxList, l.list)
	case l.depth > 0 && lex.MaxDepth > l.depth:
		return limitText("depth", lex.MaxDepth, l.depth)
	}
	return ""
}

func limitText(name string, got, limit int) string {
	return name + " " + strconv.Itoa(got) + " > " + strconv.Itoa(limit)
}

// beyondGuard reports whether a pre-parse measure exceeds the smallest
// limit of any rule, so the text is judged without parsing.
func (p *Policy) beyondGuard(lex *LexStats) bool {
	return exceededLex(&p.guard, lex) != ""
}
