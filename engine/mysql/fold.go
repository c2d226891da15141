package mysql

import (
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// folder folds the conditions of one statement. MariaDB reads X'61' as a
// binary string (X'01' is false, X'31' = 1 is true) and 0x61 and b'1' as
// numbers next to numbers; MySQL reads all three as numbers there. The
// parser makes them one literal, so xhex holds the bytes the statement's
// text writes as X'...' (hexForms), and a condition is folded twice when
// it has any: with xStr set (MariaDB's reading) and without (MySQL's); it
// is true when either reading makes it so.
type folder struct {
	xhex map[string]bool
	xStr bool
	with map[string]ast.ResultSetNode // the WITH queries of the write being judged (writes.go)
	// target, when set, is the written table whose columns a NULL test
	// takes as NOT NULL (catalog.go notNullWhere).
	target *notNullTarget
	// nulls, when set, are the cases of columns' NULL tests being folded
	// (tautnull.go nullCases).
	nulls []nullCase
	// one, when set, is the one table of a single-table UPDATE or DELETE:
	// in its own condition (not a subquery's, which gets a folder of its
	// own) id, t.id and app.t.id (x.id for t AS x) are one column
	// (sameExpr).
	one *oneTable
}

// oneTable names the table of a single-table write.
type oneTable struct {
	name, alias string
	// inner, when set, is a correlated subquery's alias for the same
	// table, whose row is compared as the outer row (writes.go selfRow)
	inner string
}

// names reports whether a column's qualifier names the table, or is none.
func (o *oneTable) names(c *ast.ColumnName) bool {
	switch {
	case o.inner != "" && c.Table.L == o.inner && c.Schema.L == "":
		return true // the subquery's own name for the table, its row taken as the outer one (writes.go selfRow)
	case c.Table.L == "":
		return c.Schema.L == ""
	case o.alias != "":
		return c.Table.L == o.alias && c.Schema.L == ""
	}
	// a schema other than the table's is an unknown column, an error
	return c.Table.L == o.name
}

// singleTable returns the oneTable of a FROM of one named table, else nil.
func singleTable(refs *ast.Join) *oneTable {
	if refs == nil || refs.Right != nil {
		return nil
	}
	ts, ok := refs.Left.(*ast.TableSource)
	if !ok {
		return nil
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil
	}
	return &oneTable{name: tn.Name.L, alias: ts.AsName.L}
}

// readings returns how many foldings a statement whose X'...' literals
// are xhex needs: one, or MariaDB's and MySQL's; reading(xhex, i) is the
// i-th.
func readings(xhex map[string]bool) int {
	if len(xhex) == 0 {
		return 1
	}
	return 2
}

func reading(xhex map[string]bool, i int) folder { return folder{xhex: xhex, xStr: i == 1} }

// hexForms returns the bytes of the X'...' literals of text, nil when it
// has none.
func hexForms(text string) map[string]bool {
	if !strings.Contains(text, "'") || !(strings.Contains(text, "x'") || strings.Contains(text, "X'")) {
		return nil
	}
	var out map[string]bool
	prev := token{kind: 0}
	for i := 0; ; {
		t, ok := nextToken(text, i)
		if !ok {
			break
		}
		if t.kind == tokString && text[t.lo] == '\'' && prev.kind == tokWord && prev.hi == t.lo && prev.hi-prev.lo == 1 &&
			(text[prev.lo] == 'x' || text[prev.lo] == 'X') {
			digits := text[t.lo+1 : max(t.lo+1, t.hi-1)]
			b := make([]byte, 0, len(digits)/2)
			for k := 0; k+1 < len(digits); k += 2 {
				n, err := strconv.ParseUint(digits[k:k+2], 16, 8)
				if err != nil {
					break
				}
				b = append(b, byte(n))
			}
			if out == nil {
				out = map[string]bool{}
			}
			out[string(b)] = true
		}
		prev = t
		i = t.hi
	}
	return out
}

// folded is a constant: a number, a string, a date, or NULL.
type folded struct {
	null    bool
	isStr   bool
	hex     bool // a hex or bit literal: a binary string, or its number next to a number
	bin     bool // compares by bytes (_binary, BINARY, a _bin collation, a hex literal)
	date    bool // str is a canonical DATETIME ("2020-01-01 00:00:00") or TIME; num its number
	isTime  bool // a TIME (str "10:00:00")
	inexact bool // a number beyond ±2^53, whose equality is not decided
	num     float64
	str     string
}

var nullF = folded{null: true}

func numF(f float64) (folded, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return folded{}, false
	}
	return folded{num: f, inexact: math.Abs(f) > 1<<53}, true
}

