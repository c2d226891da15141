package engine

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v5"
)

// Tautology detection folds constant expressions the way an injected
// `OR 1=1`, `OR 'a'='a'`, `OR 2>1`, `OR TRUE` or `OR x=x` needs: numbers,
// strings, booleans and NULL, with casts, arithmetic, || and comparisons.
// Anything else is unknown, never true.

// maxFoldDepth bounds recursion over expressions; deeper ones are unknown.
const maxFoldDepth = 32

type cvKind uint8

const (
	cvUnknown cvKind = iota
	cvNum
	cvStr
	cvBool
	cvNull
)

type cval struct {
	kind cvKind
	num  float64
	str  string
	b    bool
}

func fold(n *pg_query.Node, depth int) cval {
	if n == nil || depth > maxFoldDepth {
		return cval{}
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_AConst:
		c := x.AConst
		if c.Isnull {
			return cval{kind: cvNull}
		}
		switch v := c.Val.(type) {
		case *pg_query.A_Const_Ival:
			return cval{kind: cvNum, num: float64(v.Ival.GetIval())}
		case *pg_query.A_Const_Fval:
			f, err := strconv.ParseFloat(v.Fval.GetFval(), 64)
			if err == nil {
				return cval{kind: cvNum, num: f}
			}
		case *pg_query.A_Const_Sval:
			return cval{kind: cvStr, str: v.Sval.GetSval()}
		case *pg_query.A_Const_Boolval:
			return cval{kind: cvBool, b: v.Boolval.GetBoolval()}
		}
	case *pg_query.Node_TypeCast:
		return fold(x.TypeCast.Arg, depth+1)
	case *pg_query.Node_BoolExpr:
		be := x.BoolExpr
		switch be.Boolop {
		case pg_query.BoolExprType_NOT_EXPR:
			if len(be.Args) == 1 {
				if v := fold(be.Args[0], depth+1); v.kind == cvBool {
					return cval{kind: cvBool, b: !v.b}
				}
			}
		case pg_query.BoolExprType_AND_EXPR, pg_query.BoolExprType_OR_EXPR:
			and := be.Boolop == pg_query.BoolExprType_AND_EXPR
			all := true
			for _, a := range be.Args {
				v := fold(a, depth+1)
				if v.kind != cvBool {
					all = false
					continue
				}
				if and && !v.b {
					return cval{kind: cvBool, b: false}
				}
				if !and && v.b {
					return cval{kind: cvBool, b: true}
				}
			}
			if all {
				return cval{kind: cvBool, b: and}
			}
		}
	case *pg_query.Node_NullTest:
		v := fold(x.NullTest.Arg, depth+1)
		if v.kind == cvUnknown {
			return cval{}
		}
		isNull := v.kind == cvNull
		if x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL {
			return cval{kind: cvBool, b: !isNull}
		}
		return cval{kind: cvBool, b: isNull}
	case *pg_query.Node_AExpr:
		e := x.AExpr
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 {
			return cval{}
		}
		op := e.Name[0].GetString_().GetSval()
		r := fold(e.Rexpr, depth+1)
		if e.Lexpr == nil { // prefix operator
			if r.kind == cvNum && op == "-" {
				return cval{kind: cvNum, num: -r.num}
			}
			if r.kind == cvNum && op == "+" {
				return r
			}
			return cval{}
		}
		l := fold(e.Lexpr, depth+1)
		if l.kind == cvUnknown || r.kind == cvUnknown {
			return cval{}
		}
		return applyOp(op, l, r)
	}
	return cval{}
}

// applyOp folds a binary operator on two known constants. A string that
// reads as a number compares as one with a number ('1' = 1 is true in
// PostgreSQL, where the literal takes the other side's type).
func applyOp(op string, l, r cval) cval {
	if l.kind == cvNull || r.kind == cvNull {
		return cval{kind: cvNull}
	}
	if l.kind != r.kind {
		l, r = coerce(l, r.kind), coerce(r, l.kind)
		if l.kind != r.kind {
			return cval{}
		}
	}
	switch op {
	case "+", "-", "*", "/":
		if l.kind != cvNum {
			return cval{}
		}
		switch op {
		case "+":
			return cval{kind: cvNum, num: l.num + r.num}
		case "-":
			return cval{kind: cvNum, num: l.num - r.num}
		case "*":
			return cval{kind: cvNum, num: l.num * r.num}
		default:
			if r.num == 0 {
				return cval{}
			}
			return cval{kind: cvNum, num: l.num / r.num}
		}
	case "||":
		if l.kind == cvStr {
			return cval{kind: cvStr, str: l.str + r.str}
		}
		return cval{}
	}
	c, ok := compare(l, r)
	if !ok {
		return cval{}
	}
	var b bool
	switch op {
	case "=":
		b = c == 0
	case "<>", "!=":
		b = c != 0
	case "<":
		b = c < 0
	case ">":
		b = c > 0
	case "<=":
		b = c <= 0
	case ">=":
		b = c >= 0
	default:
		return cval{}
	}
	return cval{kind: cvBool, b: b}
}

