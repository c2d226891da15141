package mysql

import (
	"math"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Always-true conditions, folded as MariaDB (and MySQL) evaluate them, with
// three-valued logic. Constants: numbers, strings with their introducers
// (_binary, N'', _utf8mb4), hex and bit literals (a binary string, or its
// number next to a number), DATE/TIME/TIMESTAMP literals and {d ...}, NULL;
// through arithmetic (+ - * / DIV MOD %, where a division by zero is NULL),
// bit operators (| & ^ << >> ~, on 64-bit unsigned integers), comparisons
// (numbers and strings compare as numbers when either side is a number:
// '1a' = 1 and 'a' = 0 are true; strings without case and trailing spaces
// under the default collations, by bytes under _bin collations, BINARY and
// _binary), row constructors ((1,1) = (1,1)), <=>, IS [NOT]
// TRUE/FALSE/NULL/UNKNOWN, NOT and !, AND/OR/XOR, IN and BETWEEN, LIKE with
// % and _ and ESCAPE, REGEXP/RLIKE of a pattern that matches the empty
// string, CASE, the functions of foldFunc (IF, IFNULL, COALESCE, NULLIF,
// ELT, FIELD, CHAR, CONCAT, ASCII, LENGTH, ISNULL, PI, UPPER, HEX, ABS,
// GREATEST, STRCMP, INSTR, LEFT, SUBSTR ...), CAST and CONVERT to numbers
// and strings, and subqueries without FROM ((SELECT 1), EXISTS (SELECT 1),
// 1 IN (SELECT 1)). Values the folding does not compute are unknown, never
// true.
//
// Conditions that are not constant still have a known truth when they
// compare an expression with itself (x = x, x = x + 0, x IN (x), x <=> x,
// x BETWEEN x AND x), test a value against its complement (x IS NULL OR x
// IS NOT NULL, P OR NOT P, x = 5 OR x <> 5), match every string (x LIKE
// '%', x REGEXP ''), or are CASE/IF/IFNULL/COALESCE whose every outcome is
// true. stripIdentity looks through what leaves a value as it is (also
// what does so only for integers, ROUND(x), FLOOR(x), x DIV 1, CAST(x AS
// SIGNED), or non-negative integers, x | 0, x & x: keys are), offset splits x + c (x < x + 1 is true), and rowConst gives
// what is the same for every row where x is not NULL (x - x, x ^ x, x * 0,
// (x = x)). A comparison of an expression with itself counts as true although
// it is NULL where x is: that is the shape of the attack, and a column an
// application filters on is rarely NULL everywhere.
//
// Example: in DELETE FROM t WHERE name = 'x' OR ~0 the second OR arm is
// always true, so the WHERE is (and the OR is a tautology). What the
// statement's table filters and writes is writes.go's.

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
	case *ast.VariableExpr:
		if x.Value != nil && !x.IsSystem {
			return fo.fold(x.Value, d) // @a := 1 is 1
		}
		return folded{}, false // a variable's value is not in the text
	case *ast.SubqueryExpr:
		if sel := constSelect(x.Query); sel != nil && len(sel.Fields.Fields) == 1 {
			return fo.fold(sel.Fields.Fields[0].Expr, d)
		}
	case *ast.ExistsSubqueryExpr:
		if sq, ok := x.Sel.(*ast.SubqueryExpr); ok {
			if sel := constSelect(sq.Query); sel != nil {
				return boolF(!x.Not), true // a SELECT without FROM has one row
			}
		}
	case *ast.CompareSubqueryExpr:
		sq, ok := x.R.(*ast.SubqueryExpr)
		if !ok {
			return folded{}, false
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

func toNumber(v folded) (float64, bool) {
	if v.null {
		return 0, false
	}
	return num(v), true
}

func num(v folded) float64 {
	if v.hex || v.date || !v.isStr {
		return v.num
	}
	n, _ := strNumber(v.str)
	return n
}

func text(v folded) string {
	if v.isStr || v.date {
		return v.str
	}
	if v.num == math.Trunc(v.num) && math.Abs(v.num) < 1<<63 {
		return strconv.FormatInt(int64(v.num), 10)
	}
	return strconv.FormatFloat(v.num, 'f', -1, 64)
}

// compare compares as MariaDB does: as strings (without case or trailing
// spaces, or by bytes when either is binary) when both are strings, as
// dates when either is a date and the other a date or a string in the
// same canonical form, else as numbers. ok is false where the folding
// cannot tell: numbers beyond 2^53 that come out equal, non-ASCII strings
// that differ in bytes (the collation may still equal them).
func compare(a, b folded) (int, bool) {
	if a.date || b.date {
		if a.date && b.date {
			if a.isTime != b.isTime {
				return 0, false
			}
			return strings.Compare(a.str, b.str), true
		}
		dv, other := a, b
		sign := 1
		if b.date {
			dv, other, sign = b, a, -1
		}
		if other.isStr && !other.hex {
			o, ok := dateFolded(other.str, dv.isTime)
			if !ok {
				return 0, false
			}
			return sign * strings.Compare(dv.str, o.str), true
		}
		// a date next to a number compares as its number (20200101)
		return numCompare(a, b)
	}
	if a.isStr && b.isStr && (a.bin || b.bin) {
		return strings.Compare(a.str, b.str), true
	}
	if a.isStr && b.isStr {
		x := strings.TrimRight(a.str, " ")
		y := strings.TrimRight(b.str, " ")
		if x == y {
			return 0, true
		}
		if !isASCII(x) || !isASCII(y) {
			return 0, false
		}
		return strings.Compare(strings.ToLower(x), strings.ToLower(y)), true
	}
	return numCompare(a, b)
}

func numCompare(a, b folded) (int, bool) {
	x, y := num(a), num(b)
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	}
	if a.inexact || b.inexact || math.Abs(x) > 1<<53 {
		return 0, false
	}
	return 0, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// strNumber reads the longest numeric prefix of s, as MySQL converts a
// string to a number ('12abc' is 12, 'abc' is 0).
func strNumber(s string) (float64, bool) {
	s = strings.TrimLeft(s, " \t\n\r")
	end := 0
	for end < len(s) {
		c := s[end]
		if c >= '0' && c <= '9' || c == '.' || (end == 0 && (c == '-' || c == '+')) || ((c == 'e' || c == 'E') && end > 0) ||
			((c == '-' || c == '+') && end > 0 && (s[end-1] == 'e' || s[end-1] == 'E')) {
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

// dateFolded reads a DATE/DATETIME ("2020-01-01", "2020-01-01 10:00:00")
// or, when isTime, a TIME ("10:00:00") literal in its canonical form only;
// anything else is not folded.
func dateFolded(s string, isTime bool) (folded, bool) {
	digits := func(t string) (float64, bool) {
		var n float64
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return 0, false
			}
			n = n*10 + float64(t[i]-'0')
		}
		return n, true
	}
	if isTime {
		if len(s) != 8 || s[2] != ':' || s[5] != ':' {
			return folded{}, false
		}
		h, ok1 := digits(s[:2])
		m, ok2 := digits(s[3:5])
		sec, ok3 := digits(s[6:])
		if !ok1 || !ok2 || !ok3 || m > 59 || sec > 59 {
			return folded{}, false
		}
		return folded{date: true, isTime: true, str: s, num: h*10000 + m*100 + sec}, true
	}
	if len(s) == 10 {
		s += " 00:00:00"
	}
	if len(s) != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return folded{}, false
	}
	y, ok1 := digits(s[:4])
	mo, ok2 := digits(s[5:7])
	dd, ok3 := digits(s[8:10])
	h, ok4 := digits(s[11:13])
	mi, ok5 := digits(s[14:16])
	se, ok6 := digits(s[17:])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || mo < 1 || mo > 12 || dd < 1 || dd > 31 || h > 23 || mi > 59 || se > 59 {
		return folded{}, false
	}
	n := y*1e4 + mo*100 + dd
	if h+mi+se != 0 {
		n = n*1e6 + h*1e4 + mi*100 + se
	}
	return folded{date: true, str: s, num: n}, true
}

// likeMatch matches s against a LIKE pattern (% any run, _ one character,
// esc quotes the next), without case when ci. ok is false where the
// collation could matter (non-ASCII text that does not match by bytes).
func likeMatch(s, pat string, esc rune, ci bool) (match, ok bool) {
	if ci && (!isASCII(s) || !isASCII(pat)) {
		if m, _ := likeMatch(s, pat, esc, false); m {
			return true, true
		}
		if strings.Trim(pat, "%") == "" {
			return true, true
		}
		return false, false
	}
	if ci {
		s, pat = strings.ToLower(s), strings.ToLower(pat)
	}
	var rec func(si, pi, budget int) (bool, bool)
	steps := 0
	rec = func(si, pi, depth int) (bool, bool) {
		for pi < len(pat) {
			steps++
			if steps > 100000 || depth > 64 {
				return false, false
			}
			c, w := utf8.DecodeRuneInString(pat[pi:])
			switch {
			case c == '%':
				for pi < len(pat) && pat[pi] == '%' {
					pi++
				}
				if pi == len(pat) {
					return true, true
				}
				for k := si; k <= len(s); k++ {
					m, ok := rec(k, pi, depth+1)
					if !ok || m {
						return m, ok
					}
				}
				return false, true
			case c == '_':
				if si >= len(s) {
					return false, true
				}
				_, sw := utf8.DecodeRuneInString(s[si:])
				si += sw
				pi += w
			default:
				if c == esc && pi+w < len(pat) {
					pi += w
					c, w = utf8.DecodeRuneInString(pat[pi:])
				}
				sc, sw := utf8.DecodeRuneInString(s[si:])
				if si >= len(s) || sc != c {
					return false, true
				}
				si += sw
				pi += w
			}
		}
		return si == len(s), true
	}
	return rec(0, 0, 0)
}

// matchesEverything reports whether a REGEXP pattern matches every string
// (it finds a match anywhere): one that matches the empty string without
// any assertion (the empty pattern, '.*', 'a*', '(x|)'), or a lone ^ or $.
func matchesEverything(pat string) bool {
	if len(pat) > 256 {
		return false
	}
	switch pat {
	case "", "^", "$":
		return true
	}
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return false
	}
	return nullable(re, 0)
}

// regexpMatch matches an ASCII subject without line breaks against a
// pattern that Go's RE2 syntax reads as PCRE does (no backreferences or
// lookaround, which do not compile), without case when ci; ok is false
// otherwise.
func regexpMatch(s, pat string, ci bool) (match, ok bool) {
	if len(pat) > 256 || len(s) > maxFoldString || !isASCII(s) || !isASCII(pat) || strings.ContainsAny(s, "\n\r") {
		return false, false
	}
	if ci {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return false, false
	}
	return re.MatchString(s), true
}

func nullable(re *syntax.Regexp, depth int) bool {
	if depth > 32 {
		return false
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpRepeat:
		return re.Min == 0 || nullable(re.Sub[0], depth+1)
	case syntax.OpCapture, syntax.OpPlus:
		return nullable(re.Sub[0], depth+1)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !nullable(s, depth+1) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if nullable(s, depth+1) {
				return true
			}
		}
	}
	return false
}

