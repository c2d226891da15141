package pgsql

import (
	"math"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// Measures of the parse tree for the `limits` keys that are not lexical:
// boolean terms (how machine-generated a condition is), the rows a
// generator produces and the bytes a string function builds from
// constants. Example:
//
//	SELECT count(*) FROM generate_series(1, 1e12)
//
// produces 10^12 rows (series_rows); a recursive CTE whose recursive arm
// reads only itself, without WHERE or LIMIT, produces rows without end
// (unboundedRows).

// measureNode adds what node m contributes to the statement's measures.
// (Lists and nesting of code in strings: walker.measure in body.go.)
func (w *walker) measureNode(m any) {
	f := w.f
	switch n := m.(type) {
	case *pg_query.BoolExpr:
		if n.Boolop != pg_query.BoolExprType_NOT_EXPR {
			f.BoolTerms += int32(len(n.Args))
		}
	case *pg_query.CaseExpr:
		f.BoolTerms += int32(len(n.Args))
	case *pg_query.FuncCall:
		name := funcName(n.Funcname)
		switch name {
		case "generate_series":
			f.SeriesRows = max(f.SeriesRows, seriesRows(n))
		case "repeat", "lpad", "rpad":
			f.StringBytes = max(f.StringBytes, builtBytes(name, n))
		}
	case *pg_query.SelectStmt:
		if n.WithClause != nil && n.WithClause.Recursive && unboundedRecursion(n.WithClause, limitBounds(n)) {
			f.SeriesRows = engine.UnboundedRows
		}
		// A FROM list of generators is their cross product.
		if len(n.FromClause) > 1 {
			prod, all := int64(1), true
			for _, it := range n.FromClause {
				r := fromSeries(it)
				if r <= 0 {
					all = false
					break
				}
				prod = mulSat(prod, r)
			}
			if all {
				f.SeriesRows = max(f.SeriesRows, prod)
			}
		}
	case *pg_query.InsertStmt:
		w.recursiveWith(n.WithClause)
	case *pg_query.UpdateStmt:
		w.recursiveWith(n.WithClause)
	case *pg_query.DeleteStmt:
		w.recursiveWith(n.WithClause)
	case *pg_query.MergeStmt:
		w.recursiveWith(n.WithClause)
	}
}

func (w *walker) recursiveWith(wc *pg_query.WithClause) {
	if wc != nil && wc.Recursive && unboundedRecursion(wc, false) {
		w.f.SeriesRows = engine.UnboundedRows
	}
}

func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// constNumber folds n to a number, if it is constant.
func constNumber(n *pg_query.Node) (float64, bool) {
	var fo folder
	v := fo.fold(n, 0)
	if v.kind == cvStr {
		v = coerce(v, cvNum)
	}
	return v.num, v.kind == cvNum
}

// toRows converts a folded count to int64, saturating.
func toRows(x float64) int64 {
	switch {
	case x <= 0:
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(x)
}

// seriesRows is the number of rows generate_series(start, stop[, step])
// returns with constant numeric bounds; 0 when not constant (timestamps
// included).
func seriesRows(fc *pg_query.FuncCall) int64 {
	if len(fc.Args) < 2 || len(fc.Args) > 3 {
		return 0
	}
	start, ok1 := constNumber(fc.Args[0])
	stop, ok2 := constNumber(fc.Args[1])
	step := 1.0
	ok3 := true
	if len(fc.Args) == 3 {
		step, ok3 = constNumber(fc.Args[2])
	}
	if !ok1 || !ok2 || !ok3 || step == 0 {
		return 0
	}
	return toRows(math.Floor((stop-start)/step) + 1)
}

// fromSeries is the row count of a FROM item that is a generate_series
// call with constant bounds, else 0.
func fromSeries(n *pg_query.Node) int64 {
	rf := n.GetRangeFunction()
	if rf == nil || len(rf.Functions) != 1 {
		return 0
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 {
		return 0
	}
	fc := items[0].GetFuncCall()
	if fc == nil || funcName(fc.Funcname) != "generate_series" {
		return 0
	}
	return seriesRows(fc)
}

// builtBytes is the length repeat(s, n), lpad(s, n[, fill]) or rpad build
// with a constant count (at least a byte per character).
func builtBytes(name string, fc *pg_query.FuncCall) int64 {
	if len(fc.Args) < 2 {
		return 0
	}
	n, ok := constNumber(fc.Args[1])
	if !ok {
		return 0
	}
	if name != "repeat" {
		return toRows(n)
	}
	unit := 1.0
	var fo folder
	if s := fo.fold(fc.Args[0], 0); s.kind == cvStr && len(s.str) > 1 {
		unit = float64(len(s.str))
	}
	return toRows(n * unit)
}

// limitBounds reports whether a SELECT's LIMIT stops the evaluation of
// the CTEs it reads: a constant LIMIT on rows that need no sorting,
// grouping or aggregating of the whole input.
func limitBounds(s *pg_query.SelectStmt) bool {
	if s.LimitCount == nil || len(s.SortClause) > 0 || len(s.GroupClause) > 0 ||
		len(s.DistinctClause) > 0 || s.HavingClause != nil || len(s.WindowClause) > 0 {
		return false
	}
	if _, ok := constNumber(s.LimitCount); !ok {
		return false
	}
	for _, t := range s.TargetList {
		if containsFunc(t) {
			return false // an aggregate reads everything
		}
	}
	return true
}

func containsFunc(n *pg_query.Node) bool {
	var w walker
	w.stack = append(w.stack, frame{m: n})
	for steps := 0; len(w.stack) > 0 && steps < 10000; steps++ {
		m := w.stack[len(w.stack)-1].m
		w.stack = w.stack[:len(w.stack)-1]
		if _, ok := m.(*pg_query.FuncCall); ok {
			return true
		}
		w.pushChildren(m)
	}
	return false
}

// unboundedRecursion reports whether a WITH RECURSIVE has a CTE whose
// recursive arm reads only the CTE itself, with no WHERE that can stop it
// (missing or always true) and no LIMIT, while the statement's LIMIT does
// not stop it either: WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1
// FROM r) SELECT count(*) FROM r runs until the server's limits stop it.
// A join with another table, or any other condition, counts as a bound:
// walking a hierarchy ends with the data.
func unboundedRecursion(wc *pg_query.WithClause, limited bool) bool {
	if limited {
		return false
	}
	for _, c := range wc.Ctes {
		cte := c.GetCommonTableExpr()
		if cte == nil {
			continue
		}
		q := cte.Ctequery.GetSelectStmt()
		if q == nil || q.Op != pg_query.SetOperation_SETOP_UNION || q.Rarg == nil {
			continue
		}
		rec := q.Rarg
		if rec.Op != pg_query.SetOperation_SETOP_NONE || len(rec.FromClause) != 1 || rec.LimitCount != nil ||
			len(rec.GroupClause) > 0 || rec.HavingClause != nil {
			continue
		}
		rv := rec.FromClause[0].GetRangeVar()
		if rv == nil || rv.Schemaname != "" || !strings.EqualFold(rv.Relname, cte.Ctename) {
			continue
		}
		if rec.WhereClause == nil || alwaysTrue(rec.WhereClause, 0) {
			return true
		}
	}
	return false
}
