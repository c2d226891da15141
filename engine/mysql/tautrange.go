package mysql

import (
	"math"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// rangeBounds adds to valueBounds the ranges of arithmetic of a column:
// x * x and POW(x, 2k) are never below 0; x % c and MOD(x, c) (c a
// constant other than 0) stay strictly within ±|c|, the sign of x's
// (-3 % 2 is -1), counted as the nearest doubles inside. A NULL x makes
// them NULL, counted as the rest (as x = x is).
func (fo *folder) rangeBounds(e ast.ExprNode) (lo, hi float64, hasLo, hasHi, ok bool) {
	switch x := unparen(e).(type) {
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.Mul:
			if fo.sameExpr(fo.stripIdentity(x.L), fo.stripIdentity(x.R), 0) {
				return 0, 0, true, false, true
			}
		case opcode.Mod:
			v, okc := fo.fold(x.R, 0)
			if !okc || v.null || v.isStr || v.date || num(v) == 0 {
				return
			}
			if _, constL := fo.fold(x.L, 0); constL {
				return
			}
			m := math.Nextafter(math.Abs(num(v)), 0)
			return -m, m, true, true, true
		}
	case *ast.FuncCallExpr:
		if x.Schema.L != "" || len(x.Args) != 2 {
			return
		}
		if x.FnName.L == "pow" || x.FnName.L == "power" {
			v, okc := fo.fold(x.Args[1], 0)
			if okc && !v.null && !v.isStr && !v.date && num(v) > 0 && num(v) == math.Trunc(num(v)) && math.Mod(num(v), 2) == 0 {
				return 0, 0, true, false, true
			}
		}
	}
	return
}

// relCompare decides l op r between two values of the row that are not
// constants but are in a known order for every row where they are not NULL:
// ABS(x) >= x and ABS(x) >= -x, GREATEST(x, c...) >= x, LEAST(x, c...) <= x
// (the other arguments numeric constants, so they compare as numbers), and
// CONCAT(x, 'a') <> ” (a constant with a letter or digit: never empty, and
// not equal to ” under trailing-space padding either, as CONCAT(x, ' ')
// may be).
func (fo *folder) relCompare(op opcode.Op, l, r ast.ExprNode) (truth, bool) {
	switch op {
	case opcode.GE, opcode.LT:
		if fo.atLeast(l, r) {
			return truthOfFolded(boolF(op == opcode.GE)), true
		}
	case opcode.LE, opcode.GT:
		if fo.atLeast(r, l) {
			return truthOfFolded(boolF(op == opcode.LE)), true
		}
	case opcode.EQ, opcode.NE:
		if (fo.solidConcat(l) && fo.isConstString(r, "")) || (fo.solidConcat(r) && fo.isConstString(l, "")) {
			if op == opcode.NE {
				return tTrue, true
			}
			return tFalse, true
		}
	}
	return tAny, false
}

// atLeast reports whether a >= b for every row where both are not NULL.
func (fo *folder) atLeast(a, b ast.ExprNode) bool {
	a, b = fo.stripIdentity(a), fo.stripIdentity(b)
	if f, ok := a.(*ast.FuncCallExpr); ok && f.Schema.L == "" {
		switch f.FnName.L {
		case "abs":
			if len(f.Args) != 1 {
				return false
			}
			y := fo.stripIdentity(f.Args[0])
			if fo.sameExpr(y, b, 0) {
				return true
			}
			if u, ok := b.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus && fo.sameExpr(y, fo.stripIdentity(u.V), 0) {
				return true
			}
		case "greatest":
			return fo.amongNumeric(f.Args, b)
		}
	}
	if f, ok := b.(*ast.FuncCallExpr); ok && f.Schema.L == "" && f.FnName.L == "least" {
		return fo.amongNumeric(f.Args, a)
	}
	return false
}

// amongNumeric reports whether y is one of args and every other argument
// is a numeric constant that is not NULL.
func (fo *folder) amongNumeric(args []ast.ExprNode, y ast.ExprNode) bool {
	found := false
	for _, a := range args {
		if !found && fo.sameExpr(fo.stripIdentity(a), y, 0) {
			found = true
			continue
		}
		v, ok := fo.fold(a, 0)
		if !ok || v.null || v.isStr || v.date || v.hex {
			return false
		}
	}
	return found
}

// solidConcat reports whether e is a CONCAT with a constant argument that
// holds a letter or digit.
func (fo *folder) solidConcat(e ast.ExprNode) bool {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok || f.Schema.L != "" || f.FnName.L != "concat" {
		return false
	}
	for _, a := range f.Args {
		if v, ok := fo.fold(a, 0); ok && v.isStr && strings.IndexFunc(v.str, func(c rune) bool {
			return c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
		}) >= 0 {
			return true
		}
	}
	return false
}

// alwaysNull reports whether e is NULL for every row: NULLIF(x, x).
func (fo *folder) alwaysNull(e ast.ExprNode) bool {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	return ok && f.Schema.L == "" && f.FnName.L == "nullif" && len(f.Args) == 2 &&
		fo.sameExpr(fo.stripIdentity(f.Args[0]), fo.stripIdentity(f.Args[1]), 0)
}
