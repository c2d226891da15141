package pgsql

import (
	pg_query "github.com/pganalyze/pg_query_go/v5"
)

// Point selects through the shape cache (issue 26). An application that
// does not prepare its statements sends SELECT ... WHERE id = 42 with a new
// key each time; like a bulk INSERT, each text was parsed. A SELECT is
// inert (its facts hold for every text of its shape) only in this short,
// strict form, and only when every literal the shape replaced is one of
// its comparison operands:
//
//	SELECT col, t.col, *, ... FROM t [, u ...]
//	WHERE col op literal [AND col op literal ...] [ORDER BY col ...] [FOR UPDATE ...]
//
// with op one of = <> != < <= > >=, the other operand a column (not a
// function of one), and the literal an integer, a number or a plain string,
// with no cast. Why no fact reads such a literal's value: a column compared
// with a constant is neither always true nor always false to taut.go (the
// column's value is unknown, and NULL makes no comparison true), so the
// AND of such comparisons folds to nothing; no probe, effect or limit looks
// at a comparison of a plain column (probes.go reads constants compared
// with constants, functions of them and casts; effects.go reads a WHERE
// name = 'setting' only beside a set_config call in the target list, which
// this form has not; limits.go reads function arguments). Everything that
// reads a literal's value is outside the form: LIMIT and OFFSET counts,
// target-list expressions (set_config(...), pg_sleep(5), 'tbl'::regclass),
// function arguments, casts, IN lists, LIKE patterns, ORDER BY positions,
// WITH, set operations, GROUP BY, HAVING, DISTINCT ON, SELECT INTO. A text
// with a literal there has no entry: a literal the shape replaced that is
// not a comparison operand of this form makes the text not inert.

// inertSelect returns, by location, the constants of sel that are
// comparison operands of the form above, or nil when sel is not of it.
func inertSelect(sel *pg_query.SelectStmt) map[int32]*pg_query.A_Const {
	if sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED && sel.Op != pg_query.SetOperation_SETOP_NONE {
		return nil
	}
	if sel.IntoClause != nil || sel.WithClause != nil || len(sel.DistinctClause) > 0 || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || len(sel.WindowClause) > 0 || len(sel.ValuesLists) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || sel.WhereClause == nil || len(sel.FromClause) == 0 {
		return nil
	}
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 || rt.Val.GetColumnRef() == nil {
			return nil
		}
	}
	for _, f := range sel.FromClause {
		if rv := f.GetRangeVar(); rv == nil || rv.Alias != nil && len(rv.Alias.Colnames) > 0 {
			return nil
		}
	}
	for _, s := range sel.SortClause {
		if s.GetSortBy().GetNode().GetColumnRef() == nil {
			return nil
		}
	}
	at := map[int32]*pg_query.A_Const{}
	if !columnComparisons(sel.WhereClause, at, 0) {
		return nil
	}
	return at
}

// columnComparisons adds to at the constant operands of cond, an AND of
// comparisons of a column with a constant, and reports whether cond is one.
func columnComparisons(cond *pg_query.Node, at map[int32]*pg_query.A_Const, depth int) bool {
	if depth > 64 {
		return false
	}
	if b := cond.GetBoolExpr(); b != nil {
		if b.Boolop != pg_query.BoolExprType_AND_EXPR {
			return false
		}
		for _, a := range b.Args {
			if !columnComparisons(a, at, depth+1) {
				return false
			}
		}
		return true
	}
	a := cond.GetAExpr()
	if a == nil || a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(a.Name) != 1 {
		return false
	}
	switch a.Name[0].GetString_().GetSval() {
	case "=", "<>", "<", "<=", ">", ">=":
	default:
		return false
	}
	col, c := a.Lexpr, a.Rexpr
	if col.GetColumnRef() == nil {
		col, c = c, col
	}
	if col.GetColumnRef() == nil {
		return false
	}
	ac := c.GetAConst()
	if ac == nil || ac.Isnull || ac.GetBoolval() != nil || ac.GetBsval() != nil {
		return false
	}
	at[ac.Location] = ac
	return true
}