// foldCast folds CAST/CONVERT to numbers and strings and BINARY x.
func (fo *folder) foldCast(x *ast.FuncCastExpr, d int) (folded, bool) {
	v, ok := fo.fold(x.Expr, d)
	if !ok || v.null || x.Tp == nil {
		return v, ok
	}
	switch x.Tp.GetType() {
	case mysql.TypeLonglong, mysql.TypeLong, mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24:
		n := num(v)
		if mysql.HasUnsignedFlag(x.Tp.GetFlag()) {
			return numF(float64(toUint(v)))
		}
		return numF(math.Round(n))
	case mysql.TypeNewDecimal, mysql.TypeDouble, mysql.TypeFloat:
		return numF(num(v))
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar, mysql.TypeBlob:
		s := strF(text(v))
		s.bin = x.FunctionType == ast.CastBinaryOperator || x.Tp.GetCharset() == "binary" || v.bin
		return s, true
	case mysql.TypeDate, mysql.TypeDatetime:
		if v.date && !v.isTime {
			return v, true
		}
		if v.isStr {
			return dateFolded(v.str, false)
		}
	}
	return folded{}, false
}

// maxFoldString bounds strings the folding builds (REPEAT, LPAD, SPACE).
const maxFoldString = 4096

// foldFunc folds the builtins of constants whose result the text decides.
func (fo *folder) foldFunc(x *ast.FuncCallExpr, d int) (folded, bool) {
	name := x.FnName.L
	if x.Schema.L != "" && x.Schema.L != "tidb" {
		return folded{}, false // a stored function of that name
	}
	args := x.Args
	// Functions that do not evaluate every argument.
	switch name {
	case "if":
		if len(args) != 3 {
			return folded{}, false
		}
		c, ok := fo.fold(args[0], d)
		if !ok {
			return folded{}, false
		}
		if !c.null && truthy(c) {
			return fo.fold(args[1], d)
		}
		return fo.fold(args[2], d)
	case "ifnull", "nvl", "coalesce":
		for _, a := range args {
			v, ok := fo.fold(a, d)
			if !ok || !v.null {
				return v, ok
			}
		}
		return nullF, true
	case "isnull":
		if len(args) != 1 {
			return folded{}, false
		}
		v, ok := fo.fold(args[0], d)
		return boolF(v.null), ok
	case "pi":
		if len(args) == 0 {
			return numF(math.Pi)
		}
		return folded{}, false
	}
	vals := make([]folded, len(args))
	anyNull := false
	for i, a := range args {
		if _, ok := a.(*ast.TrimDirectionExpr); ok {
			continue
		}
		v, ok := fo.fold(a, d)
		if !ok {
			if name == "char_func" && i == len(args)-1 {
				continue // USING charset
			}
			return folded{}, false
		}
		vals[i] = v
		anyNull = anyNull || v.null
	}
	arg := func(i int) folded { return vals[i] }
	argc := len(args)
	switch name {
	case ast.DateLiteral, ast.TimestampLiteral:
		if argc == 1 && vals[0].isStr {
			return dateFolded(vals[0].str, false)
		}
	case ast.TimeLiteral:
		if argc == 1 && vals[0].isStr {
			return dateFolded(vals[0].str, true)
		}
	case "nullif":
		if argc != 2 {
			break
		}
		if arg(0).null {
			return nullF, true
		}
		if arg(1).null {
			return arg(0), true
		}
		c, ok := compare(arg(0), arg(1))
		if !ok {
			break
		}
		if c == 0 {
			return nullF, true
		}
		return arg(0), true
	case "elt":
		if argc < 1 || arg(0).null {
			return nullF, argc >= 1
		}
		i := roundInt(num(arg(0)))
		if i < 1 || i >= argc {
			return nullF, true
		}
		return arg(i), true
	case "field":
		if argc < 2 || arg(0).null {
			return numF(0)
		}
		for i := 1; i < argc; i++ {
			if arg(i).null {
				continue
			}
			c, ok := compare(arg(0), arg(i))
			if !ok {
				return folded{}, false
			}
			if c == 0 {
				return numF(float64(i))
			}
		}
		return numF(0)
	case "char_func":
		var b []byte
		for i := 0; i < argc; i++ {
			if _, ok := args[i].(ast.ValueExpr); ok && i == argc-1 && (vals[i].isStr || vals[i].null) && argc > 1 {
				continue // the USING charset (or its absence)
			}
			if vals[i].null {
				continue // CHAR skips NULLs
			}
			n := toUint(vals[i])
			var tmp []byte
			for n > 0 {
				tmp = append([]byte{byte(n)}, tmp...)
				n >>= 8
			}
			if len(tmp) == 0 {
				tmp = []byte{0}
			}
			b = append(b, tmp...)
		}
		s := strF(string(b))
		s.bin = true
		return s, true
	}
	if anyNull {
		switch name {
		case "concat", "ascii", "ord", "length", "octet_length", "char_length", "character_length", "bit_length",
			"upper", "ucase", "lower", "lcase", "reverse", "hex", "unhex", "abs", "floor", "ceil", "ceiling", "round",
			"truncate", "sign", "mod", "strcmp", "instr", "locate", "position", "left", "right", "substr", "substring",
			"mid", "trim", "ltrim", "rtrim", "repeat", "space", "lpad", "rpad", "sqrt", "pow", "power", "replace",
			"greatest", "least", "find_in_set":
			return nullF, true
		}
	}
	switch name {
	case "concat":
		var sb strings.Builder
		bin := false
		for _, v := range vals {
			sb.WriteString(text(v))
			bin = bin || v.bin
			if sb.Len() > maxFoldString {
				return folded{}, false
			}
		}
		s := strF(sb.String())
		s.bin = bin
		return s, true
	case "concat_ws":
		if argc < 1 || arg(0).null {
			return nullF, argc >= 1
		}
		var parts []string
		for _, v := range vals[1:] {
			if !v.null {
				parts = append(parts, text(v))
			}
		}
		s := strings.Join(parts, text(arg(0)))
		if len(s) > maxFoldString {
			return folded{}, false
		}
		return strF(s), true
	case "ascii":
		if argc == 1 {
			t := text(arg(0))
			if t == "" {
				return numF(0)
			}
			return numF(float64(t[0]))
		}
	case "ord":
		if argc == 1 {
			t := text(arg(0))
			if t == "" {
				return numF(0)
			}
			if t[0] < utf8.RuneSelf || arg(0).bin {
				return numF(float64(t[0]))
			}
		}
	case "length", "octet_length":
		if argc == 1 {
			return numF(float64(len(text(arg(0)))))
		}
	case "bit_length":
		if argc == 1 {
			return numF(float64(8 * len(text(arg(0)))))
		}
	case "char_length", "character_length":
		if argc == 1 {
			if arg(0).bin {
				return numF(float64(len(text(arg(0)))))
			}
			return numF(float64(utf8.RuneCountInString(text(arg(0)))))
		}
	case "upper", "ucase", "lower", "lcase":
		if argc == 1 {
			v := arg(0)
			if v.bin {
				return v, true // a binary string has no case
			}
			if name == "upper" || name == "ucase" {
				return strF(strings.ToUpper(text(v))), true
			}
			return strF(strings.ToLower(text(v))), true
		}
	case "reverse":
		if argc == 1 && isASCII(text(arg(0))) {
			b := []byte(text(arg(0)))
			for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
				b[i], b[j] = b[j], b[i]
			}
			s := strF(string(b))
			s.bin = arg(0).bin
			return s, true
		}
	case "hex":
		if argc == 1 {
			v := arg(0)
			if v.isStr {
				return strF(strings.ToUpper(hexString(v.str))), true
			}
			if n := num(v); n >= 0 && n == math.Trunc(n) && n < 1<<53 {
				return strF(strings.ToUpper(strconv.FormatUint(uint64(n), 16))), true
			}
		}
	case "unhex":
		if argc == 1 {
			t := text(arg(0))
			if len(t)%2 == 1 {
				t = "0" + t
			}
			b := make([]byte, 0, len(t)/2)
			for i := 0; i+1 < len(t); i += 2 {
				n, err := strconv.ParseUint(t[i:i+2], 16, 8)
				if err != nil {
					return nullF, true
				}
				b = append(b, byte(n))
			}
			s := strF(string(b))
			s.bin = true
			return s, true
		}
	case "abs":
		if argc == 1 {
			return numF(math.Abs(num(arg(0))))
		}
	case "floor":
		if argc == 1 {
			return numF(math.Floor(num(arg(0))))
		}
	case "ceil", "ceiling":
		if argc == 1 {
			return numF(math.Ceil(num(arg(0))))
		}
	case "round", "truncate":
		if argc == 1 || argc == 2 {
			p := 0.0
			if argc == 2 {
				p = math.Round(num(arg(1)))
			}
			if p < -30 || p > 30 {
				break
			}
			m := math.Pow(10, p)
			f := num(arg(0)) * m
			if name == "round" {
				f = math.Round(f)
			} else {
				f = math.Trunc(f)
			}
			return numF(f / m)
		}
	case "sign":
		if argc == 1 {
			n := num(arg(0))
			switch {
			case n > 0:
				return numF(1)
			case n < 0:
				return numF(-1)
			}
			return numF(0)
		}
	case "mod":
		if argc == 2 {
			return applyOp(opcode.Mod, arg(0), arg(1))
		}
	case "sqrt":
		if argc == 1 {
			if n := num(arg(0)); n >= 0 {
				return numF(math.Sqrt(n))
			}
			return nullF, true
		}
	case "pow", "power":
		if argc == 2 {
			return numF(math.Pow(num(arg(0)), num(arg(1))))
		}
	case "greatest", "least":
		if argc < 2 {
			break
		}
		best := arg(0)
		allStr := true
		for _, v := range vals {
			allStr = allStr && v.isStr && !v.hex
		}
		for _, v := range vals[1:] {
			var c int
			var ok bool
			if allStr {
				c, ok = compare(v, best)
			} else {
				c, ok = numCompare(v, best)
			}
			if !ok {
				return folded{}, false
			}
			if (name == "greatest" && c > 0) || (name == "least" && c < 0) {
				best = v
			}
		}
		if !allStr {
			return numF(num(best))
		}
		return best, true
	case "strcmp":
		if argc == 2 {
			c, ok := compare(strF(text(arg(0))), strF(text(arg(1))))
			if !ok {
				break
			}
			return numF(float64(c))
		}
	case "instr", "locate", "position":
		if argc < 2 || argc > 3 {
			break
		}
		hay, needle := text(arg(1)), text(arg(0))
		if name == "instr" {
			hay, needle = text(arg(0)), text(arg(1))
		}
		start := 1
		if argc == 3 {
			start = roundInt(num(arg(2)))
			if start < 1 {
				return numF(0)
			}
		}
		if !isASCII(hay) || !isASCII(needle) || start > len(hay)+1 {
			break
		}
		if !(arg(0).bin || arg(1).bin) {
			hay, needle = strings.ToLower(hay), strings.ToLower(needle)
		}
		i := strings.Index(hay[start-1:], needle)
		if i < 0 {
			return numF(0)
		}
		return numF(float64(i + start))
	case "left", "right":
		if argc == 2 && isASCII(text(arg(0))) {
			t, n := text(arg(0)), roundInt(num(arg(1)))
			if n < 0 {
				n = 0
			}
			if n > len(t) {
				n = len(t)
			}
			if name == "left" {
				return strF(t[:n]), true
			}
			return strF(t[len(t)-n:]), true
		}
	case "substr", "substring", "mid":
		if (argc == 2 || argc == 3) && isASCII(text(arg(0))) {
			t := text(arg(0))
			pos := roundInt(num(arg(1)))
			switch {
			case pos == 0 || -pos > len(t):
				return strF(""), true
			case pos < 0:
				pos = len(t) + pos
			default:
				pos--
			}
			if pos > len(t) {
				return strF(""), true
			}
			out := t[pos:]
			if argc == 3 {
				n := roundInt(num(arg(2)))
				if n < 0 {
					n = 0
				}
				if n < len(out) {
					out = out[:n]
				}
			}
			return strF(out), true
		}
	case "trim", "ltrim", "rtrim":
		if argc >= 1 {
			t := text(arg(0))
			rem := " "
			dir := ast.TrimBoth
			if name == "ltrim" {
				dir = ast.TrimLeading
			} else if name == "rtrim" {
				dir = ast.TrimTrailing
			}
			if argc >= 2 {
				rem = text(arg(1))
			}
			if argc == 3 {
				if td, ok := args[2].(*ast.TrimDirectionExpr); ok && td.Direction != ast.TrimBothDefault {
					dir = td.Direction
				}
			}
			if rem == "" {
				return strF(t), true
			}
			if dir != ast.TrimTrailing {
				for strings.HasPrefix(t, rem) {
					t = t[len(rem):]
				}
			}
			if dir != ast.TrimLeading {
				for strings.HasSuffix(t, rem) {
					t = t[:len(t)-len(rem)]
				}
			}
			return strF(t), true
		}
	case "repeat":
		if argc == 2 {
			f := math.Round(num(arg(1)))
			if f <= 0 {
				return strF(""), true
			}
			if f > maxFoldString || int(f)*len(text(arg(0))) > maxFoldString {
				break
			}
			n := int(f)
			return strF(strings.Repeat(text(arg(0)), n)), true
		}
	case "space":
		if argc == 1 {
			f := math.Round(num(arg(0)))
			if f <= 0 {
				return strF(""), true
			}
			if f > maxFoldString {
				break
			}
			return strF(strings.Repeat(" ", int(f))), true
		}
	case "replace":
		if argc == 3 && isASCII(text(arg(0))) {
			s := strings.ReplaceAll(text(arg(0)), text(arg(1)), text(arg(2)))
			if len(s) > maxFoldString {
				break
			}
			return strF(s), true
		}
	case "find_in_set":
		if argc == 2 && isASCII(text(arg(0))) && isASCII(text(arg(1))) {
			if strings.Contains(text(arg(0)), ",") {
				return numF(0)
			}
			for i, p := range strings.Split(text(arg(1)), ",") {
				if strings.EqualFold(p, text(arg(0))) {
					return numF(float64(i + 1))
				}
			}
			return numF(0)
		}
	}
	return folded{}, false
}

