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

// boundCompare decides l op r when one side is never negative whatever
// the row (nonNegative) and the other a constant at or below 0:
// LENGTH(name) >= 0, CHAR_LENGTH(x) > -1, 0 <= ABS(x) are true for every
// row where the argument is not NULL, as x = x is (counted true).
func (fo *folder) boundCompare(op opcode.Op, l, r ast.ExprNode) (truth, bool) {
	if !nonNegative(l) {
		if !nonNegative(r) {
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
	}
	v, ok := fo.fold(r, 0)
	if !ok || v.null || v.isStr {
		return tAny, false
	}
	c := v.num
	switch {
	case op == opcode.GE && c <= 0, op == opcode.GT && c < 0, op == opcode.NE && c < 0:
		return tTrue, true
	case op == opcode.LT && c <= 0, op == opcode.LE && c < 0, op == opcode.EQ && c < 0:
		return tFalse, true
	}
	return tAny, false
}

// nonNegative reports whether e is a call whose value is never negative
// (a length, an absolute value, a checksum, a character code, a count of
// bits).
func nonNegative(e ast.ExprNode) bool {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok {
		return false
	}
	switch f.FnName.L {
	case "length", "char_length", "character_length", "octet_length", "bit_length", "abs", "crc32", "ascii", "ord", "bit_count":
		return true
	}
	return false
}

// rowConst returns the value e has for every row where its columns are
// not NULL: a constant, x - x and x ^ x (0), x * 0 and x & 0 (0), a
// condition whose truth is known (1 or 0).
func (fo *folder) rowConst(e ast.ExprNode) (folded, bool) {
	if v, ok := fo.fold(e, 0); ok {
		return v, true
	}
	e = fo.stripIdentity(e)
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
			return folded{}, false
		case opcode.Mul, opcode.And:
			if zero(x.L) || zero(x.R) {
				return folded{}, true
			}
			return folded{}, false
		case opcode.Plus, opcode.Div, opcode.IntDiv, opcode.Mod, opcode.Or, opcode.LeftShift, opcode.RightShift:
			return folded{}, false
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
			if !fo.sameExpr(x.Args[i], y.Args[i], d) {
				return false
			}
		}
		return true
	case *ast.BinaryOperationExpr:
		y, ok := b.(*ast.BinaryOperationExpr)
		return ok && x.Op == y.Op && fo.sameExpr(x.L, y.L, d) && fo.sameExpr(x.R, y.R, d)
	case *ast.UnaryOperationExpr:
		y, ok := b.(*ast.UnaryOperationExpr)
		return ok && x.Op == y.Op && fo.sameExpr(x.V, y.V, d)
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
