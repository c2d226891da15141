package mysql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/sqlfw/sqlfw/engine"
)

// Whole-table writes: which statements change or remove every row of the
// table they write (engine.StmtFacts.Unfiltered, the default policy's
// no-unfiltered-writes).
//
// An UPDATE or DELETE does when its WHERE is missing, always true
// (taut.go), or does not tell the rows of the written table apart: it
// names none of its columns (unqualified columns count, as they may be
// its), so it is the same for every row and removes all of them or none
// (WHERE @a, WHERE EXISTS (SELECT 1 FROM u), UPDATE t, u SET t.a = 1
// WHERE u.id = 5), or it matches the table against itself (id IN (SELECT
// id FROM t)). A multi-table form whose WHERE names only the other
// tables' columns still filters when a join condition ties the written
// table to them (UPDATE t JOIN u ON t.id = u.tid SET ... WHERE u.x = 1).
// An AND filters when one of its arms does; an OR only when each arm does
// (WHERE id = 5 OR @a does not). A parameter is the application's: a
// condition with one counts as filtering here (its value is judged at
// execute time).
//
// A single-table UPDATE or DELETE with LIMIT n, n a constant of at most
// limitedWriteRows, changes at most n rows, not every row, whatever its
// WHERE: DELETE FROM queue ORDER BY id LIMIT 1 is not an unfiltered write
// (an OR tautology in its WHERE is still no-tautology's). It is one when
// it is not the statement itself but nested in one (a routine's body, where
// a loop repeats it; a PREPARE text), or when a message holds more than
// one (DELETE ... LIMIT 1; DELETE ... LIMIT 1; ...): LimitedWhole records
// it and finishLimited decides.
//
// Writes that are not UPDATE or DELETE count when they rewrite every row
// of their table: REPLACE ... SELECT and INSERT ... SELECT ... ON
// DUPLICATE KEY UPDATE whose SELECT reads the written table itself
// without filtering it (REPLACE INTO t SELECT * FROM t: every row
// conflicts with itself and is deleted and inserted again; INSERT INTO t
// SELECT * FROM t ON DUPLICATE KEY UPDATE a = 0 updates every row). A
// REPLACE is recorded as an unfiltered delete, an ON DUPLICATE KEY UPDATE
// as an unfiltered update. Fed from another table, from VALUES or from a
// file (LOAD DATA ... REPLACE), which rows conflict depends on the data,
// not the text: those are not judged whole-table.

// The walker's entry points: a statement's condition is judged in each
// reading of its X'...' literals (taut.go readings).

// unfilteredUpdate reports whether an UPDATE changes every row of a table
// it writes (all), or would but for a LIMIT of at most limitedWriteRows
// (limitedAll: finishLimited decides).
func (w *walker) unfilteredUpdate(x *ast.UpdateStmt) (all, limitedAll bool) {
	written := func(t *ast.TableName) bool { return w.writes[t] }
	for i := range readings(w.xhex) {
		fo := reading(w.xhex, i)
		if fo.unfilteredUpdate(x, written, false) {
			return true, false
		}
	}
	if !limited(x.Limit) {
		return false, false
	}
	for i := range readings(w.xhex) {
		fo := reading(w.xhex, i)
		if fo.unfilteredUpdate(x, written, true) {
			return false, true
		}
	}
	return false, false
}

// unfilteredDelete is unfilteredUpdate for a DELETE.
func (w *walker) unfilteredDelete(x *ast.DeleteStmt) (all, limitedAll bool) {
	if lockTableReset(x) {
		return false, false
	}
	for i := range readings(w.xhex) {
		fo := reading(w.xhex, i)
		if fo.unfilteredDelete(x, false) {
			return true, false
		}
	}
	if !limited(x.Limit) {
		return false, false
	}
	for i := range readings(w.xhex) {
		fo := reading(w.xhex, i)
		if fo.unfilteredDelete(x, true) {
			return false, true
		}
	}
	return false, false
}