// roundInt is a number rounded to an int, clamped to ±2^40 (beyond any
// string the folding builds), so that no conversion overflows.
func roundInt(f float64) int {
	f = math.Round(f)
	switch {
	case f > 1<<40:
		return 1 << 40
	case f < -(1 << 40):
		return -(1 << 40)
	}
	return int(f)
}

func hexString(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(b)
}

// truth is the set of values a condition can take over all rows.
type truth uint8

const (
	tTrue truth = 1 << iota
	tFalse
	tNull
	tAny = tTrue | tFalse | tNull
)

func truthOfFolded(v folded) truth {
	switch {
	case v.null:
		return tNull
	case truthy(v):
		return tTrue
	}
	return tFalse
}

// alwaysTrue reports whether e is true whatever the row.
func (fo *folder) alwaysTrue(e ast.ExprNode) bool { return fo.truthOf(e, 0) == tTrue }

// truthOf returns what a condition can evaluate to.
func (fo *folder) truthOf(e ast.ExprNode, depth int) truth {
	if e == nil || depth > maxFoldDepth {
		return tAny
	}
	// AND, OR, XOR, NOT and parentheses combine their operands' truths,
	// which hold what folding them would give: folding them first too
	// would fold a chain of n ANDs n times.
	logic := false
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		logic = true
	case *ast.UnaryOperationExpr:
		logic = x.Op == opcode.Not || x.Op == opcode.Not2
	case *ast.BinaryOperationExpr:
		logic = x.Op == opcode.LogicAnd || x.Op == opcode.LogicOr || x.Op == opcode.LogicXor
	}
	if !logic {
		if v, ok := fo.fold(e, depth); ok {
			return truthOfFolded(v)
		}
	}
	d := depth + 1
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return fo.truthOf(x.Expr, d)
	case *ast.UnaryOperationExpr:
		switch x.Op {
		case opcode.Not, opcode.Not2:
			return not3(fo.truthOf(x.V, d))
		case opcode.Plus:
			return fo.truthOf(x.V, d)
		}
	case *ast.IsTruthExpr:
		t := fo.truthOf(x.Expr, d)
		var out truth
		for _, bit := range []truth{tTrue, tFalse, tNull} {
			if t&bit == 0 {
				continue
			}
			hold := (bit == tTrue) == (x.True != 0) && bit != tNull
			if hold != x.Not {
				out |= tTrue
			} else {
				out |= tFalse
			}
		}
		return out
	case *ast.VariableExpr:
		if x.Value != nil && !x.IsSystem {
			return fo.truthOf(x.Value, d)
		}
	case *ast.IsNullExpr:
		// IFNULL(x, 1) IS NOT NULL, (x IS NULL) IS NOT NULL: never NULL.
		if fo.neverNull(x.Expr, d) {
			if x.Not {
				return tTrue
			}
			return tFalse
		}
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicOr:
			arms := orArmList(x, nil, 0)
			if fo.complementary(arms) {
				return tTrue
			}
			acc := tFalse
			for _, a := range arms {
				acc = combine(acc, fo.truthOf(a, d), opcode.LogicOr)
				if acc == tTrue {
					return acc
				}
			}
			return acc
		case opcode.LogicAnd, opcode.LogicXor:
			// x IS NULL AND x IS NOT NULL: a test and its complement are
			// never both true (counted as false, as x = 5 OR x <> 5 counts
			// as true).
			if x.Op == opcode.LogicAnd && (fo.complements(x.L, x.R) || fo.complements(x.R, x.L)) {
				return tFalse
			}
			return combine(fo.truthOf(x.L, d), fo.truthOf(x.R, d), x.Op)
		case opcode.EQ, opcode.NullEQ, opcode.GE, opcode.LE, opcode.NE, opcode.LT, opcode.GT:
			// Counted as decided where x is NULL too, as x = x counts as true.
			if t, ok := fo.selfCompare(x.Op, x.L, x.R); ok {
				return t
			}
		}
	case *ast.PatternInExpr:
		// x IN (..., x, ...) is true; x NOT IN (x + 1, x - 2) is true when
		// every item is x plus a constant other than 0.
		if x.Sel == nil {
			all := len(x.List) > 0
			for _, it := range x.List {
				t, ok := fo.selfCompare(opcode.EQ, x.Expr, it)
				if ok && t == tTrue {
					if x.Not {
						return tFalse
					}
					return tTrue
				}
				all = all && ok && t == tFalse
			}
			if all {
				if x.Not {
					return tTrue
				}
				return tFalse
			}
		}
	case *ast.BetweenExpr:
		if !x.Not && fo.sameExpr(x.Expr, x.Left, 0) && fo.sameExpr(x.Expr, x.Right, 0) {
			return tTrue
		}
	case *ast.PatternLikeOrIlikeExpr:
		// x LIKE x: counted as true, as x = x is (it is NULL where x is,
		// and false where x holds a backslash escape).
		if x.IsLike && !x.Not && fo.sameExpr(fo.stripIdentity(x.Expr), fo.stripIdentity(x.Pattern), 0) {
			return tTrue
		}
		// x LIKE '%' holds for every x that is not NULL.
		if p, ok := fo.fold(x.Pattern, d); ok && x.IsLike && !x.Not && !p.null && p.isStr && p.str != "" && strings.Trim(p.str, "%") == "" {
			return tTrue
		}
	case *ast.PatternRegexpExpr:
		if p, ok := fo.fold(x.Pattern, d); ok && !x.Not && !p.null && matchesEverything(text(p)) {
			return tTrue
		}
	case *ast.CaseExpr:
		return fo.caseTruth(x, d)
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "if":
			if len(x.Args) == 3 {
				c := fo.truthOf(x.Args[0], d)
				var out truth
				if c&tTrue != 0 {
					out |= fo.truthOf(x.Args[1], d)
				}
				if c&(tFalse|tNull) != 0 {
					out |= fo.truthOf(x.Args[2], d)
				}
				return out
			}
		case "ifnull", "nvl", "coalesce":
			var out truth
			for _, a := range x.Args {
				t := fo.truthOf(a, d)
				out |= t &^ tNull
				if t&tNull == 0 {
					return out
				}
			}
			return out | tNull
		}
	}
	return tAny
}

