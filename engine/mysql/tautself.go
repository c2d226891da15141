package mysql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// stripIdentity removes what leaves a value as it compares: x + 0, 0 + x,
// x - 0, x * 1, 1 * x, x / 1, +x, - -x, parentheses, BINARY x, x COLLATE c.
func (fo *folder) stripIdentity(e ast.ExprNode) ast.ExprNode {
	isConst := func(n ast.ExprNode, want float64) bool {
		v, ok := fo.fold(n, 0)
		return ok && !v.null && !v.isStr && v.num == want
	}
	for i := 0; i < maxFoldDepth; i++ {
		switch x := e.(type) {
		case *ast.ParenthesesExpr:
			e = x.Expr
			continue
		case *ast.SubqueryExpr:
			// (SELECT id): a SELECT without FROM of one value is that value
			if sel := constSelect(x.Query); sel != nil && len(sel.Fields.Fields) == 1 {
				e = sel.Fields.Fields[0].Expr
				continue
			}
		case *ast.UnaryOperationExpr:
			if x.Op == opcode.Plus {
				e = x.V
				continue
			}
			if in, ok := unparen(x.V).(*ast.UnaryOperationExpr); ok && x.Op == opcode.Minus && in.Op == opcode.Minus {
				e = in.V // - - x
				continue
			}
		case *ast.SetCollationExpr:
			e = x.Expr // x = x COLLATE c: equal under any collation
			continue
		case *ast.FuncCastExpr:
			if in := fo.unwrap(x); in != nil {
				e = in // CAST(x AS CHAR), CAST(x AS DOUBLE) (tautwrap.go)
				continue
			}
			if x.FunctionType == ast.CastBinaryOperator {
				e = x.Expr
				continue
			}
			// CAST(x AS SIGNED), CONVERT(x, UNSIGNED): x for an integer
			// (UNSIGNED: a non-negative one).
			if x.Tp != nil && x.Tp.GetType() == mysql.TypeLonglong {
				e = x.Expr
				continue
			}
		case *ast.BinaryOperationExpr:
			if c, zero := fo.absorbed(x); c != nil || zero {
				if zero {
					c = ast.NewValueExpr(0, "", "")
				}
				e = c // x | ~0 is ~0, x & 0 is 0 (tautwrap.go)
				continue
			}
			switch {
			case (x.Op == opcode.Plus || x.Op == opcode.Minus || x.Op == opcode.Or || x.Op == opcode.Xor ||
				x.Op == opcode.LeftShift || x.Op == opcode.RightShift) && isConst(x.R, 0),
				(x.Op == opcode.Mul || x.Op == opcode.Div || x.Op == opcode.IntDiv) && isConst(x.R, 1),
				(x.Op == opcode.And || x.Op == opcode.Or) && fo.sameExpr(x.L, x.R, 0):
				e = x.L
				continue
			case (x.Op == opcode.Plus || x.Op == opcode.Or || x.Op == opcode.Xor) && isConst(x.L, 0),
				x.Op == opcode.Mul && isConst(x.L, 1):
				e = x.R
				continue
			}
		case *ast.FuncCallExpr:
			if x.Schema.L != "" || len(x.Args) == 0 {
				return e
			}
			if in := fo.unwrap(x); in != nil {
				e = in // TRIM(x), LOWER(x), JSON_EXTRACT(JSON_ARRAY(x), '$[0]') (tautwrap.go)
				continue
			}
			switch x.FnName.L {
			case "round", "truncate", "floor", "ceil", "ceiling":
				// x for an integer (ROUND(x, 0), TRUNCATE(x, 0), FLOOR(x)).
				if len(x.Args) == 1 && x.FnName.L != "truncate" || len(x.Args) == 2 && x.FnName.L != "floor" &&
					x.FnName.L != "ceil" && x.FnName.L != "ceiling" && isConst(x.Args[1], 0) {
					e = x.Args[0]
					continue
				}
			case "concat", "coalesce", "ifnull", "nvl", "greatest", "least":
				// CONCAT(x) compares as x; COALESCE(x, ...) and IFNULL(x, y)
				// are x where x is not NULL; GREATEST(x, x) is x.
				same := true
				if x.FnName.L == "greatest" || x.FnName.L == "least" {
					for _, a := range x.Args[1:] {
						same = same && fo.sameExpr(x.Args[0], a, 0)
					}
				} else if x.FnName.L == "concat" {
					same = len(x.Args) == 1
				}
				if same {
					e = x.Args[0]
					continue
				}
			case "if":
				if len(x.Args) == 3 {
					switch fo.truthOf(x.Args[0], 0) {
					case tTrue:
						e = x.Args[1]
						continue
					case tFalse, tNull, tFalse | tNull:
						e = x.Args[2]
						continue
					}
					if fo.sameExpr(x.Args[1], x.Args[2], 0) {
						e = x.Args[1] // IF(c, x, x)
						continue
					}
				}
			}
		}
		return e
	}
	return e
}