func strF(s string) folded { return folded{isStr: true, str: s} }

func boolF(b bool) folded {
	if b {
		return folded{num: 1}
	}
	return folded{}
}

// truthy is the value in a boolean context, for a value that is not NULL.
func truthy(v folded) bool { return num(v) != 0 }

const maxFoldDepth = 64

// fold evaluates e when it is constant.
func (fo *folder) fold(e ast.ExprNode, depth int) (folded, bool) {
	if e == nil || depth > maxFoldDepth {
		return folded{}, false
	}
	d := depth + 1
	switch x := e.(type) {
	case *test_driver.ParamMarkerExpr:
		return folded{}, false // bound at execute time
	case *test_driver.ValueExpr:
		v, ok := fo.valueFolded(x)
		if ok && v.isStr && !v.hex && x.GetType() != nil && x.GetType().GetCharset() == "binary" {
			v.bin = true // _binary'a'
		}
		if cs := ""; ok && v.hex && x.GetType() != nil {
			// _latin1 0x41 is the string 'A' in latin1, compared by its
			// collation ('a' = _latin1 0x41 is true), not a binary string
			if cs = x.GetType().GetCharset(); cs != "" && cs != "binary" {
				v.hex, v.bin, v.isStr = false, false, true
			}
		}
		return v, ok
	case ast.ValueExpr:
		return fo.valueFolded(x)
	case *ast.ParenthesesExpr:
		return fo.fold(x.Expr, d)
	case *ast.SetCollationExpr:
		v, ok := fo.fold(x.Expr, d)
		c := strings.ToLower(x.Collate)
		if strings.HasSuffix(c, "_bin") || strings.HasSuffix(c, "_cs") || c == "binary" {
			v.bin = true
		}
		return v, ok
	case *ast.UnaryOperationExpr:
		v, ok := fo.fold(x.V, d)
		if !ok || v.null {
			return v, ok
		}
		switch x.Op {
		case opcode.Not, opcode.Not2:
			return boolF(!truthy(v)), true
		case opcode.Minus:
			return numF(-num(v))
		case opcode.Plus:
			return v, true
		case opcode.BitNeg:
			return numF(float64(^toUint(v)))
		}
		return folded{}, false
	case *ast.IsTruthExpr:
		v, ok := fo.fold(x.Expr, d)
		if !ok {
			return folded{}, false
		}
		t := !v.null && truthy(v) == (x.True != 0)
		return boolF(t != x.Not), true
	case *ast.IsNullExpr:
		if n, ok := fo.nullTest(x.Expr); ok {
			return boolF(n != x.Not), true
		}
		v, ok := fo.fold(x.Expr, d)
		if !ok {
			return folded{}, false
		}
		return boolF(v.null != x.Not), true
	case *ast.BinaryOperationExpr:
		return fo.foldBinary(x, d)
	case *ast.PatternLikeOrIlikeExpr:
		l, ok1 := fo.fold(x.Expr, d)
		p, ok2 := fo.fold(x.Pattern, d)
		if !ok1 || !ok2 {
			return folded{}, false
		}
		if l.null || p.null {
			return nullF, true
		}
		if !x.IsLike {
			return folded{}, false // ILIKE is not MySQL's
		}
		esc := rune(x.Escape)
		if esc == 0 {
			esc = '\\'
		}
		m, ok := likeMatch(text(l), text(p), esc, !(l.bin || p.bin))
		if !ok {
			return folded{}, false
		}
		return boolF(m != x.Not), true
	case *ast.PatternRegexpExpr:
		l, ok1 := fo.fold(x.Expr, d)
		p, ok2 := fo.fold(x.Pattern, d)
		if !ok1 || !ok2 {
			return folded{}, false
		}
		if l.null || p.null {
			return nullF, true
		}
		if matchesEverything(text(p)) {
			return boolF(!x.Not), true
		}
		if m, ok := regexpMatch(text(l), text(p), !(l.bin || p.bin)); ok {
			return boolF(m != x.Not), true
		}
		return folded{}, false
	case *ast.BetweenExpr:
		v, ok1 := fo.fold(x.Expr, d)
		lo, ok2 := fo.fold(x.Left, d)
		hi, ok3 := fo.fold(x.Right, d)
		if !ok1 || !ok2 || !ok3 {
			return folded{}, false
		}
		if v.null || lo.null || hi.null {
			return nullF, true
		}
		c1, ok1 := compare(v, lo)
		c2, ok2 := compare(v, hi)
		if !ok1 || !ok2 {
			return folded{}, false
		}
		in := c1 >= 0 && c2 <= 0
		return boolF(in != x.Not), true
	case *ast.PatternInExpr:
		return fo.foldIn(x, d)
	case *ast.CaseExpr:
		return fo.foldCase(x, d)
	case *ast.FuncCallExpr:
		return fo.foldFunc(x, d)
	case *ast.FuncCastExpr:
		return fo.foldCast(x, d)
	case *ast.ColumnNameExpr:
		// In the case of its NULL tests where a column is NULL, the column
		// is NULL (tautnull.go): IFNULL(a, 1) is 1 there.
		for _, n := range fo.nulls {
			if n.isNull && x.Name != nil && sameColumn(n.col, x.Name) {
				return nullF, true
			}
		}
		return folded{}, false
	case *ast.ValuesExpr:
		// VALUE(c) / VALUES(c) is the row an INSERT ... ON DUPLICATE KEY
		// UPDATE would have inserted; in a condition it is NULL (MariaDB
		// 10.11: DELETE FROM t WHERE VALUE(id) IS NULL deletes every row).
		return nullF, true
	case *ast.VariableExpr:
		if x.Value != nil && !x.IsSystem {
			return fo.fold(x.Value, d) // @a := 1 is 1
		}
		return folded{}, false // a variable's value is not in the text
	case *ast.SubqueryExpr:
		if sel := constSelect(x.Query); sel != nil && len(sel.Fields.Fields) == 1 {
			return fo.fold(sel.Fields.Fields[0].Expr, d)
		}
		if fo.noRows(x.Query) {
			return nullF, true // (SELECT id FROM u WHERE 0) is NULL
		}
		if sel, ok := x.Query.(*ast.SelectStmt); ok && sel.GroupBy == nil && sel.Having == nil && sel.Fields != nil && len(sel.Fields.Fields) == 1 {
			// (SELECT MAX(id) FROM u WHERE 0): one row, NULL (COUNT's is 0)
			if a, ok := sel.Fields.Fields[0].Expr.(*ast.AggregateFuncExpr); ok && nullOnNoRows[strings.ToLower(a.F)] {
				cp := *sel
				cp.Fields = &ast.FieldList{Fields: []*ast.SelectField{{Expr: ast.NewValueExpr(1, "", "")}}}
				if fo.noRows(&cp) {
					return nullF, true
				}
			}
		}
	case *ast.ExistsSubqueryExpr:
		if sq, ok := x.Sel.(*ast.SubqueryExpr); ok {
			if sel := constSelect(sq.Query); sel != nil {
				return boolF(!x.Not), true // a SELECT without FROM has one row
			}
			if fo.noRows(sq.Query) {
				return boolF(x.Not), true
			}
		}
	case *ast.CompareSubqueryExpr:
		sq, ok := x.R.(*ast.SubqueryExpr)
		if !ok {
			return folded{}, false
		}
		if fo.noRows(sq.Query) {
			return boolF(x.All), true // x > ALL (no row) is true, x = ANY (no row) false, x NULL too
		}
		sel := constSelect(sq.Query)
		if sel == nil || len(sel.Fields.Fields) != 1 {
			return folded{}, false
		}
		// One row: x op ANY/ALL (SELECT v) is x op v.
		return fo.foldBinary(&ast.BinaryOperationExpr{Op: x.Op, L: x.L, R: sel.Fields.Fields[0].Expr}, d)
	}
	return folded{}, false
}