// neverNull reports whether e is not NULL for any row: a constant that is
// not NULL, IFNULL/NVL/COALESCE with such an argument, ISNULL(), an IS
// test, a <=> comparison.
func (fo *folder) neverNull(e ast.ExprNode, depth int) bool {
	if e == nil || depth > maxFoldDepth {
		return false
	}
	e = unparen(e)
	if v, ok := fo.fold(e, depth); ok {
		return !v.null
	}
	switch x := e.(type) {
	case *ast.IsNullExpr, *ast.IsTruthExpr:
		return true
	case *ast.BinaryOperationExpr:
		return x.Op == opcode.NullEQ
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "isnull":
			return true
		case "ifnull", "nvl", "coalesce":
			for _, a := range x.Args {
				if fo.neverNull(a, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

func not3(t truth) truth {
	out := t & tNull
	if t&tTrue != 0 {
		out |= tFalse
	}
	if t&tFalse != 0 {
		out |= tTrue
	}
	return out
}

// combine is the truth of a op b (AND, OR, XOR) for independent a, b.
func combine(a, b truth, op opcode.Op) truth {
	var out truth
	for _, x := range []truth{tTrue, tFalse, tNull} {
		if a&x == 0 {
			continue
		}
		for _, y := range []truth{tTrue, tFalse, tNull} {
			if b&y == 0 {
				continue
			}
			switch {
			case op == opcode.LogicOr && (x == tTrue || y == tTrue):
				out |= tTrue
			case op == opcode.LogicAnd && (x == tFalse || y == tFalse):
				out |= tFalse
			case x == tNull || y == tNull:
				out |= tNull
			case op == opcode.LogicXor:
				if x != y {
					out |= tTrue
				} else {
					out |= tFalse
				}
			case op == opcode.LogicOr:
				out |= tFalse
			default:
				out |= tTrue
			}
		}
	}
	return out
}

func (fo *folder) caseTruth(x *ast.CaseExpr, d int) truth {
	var out truth
	for _, w := range x.WhenClauses {
		cond := tAny
		if x.Value == nil {
			cond = fo.truthOf(w.Expr, d)
		}
		if cond&tTrue != 0 {
			out |= fo.truthOf(w.Result, d)
		}
		if cond == tTrue {
			return out // later branches are never reached
		}
	}
	if x.ElseClause == nil {
		return out | tNull
	}
	return out | fo.truthOf(x.ElseClause, d)
}

// orArmList flattens nested ORs (and parentheses) into their arms.
func orArmList(x *ast.BinaryOperationExpr, out []ast.ExprNode, depth int) []ast.ExprNode {
	for _, a := range []ast.ExprNode{x.L, x.R} {
		in := unparen(a)
		if b, ok := in.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicOr && depth < maxFoldDepth {
			out = orArmList(b, out, depth+1)
			continue
		}
		out = append(out, in)
	}
	return out
}

// stripIdentity removes what leaves a value as it compares: x + 0, 0 + x,
// x - 0, x * 1, 1 * x, x / 1, +x, - -x, parentheses, BINARY x, x COLLATE c.
func (fo *folder) stripIdentity(e ast.ExprNode) ast.ExprNode {
	isConst := func(n ast.ExprNode, want float64) bool {
		v, ok := fo.fold(n, 0)
		return ok && !v.null && !v.isStr && v.num == want
	}
	for i := 0; i < maxFoldDepth; i++ {
		switch x := e.(type) {
		case *ast.ParenthesesExpr:
			e = x.Expr
			continue
		case *ast.UnaryOperationExpr:
			if x.Op == opcode.Plus {
				e = x.V
				continue
			}
			if in, ok := unparen(x.V).(*ast.UnaryOperationExpr); ok && x.Op == opcode.Minus && in.Op == opcode.Minus {
				e = in.V // - - x
				continue
			}
		case *ast.SetCollationExpr:
			e = x.Expr // x = x COLLATE c: equal under any collation
			continue
		case *ast.FuncCastExpr:
			if x.FunctionType == ast.CastBinaryOperator {
				e = x.Expr
				continue
			}
			// CAST(x AS SIGNED), CONVERT(x, UNSIGNED): x for an integer
			// (UNSIGNED: a non-negative one).
			if x.Tp != nil && x.Tp.GetType() == mysql.TypeLonglong {
				e = x.Expr
				continue
			}
		case *ast.BinaryOperationExpr:
			switch {
			case (x.Op == opcode.Plus || x.Op == opcode.Minus || x.Op == opcode.Or || x.Op == opcode.Xor ||
				x.Op == opcode.LeftShift || x.Op == opcode.RightShift) && isConst(x.R, 0),
				(x.Op == opcode.Mul || x.Op == opcode.Div || x.Op == opcode.IntDiv) && isConst(x.R, 1),
				(x.Op == opcode.And || x.Op == opcode.Or) && fo.sameExpr(x.L, x.R, 0):
				e = x.L
				continue
			case (x.Op == opcode.Plus || x.Op == opcode.Or || x.Op == opcode.Xor) && isConst(x.L, 0),
				x.Op == opcode.Mul && isConst(x.L, 1):
				e = x.R
				continue
			}
		case *ast.FuncCallExpr:
			if x.Schema.L != "" || len(x.Args) == 0 {
				return e
			}
			switch x.FnName.L {
			case "round", "truncate", "floor", "ceil", "ceiling":
				// x for an integer (ROUND(x, 0), TRUNCATE(x, 0), FLOOR(x)).
				if len(x.Args) == 1 && x.FnName.L != "truncate" || len(x.Args) == 2 && x.FnName.L != "floor" &&
					x.FnName.L != "ceil" && x.FnName.L != "ceiling" && isConst(x.Args[1], 0) {
					e = x.Args[0]
					continue
				}
			case "concat", "coalesce", "ifnull", "nvl", "greatest", "least":
				// CONCAT(x) compares as x; COALESCE(x, ...) and IFNULL(x, y)
				// are x where x is not NULL; GREATEST(x, x) is x.
				same := true
				if x.FnName.L == "greatest" || x.FnName.L == "least" {
					for _, a := range x.Args[1:] {
						same = same && fo.sameExpr(x.Args[0], a, 0)
					}
				} else if x.FnName.L == "concat" {
					same = len(x.Args) == 1
				}
				if same {
					e = x.Args[0]
					continue
				}
			case "if":
				if len(x.Args) == 3 {
					switch fo.truthOf(x.Args[0], 0) {
					case tTrue:
						e = x.Args[1]
						continue
					case tFalse, tNull, tFalse | tNull:
						e = x.Args[2]
						continue
					}
				}
			}
		}
		return e
	}
	return e
}

// offset returns e as base + c, with c the sum of the numeric constants
// e adds to or subtracts from base (x + 1 - 3 is x + -2; x is x + 0).
func (fo *folder) offset(e ast.ExprNode) (ast.ExprNode, float64) {
	num := func(n ast.ExprNode) (float64, bool) {
		v, ok := fo.fold(n, 0)
		return v.num, ok && !v.null && !v.isStr && !v.inexact
	}
	c := 0.0
	for i := 0; i < maxFoldDepth; i++ {
		e = fo.stripIdentity(e)
		x, ok := e.(*ast.BinaryOperationExpr)
		if !ok || (x.Op != opcode.Plus && x.Op != opcode.Minus) {
			break
		}
		if n, ok := num(x.R); ok {
			if x.Op == opcode.Minus {
				n = -n
			}
			c, e = c+n, x.L
			continue
		}
		if n, ok := num(x.L); ok && x.Op == opcode.Plus {
			c, e = c+n, x.R
			continue
		}
		break
	}
	return e, c
}

// selfCompare decides l op r when both sides are the same expression of
// the row plus constants (x < x + 1, x + 1 <> x, x = x DIV 1), or values
// that are the same for every row where the operands are not NULL (x - x
// = 0, v * 0 = 0, x ^ x = 0, (x = x) = 1). Like x = x it counts the rows
// where x is NULL as the rest.
func (fo *folder) selfCompare(op opcode.Op, l, r ast.ExprNode) (truth, bool) {
	if op == opcode.NullEQ {
		op = opcode.EQ
	}
	bl, cl := fo.offset(l)
	br, cr := fo.offset(r)
	if fo.sameExpr(bl, br, 0) {
		v, ok := applyOp(op, folded{num: cl}, folded{num: cr})
		if ok {
			return truthOfFolded(v), true
		}
		return tAny, false
	}
	vl, okl := fo.rowConst(l)
	vr, okr := fo.rowConst(r)
	if !okl || !okr {
		return tAny, false
	}
	if v, ok := applyOp(op, vl, vr); ok && !v.null {
		return truthOfFolded(v), true
	}
	return tAny, false
}

// rowConst returns the value e has for every row where its columns are
// not NULL: a constant, x - x and x ^ x (0), x * 0 and x & 0 (0), a
// condition whose truth is known (1 or 0).
func (fo *folder) rowConst(e ast.ExprNode) (folded, bool) {
	if v, ok := fo.fold(e, 0); ok {
		return v, true
	}
	e = fo.stripIdentity(e)
	zero := func(n ast.ExprNode) bool {
		v, ok := fo.fold(n, 0)
		return ok && !v.null && !v.isStr && v.num == 0
	}
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.Minus, opcode.Xor:
			if fo.sameExpr(fo.stripIdentity(x.L), fo.stripIdentity(x.R), 0) {
				return folded{}, true
			}
			return folded{}, false
		case opcode.Mul, opcode.And:
			if zero(x.L) || zero(x.R) {
				return folded{}, true
			}
			return folded{}, false
		case opcode.Plus, opcode.Div, opcode.IntDiv, opcode.Mod, opcode.Or, opcode.LeftShift, opcode.RightShift:
			return folded{}, false
		}
	case *ast.IsNullExpr, *ast.IsTruthExpr, *ast.PatternLikeOrIlikeExpr, *ast.PatternInExpr, *ast.BetweenExpr,
		*ast.PatternRegexpExpr, *ast.UnaryOperationExpr:
	default:
		return folded{}, false
	}
	switch fo.truthOf(e, 1) {
	case tTrue:
		return boolF(true), true
	case tFalse:
		return boolF(false), true
	}
	return folded{}, false
}

// volatile are functions whose two calls may differ.
var volatile = map[string]bool{
	"rand": true, "uuid": true, "uuid_short": true, "sysdate": true, "sleep": true, "benchmark": true,
	"get_lock": true, "release_lock": true, "nextval": true, "lastval": true, "setval": true, "last_insert_id": true,
	"row_count": true, "found_rows": true, "connection_id": true, "random_bytes": true, "sys_guid": true,
}

// sameExpr reports whether a and b are the same expression of the row
// (two parameters are never the same: each is bound on its own).
func (fo *folder) sameExpr(a, b ast.ExprNode, depth int) bool {
	if a == nil || b == nil || depth > maxFoldDepth {
		return false
	}
	a, b = unparen(a), unparen(b)
	d := depth + 1
	switch x := a.(type) {
	case *ast.ColumnNameExpr:
		y, ok := b.(*ast.ColumnNameExpr)
		return ok && x.Name != nil && y.Name != nil && x.Name.Name.L == y.Name.Name.L && x.Name.Table.L == y.Name.Table.L && x.Name.Schema.L == y.Name.Schema.L
	case *test_driver.ParamMarkerExpr:
		return false
	case ast.ValueExpr:
		if _, ok := b.(*test_driver.ParamMarkerExpr); ok {
			return false
		}
		if _, ok := b.(ast.ValueExpr); !ok {
			return false
		}
		u, ok1 := fo.fold(a, d)
		v, ok2 := fo.fold(b, d)
		return ok1 && ok2 && u == v
	case *ast.VariableExpr:
		y, ok := b.(*ast.VariableExpr)
		return ok && x.Value == nil && y.Value == nil && strings.EqualFold(x.Name, y.Name) && x.IsSystem == y.IsSystem && x.IsGlobal == y.IsGlobal
	case *ast.FuncCallExpr:
		y, ok := b.(*ast.FuncCallExpr)
		if !ok || x.FnName.L != y.FnName.L || x.Schema.L != y.Schema.L || len(x.Args) != len(y.Args) || volatile[x.FnName.L] {
			return false
		}
		for i := range x.Args {
			if _, ok := x.Args[i].(*ast.TimeUnitExpr); ok {
				u, ok := y.Args[i].(*ast.TimeUnitExpr)
				if !ok || u.Unit != x.Args[i].(*ast.TimeUnitExpr).Unit {
					return false
				}
				continue
			}
			if !fo.sameExpr(x.Args[i], y.Args[i], d) {
				return false
			}
		}
		return true
	case *ast.BinaryOperationExpr:
		y, ok := b.(*ast.BinaryOperationExpr)
		return ok && x.Op == y.Op && fo.sameExpr(x.L, y.L, d) && fo.sameExpr(x.R, y.R, d)
	case *ast.UnaryOperationExpr:
		y, ok := b.(*ast.UnaryOperationExpr)
		return ok && x.Op == y.Op && fo.sameExpr(x.V, y.V, d)
	case *ast.FuncCastExpr:
		y, ok := b.(*ast.FuncCastExpr)
		return ok && x.FunctionType == y.FunctionType && x.Tp != nil && y.Tp != nil && x.Tp.String() == y.Tp.String() && fo.sameExpr(x.Expr, y.Expr, d)
	case *ast.RowExpr:
		// ROW(id, v) = ROW(id, v), (id, v) IN ((id, v)).
		y, ok := b.(*ast.RowExpr)
		if !ok || len(x.Values) != len(y.Values) {
			return false
		}
		for i := range x.Values {
			if !fo.sameExpr(fo.stripIdentity(x.Values[i]), fo.stripIdentity(y.Values[i]), d) {
				return false
			}
		}
		return true
	}
	return false
}

// complementary reports whether two arms of an OR are a test and its
// negation on the same expression: x IS NULL / x IS NOT NULL, x IS TRUE /
// x IS NOT TRUE (one of them holds for every row), and P / NOT P, x = 5 /
// x <> 5, x < 5 / x >= 5 (for every row where x is not NULL: counted as
// true, like x = x).
func (fo *folder) complementary(arms []ast.ExprNode) bool {
	if len(arms) > 64 {
		arms = arms[:64] // quadratic below; generated ORs are long but not this shape
	}
	for i := range arms {
		for j := i + 1; j < len(arms); j++ {
			if fo.complements(arms[i], arms[j]) || fo.complements(arms[j], arms[i]) {
				return true
			}
		}
	}
	return false
}

var negatedOp = map[opcode.Op]opcode.Op{
	opcode.EQ: opcode.NE, opcode.NE: opcode.EQ, opcode.LT: opcode.GE, opcode.GE: opcode.LT,
	opcode.GT: opcode.LE, opcode.LE: opcode.GT,
}

// isNullCall returns x of ISNULL(x).
func isNullCall(e ast.ExprNode) (ast.ExprNode, bool) {
	f, ok := unparen(e).(*ast.FuncCallExpr)
	if !ok || f.FnName.L != "isnull" || f.Schema.L != "" || len(f.Args) != 1 {
		return nil, false
	}
	return f.Args[0], true
}

func (fo *folder) complements(a, b ast.ExprNode) bool {
	a, b = unparen(a), unparen(b)
	switch x := a.(type) {
	case *ast.UnaryOperationExpr:
		if x.Op == opcode.Not || x.Op == opcode.Not2 {
			return fo.sameCond(x.V, b)
		}
	case *ast.IsNullExpr:
		if e, ok := isNullCall(b); ok {
			return !x.Not && fo.sameExpr(x.Expr, e, 0) // x IS NULL / ISNULL(x): no complements
		}
		return fo.sameTest(a, b, true)
	case *ast.FuncCallExpr:
		// ISNULL(x) OR x IS NOT NULL.
		if e, ok := isNullCall(x); ok {
			y, ok := b.(*ast.IsNullExpr)
			return ok && y.Not && fo.sameExpr(e, y.Expr, 0)
		}
	case *ast.BinaryOperationExpr:
		y, ok := b.(*ast.BinaryOperationExpr)
		if n, isCmp := negatedOp[x.Op]; isCmp && ok && y.Op == n {
			return fo.sameExpr(x.L, y.L, 0) && fo.sameExpr(x.R, y.R, 0)
		}
	case *ast.IsTruthExpr, *ast.PatternLikeOrIlikeExpr, *ast.PatternInExpr, *ast.BetweenExpr:
		return fo.sameTest(a, b, true)
	}
	return false
}

// sameCond is sameExpr for conditions: comparisons, IS tests, LIKE and IN
// as well as the expressions sameExpr knows.
func (fo *folder) sameCond(a, b ast.ExprNode) bool {
	a, b = unparen(a), unparen(b)
	if fo.sameExpr(a, b, 0) {
		return true
	}
	// P and NOT P where P is a test sameExpr does not compare: P OR NOT P
	// is P's complement in both directions.
	switch a.(type) {
	case *ast.IsNullExpr, *ast.IsTruthExpr, *ast.PatternLikeOrIlikeExpr, *ast.PatternInExpr, *ast.BetweenExpr:
		return fo.sameTest(a, b, false)
	}
	return false
}

// sameTest compares two tests (IS NULL, IS [NOT] TRUE/FALSE, LIKE, IN of a
// list, BETWEEN) field by field: b is a's copy, or with negated a's
// negation (their NOT flags differ).
func (fo *folder) sameTest(a, b ast.ExprNode, negated bool) bool {
	switch x := a.(type) {
	case *ast.IsNullExpr:
		y, ok := b.(*ast.IsNullExpr)
		return ok && (x.Not != y.Not) == negated && fo.sameExpr(x.Expr, y.Expr, 0)
	case *ast.IsTruthExpr:
		y, ok := b.(*ast.IsTruthExpr)
		return ok && (x.Not != y.Not) == negated && x.True == y.True && fo.sameExpr(x.Expr, y.Expr, 0)
	case *ast.PatternLikeOrIlikeExpr:
		y, ok := b.(*ast.PatternLikeOrIlikeExpr)
		return ok && (x.Not != y.Not) == negated && x.Escape == y.Escape && fo.sameExpr(x.Expr, y.Expr, 0) && fo.sameExpr(x.Pattern, y.Pattern, 0)
	case *ast.PatternInExpr:
		y, ok := b.(*ast.PatternInExpr)
		if !ok || x.Not != y.Not || x.Sel != nil || y.Sel != nil || len(x.List) != len(y.List) || !fo.sameExpr(x.Expr, y.Expr, 0) {
			return false
		}
		for i := range x.List {
			if !fo.sameExpr(x.List[i], y.List[i], 0) {
				return false
			}
		}
		return true
	case *ast.BetweenExpr:
		y, ok := b.(*ast.BetweenExpr)
		return ok && (x.Not != y.Not) == negated && fo.sameExpr(x.Expr, y.Expr, 0) && fo.sameExpr(x.Left, y.Left, 0) && fo.sameExpr(x.Right, y.Right, 0)
	}
	return false
}

// orTautology reports whether a WHERE/HAVING/ON clause contains an OR with
// an arm that is true for every row: the injected shape `... OR 1=1`. It
// looks through AND, XOR, NOT, IS [NOT] TRUE/FALSE, comparisons, CASE, IF,
// IFNULL and COALESCE, so an OR wrapped in them counts; subqueries are
// conditions of their own (the walker visits them). An arm counts when it
// is always true (tautArm), when it is a test and its complement (x IS NULL
// OR x IS NOT NULL), and when it does not depend on the row but on a value
// the text does not hold (OR @a, OR @@version > 0, OR VERSION(): the same
// for every row, so possibly true for all of them). A clause that is true
// as a whole without an OR (`WHERE 1=1`, which query builders emit) is not
// one, nor is the optional-filter idiom (optionalFilterArm).
func (fo *folder) orTautology(e ast.ExprNode, depth int) bool {
	if e == nil || depth > maxFoldDepth {
		return false
	}
	d := depth + 1
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return fo.orTautology(x.Expr, d)
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.LogicOr {
			arms := orArmList(x, nil, 0)
			if fo.complementary(arms) {
				return true
			}
			for _, a := range arms {
				if fo.tautArm(a, arms) {
					return true
				}
			}
			for _, a := range arms {
				if fo.orTautology(a, d) {
					return true
				}
			}
			return false
		}
		return fo.orTautology(x.L, d) || fo.orTautology(x.R, d)
	case *ast.UnaryOperationExpr:
		return fo.orTautology(x.V, d)
	case *ast.IsTruthExpr:
		return fo.orTautology(x.Expr, d)
	case *ast.IsNullExpr:
		return fo.orTautology(x.Expr, d)
	case *ast.CaseExpr:
		for _, w := range x.WhenClauses {
			if fo.orTautology(w.Expr, d) || fo.orTautology(w.Result, d) {
				return true
			}
		}
		return fo.orTautology(x.ElseClause, d)
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "if", "ifnull", "nvl", "coalesce", "nullif":
			for _, a := range x.Args {
				if fo.orTautology(a, d) {
					return true
				}
			}
		}
	}
	return false
}