func (w *walker) insertUnfiltered(x *ast.InsertStmt) engine.KindSet {
	var k engine.KindSet
	for i := range readings(w.xhex) {
		fo := reading(w.xhex, i)
		k |= fo.insertUnfiltered(x)
	}
	return k
}

func (w *walker) orTautology(e ast.ExprNode) bool {
	for i := range readings(w.xhex) {
		fo := reading(w.xhex, i)
		if fo.orTautology(e, 0) {
			return true
		}
	}
	return false
}

// limitedWriteRows is the largest constant LIMIT of an UPDATE or DELETE
// that is not an unfiltered write.
const limitedWriteRows = 10

// limited is folder.limited in MySQL's reading (a LIMIT count is a
// number, whatever the reading of X'...' literals).
func limited(l *ast.Limit) bool {
	var fo folder
	return fo.limited(l)
}

// limited reports whether a LIMIT caps the rows at a constant of at most
// limitedWriteRows.
func (fo *folder) limited(l *ast.Limit) bool {
	if l == nil || l.Count == nil {
		return false
	}
	if _, ok := l.Count.(*test_driver.ParamMarkerExpr); ok {
		return false
	}
	v, ok := fo.fold(l.Count, 0)
	return ok && !v.null && !v.isStr && v.num >= 0 && v.num <= limitedWriteRows
}

// quals is the set of names that qualify the written table's columns: its
// name and its alias.
type quals map[string]bool

// sources collects the table sources of a FROM tree (not of subqueries)
// and its join conditions.
func sources(n ast.ResultSetNode, out []*ast.TableSource, ons []ast.ExprNode, depth int) ([]*ast.TableSource, []ast.ExprNode) {
	if depth > maxFoldDepth {
		return out, ons
	}
	switch x := n.(type) {
	case *ast.Join:
		if x.Left != nil {
			out, ons = sources(x.Left, out, ons, depth+1)
		}
		if x.Right != nil {
			out, ons = sources(x.Right, out, ons, depth+1)
		}
		if x.On != nil && x.On.Expr != nil {
			ons = append(ons, x.On.Expr)
		}
		if len(x.Using) > 0 || x.NaturalJoin {
			ons = append(ons, nil) // a USING or NATURAL join ties the tables' columns: counted as filtering
		}
	case *ast.TableSource:
		out = append(out, x)
	}
	return out, ons
}

// unfilteredUpdate reports whether an UPDATE changes every row of a table
// it writes.
func (fo *folder) unfilteredUpdate(x *ast.UpdateStmt, written func(*ast.TableName) bool, ignoreLimit bool) bool {
	if x.TableRefs == nil || x.TableRefs.TableRefs == nil {
		return x.Where == nil
	}
	lim := x.Limit
	if ignoreLimit {
		lim = nil
	}
	fo.with = withQueries(x.With)
	fo.one = singleTable(x.TableRefs.TableRefs)
	defer func() { fo.with, fo.one = nil, nil }()
	return fo.unfilteredIn(x.TableRefs.TableRefs, x.Where, lim, written)
}

// withQueries returns a WITH clause's queries by name.
func withQueries(w *ast.WithClause) map[string]ast.ResultSetNode {
	if w == nil {
		return nil
	}
	out := map[string]ast.ResultSetNode{}
	for _, c := range w.CTEs {
		if c.Query != nil {
			out[c.Name.L] = c.Query.Query
		}
	}
	return out
}

// unfilteredDelete reports whether a DELETE removes every row of a table it
// deletes from.
func (fo *folder) unfilteredDelete(x *ast.DeleteStmt, ignoreLimit bool) bool {
	if x.TableRefs == nil || x.TableRefs.TableRefs == nil {
		return x.Where == nil
	}
	lim := x.Limit
	if ignoreLimit {
		lim = nil
	}
	fo.with = withQueries(x.With)
	if !x.IsMultiTable {
		fo.one = singleTable(x.TableRefs.TableRefs)
	}
	defer func() { fo.with, fo.one = nil, nil }()
	written := func(*ast.TableName) bool { return true }
	if x.IsMultiTable && x.Tables != nil {
		names := map[string]bool{}
		for _, t := range x.Tables.Tables {
			names[t.Name.L] = true // a table's name or its alias
		}
		return fo.unfilteredTargets(x.TableRefs.TableRefs, x.Where, lim, func(ts *ast.TableSource, t *ast.TableName) bool {
			return names[ts.AsName.L] || (ts.AsName.L == "" && names[t.Name.L])
		})
	}
	return fo.unfilteredIn(x.TableRefs.TableRefs, x.Where, lim, written)
}

