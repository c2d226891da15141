package mysql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// complementary reports whether two arms of an OR are a test and its
// negation on the same expression: x IS NULL / x IS NOT NULL, x IS TRUE /
// x IS NOT TRUE (one of them holds for every row), and P / NOT P, x = 5 /
// x <> 5, x < 5 / x >= 5 (for every row where x is not NULL: counted as
// true, like x = x).
func (fo *folder) complementary(arms []ast.ExprNode) bool {
	if len(arms) > 64 {
		arms = arms[:64] // quadratic below; generated ORs are long but not this shape
	}
	for i := range arms {
		for j := i + 1; j < len(arms); j++ {
			if fo.complements(arms[i], arms[j]) || fo.complements(arms[j], arms[i]) {
				return true
			}
		}
	}
	return false
}

var negatedOp = map[opcode.Op]opcode.Op{
	opcode.EQ: opcode.NE, opcode.NE: opcode.EQ, opcode.LT: opcode.GE, opcode.GE: opcode.LT,
	opcode.GT: opcode.LE, opcode.LE: opcode.GT,
}

// isNullCall returns x of ISNULL(x).
func isNullCall(e ast.ExprNode) (ast.ExprNode, bool) {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok || f.FnName.L != "isnull" || f.Schema.L != "" || len(f.Args) != 1 {
		return nil, false
	}
	return f.Args[0], true
}

func (fo *folder) complements(a, b ast.ExprNode) bool {
	a, b = unparen(a), unparen(b)
	switch x := a.(type) {
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Not || x.Op == opcode.Not2 {
			return fo.sameCond(x.V, b)
		}
	case *ast.IsNullExpr:
		if e, ok := isNullCall(b); ok {
			return !x.Not && fo.sameExpr(x.Expr, e, 0) // x IS NULL / ISNULL(x): no complements
		}
		return fo.sameTest(a, b, true)
	case *ast.FuncCallExpr:
		// ISNULL(x) OR x IS NOT NULL.
		if e, ok := isNullCall(x); ok {
			y, ok := b.(*ast.IsNullExpr)
			return ok && y.Not && fo.sameExpr(e, y.Expr, 0)
		}
	case *ast.BinaryOperationExpr:
		y, ok := b.(*ast.BinaryOperationExpr)
		if n, isCmp := negatedOp[x.Op]; isCmp && ok && y.Op == n {
			return fo.sameExpr(x.L, y.L, 0) && fo.sameExpr(x.R, y.R, 0)
		}
	}
	// x and x = 0: a value is true where it is not 0 (id XOR id = 0 is id
	// XOR (id = 0))
	if y, ok := b.(*ast.BinaryOperationExpr); ok && y.Op == opcode.EQ {
		zero := func(n ast.ExprNode) bool {
			v, ok := fo.fold(n, 0)
			return ok && !v.null && !v.isStr && v.num == 0
		}
		if (fo.sameExpr(a, y.L, 0) && zero(y.R)) || (fo.sameExpr(a, y.R, 0) && zero(y.L)) {
			return true
		}
	}
	switch a.(type) {
	case *ast.IsTruthExpr, *ast.PatternLikeOrIlikeExpr, *ast.PatternInExpr, *ast.BetweenExpr:
		return fo.sameTest(a, b, true)
	}
	return false
}

// sameCond is sameExpr for conditions: comparisons, IS tests, LIKE and IN
// as well as the expressions sameExpr knows.
func (fo *folder) sameCond(a, b ast.ExprNode) bool {
	a, b = unparen(a), unparen(b)
	if fo.sameExpr(a, b, 0) {
		return true
	}
	// P and NOT P where P is a test sameExpr does not compare: P OR NOT P
	// is P's complement in both directions.
	switch a.(type) {
	case *ast.IsNullExpr, *ast.IsTruthExpr, *ast.PatternLikeOrIlikeExpr, *ast.PatternInExpr, *ast.BetweenExpr:
		return fo.sameTest(a, b, false)
	}
	return false
}

// sameTest compares two tests (IS NULL, IS [NOT] TRUE/FALSE, LIKE, IN of a
// list, BETWEEN) field by field: b is a's copy, or with negated a's
// negation (their NOT flags differ).
func (fo *folder) sameTest(a, b ast.ExprNode, negated bool) bool {
	switch x := a.(type) {
	case *ast.IsNullExpr:
		y, ok := b.(*ast.IsNullExpr)
		return ok && (x.Not != y.Not) == negated && fo.sameExpr(x.Expr, y.Expr, 0)
	case *ast.IsTruthExpr:
		y, ok := b.(*ast.IsTruthExpr)
		return ok && (x.Not != y.Not) == negated && x.True == y.True && fo.sameExpr(x.Expr, y.Expr, 0)
	case *ast.PatternLikeOrIlikeExpr:
		y, ok := b.(*ast.PatternLikeOrIlikeExpr)
		return ok && (x.Not != y.Not) == negated && x.Escape == y.Escape && fo.sameExpr(x.Expr, y.Expr, 0) && fo.sameExpr(x.Pattern, y.Pattern, 0)
	case *ast.PatternInExpr:
		y, ok := b.(*ast.PatternInExpr)
		if !ok || x.Not != y.Not || x.Sel != nil || y.Sel != nil || len(x.List) != len(y.List) || !fo.sameExpr(x.Expr, y.Expr, 0) {
			return false
		}
		for i := range x.List {
			if !fo.sameExpr(x.List[i], y.List[i], 0) {
				return false
			}
		}
		return true
	case *ast.BetweenExpr:
		y, ok := b.(*ast.BetweenExpr)
		return ok && (x.Not != y.Not) == negated && fo.sameExpr(x.Expr, y.Expr, 0) && fo.sameExpr(x.Left, y.Left, 0) && fo.sameExpr(x.Right, y.Right, 0)
	}
	return false
}