// tautArm reports whether one arm of an OR makes it true for every row.
// An arm that is the same for every row but not known counts only next to
// an arm that depends on the row (id = 5 OR @a bypasses a row filter;
// WHERE @x = 1 OR @x = 2 is all-or-nothing as a whole, like WHERE 1=1).
func (fo *folder) tautArm(a ast.ExprNode, arms []ast.ExprNode) bool {
	if fo.alwaysTrue(a) || (fo.unknowableArm(a) && rowArm(arms)) {
		return !fo.optionalFilterArm(a, arms)
	}
	return fo.anyRowExists(a)
}

// rowArm reports whether an arm of an OR depends on the row.
func rowArm(arms []ast.ExprNode) bool {
	for _, b := range arms {
		if !rowFree(b) {
			return true
		}
	}
	return false
}

// unknowableArm reports whether a condition does not depend on the row and
// is not known false or NULL: a user or system variable, a server
// function (VERSION(), DATABASE(), NOW()), or a constant the folding does
// not compute. It holds for every row or for none. A parameter is not one
// (it is decided by the value bound), nor is a sleep (a time probe's).
func (fo *folder) unknowableArm(a ast.ExprNode) bool {
	if !rowFree(a) {
		return false
	}
	if v, ok := fo.fold(a, 0); ok {
		return !v.null && truthy(v)
	}
	return fo.truthOf(a, 0)&tTrue != 0
}