func (fo *folder) unfilteredIn(refs *ast.Join, where ast.ExprNode, lim *ast.Limit, written func(*ast.TableName) bool) bool {
	return fo.unfilteredTargets(refs, where, lim, func(_ *ast.TableSource, t *ast.TableName) bool { return written(t) })
}

// unfilteredTargets reports whether the WHERE (and join conditions) of a
// write leave every row of one of its targets in.
func (fo *folder) unfilteredTargets(refs *ast.Join, where ast.ExprNode, lim *ast.Limit, isTarget func(*ast.TableSource, *ast.TableName) bool) bool {
	if where == nil {
		return !fo.limited(lim)
	}
	srcs, ons := sources(refs, nil, nil, 0)
	for _, ts := range srcs {
		t, ok := ts.Source.(*ast.TableName)
		if !ok || !isTarget(ts, t) {
			continue
		}
		q := quals{t.Name.L: true}
		if ts.AsName.L != "" {
			q = quals{ts.AsName.L: true}
		}
		if fo.unfilteredFor(where, ons, len(srcs) > 1, q, t, lim) || fo.selfJoin(where, ons, srcs, ts, t, lim) {
			return true
		}
	}
	return false
}

// selfJoinCovers reports whether a SELECT without a filter joins t with
// itself under another name on one column and nothing else (USING (c) or
// ON t.c = t2.c): each row of t meets itself.
func (fo *folder) selfJoinCovers(x *ast.SelectStmt, t *ast.TableName, with map[string]ast.ResultSetNode) bool {
	j := x.From.TableRefs
	if j.Right == nil || j.NaturalJoin || (x.Where != nil && !fo.alwaysTrue(x.Where)) {
		return false
	}
	l, ok1 := j.Left.(*ast.TableSource)
	r, ok2 := j.Right.(*ast.TableSource)
	if !ok1 || !ok2 {
		return false
	}
	lt, ok1 := l.Source.(*ast.TableName)
	rt, ok2 := r.Source.(*ast.TableName)
	if !ok1 || !ok2 || !sameTable(lt, t) || !sameTable(rt, t) {
		return false
	}
	for _, n := range []*ast.TableName{lt, rt} {
		if _, ok := with[n.Name.L]; ok && n.Schema.L == "" {
			return false
		}
	}
	if len(j.Using) == 1 && j.On == nil {
		return true
	}
	if len(j.Using) != 0 || j.On == nil || j.On.Expr == nil {
		return false
	}
	return fo.selfJoin(j.On.Expr, nil, []*ast.TableSource{l, r}, l, lt, nil)
}

// selfJoin reports whether a two-table write joins its target with the
// same table under another name on one column and nothing else: DELETE t
// FROM t, t AS t2 WHERE t.id = t2.id matches every row of t (NULLs aside,
// as for x = x).
func (fo *folder) selfJoin(where ast.ExprNode, ons []ast.ExprNode, srcs []*ast.TableSource, target *ast.TableSource, t *ast.TableName, lim *ast.Limit) bool {
	if len(srcs) != 2 || where == nil || fo.limited(lim) {
		return false
	}
	other := srcs[0]
	if other == target {
		other = srcs[1]
	}
	o, ok := other.Source.(*ast.TableName)
	if !ok || !sameTable(o, t) {
		return false
	}
	for _, on := range ons {
		if on != nil && !fo.alwaysTrue(on) {
			return false
		}
	}
	name := func(ts *ast.TableSource, n *ast.TableName) string {
		if ts.AsName.L != "" {
			return ts.AsName.L
		}
		return n.Name.L
	}
	tq, oq := name(target, t), name(other, o)
	cmp, ok := unparen(where).(*ast.BinaryOperationExpr)
	if !ok || tq == oq || (cmp.Op != opcode.EQ && cmp.Op != opcode.NullEQ) {
		return false
	}
	l, ok1 := unparen(cmp.L).(*ast.ColumnNameExpr)
	r, ok2 := unparen(cmp.R).(*ast.ColumnNameExpr)
	if !ok1 || !ok2 || l.Name == nil || r.Name == nil || l.Name.Name.L != r.Name.Name.L {
		return false
	}
	lq, rq := l.Name.Table.L, r.Name.Table.L
	return (lq == tq && rq == oq) || (lq == oq && rq == tq)
}

