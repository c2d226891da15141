package pgsql

// A condition's truth over all rows (truth), the always-true conditions
// and OR tautologies built on it; the folding of constants is fold.go's,
// conditions that compare an expression with itself tautself.go's, and
// whether a WHERE tells the written table's rows apart filters.go's.

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"
)

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
