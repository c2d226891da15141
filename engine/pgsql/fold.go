package pgsql

import (
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// Always-true conditions. A condition is folded the way PostgreSQL would
// evaluate it, with three-valued logic: constants (numbers, strings,
// booleans, bit strings, NULL) through casts, operators, IN, BETWEEN,
// = ANY(ARRAY[...]), LIKE/ILIKE/SIMILAR TO, IS [NOT] TRUE/FALSE/UNKNOWN,
// IS [NOT] DISTINCT FROM, CASE, COALESCE, NULLIF, GREATEST/LEAST, the
// immutable builtins of foldFunc, and subqueries without FROM (EXISTS
// (SELECT 1), (SELECT 1) = 1). Conditions that are not constant still have
// a known truth when they compare an expression with itself (x = x, also
// through casts), test a value against its complement (x IS NULL OR x IS
// NOT NULL), or are CASE/COALESCE whose every outcome is true. Anything
// else is unknown, never true. Example: in
//
//	DELETE FROM t WHERE name = 'x' OR 'yes'::bool
//
// the second OR arm is always true, so the WHERE is (and the OR is a
// tautology). docs/policy.md ("What the engine guarantees") lists this
// coverage for operators.
//
// Errors the server would raise (1/0, 'a'::int) fold to unknown: the
// statement then fails on the server and changes nothing.

// maxFoldDepth bounds recursion over expressions; deeper ones are unknown.
const maxFoldDepth = 32

type cvKind uint8

const (
	cvUnknown cvKind = iota
	cvNum
	cvStr
	cvBool
	cvNull
	cvBits // a bit string; str holds its 0/1 digits
)

// cval is a folded constant. Numbers are exact only within ±2^53: two
// larger ones (inexact) do not compare; isInt marks the integer types,
// whose division truncates (1/2 = 0).
type cval struct {
	kind    cvKind
	num     float64
	isInt   bool
	inexact bool
	str     string
	b       bool
}

var unknownVal = cval{}

func boolVal(b bool) cval { return cval{kind: cvBool, b: b} }
func numVal(f float64, isInt bool) cval {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return unknownVal
	}
	return cval{kind: cvNum, num: f, isInt: isInt, inexact: math.Abs(f) > 1<<53}
}

// folder evaluates expressions. nullEquals reads `expr = NULL` as `expr IS
// NULL`, as the server does with transform_null_equals on; sawNullEq says
// whether that reading could change anything.
type folder struct {
	nullEquals bool
	sawNullEq  bool
	// target, when set, is the written relation whose columns a NULL test
	// assumes NOT NULL (notNullWhere); notNull collects them.
	target  *pg_query.RangeVar
	notNull []string
}

func (fo *folder) fold(n *pg_query.Node, depth int) cval {
	if n == nil || depth > maxFoldDepth {
		return unknownVal
	}
	d := depth + 1
	switch x := n.Node.(type) {
	case *pg_query.Node_AConst:
		return constVal(x.AConst)
	case *pg_query.Node_TypeCast:
		tc := x.TypeCast
		return castTo(fo.fold(tc.Arg, d), tc.TypeName)
	case *pg_query.Node_BoolExpr:
		return fo.foldBool(x.BoolExpr, d)
	case *pg_query.Node_NullTest:
		v := fo.fold(x.NullTest.Arg, d)
		if v.kind == cvUnknown {
			if col, ok := fo.targetColumn(x.NullTest.Arg); ok {
				fo.notNull = engine.AppendUnique(fo.notNull, col)
				return boolVal(x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL)
			}
			return unknownVal
		}
		isNull := v.kind == cvNull
		if x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL {
			return boolVal(!isNull)
		}
		return boolVal(isNull)
	case *pg_query.Node_BooleanTest:
		v := asBool(fo.fold(x.BooleanTest.Arg, d))
		if v.kind == cvUnknown {
			return unknownVal
		}
		return boolVal(boolTest(x.BooleanTest.Booltesttype, v))
	case *pg_query.Node_AExpr:
		return fo.foldAExpr(x.AExpr, d)
	case *pg_query.Node_CaseExpr:
		return fo.foldCase(x.CaseExpr, d)
	case *pg_query.Node_CoalesceExpr:
		for _, a := range x.CoalesceExpr.Args {
			v := fo.fold(a, d)
			if v.kind != cvNull {
				return v // a value, or unknown
			}
		}
		return cval{kind: cvNull}
	case *pg_query.Node_MinMaxExpr:
		var best cval
		have := false
		for _, a := range x.MinMaxExpr.Args {
			v := fo.fold(a, d)
			if v.kind == cvUnknown {
				return unknownVal
			}
			if v.kind == cvNull {
				continue // GREATEST/LEAST ignore NULLs
			}
			if !have {
				best, have = v, true
				continue
			}
			l, r, ok := unify(best, v)
			if !ok {
				return unknownVal
			}
			c, ok := compare(l, r)
			if !ok {
				return unknownVal
			}
			if (x.MinMaxExpr.Op == pg_query.MinMaxOp_IS_GREATEST) == (c < 0) {
				best = r
			} else {
				best = l
			}
		}
		if !have {
			return cval{kind: cvNull}
		}
		return best
	case *pg_query.Node_FuncCall:
		return fo.foldFunc(x.FuncCall, d)
	case *pg_query.Node_SubLink:
		return fo.foldSubLink(x.SubLink, d)
	case *pg_query.Node_CollateClause:
		// A collation orders strings; equality is the same under every
		// deterministic one.
		return fo.fold(x.CollateClause.Arg, d)
	}
	return unknownVal
}

