package mysql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// NULL tests of a column, decided by cases. x IS NULL, ISNULL(x) and
// x <=> NULL (NULL <=> x) are 1 where x is NULL and 0 elsewhere, never
// NULL: for each row they are one of two constants. A condition whose
// truth, with every NULL test of a column x folded as 1 and again as 0, is
// true both times is true for every row:
//
//	ISNULL(x) = 0 OR x IS NULL, ISNULL(x) IN (0, 1), ISNULL(x) >= 0,
//	NOT (x <=> NULL) OR ISNULL(x), ISNULL(x) XOR x IS NOT NULL
//
// all hold whatever x is. Where the catalog says x is NOT NULL (the one
// table a single-table UPDATE or DELETE writes: catalog.go notNullWhere),
// only the case "not NULL" is: ISNULL(id) = 0, NOT ISNULL(id), id <=> NULL
// IS FALSE, NOT (id <=> NULL) are true for every row then.
//
// Only columns outside subqueries are split (a subquery with FROM has
// columns of its own of the same names), together or one by one
// (nullCases); a column under another name (t.x and x)
// is another column to the split, which can only leave a condition
// undecided.

// maxNullCases bounds the columns a condition is split on together (2^n
// foldings), maxNullColumns those split on one by one.
const (
	maxNullCases   = 3
	maxNullColumns = 64
)

// nullCase is a column's NULL tests folded as isNull.
type nullCase struct {
	col    *ast.ColumnName
	isNull bool
}

// nullTest returns the value of a NULL test of e: 1 (isNull) or 0, when e
// is a column the folding decides, by the catalog (fo.target: NOT NULL) or
// by the case being folded (fo.nulls).
func (fo *folder) nullTest(e ast.ExprNode) (isNull, ok bool) {
	c, ok := unparen(e).(*ast.ColumnNameExpr)
	if !ok || c.Name == nil {
		return false, false
	}
	if fo.target.column(c.Name) {
		return false, true
	}
	for _, n := range fo.nulls {
		if sameColumn(n.col, c.Name) {
			return n.isNull, true
		}
	}
	return false, false
}

func sameColumn(a, b *ast.ColumnName) bool {
	return a.Name.L == b.Name.L && a.Table.L == b.Table.L && a.Schema.L == b.Schema.L
}

// nullEQTest returns the value of l <=> r when one side is NULL and the
// other a column nullTest decides.
func (fo *folder) nullEQTest(l, r ast.ExprNode, d int) (folded, bool) {
	for _, s := range [2][2]ast.ExprNode{{l, r}, {r, l}} {
		if v, ok := fo.fold(s[1], d); ok && v.null {
			if n, ok := fo.nullTest(s[0]); ok {
				return boolF(n), true
			}
		}
	}
	return folded{}, false
}

// nullCases reports whether e is true in every case of the NULL tests of
// the columns it tests: of all of them together when they are at most
// maxNullCases, else of each one on its own (the others undecided), for up
// to maxNullColumns of them.
func (fo *folder) nullCases(e ast.ExprNode) bool {
	if fo.nulls != nil || e == nil {
		return false // already inside a case
	}
	c := nullCollector{}
	e.Accept(&c)
	if len(c.cols) == 0 {
		return false
	}
	defer func() { fo.nulls = nil }()
	if len(c.cols) <= maxNullCases {
		return fo.allCases(e, c.cols)
	}
	for _, col := range c.cols {
		if fo.allCases(e, []*ast.ColumnName{col}) {
			return true
		}
	}
	return false
}

// allCases reports whether e is true with the NULL tests of cols folded
// in each of their 2^len(cols) cases.
func (fo *folder) allCases(e ast.ExprNode, cols []*ast.ColumnName) bool {
	cases := make([]nullCase, len(cols))
	for i, col := range cols {
		cases[i].col = col
	}
	for m := 0; m < 1<<len(cases); m++ {
		for i := range cases {
			cases[i].isNull = m&(1<<i) != 0
		}
		fo.nulls = cases
		if fo.truthOf(e, 0) != tTrue {
			return false
		}
	}
	return true
}

// nullCollector finds the columns a condition NULL-tests, outside
// subqueries.
type nullCollector struct {
	cols []*ast.ColumnName
}

func (v *nullCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	case *ast.IsNullExpr:
		v.add(x.Expr)
	case *ast.FuncCallExpr:
		if e, ok := isNullCall(x); ok {
			v.add(e)
		}
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.NullEQ {
			v.add(x.L)
			v.add(x.R)
		}
	}
	return n, false
}

func (v *nullCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func (v *nullCollector) add(e ast.ExprNode) {
	c, ok := unparen(e).(*ast.ColumnNameExpr)
	if !ok || c.Name == nil {
		return
	}
	for _, have := range v.cols {
		if sameColumn(have, c.Name) {
			return
		}
	}
	if len(v.cols) == maxNullColumns {
		return
	}
	v.cols = append(v.cols, c.Name)
}
