package pgsql

// Conditions whose truth does not depend on the row though they are not
// constant: an expression compared with itself (x = x), a value tested
// against its complement (x IS NULL OR x IS NOT NULL), a table looked up
// in itself (selfMatch).

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/reflect/protoreflect"
)

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