func constVal(c *pg_query.A_Const) cval {
	if c.Isnull {
		return cval{kind: cvNull}
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return numVal(float64(v.Ival.GetIval()), true)
	case *pg_query.A_Const_Fval:
		s := v.Fval.GetFval()
		f, err := strconv.ParseFloat(s, 64)
		if err == nil {
			return numVal(f, !strings.ContainsAny(s, ".eE"))
		}
	case *pg_query.A_Const_Sval:
		return cval{kind: cvStr, str: v.Sval.GetSval()}
	case *pg_query.A_Const_Boolval:
		return boolVal(v.Boolval.GetBoolval())
	case *pg_query.A_Const_Bsval:
		return bitsOf(v.Bsval.GetBsval())
	}
	return unknownVal
}

// bitsOf reads the parser's bit-string constant: "b0101" or "x1F".
func bitsOf(s string) cval {
	if s == "" {
		return unknownVal
	}
	var b strings.Builder
	switch s[0] {
	case 'b', 'B':
		for _, c := range s[1:] {
			if c != '0' && c != '1' {
				return unknownVal
			}
		}
		return cval{kind: cvBits, str: s[1:]}
	case 'x', 'X':
		for _, c := range s[1:] {
			v, err := strconv.ParseUint(string(c), 16, 8)
			if err != nil {
				return unknownVal
			}
			b.WriteString(strconv.FormatUint(v|16, 2)[1:])
		}
		return cval{kind: cvBits, str: b.String()}
	}
	return unknownVal
}

func (fo *folder) foldBool(be *pg_query.BoolExpr, d int) cval {
	switch be.Boolop {
	case pg_query.BoolExprType_NOT_EXPR:
		if len(be.Args) == 1 {
			v := asBool(fo.fold(be.Args[0], d))
			if v.kind == cvBool {
				return boolVal(!v.b)
			}
			return v // NULL or unknown
		}
	case pg_query.BoolExprType_AND_EXPR, pg_query.BoolExprType_OR_EXPR:
		and := be.Boolop == pg_query.BoolExprType_AND_EXPR
		unknown, null := false, false
		for _, a := range be.Args {
			v := asBool(fo.fold(a, d))
			switch v.kind {
			case cvBool:
				if v.b != and { // FALSE decides an AND, TRUE an OR
					return v
				}
			case cvNull:
				null = true
			default:
				unknown = true
			}
		}
		switch {
		case unknown:
			return unknownVal
		case null:
			return cval{kind: cvNull}
		}
		return boolVal(and)
	}
	return unknownVal
}

// asBool reads a value in a boolean context: an untyped string literal
// ('t', 'yes') is taken as boolean input, as PostgreSQL does.
func asBool(v cval) cval {
	switch v.kind {
	case cvBool, cvNull:
		return v
	case cvStr:
		return coerce(v, cvBool)
	}
	return unknownVal
}

func boolTest(t pg_query.BoolTestType, v cval) bool {
	isTrue, isFalse := v.kind == cvBool && v.b, v.kind == cvBool && !v.b
	switch t {
	case pg_query.BoolTestType_IS_TRUE:
		return isTrue
	case pg_query.BoolTestType_IS_NOT_TRUE:
		return !isTrue
	case pg_query.BoolTestType_IS_FALSE:
		return isFalse
	case pg_query.BoolTestType_IS_NOT_FALSE:
		return !isFalse
	case pg_query.BoolTestType_IS_UNKNOWN:
		return v.kind == cvNull
	}
	return v.kind != cvNull // IS NOT UNKNOWN
}

// opName returns an operator's name: "=" for both `=` and
// OPERATOR(pg_catalog.=); "" for an operator of another schema.
func opName(name []*pg_query.Node) string {
	switch len(name) {
	case 1:
		return name[0].GetString_().GetSval()
	case 2:
		if name[0].GetString_().GetSval() == "pg_catalog" {
			return name[1].GetString_().GetSval()
		}
	}
	return ""
}

func isNullConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && c.Isnull
}

func (fo *folder) foldAExpr(e *pg_query.A_Expr, d int) cval {
	op := opName(e.Name)
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if e.Lexpr == nil { // prefix operator
			r := fo.fold(e.Rexpr, d)
			if r.kind == cvNull && (op == "-" || op == "+") {
				return r
			}
			if r.kind == cvStr {
				r = coerce(r, cvNum)
			}
			if r.kind == cvNum && op == "-" {
				return numVal(-r.num, r.isInt)
			}
			if r.kind == cvNum && op == "+" {
				return r
			}
			return unknownVal
		}
		if op == "=" && (isNullConst(e.Lexpr) || isNullConst(e.Rexpr)) {
			// transform_null_equals: `x = NULL` means `x IS NULL`.
			fo.sawNullEq = true
			if fo.nullEquals {
				other := e.Lexpr
				if isNullConst(other) {
					other = e.Rexpr
				}
				v := fo.fold(other, d)
				if v.kind == cvUnknown {
					return unknownVal
				}
				return boolVal(v.kind == cvNull)
			}
		}
		l := fo.fold(e.Lexpr, d)
		if l.kind == cvUnknown {
			return unknownVal
		}
		r := fo.fold(e.Rexpr, d)
		if r.kind == cvUnknown {
			return unknownVal
		}
		return applyOp(op, l, r)
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		all := e.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL
		if arr := e.Rexpr.GetAArrayExpr(); arr != nil {
			return fo.foldIn(op, e.Lexpr, arr.Elements, all, d)
		}
		// An array literal: = ANY('{1,2}'::int[]).
		if tc := e.Rexpr.GetTypeCast(); tc != nil && tc.TypeName != nil && len(tc.TypeName.ArrayBounds) == 1 {
			if lit := fo.fold(tc.Arg, d); lit.kind == cvStr {
				if elems, ok := arrayLiteral(lit.str); ok {
					return foldInVals(op, fo.fold(e.Lexpr, d), elems, all)
				}
			}
		}
		return unknownVal
	case pg_query.A_Expr_Kind_AEXPR_IN:
		items := e.Rexpr.GetList().GetItems()
		if op == "<>" { // NOT IN is <> ALL
			return fo.foldIn("<>", e.Lexpr, items, true, d)
		}
		return fo.foldIn("=", e.Lexpr, items, false, d)
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, r := fo.fold(e.Lexpr, d), fo.fold(e.Rexpr, d)
		if l.kind == cvUnknown || r.kind == cvUnknown {
			return unknownVal
		}
		same := l.kind == cvNull && r.kind == cvNull
		if l.kind != cvNull && r.kind != cvNull {
			v := applyOp("=", l, r)
			if v.kind != cvBool {
				return unknownVal
			}
			same = v.b
		}
		return boolVal(same == (e.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT))
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		l, r := fo.fold(e.Lexpr, d), fo.fold(e.Rexpr, d)
		if l.kind == cvUnknown || r.kind == cvUnknown {
			return unknownVal
		}
		if v := applyOp("=", l, r); v.kind == cvBool && v.b {
			return cval{kind: cvNull}
		} else if v.kind == cvUnknown {
			return unknownVal
		}
		return l
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE, pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		return fo.foldLike(e, op, d)
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		items := e.Rexpr.GetList().GetItems()
		if len(items) != 2 {
			return unknownVal
		}
		x, lo, hi := fo.fold(e.Lexpr, d), fo.fold(items[0], d), fo.fold(items[1], d)
		sym := e.Kind == pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM || e.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM
		not := e.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN || e.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM
		v := and3(applyOp(">=", x, lo), applyOp("<=", x, hi))
		if sym {
			v = or3(v, and3(applyOp(">=", x, hi), applyOp("<=", x, lo)))
		}
		if not {
			v = not3(v)
		}
		return v
	}
	return unknownVal
}

func and3(a, b cval) cval {
	switch {
	case a.kind == cvBool && !a.b, b.kind == cvBool && !b.b:
		return boolVal(false)
	case a.kind == cvUnknown || b.kind == cvUnknown:
		return unknownVal
	case a.kind == cvNull || b.kind == cvNull:
		return cval{kind: cvNull}
	}
	return boolVal(true)
}

func or3(a, b cval) cval { return not3(and3(not3(a), not3(b))) }
func not3(a cval) cval {
	if a.kind == cvBool {
		return boolVal(!a.b)
	}
	return a
}

