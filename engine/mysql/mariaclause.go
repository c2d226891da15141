package mysql

import (
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// intoVars reads the variables of SELECT ... INTO var, ... at i (@name,
// @'name', a local variable's name) and returns the index after them.
func (r *mread) intoVars(i, j int) (int, bool) {
	for k := i; k < j; {
		switch {
		case r.kind(k) == '@' && (r.isName(k+1) || r.kind(k+1) == tokString):
			k += 2
		case r.kind(k) == tokWord && !r.isAny(k, "from", "where", "for", "lock", "limit", "union"):
			k++
		default:
			return 0, false
		}
		if r.kind(k) != ',' {
			return k, true
		}
		k++
	}
	return 0, false
}

// jsonTable rewrites JSON_TABLE(e, p COLUMNS (...)) at k as (SELECT e, p):
// a derived table that reads what JSON_TABLE reads. The COLUMNS clause may
// hold only names, types, paths and literals (MariaDB's grammar: no
// expressions), else nothing is rewritten.
func (r *mread) jsonTable(k, j int) (edit, bool) {
	open := k + 1
	depth, cols, closeAt := 0, -1, -1
	for m := open; m < j && closeAt < 0; m++ {
		switch {
		case r.kind(m) == '(':
			depth++
		case r.kind(m) == ')':
			depth--
			if depth == 0 {
				closeAt = m
			}
		case depth == 1 && r.is(m, "columns") && cols < 0:
			cols = m
		}
	}
	if cols < 0 || closeAt < 0 || cols == open+1 {
		return edit{}, false
	}
	for m := cols + 1; m < closeAt; m++ {
		switch r.kind(m) {
		case tokWord, tokIdent, tokString, '(', ')', ',', '-', '.':
			if r.isAny(m, "select", "values", "table", "with") {
				return edit{}, false
			}
		default:
			return edit{}, false
		}
	}
	return edit{k, closeAt + 1, "(SELECT " + r.src(open+1, cols) + ")"}, true
}

// percentile rewrites PERCENTILE_CONT | PERCENTILE_DISC(x) WITHIN GROUP
// (ORDER BY list) OVER (spec) and MEDIAN(x) OVER (spec) at k as the call
// f(x) alone, which TiDB reads as a function call: the ORDER BY list and
// the window's spec are judged as a window of their own (r.extra).
func (r *mread) percentile(k, j int) (edit, bool) {
	e := r.closeParen(k+1, j)
	if e < 0 {
		return edit{}, false
	}
	m := e + 1
	var spec string
	if r.is(m, "within") && r.is(m+1, "group") && r.kind(m+2) == '(' && r.is(m+3, "order") && r.is(m+4, "by") {
		g := r.closeParen(m+2, j)
		if g < 0 {
			return edit{}, false
		}
		spec = "ORDER BY " + r.src(m+5, g)
		m = g + 1
	}
	if spec != "" {
		f, ok := r.windowSpec(spec)
		if !ok {
			return edit{}, false
		}
		r.extra = append(r.extra, f)
	}
	if !r.is(m, "over") {
		return edit{}, false
	}
	end := m + 2
	switch {
	case r.kind(m+1) == '(':
		o := r.closeParen(m+1, j)
		if o < 0 {
			return edit{}, false
		}
		if o > m+2 {
			f, ok := r.windowSpec(r.src(m+2, o))
			if !ok {
				return edit{}, false
			}
			r.extra = append(r.extra, f)
		}
		end = o + 1
	case r.isName(m + 1):
	default:
		return edit{}, false
	}
	return edit{e + 1, end, ""}, true
}

// windowSpec reads a window's spec (PARTITION BY ..., ORDER BY ..., a
// frame) as TiDB reads it in ROW_NUMBER() OVER (spec), whose call is
// not the text's.
func (r *mread) windowSpec(spec string) (engine.StmtFacts, bool) {
	f, ok := r.exprOf("SELECT ROW_NUMBER() OVER (" + spec + ")")
	if !ok || len(f.Funcs) == 0 || f.Funcs[0] != (engine.FuncRef{Name: "row_number"}) {
		return f, false
	}
	f.Funcs = f.Funcs[1:]
	return f, true
}

// aggregateLimit reports whether the LIMIT at k is inside the parentheses
// of a GROUP_CONCAT or JSON_ARRAYAGG call (and not of a subquery in it).
func (r *mread) aggregateLimit(i, k int) bool {
	depth := 0
	for m := k - 1; m > i; m-- {
		switch r.kind(m) {
		case ')':
			depth++
		case '(':
			if depth == 0 {
				return r.isAny(m-1, "group_concat", "json_arrayagg") && !r.isAny(m+1, "select", "with")
			}
			depth--
		}
	}
	return false
}

// fetchFirst returns the index after FETCH FIRST | NEXT [n] ROW | ROWS
// ONLY | WITH TIES at k.
func (r *mread) fetchFirst(k, j int) (int, bool) {
	m := k + 2
	if r.kind(m) == tokWord && isDigits(r.text[r.t[m].lo:r.t[m].hi]) {
		m++
	}
	if !r.isAny(m, "row", "rows") {
		return 0, false
	}
	m++
	switch {
	case r.is(m, "only"):
		return m + 1, true
	case r.is(m, "with") && r.is(m+1, "ties"):
		return m + 2, true
	}
	return 0, false
}

// fetchCount is the n of FETCH FIRST n ROWS at k (1 without one).
func (r *mread) fetchCount(k int) string {
	if r.kind(k+2) == tokWord && isDigits(r.text[r.t[k+2].lo:r.t[k+2].hi]) {
		return r.src(k+2, k+3)
	}
	return "1"
}

// unknownCount stands for a LIMIT count held in a variable: the largest.
const unknownCount = "18446744073709551615"

// valuesRows rewrites VALUES (a, b), (c, d) at k as SELECT a, b, c, d: the
// rows' expressions, each judged where it is.
func (r *mread) valuesRows(k, j int) ([]edit, bool) {
	eds := []edit{{k, k + 1, "SELECT"}}
	m := k + 1
	for {
		if r.kind(m) != '(' || r.kind(m+1) == ')' {
			return nil, false
		}
		c := r.closeParen(m, j)
		if c < 0 {
			return nil, false
		}
		eds = append(eds, edit{m, m + 1, ""}, edit{c, c + 1, ""})
		if r.kind(c+1) != ',' || r.kind(c+2) != '(' {
			return eds, true
		}
		m = c + 2
	}
}

// matchColumns returns the index after MATCH's a, b, ... at k when
// AGAINST follows them, or -1.
func (r *mread) matchColumns(k, j int) int {
	for m := k; m < j; {
		e := r.name(m)
		if e < 0 {
			return -1
		}
		if r.is(e, "against") {
			return e
		}
		if r.kind(e) != ',' {
			return -1
		}
		m = e + 1
	}
	return -1
}

// systemTime returns the index after FOR | BEFORE SYSTEM_TIME's clause at
// k (AS OF e, BETWEEN e AND e, FROM e TO e; BEFORE: e), each e an operand
// ([TIMESTAMP | TRANSACTION] a literal, variable, name, call or
// parenthesised expression) judged on its own.
func (r *mread) systemTime(k, j int) (int, bool) {
	operand := func(m int) (int, bool) {
		if r.isAny(m, "timestamp", "transaction") && r.kind(m+1) != '(' && r.kind(m+1) != ',' && r.kind(m+1) != ')' {
			m++
		}
		e := r.bitExpr(m, j, 0)
		if e < 0 || !r.aside(m, e) {
			return 0, false
		}
		return e, true
	}
	m := k + 2
	switch {
	case r.is(k, "before"):
		return operand(m)
	case r.is(m, "as") && r.is(m+1, "of"):
		return operand(m + 2)
	case r.isAny(m, "between", "from"):
		e, ok := operand(m + 1)
		if !ok || !(r.is(m, "between") && r.is(e, "and") || r.is(m, "from") && r.is(e, "to")) {
			return 0, false
		}
		return operand(e + 1)
	}
	return 0, false
}

// tableListStart reports whether token k is where a table of a FROM,
// JOIN or UPDATE list starts: that word, or the "," after a simple item
// of such a list (name[.name] [[AS | =] alias]), so that FROM t = a, u = b
// reads u = b as a table and its alias, and SELECT a, b = c FROM t reads b
// = c as the comparison it is.
func (r *mread) tableListStart(k int) bool {
	for n := 0; n < maxListItems; n++ {
		if r.isAny(k, "from", "join", "straight_join") || r.is(k, "update") && !r.is(k-1, "key") {
			return true
		}
		if r.kind(k) != ',' {
			return false
		}
		m := k - 1
		if r.isName(m) && (r.kind(m-1) == '=' || r.is(m-1, "as")) {
			m -= 2
		} else if r.isName(m) && r.isName(m-1) && !r.isAny(m-1, "from", "join", "straight_join", "update") {
			m--
		}
		if !r.isName(m) || r.loose(m) {
			return false
		}
		if r.kind(m-1) == '.' && r.isName(m-2) {
			m -= 2
		}
		k = m - 1
	}
	return false
}

// maxListItems bounds the items tableListStart looks back over.
const maxListItems = 64

// bitExpr returns the index after the bit_expr (MariaDB's sql_yacc.yy)
// that starts at k, or -1: operands (operandAfter; a DATE, TIME or
// TIMESTAMP literal; INTERVAL e unit) joined by the operators that bind
// more than a comparison (+ - * / % DIV MOD | & ^ << >>), each with its
// unary - + ~. FOR SYSTEM_TIME's bounds are bit_exprs: AS OF
// TIMESTAMP'2020-01-01' + INTERVAL 1 DAY is one bound, and BETWEEN a + 1
// AND b ends the first at AND.
func (r *mread) bitExpr(k, j, depth int) int {
	for n := 0; n < maxBitOperands && depth < maxBitOperands; n++ {
		for k < j && (r.kind(k) == '-' || r.kind(k) == '+' || r.kind(k) == '~') {
			k++
		}
		var e int
		switch {
		case r.is(k, "interval"):
			if e = r.bitExpr(k+1, j, depth+1); e < 0 || !r.isName(e) || r.kind(e) != tokWord {
				return -1
			}
			e++
		case r.isAny(k, "date", "time", "timestamp") && r.kind(k+1) == tokString:
			e = k + 2
		default:
			if e = r.operandAfter(k, j); e < 0 {
				return -1
			}
		}
		switch {
		case e+1 < j && (r.kind(e) == '<' && r.kind(e+1) == '<' || r.kind(e) == '>' && r.kind(e+1) == '>'):
			k = e + 2
		case e < j && strings.IndexByte("+-*/%|&^", r.kind(e)) >= 0, r.isAny(e, "div", "mod"):
			k = e + 1
		default:
			return e
		}
	}
	return -1
}

// maxBitOperands bounds the operands bitExpr reads, and its depth (it
// recurses for INTERVAL).
const maxBitOperands = 64

// periodFor returns the index after PERIOD FOR name (a, b) at k: names only.
func (r *mread) periodFor(k, j int) (int, bool) {
	if !r.isName(k+2) || r.kind(k+3) != '(' {
		return 0, false
	}
	e := r.closeParen(k+3, j)
	if e < 0 {
		return 0, false
	}
	for m := k + 4; m < e; m++ {
		if !r.isName(m) && r.kind(m) != ',' {
			return 0, false
		}
	}
	return e + 1, true
}

// weightOptions returns the tokens [m, e) of WEIGHT_STRING's options in the
// call whose '(' is at k: AS CHAR | BINARY (n) and LEVEL n [ASC | DESC]
// [REVERSE], ... | n - m, after its first argument, up to the ')' at e.
// m is 0 when the call has none, or something else.
func (r *mread) weightOptions(k, j int) (int, int) {
	e := r.closeParen(k, j)
	if e < 0 {
		return 0, 0
	}
	m, depth := 0, 0
	for p := k + 1; p < e; p++ {
		switch r.kind(p) {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 && p > k+1 && r.isAny(p, "as", "level") && (r.is(p, "level") || r.isAny(p+1, "char", "binary")) {
			m = p
			break
		}
	}
	if m == 0 {
		return 0, 0
	}
	for p := m; p < e; p++ {
		w := r.text[r.t[p].lo:r.t[p].hi]
		if c := r.kind(p); c != '(' && c != ')' && c != ',' && c != '-' && !isDigits(w) &&
			!r.isAny(p, "as", "char", "binary", "level", "asc", "desc", "reverse") {
			return 0, 0
		}
	}
	return m, e
}

// havingStops end a HAVING condition: the clauses that can follow it.
var havingStops = []string{"order", "limit", "window", "union", "except", "intersect", "minus",
	"into", "for", "lock", "procedure", "fetch", "offset"}

// havingFirst returns, for the HAVING at token k of a SELECT with no table
// (in the statement's tokens [i, j)), the token before which TiDB takes it
// (the first of FROM DUAL, WHERE and GROUP BY after the SELECT list) and
// the end of its condition; -1 when the SELECT reads a table or has an
// INTO (TiDB reads those as they are, or not at all), or when the HAVING
// is already right after the list. MariaDB's grammar (sql_yacc.yy
// query_specification) has one HAVING after the optional FROM, WHERE and
// GROUP BY, and FROM DUAL is no table: the moved text is the same SELECT.
func (r *mread) havingFirst(i, k, j int) (p, e int) {
	p, depth := -1, 0
	for m := k - 1; m >= i; m-- {
		switch r.kind(m) {
		case ')':
			depth++
			continue
		case '(':
			if depth == 0 {
				return -1, -1
			}
			depth--
			continue
		}
		if depth > 0 {
			continue
		}
		switch {
		case r.is(m, "select"):
			if p < 0 {
				return -1, -1
			}
			e = r.exprEnd(k+1, havingStops...)
			if e > j {
				e = j
			}
			if e <= k+1 {
				return -1, -1
			}
			return p, e
		case r.is(m, "from"):
			if !r.is(m+1, "dual") {
				return -1, -1
			}
			p = m
		case r.isAny(m, "where", "group"):
			p = m
		case r.isAny(m, "union", "except", "intersect", "having", "order", "limit", "window"):
			return -1, -1
		}
	}
	return -1, -1
}
