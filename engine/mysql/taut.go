package mysql

import (
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Always-true conditions, folded as MySQL evaluates them: numbers and
// strings compare as numbers when either side is a number ('1a' = 1 is
// true, 'a' = 0 is true), strings compare without case and trailing
// spaces (the default collations), a column equals itself (x = x: true
// wherever x is not NULL, which is how injected conditions are written).
// Example: WHERE id = 5 OR 'a' = 'a' has an always-true OR arm.

// orArmTrue reports whether condition e has an OR (or XOR-free) arm that is
// always true, anywhere under AND, OR, NOT and parentheses.
func orArmTrue(e ast.ExprNode) bool {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return orArmTrue(x.Expr)
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicOr:
			return alwaysTrue(x.L) || alwaysTrue(x.R) || orArmTrue(x.L) || orArmTrue(x.R)
		case opcode.LogicAnd, opcode.LogicXor:
			return orArmTrue(x.L) || orArmTrue(x.R)
		}
	case *ast.UnaryOperationExpr:
		return orArmTrue(x.V)
	}
	return false
}

// alwaysTrue reports whether e is true whatever the row.
func alwaysTrue(e ast.ExprNode) bool {
	v, ok := fold(e, 0)
	if !ok {
		return false
	}
	return truthy(v)
}

// folded is a constant: a number, a string, or NULL.
type folded struct {
	null  bool
	isStr bool
	bin   bool // a hex or bit literal: a binary string, or its number next to a number
	num   float64
	str   string
}

func truthy(v folded) bool {
	if v.null {
		return false
	}
	if v.isStr && !v.bin {
		n, _ := strNumber(v.str)
		return n != 0
	}
	return v.num != 0
}

const maxFoldDepth = 64

// fold evaluates e when it is constant (or a comparison of a column with
// itself).
func fold(e ast.ExprNode, depth int) (folded, bool) {
	if depth > maxFoldDepth {
		return folded{}, false
	}
	switch x := e.(type) {
	case ast.ValueExpr:
		return valueFolded(x)
	case *ast.ParenthesesExpr:
		return fold(x.Expr, depth+1)
	case *ast.SetCollationExpr:
		// 'a' = 'A' COLLATE utf8mb4_bin is false: only case-insensitive
		// collations are folded.
		if strings.Contains(strings.ToLower(x.Collate), "_bin") || strings.HasSuffix(strings.ToLower(x.Collate), "_cs") {
			return folded{}, false
		}
		return fold(x.Expr, depth+1)
	case *ast.UnaryOperationExpr:
		v, ok := fold(x.V, depth+1)
		if !ok || v.null {
			return v, ok
		}
		switch x.Op {
		case opcode.Not, opcode.Not2:
			return boolF(!truthy(v)), true
		case opcode.Minus:
			return folded{num: -num(v)}, true
		case opcode.Plus:
			return v, true
		}
		return folded{}, false
	case *ast.IsTruthExpr:
		v, ok := fold(x.Expr, depth+1)
		if !ok {
			return folded{}, false
		}
		t := !v.null && truthy(v) == (x.True != 0)
		return boolF(t != x.Not), true
	case *ast.IsNullExpr:
		v, ok := fold(x.Expr, depth+1)
		if !ok {
			return folded{}, false
		}
		return boolF(v.null != x.Not), true
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.EQ, opcode.NullEQ, opcode.GE, opcode.LE:
			if sameColumn(x.L, x.R) {
				return boolF(true), true
			}
		}
		l, ok := fold(x.L, depth+1)
		if !ok {
			if x.Op == opcode.LogicOr {
				if r, ok := fold(x.R, depth+1); ok && truthy(r) {
					return boolF(true), true
				}
			}
			return folded{}, false
		}
		r, ok := fold(x.R, depth+1)
		if !ok {
			if x.Op == opcode.LogicOr && truthy(l) {
				return boolF(true), true
			}
			return folded{}, false
		}
		switch x.Op {
		case opcode.LogicOr:
			return boolF(truthy(l) || truthy(r)), true
		case opcode.LogicAnd:
			return boolF(truthy(l) && truthy(r)), true
		case opcode.LogicXor:
			return boolF(truthy(l) != truthy(r)), true
		case opcode.NullEQ:
			if l.null || r.null {
				return boolF(l.null && r.null), true
			}
			return boolF(compare(l, r) == 0), true
		case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
			if l.null || r.null {
				return folded{null: true}, true
			}
			c := compare(l, r)
			switch x.Op {
			case opcode.EQ:
				return boolF(c == 0), true
			case opcode.NE:
				return boolF(c != 0), true
			case opcode.LT:
				return boolF(c < 0), true
			case opcode.LE:
				return boolF(c <= 0), true
			case opcode.GT:
				return boolF(c > 0), true
			default:
				return boolF(c >= 0), true
			}
		case opcode.Plus, opcode.Minus, opcode.Mul:
			if l.null || r.null {
				return folded{null: true}, true
			}
			switch x.Op {
			case opcode.Plus:
				return folded{num: num(l) + num(r)}, true
			case opcode.Minus:
				return folded{num: num(l) - num(r)}, true
			default:
				return folded{num: num(l) * num(r)}, true
			}
		}
	case *ast.PatternLikeOrIlikeExpr:
		l, ok1 := fold(x.Expr, depth+1)
		p, ok2 := fold(x.Pattern, depth+1)
		if !ok1 || !ok2 || l.null || p.null {
			return folded{}, false
		}
		ls, ps := text(l), text(p)
		var m bool
		switch {
		case strings.Trim(ps, "%") == "":
			m = true
		case !strings.ContainsAny(ps, "%_\\"):
			m = strings.EqualFold(ls, ps)
		default:
			return folded{}, false // a pattern this does not evaluate
		}
		return boolF(m != x.Not), true
	case *ast.BetweenExpr:
		v, ok1 := fold(x.Expr, depth+1)
		lo, ok2 := fold(x.Left, depth+1)
		hi, ok3 := fold(x.Right, depth+1)
		if !ok1 || !ok2 || !ok3 || v.null || lo.null || hi.null {
			return folded{}, false
		}
		in := compare(v, lo) >= 0 && compare(v, hi) <= 0
		return boolF(in != x.Not), true
	case *ast.PatternInExpr:
		if x.Sel != nil {
			return folded{}, false
		}
		v, ok := fold(x.Expr, depth+1)
		if !ok || v.null {
			return folded{}, false
		}
		for _, item := range x.List {
			iv, ok := fold(item, depth+1)
			if ok && !iv.null && compare(v, iv) == 0 {
				return boolF(!x.Not), true
			}
		}
		return folded{}, false
	}
	return folded{}, false
}