// orTautology reports whether a WHERE/HAVING/ON clause contains an OR with
// an arm that is true for every row: the injected shape `... OR 1=1`. It
// looks through AND, XOR, NOT, IS [NOT] TRUE/FALSE, comparisons, CASE, IF,
// IFNULL and COALESCE, so an OR wrapped in them counts; subqueries are
// conditions of their own (the walker visits them). An arm counts when it
// is always true (tautArm), when it is a test and its complement (x IS NULL
// OR x IS NOT NULL), and when it does not depend on the row but on a value
// the text does not hold (OR @a, OR @@version > 0, OR VERSION(): the same
// for every row, so possibly true for all of them). A clause that is true
// as a whole without an OR (`WHERE 1=1`, which query builders emit) is not
// one, nor is the optional-filter idiom (optionalFilterArm).
func (fo *folder) orTautology(e ast.ExprNode, depth int) bool {
	if e == nil || depth > maxFoldDepth {
		return false
	}
	d := depth + 1
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return fo.orTautology(x.Expr, d)
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.LogicOr {
			arms := orArmList(x, nil, 0)
			if fo.complementary(arms) || fo.nullCases(x) {
				return true
			}
			for _, a := range arms {
				if fo.tautArm(a, arms) {
					return true
				}
			}
			for _, a := range arms {
				if fo.orTautology(a, d) {
					return true
				}
			}
			return false
		}
		return fo.orTautology(x.L, d) || fo.orTautology(x.R, d)
	case *ast.UnaryOperationExpr:
		return fo.orTautology(x.V, d)
	case *ast.IsTruthExpr:
		return fo.orTautology(x.Expr, d)
	case *ast.IsNullExpr:
		return fo.orTautology(x.Expr, d)
	case *ast.CaseExpr:
		for _, w := range x.WhenClauses {
			if fo.orTautology(w.Expr, d) || fo.orTautology(w.Result, d) {
				return true
			}
		}
		return fo.orTautology(x.ElseClause, d)
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "if", "ifnull", "nvl", "coalesce", "nullif":
			for _, a := range x.Args {
				if fo.orTautology(a, d) {
					return true
				}
			}
		}
	}
	return false
}

// tautArm reports whether one arm of an OR makes it true for every row.
// An arm that is the same for every row but not known counts only next to
// an arm that depends on the row (id = 5 OR @a bypasses a row filter;
// WHERE @x = 1 OR @x = 2 is all-or-nothing as a whole, like WHERE 1=1).
func (fo *folder) tautArm(a ast.ExprNode, arms []ast.ExprNode) bool {
	if fo.alwaysTrue(a) || (fo.unknowableArm(a) && rowArm(arms)) {
		return !fo.optionalFilterArm(a, arms)
	}
	return fo.anyRowExists(a)
}

// rowArm reports whether an arm of an OR depends on the row.
func rowArm(arms []ast.ExprNode) bool {
	for _, b := range arms {
		if !rowFree(b) {
			return true
		}
	}
	return false
}

// unknowableArm reports whether a condition does not depend on the row and
// is not known false or NULL: a user or system variable, a server
// function (VERSION(), DATABASE(), NOW()), or a constant the folding does
// not compute. It holds for every row or for none. A parameter is not one
// (it is decided by the value bound), nor is a sleep (a time probe's).
func (fo *folder) unknowableArm(a ast.ExprNode) bool {
	if !rowFree(a) {
		return false
	}
	if v, ok := fo.fold(a, 0); ok {
		return !v.null && truthy(v)
	}
	return fo.truthOf(a, 0)&tTrue != 0
}