// noRows reports whether a subquery returns no row: a SELECT whose WHERE
// is never true or whose LIMIT is 0, without an aggregate that makes one
// row of none (SELECT COUNT(*) FROM u WHERE 0 is 0) unless it groups.
func (fo *folder) noRows(q ast.ResultSetNode) bool {
	sel, ok := q.(*ast.SelectStmt)
	if !ok || sel.Fields == nil {
		return false
	}
	inner := folder{xhex: fo.xhex, xStr: fo.xStr}
	empty := sel.Where != nil && inner.truthOf(sel.Where, 0)&tTrue == 0
	if sel.Limit != nil && sel.Limit.Count != nil {
		if n, ok := inner.fold(sel.Limit.Count, 0); ok && !n.null && !n.isStr && n.num == 0 {
			empty = true
		}
	}
	if !empty {
		return false
	}
	if sel.GroupBy != nil {
		return true
	}
	agg := &aggFinder{}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(agg)
		}
	}
	if sel.Having != nil && sel.Having.Expr != nil {
		sel.Having.Expr.Accept(agg)
	}
	return !agg.found
}

// nullOnNoRows are the aggregates that are NULL over no row (COUNT is 0,
// BIT_AND all ones, BIT_OR and BIT_XOR 0).
var nullOnNoRows = map[string]bool{"max": true, "min": true, "sum": true, "avg": true, "group_concat": true}