func boolF(b bool) folded {
	if b {
		return folded{num: 1}
	}
	return folded{}
}

func valueFolded(v ast.ValueExpr) (folded, bool) {
	switch x := v.GetValue().(type) {
	case nil:
		return folded{null: true}, true
	case int64:
		return folded{num: float64(x)}, true
	case uint64:
		return folded{num: float64(x)}, true
	case float64:
		return folded{num: x}, true
	case string:
		return folded{isStr: true, str: x}, true
	case []byte:
		return folded{isStr: true, str: string(x)}, true
	case test_driver.HexLiteral:
		return binFolded(x)
	case test_driver.BitLiteral:
		return binFolded(x)
	case test_driver.BinaryLiteral:
		return binFolded(x)
	case interface{ String() string }: // decimals
		if f, err := strconv.ParseFloat(x.String(), 64); err == nil {
			return folded{num: f}, true
		}
	}
	return folded{}, false
}

// value returns a constant argument.
func value(e ast.ExprNode) (folded, bool) { return fold(e, 0) }

// binFolded is a hex or bit literal: its bytes, and the number they are
// big-endian (up to 8 bytes).
func binFolded(b []byte) (folded, bool) {
	var n float64
	for _, c := range b {
		n = n*256 + float64(c)
	}
	return folded{isStr: true, bin: true, str: string(b), num: n}, len(b) <= 8
}

func toNumber(v folded) (float64, bool) {
	if v.null {
		return 0, false
	}
	return num(v), true
}

func num(v folded) float64 {
	if v.bin {
		return v.num
	}
	if v.isStr {
		n, _ := strNumber(v.str)
		return n
	}
	return v.num
}

func text(v folded) string {
	if v.isStr {
		return v.str
	}
	return strconv.FormatFloat(v.num, 'f', -1, 64)
}

// compare compares as MySQL does: as strings (without case or trailing
// spaces) when both are strings, else as numbers.
func compare(a, b folded) int {
	if a.isStr && b.isStr && (a.bin || b.bin) {
		return strings.Compare(a.str, b.str) // a binary string compares by bytes
	}
	if a.isStr && b.isStr {
		x := strings.ToLower(strings.TrimRight(a.str, " "))
		y := strings.ToLower(strings.TrimRight(b.str, " "))
		return strings.Compare(x, y)
	}
	x, y := num(a), num(b)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// strNumber reads the longest numeric prefix of s, as MySQL converts a
// string to a number ('12abc' is 12, 'abc' is 0).
func strNumber(s string) (float64, bool) {
	s = strings.TrimLeft(s, " \t\n\r")
	end := 0
	for end < len(s) {
		c := s[end]
		if c >= '0' && c <= '9' || c == '.' || (end == 0 && (c == '-' || c == '+')) || ((c == 'e' || c == 'E') && end > 0) {
			end++
			continue
		}
		break
	}
	for end > 0 {
		if f, err := strconv.ParseFloat(s[:end], 64); err == nil && !math.IsInf(f, 0) {
			return f, true
		}
		end--
	}
	return 0, false
}

// sameColumn reports whether both sides name the same column.
func sameColumn(a, b ast.ExprNode) bool {
	x, ok1 := a.(*ast.ColumnNameExpr)
	y, ok2 := b.(*ast.ColumnNameExpr)
	if !ok1 || !ok2 || x.Name == nil || y.Name == nil {
		return false
	}
	return x.Name.Name.L == y.Name.Name.L && x.Name.Table.L == y.Name.Table.L && x.Name.Schema.L == y.Name.Schema.L
}