// rowFree reports whether e is the same for every row: it refers to no
// column, parameter, aggregate, window, DEFAULT(), VALUES() or MATCH, and
// calls no sleep, lock or function whose error carries its argument
// (those are the time and error-based probes' shapes, probes.go). A subquery is free when it names no column at
// all ((SELECT COUNT(*) FROM u), EXISTS (SELECT * FROM u)): it cannot be
// correlated.
func rowFree(e ast.ExprNode) bool {
	// The common arm compares a column: known without a walk (which
	// allocates its visitor).
	var operand ast.ExprNode
	switch x := unparen(e).(type) {
	case *ast.ColumnNameExpr:
		return false
	case *ast.BinaryOperationExpr:
		if _, ok := unparen(x.R).(*ast.ColumnNameExpr); ok {
			return false
		}
		operand = x.L
	case *ast.PatternInExpr:
		operand = x.Expr
	case *ast.PatternLikeOrIlikeExpr:
		operand = x.Expr
	case *ast.IsNullExpr:
		operand = x.Expr
	case *ast.BetweenExpr:
		operand = x.Expr
	}
	if _, ok := unparen(operand).(*ast.ColumnNameExpr); ok && operand != nil {
		return false
	}
	v := &freeVisitor{free: true}
	e.Accept(v)
	return v.free
}

type freeVisitor struct {
	free bool
	sub  bool // inside a subquery: tables may be read
}

func (v *freeVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if !v.free {
		return n, true
	}
	switch x := n.(type) {
	case *ast.ColumnNameExpr, *ast.ColumnName, *test_driver.ParamMarkerExpr, *ast.AggregateFuncExpr,
		*ast.WindowFuncExpr, *ast.DefaultExpr, *ast.ValuesExpr, *ast.MatchAgainst, *ast.VariableExpr:
		if _, ok := x.(*ast.VariableExpr); ok {
			break // a variable is the same for every row (what @a := col assigns is its child)
		}
		if _, ok := x.(*ast.AggregateFuncExpr); ok && v.sub {
			break // COUNT(*) of a subquery's own rows
		}
		v.free = false
	case *ast.TableName:
		if !v.sub {
			v.free = false
		}
	case *ast.SubqueryExpr:
		if !v.sub {
			in := &freeVisitor{free: true, sub: true}
			x.Query.Accept(in)
			v.free = in.free
			return n, true
		}
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "sleep", "benchmark", "get_lock", "release_lock", "master_pos_wait", "master_gtid_wait", "source_pos_wait":
			v.free = false
		default:
			if _, ok := errorArg[x.FnName.L]; ok {
				v.free = false // an error-based probe: no-error-based-probe's (probes.go)
			}
		}
	}
	return n, !v.free
}

func (v *freeVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// anyRowExists reports whether a is EXISTS over a whole table (no WHERE,
// or an always-true one; no LIMIT, GROUP BY or HAVING): true for every
// row as soon as that table has one. OR EXISTS (SELECT * FROM users) is
// the injected shape; a correlated or filtered EXISTS is the application's.
func (fo *folder) anyRowExists(a ast.ExprNode) bool {
	ex, ok := unparen(a).(*ast.ExistsSubqueryExpr)
	if !ok || ex.Not {
		return false
	}
	sq, ok := ex.Sel.(*ast.SubqueryExpr)
	if !ok {
		return false
	}
	sel, ok := sq.Query.(*ast.SelectStmt)
	// the subquery's columns are its table's: an outer NULL test's case
	// (tautnull.go) is not theirs
	inner := folder{xhex: fo.xhex, xStr: fo.xStr, with: fo.with, target: fo.target}
	if !ok || sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right != nil || sel.Limit != nil ||
		sel.GroupBy != nil || sel.Having != nil || (sel.Where != nil && !inner.alwaysTrue(sel.Where)) {
		return false
	}
	ts, ok := sel.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return false
	}
	_, isTable := ts.Source.(*ast.TableName)
	return isTable
}

// optionalFilterArm reports whether arm is the application's optional
// filter: an arm that does not depend on the row (V IS NULL, @v = 0,
// NULL IS NULL) whose value or variable another arm of the same OR, one
// that reads a column and is not always true itself, compares with a
// column: `(col = @v OR @v IS NULL)`, `(col = NULL OR NULL IS NULL)` when
// a client library inlined a NULL parameter to mean "no filter". An
// injected arm that stands alone (OR NULL IS NULL, OR @a) is not one.
func (fo *folder) optionalFilterArm(arm ast.ExprNode, arms []ast.ExprNode) bool {
	if !rowFree(arm) || len(arms) > 64 {
		return false // the idiom has a few arms; longer ORs are not searched (quadratic)
	}
	var keys []ast.ExprNode
	if in, ok := unparen(arm).(*ast.IsNullExpr); ok && !in.Not {
		keys = append(keys, in.Expr)
	}
	arm.Accept(visitFunc(func(n ast.Node) {
		if v, ok := n.(*ast.VariableExpr); ok && v.Value == nil {
			keys = append(keys, v)
		}
	}))
	if len(keys) == 0 {
		return false
	}
	for _, b := range arms {
		if b == arm || rowFree(b) || fo.alwaysTrue(b) {
			continue
		}
		found := false
		local := *fo // a copy for the closure, so that fo does not escape
		b.Accept(visitFunc(func(n ast.Node) {
			if e, ok := n.(ast.ExprNode); ok && !found {
				for _, k := range keys {
					if local.sameExpr(e, k, 0) {
						found = true
					}
				}
			}
		}))
		if found {
			return true
		}
	}
	return false
}