// offset returns e as base + c, with c the sum of the numeric constants
// e adds to or subtracts from base (x + 1 - 3 is x + -2; x is x + 0).
func (fo *folder) offset(e ast.ExprNode) (ast.ExprNode, float64) {
	num := func(n ast.ExprNode) (float64, bool) {
		v, ok := fo.fold(n, 0)
		return v.num, ok && !v.null && !v.isStr && !v.inexact
	}
	c := 0.0
	for i := 0; i < maxFoldDepth; i++ {
		e = fo.stripIdentity(e)
		x, ok := e.(*ast.BinaryOperationExpr)
		if !ok || (x.Op != opcode.Plus && x.Op != opcode.Minus) {
			break
		}
		if n, ok := num(x.R); ok {
			if x.Op == opcode.Minus {
				n = -n
			}
			c, e = c+n, x.L
			continue
		}
		if n, ok := num(x.L); ok && x.Op == opcode.Plus {
			c, e = c+n, x.R
			continue
		}
		break
	}
	return e, c
}

// selfCompare decides l op r when both sides are the same expression of
// the row plus constants (x < x + 1, x + 1 <> x, x = x DIV 1), or values
// that are the same for every row where the operands are not NULL (x - x
// = 0, v * 0 = 0, x ^ x = 0, (x = x) = 1). Like x = x it counts the rows
// where x is NULL as the rest.
func (fo *folder) selfCompare(op opcode.Op, l, r ast.ExprNode) (truth, bool) {
	if op == opcode.NullEQ {
		op = opcode.EQ
	}
	if lr, ok := fo.stripIdentity(l).(*ast.RowExpr); ok {
		if rr, ok := fo.stripIdentity(r).(*ast.RowExpr); ok && len(lr.Values) == len(rr.Values) {
			return fo.rowCompare(op, lr, rr)
		}
	}
	bl, cl := fo.offset(l)
	br, cr := fo.offset(r)
	if fo.sameExpr(bl, br, 0) {
		v, ok := applyOp(op, folded{num: cl}, folded{num: cr})
		if ok {
			return truthOfFolded(v), true
		}
		return tAny, false
	}
	if t, ok := fo.boundCompare(op, l, r); ok {
		return t, true
	}
	if t, ok := fo.relCompare(op, l, r); ok {
		return t, true
	}
	vl, okl := fo.rowConst(l)
	vr, okr := fo.rowConst(r)
	if !okl || !okr {
		return tAny, false
	}
	if v, ok := applyOp(op, vl, vr); ok && !v.null {
		return truthOfFolded(v), true
	}
	return tAny, false
}

