package pgsql

import (
	"crypto/md5"
	"encoding/hex"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/reflect/protoreflect"

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

func (fo *folder) foldLike(e *pg_query.A_Expr, op string, d int) cval {
	l := fo.fold(e.Lexpr, d)
	patNode, escNode := e.Rexpr, (*pg_query.Node)(nil)
	// LIKE ... ESCAPE and SIMILAR TO wrap the pattern in a function call.
	if fc := e.Rexpr.GetFuncCall(); fc != nil {
		name := funcName(fc.Funcname)
		if (name != "like_escape" && name != "similar_to_escape") || len(fc.Args) == 0 || len(fc.Args) > 2 {
			return unknownVal
		}
		patNode = fc.Args[0]
		if len(fc.Args) == 2 {
			escNode = fc.Args[1]
		}
	}
	p := fo.fold(patNode, d)
	esc := cval{kind: cvStr, str: `\`}
	if escNode != nil {
		esc = fo.fold(escNode, d)
	}
	if l.kind == cvNull || p.kind == cvNull || esc.kind == cvNull {
		return cval{kind: cvNull}
	}
	if l.kind != cvStr || p.kind != cvStr || esc.kind != cvStr || utf8.RuneCountInString(esc.str) > 1 {
		return unknownVal
	}
	escR := rune(-1)
	if esc.str != "" {
		escR, _ = utf8.DecodeRuneInString(esc.str)
	}
	var m, ok bool
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		m, ok = similarMatch(l.str, p.str, escR)
	case pg_query.A_Expr_Kind_AEXPR_ILIKE:
		if !isASCII(l.str) || !isASCII(p.str) {
			return unknownVal // case folding of other letters depends on the locale
		}
		m, ok = likeMatch(strings.ToLower(l.str), strings.ToLower(p.str), escR)
	default:
		m, ok = likeMatch(l.str, p.str, escR)
	}
	if !ok {
		return unknownVal
	}
	if strings.HasPrefix(op, "!") { // NOT LIKE: !~~, !~~*, !~
		m = !m
	}
	return boolVal(m)
}

// likeMatch matches s against a LIKE pattern (% any run, _ one character,
// esc quotes the next character). ok is false for a pattern PostgreSQL
// rejects (an escape at the end).
func likeMatch(s, pat string, esc rune) (match, ok bool) {
	sr, pr := []rune(s), []rune(pat)
	// Iterative matching with one backtrack point for the last %.
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(sr) {
		if pi < len(pr) {
			c := pr[pi]
			switch {
			case c == esc:
				if pi+1 >= len(pr) {
					return false, false
				}
				if pr[pi+1] == sr[si] {
					si++
					pi += 2
					continue
				}
			case c == '%':
				starP, starS = pi, si
				pi++
				continue
			case c == '_' || c == sr[si]:
				si++
				pi++
				continue
			}
		}
		if starP < 0 {
			return false, true
		}
		starS++
		si, pi = starS, starP+1
	}
	for pi < len(pr) && pr[pi] == '%' {
		pi++
	}
	if pi < len(pr) && pr[pi] == esc && pi+1 >= len(pr) {
		return false, false
	}
	return pi == len(pr), true
}

// similarMatch matches s against a SIMILAR TO pattern by translating it to
// a regular expression, as PostgreSQL's similar_to_escape does.
func similarMatch(s, pat string, esc rune) (match, ok bool) {
	var b strings.Builder
	b.WriteString(`^(?:`)
	inClass := false
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == esc:
			if i+1 >= len(rs) {
				return false, false
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case inClass:
			if c == ']' {
				inClass = false
			}
			if c == '\\' {
				b.WriteString(`\\`)
				continue
			}
			b.WriteRune(c)
		case c == '[':
			inClass = true
			b.WriteRune(c)
		case c == '%':
			b.WriteString(`.*`)
		case c == '_':
			b.WriteString(`.`)
		case strings.ContainsRune("|*+?{}()", c):
			b.WriteRune(c)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return false, false
	}
	return re.MatchString(s), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
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

// applyOp folds a binary operator on two known constants. An untyped
// string literal takes the other side's type ('1' = 1 is true in
// PostgreSQL).
func applyOp(op string, l, r cval) cval {
	if l.kind == cvUnknown || r.kind == cvUnknown {
		return unknownVal
	}
	if l.kind == cvNull || r.kind == cvNull {
		return cval{kind: cvNull}
	}
	l, r, ok := unify(l, r)
	if !ok {
		return unknownVal
	}
	switch op {
	case "^":
		if l.kind != cvNum {
			return unknownVal
		}
		return numVal(math.Pow(l.num, r.num), false)
	case "+", "-", "*", "/", "%":
		if l.kind != cvNum {
			return unknownVal
		}
		isInt := l.isInt && r.isInt
		switch op {
		case "+":
			return numVal(l.num+r.num, isInt)
		case "-":
			return numVal(l.num-r.num, isInt)
		case "*":
			return numVal(l.num*r.num, isInt)
		case "/":
			if r.num == 0 {
				return unknownVal // division by zero: an error
			}
			if isInt {
				return numVal(math.Trunc(l.num/r.num), true)
			}
			return numVal(l.num/r.num, false)
		default:
			if r.num == 0 || !isInt {
				return unknownVal
			}
			return numVal(math.Mod(l.num, r.num), true)
		}
	case "||":
		if l.kind == cvStr {
			return cval{kind: cvStr, str: l.str + r.str}
		}
		if l.kind == cvBits {
			return cval{kind: cvBits, str: l.str + r.str}
		}
		return unknownVal
	case "^@": // starts_with
		if l.kind != cvStr {
			return unknownVal
		}
		return boolVal(strings.HasPrefix(l.str, r.str))
	case "~~", "!~~", "~~*", "!~~*": // LIKE and ILIKE by their operator names
		if l.kind != cvStr || (strings.HasSuffix(op, "*") && (!isASCII(l.str) || !isASCII(r.str))) {
			return unknownVal
		}
		ls, rs := l.str, r.str
		if strings.HasSuffix(op, "*") {
			ls, rs = strings.ToLower(ls), strings.ToLower(rs)
		}
		m, ok := likeMatch(ls, rs, '\\')
		if !ok {
			return unknownVal
		}
		return boolVal(m != strings.HasPrefix(op, "!"))
	case "~", "~*", "!~", "!~*":
		if l.kind != cvStr || strings.ContainsRune(r.str, '\\') {
			return unknownVal // PostgreSQL's regular expressions differ from Go's in escapes
		}
		pat := r.str
		if strings.HasSuffix(op, "*") {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return unknownVal
		}
		return boolVal(re.MatchString(l.str) != strings.HasPrefix(op, "!"))
	}
	c, ok := compare(l, r)
	if !ok {
		return unknownVal
	}
	switch op {
	case "=":
		return boolVal(c == 0)
	case "<>", "!=":
		return boolVal(c != 0)
	case "<":
		return boolVal(c < 0)
	case ">":
		return boolVal(c > 0)
	case "<=":
		return boolVal(c <= 0)
	case ">=":
		return boolVal(c >= 0)
	}
	return unknownVal
}

// unify brings two known, non-NULL constants to one kind: an untyped
// string takes the other side's type.
func unify(l, r cval) (cval, cval, bool) {
	if l.kind != r.kind {
		l, r = coerce(l, r.kind), coerce(r, l.kind)
	}
	return l, r, l.kind == r.kind
}

func coerce(v cval, to cvKind) cval {
	if v.kind != cvStr || to == cvStr {
		return v
	}
	s := strings.TrimSpace(v.str)
	switch to {
	case cvNum:
		if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXpP_") {
			return numVal(f, !strings.ContainsAny(s, ".eE"))
		}
	case cvBool:
		if b, ok := parseBool(s); ok {
			return boolVal(b)
		}
	case cvBits:
		if strings.Trim(v.str, "01") == "" {
			return cval{kind: cvBits, str: v.str}
		}
	}
	return unknownVal
}

// parseBool reads boolean input as PostgreSQL's boolin does: any unique
// prefix of true/false/yes/no, on/off (at least "of"), 1/0, any case.
func parseBool(s string) (bool, bool) {
	s = strings.ToLower(s)
	if s == "" {
		return false, false
	}
	for _, w := range []struct {
		word string
		min  int
		val  bool
	}{{"true", 1, true}, {"false", 1, false}, {"yes", 1, true}, {"no", 1, false}, {"on", 2, true}, {"off", 2, false}, {"1", 1, true}, {"0", 1, false}} {
		if len(s) >= w.min && strings.HasPrefix(w.word, s) {
			return w.val, true
		}
	}
	return false, false
}

func compare(l, r cval) (int, bool) {
	switch l.kind {
	case cvNum:
		if l.inexact && r.inexact {
			return 0, false
		}
		switch {
		case l.num < r.num:
			return -1, true
		case l.num > r.num:
			return 1, true
		}
		return 0, true
	case cvStr, cvBits:
		// Byte order; equality is the same under every deterministic
		// collation, order may differ for non-ASCII text.
		return strings.Compare(l.str, r.str), true
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

// typeName returns a cast's target type, lower-cased, "" for an array, a
// type with modifiers we do not model, or one outside pg_catalog.
func typeName(t *pg_query.TypeName) (string, []*pg_query.Node) {
	if t == nil || len(t.ArrayBounds) > 0 || len(t.Names) == 0 || len(t.Names) > 2 {
		return "", nil
	}
	if len(t.Names) == 2 && t.Names[0].GetString_().GetSval() != "pg_catalog" {
		return "", nil
	}
	return strings.ToLower(t.Names[len(t.Names)-1].GetString_().GetSval()), t.Typmods
}

func castTo(v cval, t *pg_query.TypeName) cval {
	name, mods := typeName(t)
	return castNamed(v, name, mods)
}

func castNamed(v cval, name string, mods []*pg_query.Node) cval {
	if v.kind == cvUnknown {
		return v
	}
	if v.kind == cvNull {
		switch name {
		case "":
			return unknownVal
		}
		return v
	}
	switch name {
	case "bool", "boolean":
		switch v.kind {
		case cvBool:
			return v
		case cvStr:
			return coerce(v, cvBool)
		case cvNum:
			if v.isInt {
				return boolVal(v.num != 0)
			}
		}
	case "int2", "int4", "int8", "int", "integer", "smallint", "bigint":
		switch v.kind {
		case cvStr:
			s := strings.TrimSpace(v.str)
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return numVal(float64(i), true)
			}
		case cvNum:
			if v.isInt {
				return v
			}
			return numVal(math.Round(v.num), true) // numeric rounds half away from zero
		case cvBool:
			if name == "int4" || name == "int" || name == "integer" {
				if v.b {
					return numVal(1, true)
				}
				return numVal(0, true)
			}
		}
	case "numeric", "decimal", "float4", "float8", "real", "float", "double precision":
		if len(mods) > 0 {
			return unknownVal
		}
		switch v.kind {
		case cvStr:
			c := coerce(v, cvNum)
			c.isInt = false
			return c
		case cvNum:
			v.isInt = false
			return v
		}
	case "text", "varchar", "name":
		if len(mods) > 0 {
			return unknownVal // varchar(n) truncates
		}
		switch v.kind {
		case cvStr:
			return v
		case cvNum:
			if v.isInt {
				return cval{kind: cvStr, str: strconv.FormatInt(int64(v.num), 10)}
			}
		case cvBool:
			return cval{kind: cvStr, str: strconv.FormatBool(v.b)}
		}
	case "varbit", "bit":
		if v.kind == cvStr {
			v = coerce(v, cvBits)
		}
		if v.kind != cvBits {
			return unknownVal
		}
		if name == "bit" {
			// bit without a length is bit(1); an explicit cast pads or truncates.
			n := 1
			if len(mods) == 1 {
				n = int(mods[0].GetAConst().GetIval().GetIval())
			}
			if len(v.str) != n {
				return unknownVal
			}
		}
		return v
	}
	return unknownVal
}

// funcName returns a function's name when it is unqualified or in
// pg_catalog, else "".
func funcName(parts []*pg_query.Node) string {
	switch len(parts) {
	case 1:
		return parts[0].GetString_().GetSval()
	case 2:
		if parts[0].GetString_().GetSval() == "pg_catalog" {
			return parts[1].GetString_().GetSval()
		}
	}
	return ""
}

// foldFunc folds the immutable builtins listed here, on constant
// arguments: text (lower, upper, length, char_length, character_length,
// octet_length, btrim/ltrim/rtrim and TRIM, concat, replace, reverse, left,
// right, substr/substring, strpos/position, starts_with, repeat up to 4 KiB,
// md5, ascii, chr), numbers (abs, sign, ceil, ceiling, floor, round, trunc,
// mod) and function-style casts (bool('t'), int4('1'), text(1)). lower and
// upper fold ASCII text only (other letters follow the locale).
func (fo *folder) foldFunc(fc *pg_query.FuncCall, d int) cval {
	if fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || fc.Over != nil || len(fc.AggOrder) > 0 || fc.FuncVariadic {
		return unknownVal
	}
	name := funcName(fc.Funcname)
	if name == "" || len(fc.Args) > 3 {
		return unknownVal
	}
	var a [3]cval
	for i, arg := range fc.Args {
		a[i] = fo.fold(arg, d)
		if a[i].kind == cvUnknown {
			return unknownVal
		}
	}
	n := len(fc.Args)
	if name == "concat" {
		var b strings.Builder
		for _, v := range a[:n] {
			switch v.kind {
			case cvNull:
			case cvStr:
				b.WriteString(v.str)
			default:
				v = castNamed(v, "text", nil)
				if v.kind != cvStr {
					return unknownVal
				}
				b.WriteString(v.str)
			}
		}
		return cval{kind: cvStr, str: b.String()}
	}
	switch name {
	case "bool", "int2", "int4", "int8", "numeric", "float8", "text", "varchar":
		if n == 1 {
			return castNamed(a[0], name, nil)
		}
		return unknownVal
	}
	if op, ok := comparisonFunc(name); ok && n == 2 {
		return applyOp(op, a[0], a[1])
	}
	for _, v := range a[:n] {
		if v.kind == cvNull {
			if _, known := foldedFuncs[name]; known {
				return v // these functions are strict: NULL in, NULL out
			}
			return unknownVal
		}
	}
	str := func(i int) (string, bool) {
		v := a[i]
		if v.kind == cvNum && v.isInt {
			return strconv.FormatInt(int64(v.num), 10), true
		}
		return v.str, v.kind == cvStr
	}
	num := func(i int) (float64, bool) {
		v := a[i]
		if v.kind == cvStr {
			v = coerce(v, cvNum)
		}
		return v.num, v.kind == cvNum
	}
	integer := func(i int) (int, bool) {
		f, ok := num(i)
		return int(f), ok && f == math.Trunc(f)
	}
	s0, ok0 := str(0)
	switch {
	case n == 1 && ok0:
		switch name {
		case "lower", "upper":
			if !isASCII(s0) {
				return unknownVal
			}
			if name == "lower" {
				return cval{kind: cvStr, str: strings.ToLower(s0)}
			}
			return cval{kind: cvStr, str: strings.ToUpper(s0)}
		case "length", "char_length", "character_length":
			return numVal(float64(utf8.RuneCountInString(s0)), true)
		case "octet_length":
			return numVal(float64(len(s0)), true)
		case "btrim":
			return cval{kind: cvStr, str: strings.Trim(s0, " ")}
		case "ltrim":
			return cval{kind: cvStr, str: strings.TrimLeft(s0, " ")}
		case "rtrim":
			return cval{kind: cvStr, str: strings.TrimRight(s0, " ")}
		case "reverse":
			r := []rune(s0)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return cval{kind: cvStr, str: string(r)}
		case "md5":
			sum := md5.Sum([]byte(s0))
			return cval{kind: cvStr, str: hex.EncodeToString(sum[:])}
		case "ascii":
			if s0 == "" {
				return numVal(0, true)
			}
			r, _ := utf8.DecodeRuneInString(s0)
			return numVal(float64(r), true)
		}
	}
	if n == 1 {
		x, ok := num(0)
		if ok {
			switch name {
			case "abs":
				return numVal(math.Abs(x), a[0].isInt)
			case "sign":
				return numVal(float64(sign(x)), a[0].isInt)
			case "ceil", "ceiling":
				return numVal(math.Ceil(x), a[0].isInt)
			case "floor":
				return numVal(math.Floor(x), a[0].isInt)
			case "round":
				return numVal(math.Round(x), a[0].isInt)
			case "trunc":
				return numVal(math.Trunc(x), a[0].isInt)
			case "chr":
				if i, ok := integer(0); ok && i > 0 && i <= utf8.MaxRune {
					return cval{kind: cvStr, str: string(rune(i))}
				}
			}
		}
		return unknownVal
	}
	s1, ok1 := str(1)
	switch name {
	case "btrim", "ltrim", "rtrim":
		if n == 2 && ok0 && ok1 {
			f := map[string]func(string, string) string{"btrim": strings.Trim, "ltrim": strings.TrimLeft, "rtrim": strings.TrimRight}[name]
			return cval{kind: cvStr, str: f(s0, s1)}
		}
	case "strpos", "position":
		if n == 2 && ok0 && ok1 {
			i := strings.Index(s0, s1)
			if i < 0 {
				return numVal(0, true)
			}
			return numVal(float64(utf8.RuneCountInString(s0[:i])+1), true)
		}
	case "starts_with":
		if n == 2 && ok0 && ok1 {
			return boolVal(strings.HasPrefix(s0, s1))
		}
	case "replace":
		s2, ok2 := str(2)
		if n == 3 && ok0 && ok1 && ok2 {
			if s1 == "" {
				return cval{kind: cvStr, str: s0}
			}
			return cval{kind: cvStr, str: strings.ReplaceAll(s0, s1, s2)}
		}
	case "left", "right":
		k, ok := integer(1)
		if n == 2 && ok0 && ok {
			r := []rune(s0)
			if k < 0 {
				k = max(len(r)+k, 0)
			}
			k = min(k, len(r))
			if name == "left" {
				return cval{kind: cvStr, str: string(r[:k])}
			}
			return cval{kind: cvStr, str: string(r[len(r)-k:])}
		}
	case "substr", "substring":
		start, ok := integer(1)
		if !ok0 || !ok {
			return unknownVal
		}
		r := []rune(s0)
		end := len(r) + 1
		if n == 3 {
			l, ok := integer(2)
			if !ok || l < 0 {
				return unknownVal
			}
			end = start + l
		}
		lo, hi := max(start, 1), min(end, len(r)+1)
		if hi <= lo {
			return cval{kind: cvStr}
		}
		return cval{kind: cvStr, str: string(r[lo-1 : hi-1])}
	case "repeat":
		k, ok := integer(1)
		if n == 2 && ok0 && ok {
			if k <= 0 {
				return cval{kind: cvStr}
			}
			if k <= 4096 && len(s0)*k <= 4096 {
				return cval{kind: cvStr, str: strings.Repeat(s0, k)}
			}
		}
	case "mod":
		if n == 2 {
			return applyOp("%", a[0], a[1])
		}
	}
	return unknownVal
}

// comparisonFunc reads the functions behind the comparison operators of
// the built-in types (int4eq(1, 1), texteq('a', 'a'), boolne, float8lt ...).
func comparisonFunc(name string) (string, bool) {
	for _, t := range []string{"int2", "int4", "int8", "text", "bool", "name", "numeric", "float4", "float8", "bpchar", "varchar", "bit", "varbit"} {
		if rest, ok := strings.CutPrefix(name, t); ok {
			op, ok := map[string]string{"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[rest]
			return op, ok
		}
	}
	return "", false
}

// foldedFuncs are the strict functions foldFunc knows.
var foldedFuncs = map[string]struct{}{
	"lower": {}, "upper": {}, "length": {}, "char_length": {}, "character_length": {}, "octet_length": {},
	"btrim": {}, "ltrim": {}, "rtrim": {}, "reverse": {}, "md5": {}, "ascii": {}, "abs": {}, "sign": {},
	"ceil": {}, "ceiling": {}, "floor": {}, "round": {}, "trunc": {}, "chr": {}, "strpos": {}, "position": {},
	"starts_with": {}, "replace": {}, "left": {}, "right": {}, "substr": {}, "substring": {}, "repeat": {}, "mod": {},
}

func sign(x float64) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// truth is the set of values a condition can take over all rows.
type truth uint8

const (
	tTrue truth = 1 << iota
	tFalse
	tNull
	tAny = tTrue | tFalse | tNull
)

func truthOfVal(v cval) truth {
	switch v.kind {
	case cvBool:
		if v.b {
			return tTrue
		}
		return tFalse
	case cvNull:
		return tNull
	}
	return tAny
}

// truth returns what a condition can evaluate to. A comparison of an
// expression with itself (x = x, x >= x, also through casts) counts as
// true, although it is NULL where x is: that is the shape of the attack,
// and a column an application filters on is rarely NULL everywhere.
func (fo *folder) truth(n *pg_query.Node, depth int) truth {
	if n == nil || depth > maxFoldDepth {
		return tAny
	}
	if v := asBool(fo.fold(n, depth)); v.kind != cvUnknown {
		return truthOfVal(v)
	}
	d := depth + 1
	switch x := n.Node.(type) {
	case *pg_query.Node_BoolExpr:
		be := x.BoolExpr
		switch be.Boolop {
		case pg_query.BoolExprType_NOT_EXPR:
			if len(be.Args) == 1 {
				t := fo.truth(be.Args[0], d)
				out := t & tNull
				if t&tTrue != 0 {
					out |= tFalse
				}
				if t&tFalse != 0 {
					out |= tTrue
				}
				return out
			}
		case pg_query.BoolExprType_OR_EXPR:
			arms := orArms(be, nil, 0)
			if complementary(arms) {
				return tTrue
			}
			acc := tFalse
			for _, a := range arms {
				acc = combine(acc, fo.truth(a, d), false)
				if acc == tTrue {
					return acc
				}
			}
			return acc
		case pg_query.BoolExprType_AND_EXPR:
			acc := tTrue
			for _, a := range be.Args {
				acc = combine(acc, fo.truth(a, d), true)
				if acc&tTrue == 0 {
					return acc
				}
			}
			return acc
		}
	case *pg_query.Node_BooleanTest:
		t := fo.truth(x.BooleanTest.Arg, d)
		var out truth
		for _, v := range []struct {
			bit truth
			val cval
		}{{tTrue, boolVal(true)}, {tFalse, boolVal(false)}, {tNull, cval{kind: cvNull}}} {
			if t&v.bit != 0 {
				if boolTest(x.BooleanTest.Booltesttype, v.val) {
					out |= tTrue
				} else {
					out |= tFalse
				}
			}
		}
		return out
	case *pg_query.Node_TypeCast:
		if name, _ := typeName(x.TypeCast.TypeName); name == "bool" || name == "boolean" {
			return fo.truth(x.TypeCast.Arg, d)
		}
	case *pg_query.Node_AExpr:
		e := x.AExpr
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP:
			if e.Lexpr != nil && sameExpr(e.Lexpr, e.Rexpr) {
				switch opName(e.Name) {
				case "=", "<=", ">=":
					return tTrue
				case "<>", "<", ">":
					return tFalse | tNull
				}
			}
		case pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
			if sameExpr(e.Lexpr, e.Rexpr) {
				return tTrue
			}
		case pg_query.A_Expr_Kind_AEXPR_DISTINCT:
			if sameExpr(e.Lexpr, e.Rexpr) {
				return tFalse
			}
		case pg_query.A_Expr_Kind_AEXPR_IN:
			if opName(e.Name) == "=" {
				for _, it := range e.Rexpr.GetList().GetItems() {
					if sameExpr(e.Lexpr, it) {
						return tTrue
					}
				}
			}
		case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
			// x LIKE '%' holds for every x that is not NULL.
			if p := fo.fold(e.Rexpr, d); p.kind == cvStr && strings.Trim(p.str, "%") == "" && p.str != "" && !strings.HasPrefix(opName(e.Name), "!") {
				return tTrue
			}
		}
	case *pg_query.Node_CaseExpr:
		return fo.caseTruth(x.CaseExpr, d)
	case *pg_query.Node_CoalesceExpr:
		var out truth
		for _, a := range x.CoalesceExpr.Args {
			t := fo.truth(a, d)
			out |= t &^ tNull
			if t&tNull == 0 {
				return out
			}
		}
		return out | tNull
	}
	return tAny
}

// combine is the truth of a AND b (and) or a OR b, for independent a, b.
func combine(a, b truth, and bool) truth {
	var out truth
	vals := []struct {
		bit truth
		val cval
	}{{tTrue, boolVal(true)}, {tFalse, boolVal(false)}, {tNull, cval{kind: cvNull}}}
	for _, x := range vals {
		if a&x.bit == 0 {
			continue
		}
		for _, y := range vals {
			if b&y.bit == 0 {
				continue
			}
			var v cval
			if and {
				v = and3(x.val, y.val)
			} else {
				v = or3(x.val, y.val)
			}
			out |= truthOfVal(v)
		}
	}
	return out
}

func (fo *folder) caseTruth(c *pg_query.CaseExpr, d int) truth {
	var out truth
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		if cw == nil {
			return tAny
		}
		cond := tAny
		if c.Arg == nil {
			cond = fo.truth(cw.Expr, d)
		}
		if cond&tTrue != 0 {
			out |= fo.truth(cw.Result, d)
		}
		if cond == tTrue {
			return out // later branches are never reached
		}
	}
	if c.Defresult == nil {
		return out | tNull
	}
	return out | fo.truth(c.Defresult, d)
}

// orArms flattens nested ORs into their arms.
func orArms(be *pg_query.BoolExpr, out []*pg_query.Node, depth int) []*pg_query.Node {
	for _, a := range be.Args {
		if in := a.GetBoolExpr(); in != nil && in.Boolop == pg_query.BoolExprType_OR_EXPR && depth < maxFoldDepth {
			out = orArms(in, out, depth+1)
			continue
		}
		out = append(out, a)
	}
	return out
}

// complementary reports whether two arms of an OR are a test and its
// negation on the same expressions: x IS NULL / x IS NOT NULL, x IS TRUE /
// x IS NOT TRUE, IS [NOT] DISTINCT FROM (one of them holds for every row),
// and P / NOT P, x = 5 / x <> 5, x < 5 / x >= 5 (for every row where x is
// not NULL: counted as true, like x = x).
func complementary(arms []*pg_query.Node) bool {
	if len(arms) > 64 {
		arms = arms[:64] // quadratic below; generated ORs are long but not this shape
	}
	for i := range arms {
		for j := i + 1; j < len(arms); j++ {
			if complements(arms[i], arms[j]) || complements(arms[j], arms[i]) {
				return true
			}
		}
	}
	return false
}

func complements(a, b *pg_query.Node) bool {
	if ne := a.GetBoolExpr(); ne != nil && ne.Boolop == pg_query.BoolExprType_NOT_EXPR && len(ne.Args) == 1 {
		// P OR NOT P: true wherever P is not NULL (counted as true, like x = x).
		return sameExpr(ne.Args[0], b)
	}
	if x, y := a.GetAExpr(), b.GetAExpr(); x != nil && y != nil && x.Kind == pg_query.A_Expr_Kind_AEXPR_OP && y.Kind == pg_query.A_Expr_Kind_AEXPR_OP && x.Lexpr != nil && y.Lexpr != nil {
		// id = 5 OR id <> 5, id < 5 OR 5 <= id: a comparison and its negation.
		neg := map[string]string{"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
		mirror := map[string]string{"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
		ox, oy := opName(x.Name), opName(y.Name)
		if n, ok := neg[ox]; ok {
			if oy == n && sameExpr(x.Lexpr, y.Lexpr) && sameExpr(x.Rexpr, y.Rexpr) {
				return true
			}
			if mirror[oy] == n && sameExpr(x.Lexpr, y.Rexpr) && sameExpr(x.Rexpr, y.Lexpr) {
				return true
			}
		}
	}
	switch x := a.Node.(type) {
	case *pg_query.Node_NullTest:
		y := b.GetNullTest()
		return y != nil && x.NullTest.Nulltesttype != y.Nulltesttype && sameExpr(x.NullTest.Arg, y.Arg)
	case *pg_query.Node_BooleanTest:
		y := b.GetBooleanTest()
		if y == nil || !sameExpr(x.BooleanTest.Arg, y.Arg) {
			return false
		}
		p := [2]pg_query.BoolTestType{x.BooleanTest.Booltesttype, y.Booltesttype}
		for _, pair := range [][2]pg_query.BoolTestType{
			{pg_query.BoolTestType_IS_TRUE, pg_query.BoolTestType_IS_NOT_TRUE},
			{pg_query.BoolTestType_IS_FALSE, pg_query.BoolTestType_IS_NOT_FALSE},
			{pg_query.BoolTestType_IS_UNKNOWN, pg_query.BoolTestType_IS_NOT_UNKNOWN},
		} {
			if p == pair || p == [2]pg_query.BoolTestType{pair[1], pair[0]} {
				return true
			}
		}
	case *pg_query.Node_AExpr:
		y := b.GetAExpr()
		if y == nil || opName(x.AExpr.Name) != opName(y.Name) {
			return false
		}
		k := [2]pg_query.A_Expr_Kind{x.AExpr.Kind, y.Kind}
		if k == [2]pg_query.A_Expr_Kind{pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT} {
			return sameExpr(x.AExpr.Lexpr, y.Lexpr) && sameExpr(x.AExpr.Rexpr, y.Rexpr) ||
				sameExpr(x.AExpr.Lexpr, y.Rexpr) && sameExpr(x.AExpr.Rexpr, y.Lexpr)
		}
	}
	return false
}

// twoValued: tests that are never NULL.
func twoValued(n *pg_query.Node) bool {
	switch x := n.Node.(type) {
	case *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		return true
	case *pg_query.Node_AExpr:
		return x.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_DISTINCT || x.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT
	}
	return false
}

// stripCasts removes casts around an expression: x = x::int compares x
// with itself.
func stripCasts(n *pg_query.Node) *pg_query.Node {
	for i := 0; i < maxFoldDepth; i++ {
		tc := n.GetTypeCast()
		if tc == nil || tc.Arg == nil {
			break
		}
		n = tc.Arg
	}
	return n
}

// sameExpr reports whether two expressions are the same, apart from
// positions and outer casts, and deterministic: each evaluates to the same
// value for a row (random() = random() is not the same).
func sameExpr(a, b *pg_query.Node) bool {
	if a == nil || b == nil {
		return false
	}
	a, b = stripCasts(a), stripCasts(b)
	budget := 256
	return protoEqual(a.ProtoReflect(), b.ProtoReflect(), &budget)
}

var volatileFuncs = map[string]struct{}{
	"random": {}, "random_normal": {}, "nextval": {}, "setval": {}, "clock_timestamp": {}, "timeofday": {},
	"gen_random_uuid": {}, "uuid_generate_v1": {}, "uuid_generate_v1mc": {}, "uuid_generate_v4": {},
	"pg_sleep": {}, "pg_sleep_for": {}, "pg_sleep_until": {}, "txid_current": {}, "gen_random_bytes": {},
}

// protoEqual compares two parse-tree messages field by field, ignoring
// "location" fields; budget bounds the number of messages compared.
func protoEqual(x, y protoreflect.Message, budget *int) bool {
	if *budget <= 0 || x.Descriptor() != y.Descriptor() {
		return false
	}
	*budget--
	if fc, ok := x.Interface().(*pg_query.FuncCall); ok {
		if len(fc.Funcname) > 0 {
			if _, v := volatileFuncs[strings.ToLower(fc.Funcname[len(fc.Funcname)-1].GetString_().GetSval())]; v {
				return false
			}
		}
	}
	fields := x.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Name() == "location" {
			continue
		}
		if x.Has(fd) != y.Has(fd) {
			return false
		}
		if !x.Has(fd) {
			continue
		}
		vx, vy := x.Get(fd), y.Get(fd)
		switch {
		case fd.IsList():
			lx, ly := vx.List(), vy.List()
			if lx.Len() != ly.Len() {
				return false
			}
			for k := 0; k < lx.Len(); k++ {
				if fd.Message() != nil {
					if !protoEqual(lx.Get(k).Message(), ly.Get(k).Message(), budget) {
						return false
					}
				} else if lx.Get(k).Interface() != ly.Get(k).Interface() {
					return false
				}
			}
		case fd.Message() != nil:
			if !protoEqual(vx.Message(), vy.Message(), budget) {
				return false
			}
		default:
			if vx.Interface() != vy.Interface() {
				return false
			}
		}
	}
	return true
}

// containsExpr reports whether v occurs in n; with v nil, whether a column
// reference does.
func containsExpr(n, v *pg_query.Node) bool {
	var w walker
	w.stack = append(w.stack, frame{m: n})
	for steps := 0; len(w.stack) > 0 && steps < 10000; steps++ {
		m := w.stack[len(w.stack)-1].m
		w.stack = w.stack[:len(w.stack)-1]
		if c, ok := m.(*pg_query.Node); ok && v != nil && sameExpr(c, v) {
			return true
		}
		if _, ok := m.(*pg_query.ColumnRef); ok && v == nil {
			return true
		}
		w.pushChildren(m)
	}
	return false
}

// alwaysTrue reports whether a condition holds for every row, under either
// setting of transform_null_equals (which changes what `= NULL` means and
// is session state the cached facts cannot depend on).
func alwaysTrue(n *pg_query.Node, depth int) bool {
	if n == nil || depth > maxFoldDepth {
		return false
	}
	var fo folder
	if fo.truth(n, depth) == tTrue {
		return true
	}
	if fo.sawNullEq {
		fo.nullEquals = true
		return fo.truth(n, depth) == tTrue
	}
	return false
}

// orTautology reports whether a WHERE/HAVING/ON clause contains an OR with
// an always-true arm: the injected shape `... OR 1=1`. It looks through
// AND, NOT, IS [NOT] TRUE/FALSE, casts, CASE and COALESCE, so an OR
// wrapped in them counts; subqueries are judged as statements of their own.
// A clause that is true as a whole without an OR (`WHERE 1=1`, which query
// builders emit) is not one, nor is the optional-filter idiom of inlined
// parameters (optionalFilterArm).
func orTautology(n *pg_query.Node, depth int) bool {
	if n == nil || depth > maxFoldDepth {
		return false
	}
	d := depth + 1
	switch x := n.Node.(type) {
	case *pg_query.Node_BoolExpr:
		be := x.BoolExpr
		if be.Boolop == pg_query.BoolExprType_OR_EXPR {
			arms := orArms(be, nil, 0)
			if complementary(arms) {
				return true
			}
			for _, a := range arms {
				if alwaysTrue(a, d) && !optionalFilterArm(a, arms) {
					return true
				}
			}
			for _, a := range arms {
				if orTautology(a, d) {
					return true
				}
			}
			return false
		}
		for _, a := range be.Args {
			if orTautology(a, d) {
				return true
			}
		}
	case *pg_query.Node_BooleanTest:
		return orTautology(x.BooleanTest.Arg, d)
	case *pg_query.Node_TypeCast:
		return orTautology(x.TypeCast.Arg, d)
	case *pg_query.Node_CaseExpr:
		for _, w := range x.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil && (orTautology(cw.Expr, d) || orTautology(cw.Result, d)) {
				return true
			}
		}
		return orTautology(x.CaseExpr.Defresult, d)
	case *pg_query.Node_CoalesceExpr:
		for _, a := range x.CoalesceExpr.Args {
			if orTautology(a, d) {
				return true
			}
		}
	case *pg_query.Node_AExpr:
		return orTautology(x.AExpr.Lexpr, d) || orTautology(x.AExpr.Rexpr, d)
	}
	return false
}

// optionalFilterArm reports whether arm is `V IS NULL` for a constant V
// that another arm of the same OR, one that reads a column and is not
// always true itself, mentions: the
// optional filter `(col = $1 OR $1 IS NULL)` with its parameter inlined by
// a client library, `(col = NULL OR NULL IS NULL)` when the application
// passed NULL to mean "no filter". The application wrote that OR; an
// injected arm that stands alone (OR NULL IS NULL, OR 1=1) is not one.
func optionalFilterArm(arm *pg_query.Node, arms []*pg_query.Node) bool {
	nt := arm.GetNullTest()
	if nt == nil || nt.Nulltesttype != pg_query.NullTestType_IS_NULL || nt.Arg == nil {
		return false
	}
	var fo folder
	if fo.fold(nt.Arg, 0).kind == cvUnknown {
		return false
	}
	for _, b := range arms {
		if b == arm {
			continue
		}
		if containsExpr(b, nt.Arg) && containsExpr(b, nil) && !alwaysTrue(b, 0) {
			return true
		}
	}
	return false
}

// filtersTarget reports whether a WHERE (or MERGE ON) condition can tell
// the rows of the written table apart: it refers to one of its columns
// (unqualified columns count, as they may be the table's) or is WHERE
// CURRENT OF. A condition that names only other tables' columns
// (DELETE FROM t USING u WHERE u.id = 5) is the same for every row of the
// table: it removes all of them or none.
//
// Through AND, OR and NOT: an AND filters when one of its arms does, an OR
// only when each arm does, is known false or NULL, or carries a parameter
// (the application's own: WHERE id = 5 OR int4eq(1, 1) removes every row,
// WHERE (id = $1 OR $1 IS NULL) is the application's optional filter).
func filtersTarget(where *pg_query.Node, rel *pg_query.RangeVar) bool {
	return filtersDepth(where, rel, 0)
}

func filtersDepth(where *pg_query.Node, rel *pg_query.RangeVar, depth int) bool {
	if be := where.GetBoolExpr(); be != nil && depth < maxFoldDepth {
		switch be.Boolop {
		case pg_query.BoolExprType_AND_EXPR:
			for _, a := range be.Args {
				if filtersDepth(a, rel, depth+1) {
					return true
				}
			}
			return false
		case pg_query.BoolExprType_OR_EXPR:
			for _, a := range be.Args {
				var fo folder
				if v := asBool(fo.fold(a, 0)); v.kind == cvNull || (v.kind == cvBool && !v.b) {
					continue
				}
				if !filtersDepth(a, rel, depth+1) && !containsParam(a) {
					return false
				}
			}
			return true
		}
	}
	return mentionsTarget(where, rel)
}

func containsParam(n *pg_query.Node) bool {
	var w walker
	w.stack = append(w.stack, frame{m: n})
	for steps := 0; len(w.stack) > 0 && steps < 10000; steps++ {
		m := w.stack[len(w.stack)-1].m
		w.stack = w.stack[:len(w.stack)-1]
		if _, ok := m.(*pg_query.ParamRef); ok {
			return true
		}
		w.pushChildren(m)
	}
	return false
}

// mentionsTarget reports whether a condition refers to a column of rel
// (or is WHERE CURRENT OF).
func mentionsTarget(where *pg_query.Node, rel *pg_query.RangeVar) bool {
	if where == nil || rel == nil {
		return where != nil
	}
	name, alias := strings.ToLower(rel.Relname), ""
	if rel.Alias != nil {
		alias = strings.ToLower(rel.Alias.Aliasname)
	}
	var w walker
	w.stack = append(w.stack, frame{m: where})
	for steps := 0; len(w.stack) > 0; steps++ {
		if steps > 100000 {
			return true // too large to tell: assume it filters
		}
		m := w.stack[len(w.stack)-1].m
		w.stack = w.stack[:len(w.stack)-1]
		switch x := m.(type) {
		case *pg_query.CurrentOfExpr:
			return true
		case *pg_query.ColumnRef:
			f := x.Fields
			if len(f) <= 1 {
				return true
			}
			if q := strings.ToLower(f[len(f)-2].GetString_().GetSval()); q == name || (alias != "" && q == alias) {
				return true
			}
		}
		w.pushChildren(m)
	}
	return false
}

// unfilteredWhere reports whether an UPDATE or DELETE with this WHERE
// changes every row of rel: no WHERE, an always-true one, or one that does
// not refer to the table.
func unfilteredWhere(where *pg_query.Node, rel *pg_query.RangeVar) bool {
	return where == nil || alwaysTrue(where, 0) || !filtersTarget(where, rel) || selfMatch(where, rel)
}

// notNullWhere returns the columns of rel that make where true for every
// row when each of them is NOT NULL (DELETE FROM t WHERE id IS NOT NULL):
// the condition folds to true with every NULL test of a column of rel
// decided as for a NOT NULL column. The catalog decides whether they are
// (engine/catalog.go).
func notNullWhere(where *pg_query.Node, rel *pg_query.RangeVar) []string {
	if where == nil || rel == nil {
		return nil
	}
	for _, nullEq := range []bool{false, true} {
		fo := folder{target: rel, nullEquals: nullEq}
		if fo.truth(where, 0) != tTrue {
			return nil
		}
		if !fo.sawNullEq {
			break
		}
	}
	fo := folder{target: rel}
	fo.truth(where, 0)
	return fo.notNull
}

// targetColumn returns the column of fo.target a plain column reference
// names (unqualified, or qualified by the relation's name or alias).
func (fo *folder) targetColumn(n *pg_query.Node) (string, bool) {
	rel := fo.target
	cr := n.GetColumnRef()
	if rel == nil || cr == nil {
		return "", false
	}
	var parts []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return "", false
		}
		parts = append(parts, strings.ToLower(s.Sval))
	}
	switch len(parts) {
	case 1:
		return parts[0], true
	case 2:
		q := parts[0]
		if rel.Alias != nil {
			if q == strings.ToLower(rel.Alias.Aliasname) {
				return parts[1], true
			}
			return "", false
		}
		if q == strings.ToLower(rel.Relname) {
			return parts[1], true
		}
	}
	return "", false
}

// selfMatch reports whether a condition matches every row of rel by
// looking rel up in itself: id IN (SELECT id FROM rel), id = ANY(SELECT id
// FROM rel), EXISTS (SELECT 1 FROM rel r2 WHERE r2.id = rel.id), each
// without further conditions (NULLs aside, as for x = x).
func selfMatch(where *pg_query.Node, rel *pg_query.RangeVar) bool {
	sl := where.GetSubLink()
	if sl == nil || rel == nil {
		return false
	}
	sub := sl.Subselect.GetSelectStmt()
	if sub == nil || sub.Op != pg_query.SetOperation_SETOP_NONE || len(sub.FromClause) != 1 || sub.LimitCount != nil ||
		sub.LimitOffset != nil || len(sub.GroupClause) > 0 || sub.HavingClause != nil || sub.WithClause != nil {
		return false
	}
	rv := sub.FromClause[0].GetRangeVar()
	if rv == nil || !strings.EqualFold(rv.Relname, rel.Relname) || (rv.Schemaname != "" && rel.Schemaname != "" && !strings.EqualFold(rv.Schemaname, rel.Schemaname)) {
		return false
	}
	inner := []string{strings.ToLower(rv.Relname)}
	if rv.Alias != nil {
		inner = []string{strings.ToLower(rv.Alias.Aliasname)}
	}
	outer := []string{strings.ToLower(rel.Relname)}
	if rel.Alias != nil {
		outer = []string{strings.ToLower(rel.Alias.Aliasname)}
	}
	switch sl.SubLinkType {
	case pg_query.SubLinkType_ANY_SUBLINK:
		if len(sl.OperName) > 0 && opName(sl.OperName) != "=" || len(sub.TargetList) != 1 ||
			(sub.WhereClause != nil && !alwaysTrue(sub.WhereClause, 0)) {
			return false
		}
		a, b := colName(sl.Testexpr), colName(sub.TargetList[0].GetResTarget().GetVal())
		return a != "" && a == b
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		e := sub.WhereClause.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || opName(e.Name) != "=" || inner[0] == outer[0] {
			return false
		}
		l, r := e.Lexpr.GetColumnRef(), e.Rexpr.GetColumnRef()
		if l == nil || r == nil || colName(e.Lexpr) != colName(e.Rexpr) || colName(e.Lexpr) == "" {
			return false
		}
		lq, rq := colQual(l), colQual(r)
		return (slicesContain(inner, lq) && slicesContain(outer, rq)) || (slicesContain(inner, rq) && slicesContain(outer, lq))
	}
	return false
}

func colName(n *pg_query.Node) string {
	c := stripCasts(n).GetColumnRef()
	if c == nil || len(c.Fields) == 0 {
		return ""
	}
	return strings.ToLower(c.Fields[len(c.Fields)-1].GetString_().GetSval())
}

func colQual(c *pg_query.ColumnRef) string {
	if len(c.Fields) < 2 {
		return ""
	}
	return strings.ToLower(c.Fields[len(c.Fields)-2].GetString_().GetSval())
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mergeUnfiltered returns the kinds (update, delete) a MERGE applies to
// every row of its target: its ON condition does not tell the target's
// rows apart (ON true, ON s.x = 1) and a WHEN MATCHED action without a
// filtering condition updates or deletes.
func mergeUnfiltered(m *pg_query.MergeStmt) engine.KindSet {
	if !unfilteredWhere(m.JoinCondition, m.Relation) {
		return 0
	}
	var out engine.KindSet
	for _, c := range m.MergeWhenClauses {
		wc := c.GetMergeWhenClause()
		if wc == nil || !wc.Matched {
			continue
		}
		if wc.Condition != nil && !unfilteredWhere(wc.Condition, m.Relation) {
			continue
		}
		switch wc.CommandType {
		case pg_query.CmdType_CMD_UPDATE:
			out |= 1 << engine.KindUpdate
		case pg_query.CmdType_CMD_DELETE:
			out |= 1 << engine.KindDelete
		}
	}
	return out
}