// aggFinder finds an aggregate outside subqueries.
type aggFinder struct{ found bool }

func (v *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.AggregateFuncExpr:
		v.found = true
		return n, true
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, v.found
}

func (v *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// constSelect returns a subquery's SELECT when it has no FROM (or FROM
// DUAL) and nothing that could make it return no row or more than one.
func constSelect(q ast.ResultSetNode) *ast.SelectStmt {
	sel, ok := q.(*ast.SelectStmt)
	if !ok || sel.From != nil || sel.Where != nil || sel.Having != nil || sel.Limit != nil || sel.GroupBy != nil ||
		sel.Fields == nil || sel.With != nil || sel.SelectIntoOpt != nil {
		return nil
	}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil || f.Expr == nil {
			return nil
		}
	}
	return sel
}

func (fo *folder) foldBinary(x *ast.BinaryOperationExpr, d int) (folded, bool) {
	switch x.Op {
	case opcode.LogicOr, opcode.LogicAnd, opcode.LogicXor:
		l, okl := fo.fold(x.L, d)
		r, okr := fo.fold(x.R, d)
		return logic3(x.Op, l, okl, r, okr)
	}
	if lr, ok := x.L.(*ast.RowExpr); ok {
		return fo.foldRows(x.Op, lr, x.R, d)
	}
	if x.Op == opcode.NullEQ {
		if v, ok := fo.nullEQTest(x.L, x.R, d); ok {
			return v, true // x <=> NULL (tautnull.go)
		}
	}
	l, ok := fo.fold(x.L, d)
	if !ok {
		return folded{}, false
	}
	r, ok := fo.fold(x.R, d)
	if !ok {
		return folded{}, false
	}
	return applyOp(x.Op, l, r)
}