// rowFree reports whether e is the same for every row: it refers to no
// column, parameter, aggregate, window, DEFAULT(), VALUES() or MATCH, and
// calls no sleep, lock or function whose error carries its argument
// (those are the time and error-based probes' shapes, probes.go). A subquery is free when it names no column at
// all ((SELECT COUNT(*) FROM u), EXISTS (SELECT * FROM u)): it cannot be
// correlated.
func rowFree(e ast.ExprNode) bool {
	// The common arm compares a column: known without a walk (which
	// allocates its visitor).
	var operand ast.ExprNode
	switch x := unparen(e).(type) {
	case *ast.ColumnNameExpr:
		return false
	case *ast.BinaryOperationExpr:
		if _, ok := unparen(x.R).(*ast.ColumnNameExpr); ok {
			return false
		}
		operand = x.L
	case *ast.PatternInExpr:
		operand = x.Expr
	case *ast.PatternLikeOrIlikeExpr:
		operand = x.Expr
	case *ast.IsNullExpr:
		operand = x.Expr
	case *ast.BetweenExpr:
		operand = x.Expr
	}
	if _, ok := unparen(operand).(*ast.ColumnNameExpr); ok && operand != nil {
		return false
	}
	v := &freeVisitor{free: true}
	e.Accept(v)
	return v.free
}