// unfilteredFor reports whether where (with the join conditions ons of a
// multi-table form) leaves every row of the table that q qualifies in.
func (fo *folder) unfilteredFor(where ast.ExprNode, ons []ast.ExprNode, multi bool, q quals, t *ast.TableName, lim *ast.Limit) bool {
	if fo.limited(lim) {
		return false
	}
	if where == nil || fo.alwaysTrue(where) {
		return true
	}
	if fo.truthOf(where, 0)&tTrue == 0 {
		return false // never true (WHERE 1 = 0, WHERE id IN () as builders write it): no row
	}
	if fo.filtersTarget(where, q, 0) {
		return fo.selfMatch(where, q, t)
	}
	if multi && !rowFree(where) {
		for _, on := range ons {
			if on == nil || (fo.filtersTarget(on, q, 0) && !fo.alwaysTrue(on)) {
				return false // the join picks the target's rows by the others' filtered rows
			}
		}
	}
	return true
}

// filtersTarget reports whether a condition can tell the rows of the table
// q qualifies apart.
func (fo *folder) filtersTarget(e ast.ExprNode, q quals, depth int) bool {
	e = unparen(e)
	if b, ok := e.(*ast.BinaryOperationExpr); ok && depth < maxFoldDepth {
		switch b.Op {
		case opcode.LogicAnd:
			return fo.filtersTarget(b.L, q, depth+1) || fo.filtersTarget(b.R, q, depth+1)
		case opcode.LogicOr:
			for _, a := range orArmList(b, nil, 0) {
				if fo.truthOf(a, 0)&tTrue == 0 {
					continue // never true
				}
				if !fo.filtersTarget(a, q, depth+1) && !containsParam(a) {
					return false
				}
			}
			return true
		}
	}
	return mentions(e, q) || containsParam(e)
}

// mentions reports whether e refers to a column that may be the table's:
// qualified by one of q, or unqualified.
func mentions(e ast.ExprNode, q quals) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		if c, ok := n.(*ast.ColumnName); ok && (c.Table.L == "" || q[c.Table.L]) {
			found = true
		}
	}))
	return found
}

func containsParam(e ast.ExprNode) bool {
	found := false
	e.Accept(visitFunc(func(n ast.Node) {
		if _, ok := n.(*test_driver.ParamMarkerExpr); ok {
			found = true
		}
	}))
	return found
}

// selfMatch reports whether a condition matches every row of t by looking
// t up in itself: id IN (SELECT id FROM t) without further conditions
// (NULLs aside, as for x = x). MariaDB runs it (from 10.3).
func (fo *folder) selfMatch(where ast.ExprNode, q quals, t *ast.TableName) bool {
	return fo.selfMatchD(where, q, t, 0)
}

