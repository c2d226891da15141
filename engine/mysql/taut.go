package mysql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// Always-true conditions, folded as MariaDB (and MySQL) evaluate them, with
// three-valued logic. Constants: numbers, strings with their introducers
// (_binary, N'', _utf8mb4), hex and bit literals (a binary string, or its
// number next to a number), DATE/TIME/TIMESTAMP literals and {d ...}, NULL;
// through arithmetic (+ - * / DIV MOD %, where a division by zero is NULL),
// bit operators (| & ^ << >> ~, on 64-bit unsigned integers), comparisons
// (numbers and strings compare as numbers when either side is a number:
// '1a' = 1 and 'a' = 0 are true; strings without case and trailing spaces
// under the default collations, by bytes under _bin collations, BINARY and
// _binary), row constructors ((1,1) = (1,1)), <=>, IS [NOT]
// TRUE/FALSE/NULL/UNKNOWN, NOT and !, AND/OR/XOR, IN and BETWEEN, LIKE with
// % and _ and ESCAPE, REGEXP/RLIKE of a pattern that matches the empty
// string, CASE, the functions of foldFunc (IF, IFNULL, COALESCE, NULLIF,
// ELT, FIELD, CHAR, CONCAT, ASCII, LENGTH, ISNULL, PI, UPPER, HEX, ABS,
// GREATEST, STRCMP, INSTR, LEFT, SUBSTR ...), CAST and CONVERT to numbers
// and strings, and subqueries without FROM ((SELECT 1), EXISTS (SELECT 1),
// 1 IN (SELECT 1)). Values the folding does not compute are unknown, never
// true.
//
// Conditions that are not constant still have a known truth when they
// compare an expression with itself (x = x, x = x + 0, x IN (x), x <=> x,
// x BETWEEN x AND x), test a value against its complement (x IS NULL OR x
// IS NOT NULL, P OR NOT P, x = 5 OR x <> 5), match every string (x LIKE
// '%', x REGEXP ''), or are CASE/IF/IFNULL/COALESCE whose every outcome is
// true. stripIdentity looks through what leaves a value as it is (also
// what does so only for integers, ROUND(x), FLOOR(x), x DIV 1, CAST(x AS
// SIGNED), or non-negative integers, x | 0, x & x: keys are), offset splits x + c (x < x + 1 is true), and rowConst gives
// what is the same for every row where x is not NULL (x - x, x ^ x, x * 0,
// (x = x)); tautwrap.go adds wrappers (CAST(x AS CHAR), TRIM(x)), absorbing
// operands (x | ~0), rows in order (ROW(x, 1) > ROW(x, 0)), CONCAT
// templates under LIKE and bounds (GREATEST(x, 1) >= 1, x > -1e30). A
// comparison of an expression with itself counts as true although
// it is NULL where x is: that is the shape of the attack, and a column an
// application filters on is rarely NULL everywhere.
//
// Example: in DELETE FROM t WHERE name = 'x' OR ~0 the second OR arm is
// always true, so the WHERE is (and the OR is a tautology). What the
// statement's table filters and writes is writes.go's.

// truth is the set of values a condition can take over all rows.
type truth uint8

const (
	tTrue truth = 1 << iota
	tFalse
	tNull
	tAny = tTrue | tFalse | tNull
)

func truthOfFolded(v folded) truth {
	switch {
	case v.null:
		return tNull
	case truthy(v):
		return tTrue
	}
	return tFalse
}

// alwaysTrue reports whether e is true whatever the row.
// A condition that tests columns for NULL is also folded in each case of
// those tests (tautnull.go).
func (fo *folder) alwaysTrue(e ast.ExprNode) bool {
	return fo.truthOf(e, 0) == tTrue || fo.nullCases(e)
}