// boundCompare decides l op r when one side stays within bounds whatever
// the row (valueBounds: LENGTH(x) >= 0, CRC32(x) <= 4294967295,
// GREATEST(x, 1) >= 1, x | 4 >= 4) and the other is a constant past them:
// LENGTH(name) >= 0, CHAR_LENGTH(x) > -1, 0 <= ABS(x) are true for every
// row where the argument is not NULL, as x = x is (counted true). A bound
// past every integer type (at or below -2^63, at or above 2^64: id > -1e30, id
// <> 1e300) holds for every integer, date and time, and fails only for a
// DOUBLE, DECIMAL or string that goes past it; the catalog does not give
// column types (engine.Catalog holds NOT NULL columns only), so the engine
// cannot tell, and counts it as true: unsure, so denied where a filter is
// required, never allowed as one.
func (fo *folder) boundCompare(op opcode.Op, l, r ast.ExprNode) (truth, bool) {
	// the common filter, a column against a small integer or a string
	// (k = 5, c = 'x'), has no bound to decide: known without folding
	// (which boxes the literal)
	if _, _, lo, hi := fo.valueBounds(l); !lo && !hi && inBounds(r) {
		return tAny, false
	}
	if _, _, lo, hi := fo.valueBounds(r); !lo && !hi && inBounds(l) {
		return tAny, false
	}
	v, ok := fo.fold(r, 0)
	if !ok {
		if v, ok = fo.fold(l, 0); !ok {
			return tAny, false
		}
		l, r = r, l
		switch op { // c op x is x op' c
		case opcode.GE:
			op = opcode.LE
		case opcode.LE:
			op = opcode.GE
		case opcode.GT:
			op = opcode.LT
		case opcode.LT:
			op = opcode.GT
		}
	} else if _, both := fo.fold(l, 0); both {
		return tAny, false
	}
	if v.null || v.isStr || v.date {
		return tAny, false
	}
	c := num(v)
	lo, hi, hasLo, hasHi := fo.valueBounds(l)
	geC, gtC := hasLo && lo >= c, hasLo && lo > c
	leC, ltC := hasHi && hi <= c, hasHi && hi < c
	// at the edges the constant is a float: -9223372036854775809 reads as
	// -2^63 and 18446744073709551615 as 2^64, both past every key
	if c <= integerLow {
		geC, gtC = true, true
	}
	if c >= integerHigh {
		leC, ltC = true, true
	}
	switch {
	case op == opcode.GE && geC, op == opcode.GT && gtC, op == opcode.LE && leC, op == opcode.LT && ltC,
		op == opcode.NE && (gtC || ltC):
		return tTrue, true
	case op == opcode.GE && ltC, op == opcode.GT && leC, op == opcode.LE && gtC, op == opcode.LT && geC,
		op == opcode.EQ && (gtC || ltC):
		return tFalse, true
	}
	return tAny, false
}

// inBounds reports whether e is a literal no bound of boundCompare's is
// past: an integer within ±2^53, a string, NULL.
func inBounds(e ast.ExprNode) bool {
	v, ok := e.(*test_driver.ValueExpr)
	if !ok {
		return false
	}
	switch v.Kind() {
	case test_driver.KindString, test_driver.KindBytes, test_driver.KindNull:
		return true
	case test_driver.KindInt64:
		n := v.GetInt64()
		return n > -(1<<53) && n < 1<<53
	case test_driver.KindUint64:
		return v.GetUint64() < 1<<53
	}
	return false
}

// rowConst returns the value e has for every row where its columns are
// not NULL: a constant, x - x and x ^ x (0), x * 0 and x & 0 (0), a
// condition whose truth is known (1 or 0).
func (fo *folder) rowConst(e ast.ExprNode) (folded, bool) {
	return fo.rowConstD(e, 0)
}

func (fo *folder) rowConstD(e ast.ExprNode, depth int) (folded, bool) {
	if v, ok := fo.fold(e, 0); ok {
		return v, true
	}
	if depth > maxFoldDepth {
		return folded{}, false
	}
	e = fo.stripIdentity(e)
	if v, ok := fo.fold(e, 0); ok {
		return v, true // x | ~0 is ~0
	}
	if v, ok := fo.jsonConst(e); ok {
		return v, true
	}
	zero := func(n ast.ExprNode) bool {
		v, ok := fo.fold(n, 0)
		return ok && !v.null && !v.isStr && v.num == 0
	}
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.Minus, opcode.Xor:
			if fo.sameExpr(fo.stripIdentity(x.L), fo.stripIdentity(x.R), 0) {
				return folded{}, true
			}
		case opcode.Mul, opcode.And:
			if zero(x.L) || zero(x.R) {
				return folded{}, true
			}
		}
		switch x.Op {
		case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod, opcode.And, opcode.Or,
			opcode.Xor, opcode.LeftShift, opcode.RightShift:
			// an operation of two values the same for every row: (id & 0) | 1
			vl, okl := fo.rowConstD(x.L, depth+1)
			if !okl {
				return folded{}, false
			}
			vr, okr := fo.rowConstD(x.R, depth+1)
			if !okr {
				return folded{}, false
			}
			return applyOp(x.Op, vl, vr)
		}
	case *ast.IsNullExpr, *ast.IsTruthExpr, *ast.PatternLikeOrIlikeExpr, *ast.PatternInExpr, *ast.BetweenExpr,
		*ast.PatternRegexpExpr, *ast.UnaryOperationExpr:
	default:
		return folded{}, false
	}
	switch fo.truthOf(e, 1) {
	case tTrue:
		return boolF(true), true
	case tFalse:
		return boolF(false), true
	}
	return folded{}, false
}