func (fo *folder) selfMatchD(where ast.ExprNode, q quals, t *ast.TableName, depth int) bool {
	if depth > maxFoldDepth {
		return false
	}
	var outer, sel ast.ExprNode
	switch x := unparen(where).(type) {
	case *ast.BinaryOperationExpr:
		// id = 0 OR id IN (SELECT id FROM t); ... AND 1 = 1
		switch x.Op {
		case opcode.LogicOr:
			return fo.selfMatchD(x.L, q, t, depth+1) || fo.selfMatchD(x.R, q, t, depth+1)
		case opcode.LogicAnd:
			// every conjunct a self-match or always true; the self-match
			// looked for first, so that a long AND of filters (the usual
			// case) is not folded once per level
			conj := andTerms(x, nil, 0)
			found := false
			for _, c := range conj {
				if fo.selfMatchD(c, q, t, depth+1) {
					found = true
				}
			}
			if !found {
				return false
			}
			for _, c := range conj {
				if !fo.selfMatchD(c, q, t, depth+1) && !fo.alwaysTrue(c) {
					return false
				}
			}
			return true
		}
		return false
	case *ast.PatternInExpr:
		if x.Not {
			return false
		}
		outer, sel = x.Expr, x.Sel
	case *ast.CompareSubqueryExpr:
		if x.Op != opcode.EQ || x.All {
			return false // = ANY (SELECT id FROM t) is IN
		}
		outer, sel = x.L, x.R
	case *ast.ExistsSubqueryExpr:
		return !x.Not && fo.selfExists(x.Sel, q, t)
	default:
		return false
	}
	sq, ok := sel.(*ast.SubqueryExpr)
	if !ok {
		return false
	}
	a, ok := unparen(outer).(*ast.ColumnNameExpr)
	return ok && a.Name != nil && fo.selfCovers(sq.Query, q, t, a.Name, 0)
}

// andTerms flattens nested ANDs (and parentheses) into their terms.
func andTerms(x *ast.BinaryOperationExpr, out []ast.ExprNode, depth int) []ast.ExprNode {
	for _, a := range []ast.ExprNode{x.L, x.R} {
		in := unparen(a)
		if b, ok := in.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicAnd && depth < maxFoldDepth {
			out = andTerms(b, out, depth+1)
			continue
		}
		out = append(out, in)
	}
	return out
}

// selfCovers reports whether a subquery returns, for each row of t, that
// row's column outer: it returns the column of every row (columnOf), or
// the outer row's own (SELECT id without FROM), or it is correlated and
// holds the outer row (selfRow), or it is a UNION with an arm that does
// (id IN (SELECT id FROM t UNION SELECT 0)).
func (fo *folder) selfCovers(n ast.Node, q quals, t *ast.TableName, outer *ast.ColumnName, depth int) bool {
	if depth > 8 {
		return false
	}
	switch x := n.(type) {
	case *ast.SetOprStmt:
		if x.With != nil || x.Limit != nil || x.SelectList == nil {
			return false
		}
		return fo.selfCovers(x.SelectList, q, t, outer, depth+1)
	case *ast.SetOprSelectList:
		if x.With != nil || x.Limit != nil {
			return false
		}
		if !allUnion(x.Selects) {
			return false // INTERSECT, EXCEPT: fewer rows than an arm's
		}
		for _, arm := range x.Selects {
			if fo.selfCovers(arm, q, t, outer, depth+1) {
				return true
			}
		}
	case *ast.SelectStmt:
		if x.With != nil {
			return false
		}
		if fo.columnOf(x, t, outer.Name.L, 0) {
			return true
		}
		if sel := constSelect(x); sel != nil && len(sel.Fields.Fields) == 1 {
			c, ok := unparen(sel.Fields.Fields[0].Expr).(*ast.ColumnNameExpr)
			return ok && c.Name != nil && c.Name.Name.L == outer.Name.L && c.Name.Schema.L == "" && (c.Name.Table.L == "" || q[c.Name.Table.L])
		}
		return fo.selfRow(x, q, t, outer.Name.L)
	}
	return false
}

// allUnion reports whether a set operation's arms are joined by UNION
// [ALL|DISTINCT] only: its rows are every arm's.
func allUnion(arms []ast.Node) bool {
	for _, arm := range arms[min(1, len(arms)):] {
		if !unionArm(arm) {
			return false
		}
	}
	return true
}