// truthOf returns what a condition can evaluate to.
func (fo *folder) truthOf(e ast.ExprNode, depth int) truth {
	if e == nil || depth > maxFoldDepth {
		return tAny
	}
	// AND, OR, XOR, NOT and parentheses combine their operands' truths,
	// which hold what folding them would give: folding them first too
	// would fold a chain of n ANDs n times.
	logic := false
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		logic = true
	case *ast.UnaryOperationExpr:
		logic = x.Op == opcode.Not || x.Op == opcode.Not2
	case *ast.BinaryOperationExpr:
		logic = x.Op == opcode.LogicAnd || x.Op == opcode.LogicOr || x.Op == opcode.LogicXor
	}
	if !logic {
		if v, ok := fo.fold(e, depth); ok {
			return truthOfFolded(v)
		}
	}
	d := depth + 1
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return fo.truthOf(x.Expr, d)
	case *ast.UnaryOperationExpr:
		switch x.Op {
		case opcode.Not, opcode.Not2:
			return not3(fo.truthOf(x.V, d))
		case opcode.Plus:
			return fo.truthOf(x.V, d)
		}
	case *ast.IsTruthExpr:
		t := fo.truthOf(x.Expr, d)
		var out truth
		for _, bit := range []truth{tTrue, tFalse, tNull} {
			if t&bit == 0 {
				continue
			}
			hold := (bit == tTrue) == (x.True != 0) && bit != tNull
			if hold != x.Not {
				out |= tTrue
			} else {
				out |= tFalse
			}
		}
		return out
	case *ast.VariableExpr:
		if x.Value != nil && !x.IsSystem {
			return fo.truthOf(x.Value, d)
		}
	case *ast.IsNullExpr:
		// NULLIF(x, x) IS NULL: NULL for every row (tautrange.go)
		if fo.alwaysNull(x.Expr) {
			if x.Not {
				return tFalse
			}
			return tTrue
		}
		// IFNULL(x, 1) IS NOT NULL, (x IS NULL) IS NOT NULL: never NULL.
		if fo.neverNull(x.Expr, d) {
			if x.Not {
				return tTrue
			}
			return tFalse
		}
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicOr:
			arms := orArmList(x, nil, 0)
			if fo.complementary(arms) {
				return tTrue
			}
			acc := tFalse
			for _, a := range arms {
				acc = combine(acc, fo.truthOf(a, d), opcode.LogicOr)
				if acc == tTrue {
					return acc
				}
			}
			return acc
		case opcode.LogicAnd, opcode.LogicXor:
			// x IS NULL AND x IS NOT NULL: a test and its complement are
			// never both true (counted as false, as x = 5 OR x <> 5 counts
			// as true).
			if x.Op == opcode.LogicAnd && (fo.complements(x.L, x.R) || fo.complements(x.R, x.L)) {
				return tFalse
			}
			// P XOR P is false and P XOR NOT P true where P is not NULL
			// (counted so, as x = x is)
			if x.Op == opcode.LogicXor {
				if fo.sameCond(x.L, x.R) {
					return tFalse
				}
				if fo.complements(x.L, x.R) || fo.complements(x.R, x.L) {
					return tTrue
				}
			}
			return combine(fo.truthOf(x.L, d), fo.truthOf(x.R, d), x.Op)
		case opcode.Or, opcode.And, opcode.Mul, opcode.LeftShift, opcode.RightShift:
			// id | ~0, id | -1: never 0; id & 0, id << 64: always 0
			if fo.allOnes(x) {
				return tTrue
			}
			if c, zero := fo.absorbed(x); zero {
				return tFalse
			} else if c != nil {
				return fo.truthOf(c, d)
			}
		case opcode.EQ, opcode.NullEQ, opcode.GE, opcode.LE, opcode.NE, opcode.LT, opcode.GT:
			// Counted as decided where x is NULL too, as x = x counts as true.
			if t, ok := fo.selfCompare(x.Op, x.L, x.R); ok {
				return t
			}
		}
	case *ast.PatternInExpr:
		// x IN (..., x, ...) is true; x NOT IN (x + 1, x - 2) is true when
		// every item is x plus a constant other than 0.
		list := x.List
		if sq, ok := x.Sel.(*ast.SubqueryExpr); ok {
			// x IN (SELECT x): a SELECT without FROM of one value
			if sel := constSelect(sq.Query); sel != nil && len(sel.Fields.Fields) == 1 {
				list = []ast.ExprNode{sel.Fields.Fields[0].Expr}
			}
		}
		if x.Sel == nil || len(list) == 1 {
			all := len(list) > 0
			for _, it := range list {
				t, ok := fo.selfCompare(opcode.EQ, x.Expr, it)
				if ok && t == tTrue {
					if x.Not {
						return tFalse
					}
					return tTrue
				}
				all = all && ok && t == tFalse
			}
			if all {
				if x.Not {
					return tTrue
				}
				return tFalse
			}
		}
	case *ast.BetweenExpr:
		if !x.Not && fo.sameExpr(x.Expr, x.Left, 0) && fo.sameExpr(x.Expr, x.Right, 0) {
			return tTrue
		}
		// x BETWEEN lo AND hi is x >= lo AND x <= hi: id BETWEEN id - 1
		// AND id + 1, id BETWEEN -1e30 AND 1e30
		ge, ok1 := fo.selfCompare(opcode.GE, x.Expr, x.Left)
		le, ok2 := fo.selfCompare(opcode.LE, x.Expr, x.Right)
		if !ok1 {
			ge = tAny
		}
		if !ok2 {
			le = tAny
		}
		if t := combine(ge, le, opcode.LogicAnd); t == tTrue || t == tFalse {
			if x.Not {
				return not3(t)
			}
			return t
		}
	case *ast.PatternLikeOrIlikeExpr:
		// x LIKE x: counted as true, as x = x is (it is NULL where x is,
		// and false where x holds a backslash escape).
		if x.IsLike && !x.Not && fo.sameExpr(fo.stripIdentity(x.Expr), fo.stripIdentity(x.Pattern), 0) {
			return tTrue
		}
		// x LIKE '%' holds for every x that is not NULL.
		if p, ok := fo.fold(x.Pattern, d); ok && x.IsLike && !x.Not && !p.null && p.isStr && p.str != "" && strings.Trim(p.str, "%") == "" {
			return tTrue
		}
		// CONCAT(id, 'x') LIKE '%x': every string of the template matches
		// (tautwrap.go templateLike)
		if p, ok := fo.fold(x.Pattern, d); ok && x.IsLike && !p.null && p.isStr {
			esc := rune(x.Escape)
			if esc == 0 {
				esc = '\\'
			}
			if fo.templateLike(fo.stripIdentity(x.Expr), p.str, esc, !p.bin) {
				if x.Not {
					return tFalse
				}
				return tTrue
			}
		}
	case *ast.PatternRegexpExpr:
		if p, ok := fo.fold(x.Pattern, d); ok && !x.Not && !p.null && matchesEverything(text(p)) {
			return tTrue
		}
		// CONCAT(id, 'x') REGEXP 'x': a pattern of plain characters is
		// found wherever the CONCAT's constants hold it
		if p, ok := fo.fold(x.Pattern, d); ok && !p.null && p.isStr && plainRegexp(p.str) &&
			fo.templateLike(fo.stripIdentity(x.Expr), "%"+p.str+"%", 0, !p.bin) {
			if x.Not {
				return tFalse
			}
			return tTrue
		}
	case *ast.CaseExpr:
		return fo.caseTruth(x, d)
	case *ast.FuncCallExpr:
		if v, ok := fo.jsonConst(x); ok {
			return truthOfFolded(v) // JSON_VALID(JSON_ARRAY(id))
		}
		switch x.FnName.L {
		case "if":
			if len(x.Args) == 3 {
				c := fo.truthOf(x.Args[0], d)
				var out truth
				if c&tTrue != 0 {
					out |= fo.truthOf(x.Args[1], d)
				}
				if c&(tFalse|tNull) != 0 {
					out |= fo.truthOf(x.Args[2], d)
				}
				return out
			}
		case "last_value":
			// MariaDB's LAST_VALUE(e1, ..., en) evaluates each and is en
			if len(x.Args) > 0 {
				return fo.truthOf(x.Args[len(x.Args)-1], d)
			}
		case "ifnull", "nvl", "coalesce":
			var out truth
			for _, a := range x.Args {
				t := fo.truthOf(a, d)
				out |= t &^ tNull
				if t&tNull == 0 {
					return out
				}
			}
			return out | tNull
		}
	}
	return tAny
}