// arrayLiteral reads a one-dimensional array literal of plain elements,
// '{1,2,abc}' (no quotes, braces or backslashes inside; NULL is NULL).
func arrayLiteral(s string) ([]cval, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' || strings.ContainsAny(s[1:len(s)-1], `{}"\\`) {
		return nil, false
	}
	var out []cval
	for _, e := range strings.Split(s[1:len(s)-1], ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, false
		}
		if strings.EqualFold(e, "null") {
			out = append(out, cval{kind: cvNull})
			continue
		}
		out = append(out, cval{kind: cvStr, str: e})
	}
	return out, len(out) > 0
}

func foldInVals(op string, l cval, vals []cval, all bool) cval {
	if l.kind == cvUnknown {
		return unknownVal
	}
	acc := boolVal(all)
	for _, v := range vals {
		if all {
			acc = and3(acc, applyOp(op, l, v))
		} else {
			acc = or3(acc, applyOp(op, l, v))
		}
	}
	return acc
}

// foldIn folds x op ANY(items) (all=false) or x op ALL(items): IN lists,
// = ANY(ARRAY[...]) and NOT IN, with NULLs as the server treats them.
func (fo *folder) foldIn(op string, x *pg_query.Node, items []*pg_query.Node, all bool, d int) cval {
	l := fo.fold(x, d)
	if l.kind == cvUnknown || len(items) == 0 {
		return unknownVal
	}
	acc := boolVal(all)
	for _, it := range items {
		v := applyOp(op, l, fo.fold(it, d))
		if all {
			acc = and3(acc, v)
		} else {
			acc = or3(acc, v)
		}
	}
	return acc
}

func (fo *folder) foldCase(c *pg_query.CaseExpr, d int) cval {
	var arg cval
	if c.Arg != nil {
		arg = fo.fold(c.Arg, d)
		if arg.kind == cvUnknown {
			return unknownVal
		}
	}
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		if cw == nil {
			return unknownVal
		}
		var cond cval
		if c.Arg != nil {
			cond = applyOp("=", arg, fo.fold(cw.Expr, d))
		} else {
			cond = asBool(fo.fold(cw.Expr, d))
		}
		switch {
		case cond.kind == cvBool && cond.b:
			return fo.fold(cw.Result, d)
		case cond.kind == cvUnknown:
			return unknownVal
		}
	}
	if c.Defresult == nil {
		return cval{kind: cvNull}
	}
	return fo.fold(c.Defresult, d)
}

// constSelect returns a subquery's SELECT when it reads no table and can
// only return its one target row or none: SELECT <exprs> [WHERE ...].
func constSelect(n *pg_query.Node) *pg_query.SelectStmt {
	s := n.GetSelectStmt()
	if s == nil || s.Op != pg_query.SetOperation_SETOP_NONE || len(s.FromClause) > 0 ||
		len(s.GroupClause) > 0 || s.HavingClause != nil || len(s.ValuesLists) > 0 ||
		s.LimitOffset != nil || s.WithClause != nil || s.IntoClause != nil ||
		len(s.TargetList) == 0 {
		return nil
	}
	if s.LimitCount != nil { // LIMIT 1 keeps the one row
		var fo folder
		if v := fo.fold(s.LimitCount, 0); v.kind != cvNum || v.num < 1 {
			return nil
		}
	}
	for _, t := range s.TargetList {
		if rt := t.GetResTarget(); rt == nil || containsSetReturning(rt.Val) {
			return nil
		}
	}
	return s
}

// containsSetReturning: a function in the target list may return many rows
// or none (generate_series, unnest), or aggregate (count(*) has a row).
func containsSetReturning(n *pg_query.Node) bool {
	return n.GetFuncCall() != nil
}

func (fo *folder) foldSubLink(sl *pg_query.SubLink, d int) cval {
	s := constSelect(sl.Subselect)
	if s == nil {
		return unknownVal
	}
	// Does the subquery return its row? Only if its WHERE holds.
	rows := boolVal(true)
	if s.WhereClause != nil {
		rows = asBool(fo.fold(s.WhereClause, d))
		if rows.kind == cvUnknown {
			return unknownVal
		}
	}
	has := rows.kind == cvBool && rows.b
	switch sl.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		return boolVal(has)
	case pg_query.SubLinkType_EXPR_SUBLINK:
		if len(s.TargetList) != 1 {
			return unknownVal
		}
		if !has {
			return cval{kind: cvNull}
		}
		return fo.fold(s.TargetList[0].GetResTarget().Val, d)
	case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
		if len(s.TargetList) != 1 {
			return unknownVal
		}
		op := "="
		if len(sl.OperName) > 0 {
			op = opName(sl.OperName)
		}
		all := sl.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK
		if !has {
			return boolVal(all) // ANY of no rows is false, ALL of none true
		}
		return fo.foldIn(op, sl.Testexpr, []*pg_query.Node{s.TargetList[0].GetResTarget().Val}, all, d)
	}
	return unknownVal
}