// unionArm reports whether a set operation's arm after the first joins
// it by UNION [ALL|DISTINCT].
func unionArm(n ast.Node) bool {
	var op *ast.SetOprType
	switch x := n.(type) {
	case *ast.SelectStmt:
		op = x.AfterSetOperator
	case *ast.SetOprSelectList:
		op = x.AfterSetOperator
	default:
		return false
	}
	return op != nil && (*op == ast.Union || *op == ast.UnionAll)
}

// selfRow reports whether a correlated subquery over t under another name
// (SELECT id FROM t x WHERE x.id = t.id) holds the outer row: its WHERE is
// true, as taut.go folds it, when its row is the outer row (its columns
// and the outer row's are then one: x.id >= t.id AND x.id <= t.id, x.a <=>
// t.a, x.id + 0 = t.id); NULLs aside, as for x = x. col is the column it
// must return, "" for any (EXISTS).
func (fo *folder) selfRow(sel *ast.SelectStmt, q quals, t *ast.TableName, col string) bool {
	if sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right != nil || sel.Limit != nil ||
		sel.GroupBy != nil || sel.Having != nil || sel.Where == nil || sel.Fields == nil || len(q) != 1 {
		return false
	}
	ts, ok := sel.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return false
	}
	inner, ok := ts.Source.(*ast.TableName)
	if !ok || !sameTable(inner, t) || ts.AsName.L == "" || q[ts.AsName.L] {
		return false
	}
	if _, shadowed := fo.with[inner.Name.L]; shadowed && inner.Schema.L == "" {
		return false
	}
	if col != "" {
		if len(sel.Fields.Fields) != 1 {
			return false
		}
		c, ok := unparen(sel.Fields.Fields[0].Expr).(*ast.ColumnNameExpr)
		if !ok || c.Name == nil || c.Name.Name.L != col || c.Name.Schema.L != "" || (c.Name.Table.L != "" && c.Name.Table.L != ts.AsName.L) {
			return false
		}
	}
	one := &oneTable{name: t.Name.L, inner: ts.AsName.L}
	for k := range q {
		if k != t.Name.L {
			one.alias = k
		}
	}
	in := folder{xhex: fo.xhex, xStr: fo.xStr, with: fo.with, one: one}
	return in.alwaysTrue(sel.Where)
}

// columnOf reports whether a query returns column col of every row of t:
// SELECT col FROM t without a filter, directly or through a derived table
// or a WITH query of the statement (fo.with) that does the same (id IN
// (SELECT id FROM (SELECT id FROM t) x), WITH x AS (SELECT id FROM t)
// DELETE FROM t WHERE id IN (SELECT id FROM x)).
func (fo *folder) columnOf(n ast.ResultSetNode, t *ast.TableName, col string, depth int) bool {
	if u, ok := n.(*ast.SetOprStmt); ok && depth <= 8 && u.With == nil && u.Limit == nil && u.SelectList != nil && u.SelectList.Limit == nil {
		// a UNION with an arm that does: (SELECT id FROM t UNION SELECT 0) x
		if !allUnion(u.SelectList.Selects) {
			return false
		}
		for _, arm := range u.SelectList.Selects {
			if rs, ok := arm.(ast.ResultSetNode); ok && fo.columnOf(rs, t, col, depth+1) {
				return true
			}
		}
		return false
	}
	inSel, ok := n.(*ast.SelectStmt)
	if !ok || depth > 8 || inSel.Fields == nil || len(inSel.Fields.Fields) != 1 || !fo.wholeSelect(inSel) {
		return false
	}
	b, ok := unparen(inSel.Fields.Fields[0].Expr).(*ast.ColumnNameExpr)
	if !ok || b.Name == nil || b.Name.Name.L != col {
		return false
	}
	ts, ok := inSel.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return false
	}
	switch s := ts.Source.(type) {
	case *ast.TableName:
		if sub, ok := fo.with[s.Name.L]; ok && s.Schema.L == "" {
			return fo.columnOf(sub, t, col, depth+1)
		}
		return sameTable(s, t)
	case ast.ResultSetNode:
		return fo.columnOf(s, t, col, depth+1)
	}
	return false
}