// logic3 is AND, OR or XOR of two values, either of which may be unknown.
func logic3(op opcode.Op, l folded, okl bool, r folded, okr bool) (folded, bool) {
	known := func(v folded, ok bool) (t, isNull, k bool) { return ok && !v.null && truthy(v), ok && v.null, ok }
	lt, ln, lk := known(l, okl)
	rt, rn, rk := known(r, okr)
	switch op {
	case opcode.LogicOr:
		if (lk && lt) || (rk && rt) {
			return boolF(true), true
		}
		if !lk || !rk {
			return folded{}, false
		}
		if ln || rn {
			return nullF, true
		}
		return boolF(false), true
	case opcode.LogicAnd:
		if (lk && !lt && !ln) || (rk && !rt && !rn) {
			return boolF(false), true
		}
		if !lk || !rk {
			return folded{}, false
		}
		if ln || rn {
			return nullF, true
		}
		return boolF(true), true
	default:
		if !lk || !rk {
			return folded{}, false
		}
		if ln || rn {
			return nullF, true
		}
		return boolF(lt != rt), true
	}
}

// foldRows compares row constructors element by element.
func (fo *folder) foldRows(op opcode.Op, l *ast.RowExpr, re ast.ExprNode, d int) (folded, bool) {
	r, ok := re.(*ast.RowExpr)
	if !ok || len(r.Values) != len(l.Values) {
		return folded{}, false
	}
	switch op {
	case opcode.EQ, opcode.NullEQ, opcode.NE:
	default:
		return folded{}, false
	}
	acc, accOK := boolF(true), true
	for i := range l.Values {
		v, ok := fo.foldBinary(&ast.BinaryOperationExpr{Op: map[bool]opcode.Op{true: opcode.NullEQ, false: opcode.EQ}[op == opcode.NullEQ], L: l.Values[i], R: r.Values[i]}, d)
		acc, accOK = logic3(opcode.LogicAnd, acc, accOK, v, ok)
	}
	if !accOK {
		return folded{}, false
	}
	if op == opcode.NE {
		if acc.null {
			return nullF, true
		}
		return boolF(!truthy(acc)), true
	}
	return acc, true
}