func coerce(v cval, to cvKind) cval {
	if v.kind == cvStr && to == cvNum {
		if f, err := strconv.ParseFloat(v.str, 64); err == nil {
			return cval{kind: cvNum, num: f}
		}
	}
	if v.kind == cvStr && to == cvBool {
		switch v.str {
		case "t", "true", "on", "yes", "1":
			return cval{kind: cvBool, b: true}
		case "f", "false", "off", "no", "0":
			return cval{kind: cvBool, b: false}
		}
	}
	return v
}

func compare(l, r cval) (int, bool) {
	switch l.kind {
	case cvNum:
		switch {
		case l.num < r.num:
			return -1, true
		case l.num > r.num:
			return 1, true
		}
		return 0, true
	case cvStr:
		switch {
		case l.str < r.str:
			return -1, true
		case l.str > r.str:
			return 1, true
		}
		return 0, true
	case cvBool:
		switch {
		case l.b == r.b:
			return 0, true
		case !l.b:
			return -1, true
		}
		return 1, true
	}
	return 0, false
}

// alwaysTrue reports whether a condition holds for every row: a constant
// that folds to true, `x = x` (also <=, >=) on the same column, an OR with
// such an arm, or an AND of only such arms.
func alwaysTrue(n *pg_query.Node, depth int) bool {
	if n == nil || depth > maxFoldDepth {
		return false
	}
	if v := fold(n, depth); v.kind == cvBool {
		return v.b
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_BoolExpr:
		be := x.BoolExpr
		switch be.Boolop {
		case pg_query.BoolExprType_OR_EXPR:
			for _, a := range be.Args {
				if alwaysTrue(a, depth+1) {
					return true
				}
			}
		case pg_query.BoolExprType_AND_EXPR:
			for _, a := range be.Args {
				if !alwaysTrue(a, depth+1) {
					return false
				}
			}
			return len(be.Args) > 0
		}
	case *pg_query.Node_AExpr:
		e := x.AExpr
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && len(e.Name) == 1 {
			switch e.Name[0].GetString_().GetSval() {
			case "=", "<=", ">=":
				return sameColumn(e.Lexpr, e.Rexpr)
			}
		}
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_LIKE || e.Kind == pg_query.A_Expr_Kind_AEXPR_ILIKE {
			// 'a' LIKE 'a', x LIKE '%'
			l, r := fold(e.Lexpr, depth+1), fold(e.Rexpr, depth+1)
			if r.kind == cvStr && r.str == "%" {
				return true
			}
			return l.kind == cvStr && r.kind == cvStr && l.str == r.str && !containsWildcard(r.str)
		}
	}
	return false
}

func containsWildcard(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '_' || s[i] == '\\' {
			return true
		}
	}
	return false
}

func sameColumn(a, b *pg_query.Node) bool {
	ca, cb := a.GetColumnRef(), b.GetColumnRef()
	if ca == nil || cb == nil || len(ca.Fields) != len(cb.Fields) {
		return false
	}
	for i := range ca.Fields {
		sa, sb := ca.Fields[i].GetString_(), cb.Fields[i].GetString_()
		if sa == nil || sb == nil || sa.Sval != sb.Sval {
			return false
		}
	}
	return true
}

// orTautology reports whether a WHERE/HAVING/ON clause contains an OR with
// an always-true arm, at any depth of AND/OR/NOT: the injected shape
// `... OR 1=1`. A clause that is true as a whole without an OR (`WHERE 1=1`,
// which query builders emit) is not one.
func orTautology(n *pg_query.Node, depth int) bool {
	if n == nil || depth > maxFoldDepth {
		return false
	}
	be := n.GetBoolExpr()
	if be == nil {
		return false
	}
	for _, a := range be.Args {
		if be.Boolop == pg_query.BoolExprType_OR_EXPR && alwaysTrue(a, depth+1) {
			return true
		}
		if orTautology(a, depth+1) {
			return true
		}
	}
	return false
}