// selfExists reports whether EXISTS (SELECT ... FROM t t2 WHERE t2.c =
// t.c) matches every row of t (NULLs aside): the table under another
// name, whose WHERE holds when its row is the outer row (selfRow).
func (fo *folder) selfExists(e ast.ExprNode, q quals, t *ast.TableName) bool {
	sq, ok := e.(*ast.SubqueryExpr)
	if !ok {
		return false
	}
	sel, ok := sq.Query.(*ast.SelectStmt)
	return ok && fo.selfRow(sel, q, t, "")
}

// wholeSelect: a single-table SELECT without a filter of its rows.
func (fo *folder) wholeSelect(sel *ast.SelectStmt) bool {
	return sel.From != nil && sel.From.TableRefs != nil && sel.From.TableRefs.Right == nil && sel.Limit == nil &&
		sel.GroupBy == nil && sel.Having == nil && (sel.Where == nil || fo.alwaysTrue(sel.Where))
}

func sameTable(a, b *ast.TableName) bool {
	return a.Name.L == b.Name.L && (a.Schema.L == "" || b.Schema.L == "" || a.Schema.L == b.Schema.L)
}

// insertUnfiltered returns the kinds an INSERT applies to every row of its
// table: REPLACE ... SELECT (delete) and INSERT ... SELECT ... ON
// DUPLICATE KEY UPDATE (update) whose SELECT reads the whole written table.
func (fo *folder) insertUnfiltered(x *ast.InsertStmt) engine.KindSet {
	if x.Select == nil || x.Table == nil || x.Table.TableRefs == nil || (!x.IsReplace && len(x.OnDuplicate) == 0) {
		return 0
	}
	ts, ok := x.Table.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return 0
	}
	t, ok := ts.Source.(*ast.TableName)
	if !ok || !fo.covers(x.Select, t, ctes(x.Select), 0) {
		return 0
	}
	if x.IsReplace {
		return 1 << engine.KindDelete
	}
	return 1 << engine.KindUpdate
}

// ctes returns the WITH queries of a source by name.
func ctes(n ast.ResultSetNode) map[string]ast.ResultSetNode {
	var w *ast.WithClause
	switch x := n.(type) {
	case *ast.SelectStmt:
		w = x.With
	case *ast.SetOprStmt:
		w = x.With
	}
	if w == nil {
		return nil
	}
	out := map[string]ast.ResultSetNode{}
	for _, c := range w.CTEs {
		if c.Query != nil {
			out[c.Name.L] = c.Query.Query
		}
	}
	return out
}

// covers reports whether a SELECT returns a row for every row of t: it
// reads t (directly, through a derived table or a WITH query) without a
// filter that tells t's rows apart. A UNION covers when one arm does.
func (fo *folder) covers(n ast.ResultSetNode, t *ast.TableName, with map[string]ast.ResultSetNode, depth int) bool {
	if depth > 8 {
		return false
	}
	switch x := n.(type) {
	case *ast.SetOprStmt:
		if x.SelectList == nil || (x.Limit != nil && fo.limited(x.Limit)) {
			return false
		}
		for _, arm := range x.SelectList.Selects {
			if rs, ok := arm.(ast.ResultSetNode); ok && fo.covers(rs, t, with, depth+1) {
				return true
			}
		}
	case *ast.SelectStmt:
		if x.From == nil || x.From.TableRefs == nil || x.Having != nil && !fo.alwaysTrue(x.Having.Expr) {
			return false
		}
		if x.Limit != nil && (x.Limit.Offset != nil || fo.limited(x.Limit)) {
			// A LIMIT picks rows the text does not name; as for UPDATE and
			// DELETE, one of more than limitedWriteRows rows (LIMIT
			// 1000000) does not: the table is covered when it is smaller.
			return false
		}
		srcs, ons := sources(x.From.TableRefs, nil, nil, 0)
		for _, ts := range srcs {
			var q quals
			switch s := ts.Source.(type) {
			case *ast.TableName:
				if sub, ok := with[s.Name.L]; ok && s.Schema.L == "" {
					if !fo.covers(sub, t, with, depth+1) {
						continue
					}
				} else if !sameTable(s, t) {
					continue
				}
				q = quals{s.Name.L: true}
			case ast.ResultSetNode:
				if !fo.covers(s, t, with, depth+1) {
					continue
				}
				q = quals{}
			}
			if ts.AsName.L != "" {
				q = quals{ts.AsName.L: true}
			}
			if len(srcs) > 1 && fo.selfJoinCovers(x, t, with) {
				return true // FROM t JOIN t AS t2 USING (id): a row for every row of t
			}
			if len(srcs) > 1 && fo.tiedByJoin(ons, q) {
				continue // one row per row of the others', not of t (REPLACE ... SELECT ... LEFT JOIN t USING (id))
			}
			if fo.unfilteredFor(x.Where, ons, len(srcs) > 1, q, t, nil) {
				return true
			}
		}
	}
	return false
}