// applyOp applies a comparison, arithmetic or bit operator to two constants.
func applyOp(op opcode.Op, l, r folded) (folded, bool) {
	if op == opcode.NullEQ {
		if l.null || r.null {
			return boolF(l.null && r.null), true
		}
		c, ok := compare(l, r)
		return boolF(c == 0), ok
	}
	if l.null || r.null {
		switch op {
		case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.Plus, opcode.Minus, opcode.Mul,
			opcode.Div, opcode.IntDiv, opcode.Mod, opcode.And, opcode.Or, opcode.Xor, opcode.LeftShift, opcode.RightShift:
			return nullF, true
		}
		return folded{}, false
	}
	switch op {
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
		c, ok := compare(l, r)
		if !ok {
			return folded{}, false
		}
		switch op {
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
	case opcode.Plus:
		return numF(num(l) + num(r))
	case opcode.Minus:
		return numF(num(l) - num(r))
	case opcode.Mul:
		return numF(num(l) * num(r))
	case opcode.Div:
		if num(r) == 0 {
			return nullF, true // MariaDB: NULL and a warning (an error in strict writes, which then change nothing)
		}
		return numF(num(l) / num(r))
	case opcode.IntDiv:
		if num(r) == 0 {
			return nullF, true
		}
		return numF(math.Trunc(num(l) / num(r)))
	case opcode.Mod:
		if num(r) == 0 {
			return nullF, true
		}
		return numF(math.Mod(num(l), num(r)))
	case opcode.And:
		return numF(float64(toUint(l) & toUint(r)))
	case opcode.Or:
		return numF(float64(toUint(l) | toUint(r)))
	case opcode.Xor:
		return numF(float64(toUint(l) ^ toUint(r)))
	case opcode.LeftShift:
		n := toUint(r)
		if n >= 64 {
			return numF(0)
		}
		return numF(float64(toUint(l) << n))
	case opcode.RightShift:
		n := toUint(r)
		if n >= 64 {
			return numF(0)
		}
		return numF(float64(toUint(l) >> n))
	}
	return folded{}, false
}

// toUint is a value as the bit operators take it: a 64-bit unsigned
// integer, negative numbers in two's complement, fractions rounded.
func toUint(v folded) uint64 {
	f := math.Round(num(v))
	switch {
	case f >= 1<<64:
		return math.MaxUint64
	case f <= -(1 << 63):
		return 1 << 63
	case f < 0:
		return uint64(int64(f))
	}
	return uint64(f)
}

func (fo *folder) foldIn(x *ast.PatternInExpr, d int) (folded, bool) {
	list := x.List
	if x.Sel != nil {
		sq, ok := x.Sel.(*ast.SubqueryExpr)
		if !ok {
			return folded{}, false
		}
		if fo.noRows(sq.Query) {
			return boolF(x.Not), true // x NOT IN (no row) is true, NULL NOT IN too
		}
		sel := constSelect(sq.Query)
		if sel == nil || len(sel.Fields.Fields) != 1 {
			return folded{}, false
		}
		list = []ast.ExprNode{sel.Fields.Fields[0].Expr}
	}
	v, ok := fo.fold(x.Expr, d)
	if !ok {
		return folded{}, false
	}
	if v.null {
		return nullF, true
	}
	sawNull, sawUnknown := false, false
	for _, item := range list {
		iv, ok := fo.fold(item, d)
		if !ok {
			sawUnknown = true
			continue
		}
		if iv.null {
			sawNull = true
			continue
		}
		c, ok := compare(v, iv)
		if !ok {
			sawUnknown = true
			continue
		}
		if c == 0 {
			return boolF(!x.Not), true
		}
	}
	if sawUnknown {
		return folded{}, false
	}
	if sawNull {
		return nullF, true
	}
	return boolF(x.Not), true
}

func (fo *folder) foldCase(x *ast.CaseExpr, d int) (folded, bool) {
	var subject folded
	if x.Value != nil {
		v, ok := fo.fold(x.Value, d)
		if !ok {
			return folded{}, false
		}
		subject = v
	}
	for _, w := range x.WhenClauses {
		c, ok := fo.fold(w.Expr, d)
		if !ok {
			return folded{}, false
		}
		hit := false
		if x.Value != nil {
			if !subject.null && !c.null {
				cmp, ok := compare(subject, c)
				if !ok {
					return folded{}, false
				}
				hit = cmp == 0
			}
		} else {
			hit = !c.null && truthy(c)
		}
		if hit {
			return fo.fold(w.Result, d)
		}
	}
	if x.ElseClause == nil {
		return nullF, true
	}
	return fo.fold(x.ElseClause, d)
}

func (fo *folder) valueFolded(v ast.ValueExpr) (folded, bool) {
	switch x := v.GetValue().(type) {
	case nil:
		return nullF, true
	case int64:
		return numF(float64(x))
	case uint64:
		return numF(float64(x))
	case float64:
		return numF(x)
	case float32:
		return numF(float64(x))
	case string:
		return strF(x), true
	case []byte:
		return strF(string(x)), true
	case test_driver.HexLiteral:
		return fo.hexFolded(x)
	case test_driver.BitLiteral:
		return fo.hexFolded(x)
	case test_driver.BinaryLiteral:
		return fo.hexFolded(x)
	case interface{ String() string }: // decimals
		if f, err := strconv.ParseFloat(x.String(), 64); err == nil {
			return numF(f)
		}
	}
	return folded{}, false
}

// value returns a constant argument.
func value(e ast.ExprNode) (folded, bool) { return (&folder{}).fold(e, 0) }

// hexFolded is a hex or bit literal: its bytes, and the number they are
// big-endian (up to 8 bytes).
func (fo *folder) hexFolded(b []byte) (folded, bool) {
	if fo.xStr && fo.xhex[string(b)] {
		return folded{isStr: true, bin: true, str: string(b)}, true // MariaDB's X'...'
	}
	var n float64
	for _, c := range b {
		n = n*256 + float64(c)
	}
	return folded{isStr: true, hex: true, bin: true, str: string(b), num: n, inexact: n > 1<<53}, len(b) <= 8
}