type freeVisitor struct {
	free bool
	sub  bool // inside a subquery: tables may be read
}

func (v *freeVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if !v.free {
		return n, true
	}
	switch x := n.(type) {
	case *ast.ColumnNameExpr, *ast.ColumnName, *test_driver.ParamMarkerExpr, *ast.AggregateFuncExpr,
		*ast.WindowFuncExpr, *ast.DefaultExpr, *ast.ValuesExpr, *ast.MatchAgainst, *ast.VariableExpr:
		if _, ok := x.(*ast.VariableExpr); ok {
			break // a variable is the same for every row (what @a := col assigns is its child)
		}
		if _, ok := x.(*ast.AggregateFuncExpr); ok && v.sub {
			break // COUNT(*) of a subquery's own rows
		}
		v.free = false
	case *ast.TableName:
		if !v.sub {
			v.free = false
		}
	case *ast.SubqueryExpr:
		if !v.sub {
			in := &freeVisitor{free: true, sub: true}
			x.Query.Accept(in)
			v.free = in.free
			return n, true
		}
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "sleep", "benchmark", "get_lock", "release_lock", "master_pos_wait", "master_gtid_wait", "source_pos_wait":
			v.free = false
		default:
			if _, ok := errorArg[x.FnName.L]; ok {
				v.free = false // an error-based probe: no-error-based-probe's (probes.go)
			}
		}
	}
	return n, !v.free
}