// volatile are functions whose two calls may differ.
var volatile = map[string]bool{
	"rand": true, "uuid": true, "uuid_short": true, "sysdate": true, "sleep": true, "benchmark": true,
	"get_lock": true, "release_lock": true, "nextval": true, "lastval": true, "setval": true, "last_insert_id": true,
	"row_count": true, "found_rows": true, "connection_id": true, "random_bytes": true, "sys_guid": true,
}

// sameExpr reports whether a and b are the same expression of the row
// (two parameters are never the same: each is bound on its own).
func (fo *folder) sameExpr(a, b ast.ExprNode, depth int) bool {
	if a == nil || b == nil || depth > maxFoldDepth {
		return false
	}
	a, b = unparen(a), unparen(b)
	d := depth + 1
	switch x := a.(type) {
	case *ast.ColumnNameExpr:
		y, ok := b.(*ast.ColumnNameExpr)
		if !ok || x.Name == nil || y.Name == nil || x.Name.Name.L != y.Name.Name.L {
			return false
		}
		if x.Name.Table.L == y.Name.Table.L && x.Name.Schema.L == y.Name.Schema.L {
			return true
		}
		return fo.one != nil && fo.one.names(x.Name) && fo.one.names(y.Name)
	case *test_driver.ParamMarkerExpr:
		return false
	case ast.ValueExpr:
		if _, ok := b.(*test_driver.ParamMarkerExpr); ok {
			return false
		}
		if _, ok := b.(ast.ValueExpr); !ok {
			return false
		}
		u, ok1 := fo.fold(a, d)
		v, ok2 := fo.fold(b, d)
		return ok1 && ok2 && u == v
	case *ast.VariableExpr:
		y, ok := b.(*ast.VariableExpr)
		return ok && x.Value == nil && y.Value == nil && strings.EqualFold(x.Name, y.Name) && x.IsSystem == y.IsSystem && x.IsGlobal == y.IsGlobal
	case *ast.FuncCallExpr:
		y, ok := b.(*ast.FuncCallExpr)
		if !ok || x.FnName.L != y.FnName.L || x.Schema.L != y.Schema.L || len(x.Args) != len(y.Args) || volatile[x.FnName.L] {
			return false
		}
		for i := range x.Args {
			if _, ok := x.Args[i].(*ast.TimeUnitExpr); ok {
				u, ok := y.Args[i].(*ast.TimeUnitExpr)
				if !ok || u.Unit != x.Args[i].(*ast.TimeUnitExpr).Unit {
					return false
				}
				continue
			}
			if !fo.sameExpr(x.Args[i], y.Args[i], d) && !fo.sameExpr(fo.stripIdentity(x.Args[i]), fo.stripIdentity(y.Args[i]), d) {
				return false
			}
		}
		return true
	case *ast.BinaryOperationExpr:
		y, ok := b.(*ast.BinaryOperationExpr)
		return ok && x.Op == y.Op && fo.sameExpr(x.L, y.L, d) && fo.sameExpr(x.R, y.R, d)
	case *ast.UnaryOperationExpr:
		y, ok := b.(*ast.UnaryOperationExpr)
		return ok && x.Op == y.Op && (fo.sameExpr(x.V, y.V, d) || fo.sameExpr(fo.stripIdentity(x.V), fo.stripIdentity(y.V), d))
	case *ast.FuncCastExpr:
		y, ok := b.(*ast.FuncCastExpr)
		return ok && x.FunctionType == y.FunctionType && x.Tp != nil && y.Tp != nil && x.Tp.String() == y.Tp.String() && fo.sameExpr(x.Expr, y.Expr, d)
	case *ast.RowExpr:
		// ROW(id, v) = ROW(id, v), (id, v) IN ((id, v)).
		y, ok := b.(*ast.RowExpr)
		if !ok || len(x.Values) != len(y.Values) {
			return false
		}
		for i := range x.Values {
			if !fo.sameExpr(fo.stripIdentity(x.Values[i]), fo.stripIdentity(y.Values[i]), d) {
				return false
			}
		}
		return true
	}
	return false
}