// finishLimited makes the limited whole-table writes of a text's
// statements unfiltered where they do not stand alone: nested in a
// statement of another kind (CREATE PROCEDURE ... WHILE 1 DO DELETE FROM t
// LIMIT 1), or more than one in the message. The facts of a statement in
// another database (InDatabase) follow the same rule.
func finishLimited(sts []engine.StmtFacts) {
	n := 0
	routine := false
	for i := range sts {
		if sts[i].LimitedWhole != 0 {
			n++
		}
		if sts[i].Kinds&(1<<engine.KindDDL) != 0 {
			routine = true // mariadb.go gives a routine's body statements as entries of their own
		}
	}
	if routine && n > 0 {
		n = 2 // nested in a body read statement by statement: not the statement itself
	}
	for i := range sts {
		finishLimitedOne(&sts[i], n)
	}
}

func finishLimitedOne(st *engine.StmtFacts, n int) {
	for j := range st.InDatabase {
		finishLimitedOne(&st.InDatabase[j].Facts, n)
	}
	for j := range st.AsUser {
		finishLimitedOne(&st.AsUser[j].Facts, n)
	}
	if st.LimitedWhole == 0 {
		return
	}
	own := engine.KindSet(1<<engine.KindUpdate|1<<engine.KindDelete) & (1 << st.Kind)
	if n > 1 || own == 0 || st.LimitedWhole&^own != 0 || st.Kinds&(1<<engine.KindDDL) != 0 {
		st.Unfiltered |= st.LimitedWhole
	}
}

// tiedByJoin reports whether a join condition (ON or USING) ties the table q
// qualifies to the others.
func (fo *folder) tiedByJoin(ons []ast.ExprNode, q quals) bool {
	for _, on := range ons {
		if on == nil || (fo.filtersTarget(on, q, 0) && !fo.alwaysTrue(on)) {
			return true
		}
	}
	return false
}

// toolLockTables are migration tools' own one-row lock tables, which the
// tool empties whole when it sets them up: Liquibase sends DELETE FROM
// [schema.]DATABASECHANGELOGLOCK, then INSERT ... (ID, LOCKED) VALUES (1, 0)
// (InitializeDatabaseChangeLogLockTableStatement).
var toolLockTables = map[string]bool{"databasechangeloglock": true}

// lockTableReset reports whether x is exactly that reset: a single-table
// DELETE of a tool's lock table with no WHERE, ORDER BY or LIMIT. It
// removes a migration lock and nothing else, so it is not a whole-table
// write to judge (docs/policy.md); everything else about the statement is
// judged as usual, and any condition at all makes it an ordinary DELETE.
func lockTableReset(x *ast.DeleteStmt) bool {
	if x.IsMultiTable || x.Where != nil || x.Order != nil || x.Limit != nil || x.TableRefs == nil || x.TableRefs.TableRefs == nil {
		return false
	}
	j := x.TableRefs.TableRefs
	if j.Right != nil {
		return false
	}
	ts, ok := j.Left.(*ast.TableSource)
	if !ok {
		return false
	}
	tn, ok := ts.Source.(*ast.TableName)
	return ok && toolLockTables[tn.Name.L]
}