func (v *freeVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// anyRowExists reports whether a is EXISTS over a whole table (no WHERE,
// or an always-true one; no LIMIT, GROUP BY or HAVING): true for every
// row as soon as that table has one. OR EXISTS (SELECT * FROM users) is
// the injected shape; a correlated or filtered EXISTS is the application's.
func (fo *folder) anyRowExists(a ast.ExprNode) bool {
	ex, ok := unparen(a).(*ast.ExistsSubqueryExpr)
	if !ok || ex.Not {
		return false
	}
	sq, ok := ex.Sel.(*ast.SubqueryExpr)
	if !ok {
		return false
	}
	sel, ok := sq.Query.(*ast.SelectStmt)
	if !ok || sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right != nil || sel.Limit != nil ||
		sel.GroupBy != nil || sel.Having != nil || (sel.Where != nil && !fo.alwaysTrue(sel.Where)) {
		return false
	}
	ts, ok := sel.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return false
	}
	_, isTable := ts.Source.(*ast.TableName)
	return isTable
}

// optionalFilterArm reports whether arm is the application's optional
// filter: an arm that does not depend on the row (V IS NULL, @v = 0,
// NULL IS NULL) whose value or variable another arm of the same OR, one
// that reads a column and is not always true itself, compares with a
// column: `(col = @v OR @v IS NULL)`, `(col = NULL OR NULL IS NULL)` when
// a client library inlined a NULL parameter to mean "no filter". An
// injected arm that stands alone (OR NULL IS NULL, OR @a) is not one.
func (fo *folder) optionalFilterArm(arm ast.ExprNode, arms []ast.ExprNode) bool {
	if !rowFree(arm) || len(arms) > 64 {
		return false // the idiom has a few arms; longer ORs are not searched (quadratic)
	}
	var keys []ast.ExprNode
	if in, ok := unparen(arm).(*ast.IsNullExpr); ok && !in.Not {
		keys = append(keys, in.Expr)
	}
	arm.Accept(visitFunc(func(n ast.Node) {
		if v, ok := n.(*ast.VariableExpr); ok && v.Value == nil {
			keys = append(keys, v)
		}
	}))
	if len(keys) == 0 {
		return false
	}
	for _, b := range arms {
		if b == arm || rowFree(b) || fo.alwaysTrue(b) {
			continue
		}
		found := false
		local := *fo // a copy for the closure, so that fo does not escape
		b.Accept(visitFunc(func(n ast.Node) {
			if e, ok := n.(ast.ExprNode); ok && !found {
				for _, k := range keys {
					if local.sameExpr(e, k, 0) {
						found = true
					}
				}
			}
		}))
		if found {
			return true
		}
	}
	return false
}