// neverNull reports whether e is not NULL for any row: a constant that is
// not NULL, IFNULL/NVL/COALESCE with such an argument, ISNULL(), an IS
// test, a <=> comparison.
func (fo *folder) neverNull(e ast.ExprNode, depth int) bool {
	if e == nil || depth > maxFoldDepth {
		return false
	}
	e = unparen(e)
	if v, ok := fo.fold(e, depth); ok {
		return !v.null
	}
	switch x := e.(type) {
	case *ast.IsNullExpr, *ast.IsTruthExpr:
		return true
	case *ast.ColumnNameExpr:
		for _, n := range fo.nulls {
			if sameColumn(n.col, x.Name) && !n.isNull {
				return true // the case of the column's NULL tests where it is not NULL
			}
		}
		return fo.target.column(x.Name)
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.NullEQ:
			return true
		case opcode.Plus, opcode.Minus, opcode.Mul, opcode.And, opcode.Or, opcode.Xor, opcode.LeftShift, opcode.RightShift,
			opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
			// NULL only where an operand is (division is NULL by 0 too)
			return fo.neverNull(x.L, depth+1) && fo.neverNull(x.R, depth+1)
		}
		return false
	case *ast.UnaryOperationExpr:
		return (x.Op == opcode.Minus || x.Op == opcode.Plus || x.Op == opcode.BitNeg || x.Op == opcode.Not || x.Op == opcode.Not2) &&
			fo.neverNull(x.V, depth+1)
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "isnull", "charset", "collation", "coercibility":
			return true // CHARSET(NULL) is 'binary', COERCIBILITY(NULL) 6
		case "last_value":
			return len(x.Args) > 0 && fo.neverNull(x.Args[len(x.Args)-1], depth+1)
		case "ifnull", "nvl", "coalesce":
			for _, a := range x.Args {
				if fo.neverNull(a, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

func not3(t truth) truth {
	out := t & tNull
	if t&tTrue != 0 {
		out |= tFalse
	}
	if t&tFalse != 0 {
		out |= tTrue
	}
	return out
}

// combine is the truth of a op b (AND, OR, XOR) for independent a, b.
func combine(a, b truth, op opcode.Op) truth {
	var out truth
	for _, x := range []truth{tTrue, tFalse, tNull} {
		if a&x == 0 {
			continue
		}
		for _, y := range []truth{tTrue, tFalse, tNull} {
			if b&y == 0 {
				continue
			}
			switch {
			case op == opcode.LogicOr && (x == tTrue || y == tTrue):
				out |= tTrue
			case op == opcode.LogicAnd && (x == tFalse || y == tFalse):
				out |= tFalse
			case x == tNull || y == tNull:
				out |= tNull
			case op == opcode.LogicXor:
				if x != y {
					out |= tTrue
				} else {
					out |= tFalse
				}
			case op == opcode.LogicOr:
				out |= tFalse
			default:
				out |= tTrue
			}
		}
	}
	return out
}

func (fo *folder) caseTruth(x *ast.CaseExpr, d int) truth {
	var out truth
	for _, w := range x.WhenClauses {
		var cond truth
		if x.Value == nil {
			cond = fo.truthOf(w.Expr, d)
		} else {
			// CASE v WHEN w: the branch is taken where v = w is true (CASE id
			// WHEN id THEN 1 END counts as id = id does)
			cond = fo.truthOf(&ast.BinaryOperationExpr{Op: opcode.EQ, L: x.Value, R: w.Expr}, d)
		}
		if cond&tTrue != 0 {
			out |= fo.truthOf(w.Result, d)
		}
		if cond == tTrue {
			return out // later branches are never reached
		}
	}
	if x.ElseClause == nil {
		return out | tNull
	}
	return out | fo.truthOf(x.ElseClause, d)
}

// orArmList flattens nested ORs (and parentheses) into their arms.
func orArmList(x *ast.BinaryOperationExpr, out []ast.ExprNode, depth int) []ast.ExprNode {
	for _, a := range []ast.ExprNode{x.L, x.R} {
		in := unparen(a)
		if b, ok := in.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicOr && depth < maxFoldDepth {
			out = orArmList(b, out, depth+1)
			continue
		}
		out = append(out, in)
	}
	return out
}
