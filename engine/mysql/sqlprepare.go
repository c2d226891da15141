package mysql

// SQL-level prepared statements. The server keeps them per session, by a
// name it compares case-insensitively, and runs them later:
//
//	PREPARE del FROM 'DELETE FROM t'   -- judged now: as its DELETE (facts.go prepare)
//	EXECUTE del                        -- runs the DELETE, says nothing of it
//	DEALLOCATE PREPARE del             -- (or DROP PREPARE) the name is gone
//
// The engine judges texts, not sessions, so it only reports what a text
// does by name (engine.TextFacts.SQLOps); relay/mysql remembers each
// PREPARE the server accepted and judges it again, under the policy and
// mode of the moment, at every EXECUTE of its name. A PREPARE's span
// (InnerLo, InnerHi) is the PREPARE statement itself, as the engine read
// it: this dialect judges PREPARE name FROM 'text' as the statements text
// holds, read as the server read them when it prepared them, and FROM
// @variable as dynamic SQL (dynamic_sql), so judging that statement again
// is judging what the server holds under the name.
//
// A CALL may EXECUTE any name the session holds (a procedure's body can
// run EXECUTE s, of a statement the session prepared), so a statement that
// calls a routine, now or when it is EXECUTEd (PREPARE p FROM 'CALL p()')
// reports SQLCallRoutine: the relay then judges every name it holds.
//
// The operations depend on the text alone and are cached with its facts.
// A text TiDB does not parse gets them from its words (unparsedOps), so
// that MariaDB's SET STATEMENT ... FOR EXECUTE s, or EXECUTE s stacked
// behind a statement TiDB rejects, still names what it runs.

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// sqlOps finds the operations of a parsed text, one per top-level
// statement that prepares, executes, deallocates or calls; it costs a type
// switch per statement.
func sqlOps(tf *engine.TextFacts, stmts []ast.StmtNode) []engine.SQLOp {
	var ops []engine.SQLOp
	for i, s := range stmts {
		if i >= len(tf.Stmts) {
			break
		}
		st := &tf.Stmts[i]
		op := engine.SQLOp{Stmt: i}
		switch x := s.(type) {
		case *ast.PrepareStmt:
			op.Kind, op.Name = engine.SQLPrepare, foldName(x.Name)
			op.InnerLo, op.InnerHi = stmtSpan(st)
		case *ast.ExecuteStmt:
			op.Kind, op.Name = engine.SQLExecute, foldName(x.Name)
			for _, u := range x.UsingVars {
				v, ok := u.(*ast.VariableExpr)
				if !ok || v.IsSystem || v.Value != nil {
					op.Using = append(op.Using, "")
					continue
				}
				op.Using = append(op.Using, "@`"+strings.ReplaceAll(v.Name, "`", "``")+"`")
			}
		case *ast.DeallocateStmt:
			op.Kind, op.Name = engine.SQLDeallocate, foldName(x.Name)
		}
		if op.Kind != 0 {
			ops = append(ops, op)
		}
		if st.Kinds.Has(engine.KindCall) {
			// CALL p(), or a PREPARE of one (merged into its kinds)
			ops = append(ops, engine.SQLOp{Kind: engine.SQLCallRoutine, Stmt: i})
		}
	}
	return ops
}

// stmtSpan is the span of a statement in its text; 0, 0 when it was not
// located.
func stmtSpan(st *engine.StmtFacts) (int, int) {
	if st.Length <= 0 {
		return 0, 0
	}
	return int(st.Loc), int(st.Loc + st.Length)
}

// foldName is a prepared statement's name as the server compares it:
// case-insensitively, trailing spaces kept (measured on MariaDB 10.11:
// EXECUTE s does not run `s `, EXECUTE S runs s; e2e
// TestMySQLPreparedForgotten). Only ASCII letters are folded: what the
// server's comparison equates of other letters (accents, in
// utf8mb3_general_ci) sqlfw does not copy, and relay/mysql treats any name
// with a non-ASCII byte as possibly the same as another. Unicode's own
// lower case would turn some of those into ASCII names (KELVIN SIGN into
// k, DOTTED CAPITAL I into i), which the server keeps apart from k and i,
// so that PREPARE of one would replace the record of the other (e2e
// TestRound10PreparedNamesAcrossSwitch).
func foldName(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'A' && c <= 'Z' {
			b := []byte(name)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return name
}

// unparsedOps finds the operations of a text TiDB rejected, from its
// words: EXECUTE name (not IMMEDIATE) at the end of a statement or before
// USING, PREPARE name FROM, DEALLOCATE or DROP PREPARE name, CALL name,
// wherever they stand outside strings and comments: at a statement's
// start, after SET STATEMENT ... FOR, and inside MariaDB's compound
// statements that run now (BEGIN NOT ATOMIC, IF ... THEN, loops, labels,
// handlers). A stored program's body is read the same way, though it runs
// only when called: its EXECUTE of a name it does not PREPARE is then
// judged (or refused) already at CREATE. A PREPARE is not located ([0,
// 0)): the whole text is judged again, which is how it was judged. Texts
// without such a word pay one scan.
func unparsedOps(text string) []engine.SQLOp {
	if !mentionsOps(text) {
		return nil
	}
	var ops []engine.SQLOp
	stmt := 0
	for _, pc := range cut(text) {
		if pc.words == 0 {
			continue
		}
		var toks []token
		for i := pc.lo; ; {
			tk, more := nextToken(text[:pc.hi], i)
			if !more {
				break
			}
			toks, i = append(toks, tk), tk.hi
		}
		for k := range toks {
			if op, ok := opAt(text, toks[k:], stmt); ok {
				ops = append(ops, op)
			}
		}
		stmt++
	}
	return ops
}

// opAt reads the operation the tokens start with, in the forms the server
// parses (a name is no reserved word: SELECT execute FROM t is a column).
func opAt(text string, toks []token, stmt int) (engine.SQLOp, bool) {
	l := &lead{text: text, t: toks}
	op := engine.SQLOp{Stmt: stmt}
	name := func() (string, bool) {
		if !l.isName() || l.t[l.i].kind == tokWord && reservedAfterOp(l.t[l.i].name(text)) {
			return "", false
		}
		n := foldName(l.t[l.i].name(text))
		l.i++
		return n, true
	}
	switch {
	case l.eat("execute"):
		if l.at("immediate") {
			break
		}
		if n, ok := name(); ok && (l.i == len(l.t) || l.at("using") || l.t[l.i].kind == ';') {
			op.Kind, op.Name = engine.SQLExecute, n
			if l.eat("using") {
				op.Using = usingValues(text, l.t[l.i:])
			}
		}
	case l.eat("prepare"):
		if n, ok := name(); ok && l.at("from") {
			op.Kind, op.Name = engine.SQLPrepare, n
		}
	case l.eat("deallocate", "drop"):
		if l.eat("prepare") {
			if n, ok := name(); ok {
				op.Kind, op.Name = engine.SQLDeallocate, n
			}
		}
	case l.eat("call"):
		if l.isName() {
			op.Kind = engine.SQLCallRoutine
		}
	}
	return op, op.Kind != 0
}

// reservedAfterOp: words that end an expression, which a column named
// execute or prepare may be followed by.
func reservedAfterOp(w string) bool {
	switch w {
	case "from", "as", "and", "or", "xor", "not", "is", "in", "like", "between", "where", "having",
		"order", "group", "limit", "union", "then", "else", "end", "when", "div", "mod", "using", "on",
		"into", "for", "set", "values", "desc", "asc", "collate", "regexp", "rlike", "sounds", "escape":
		return true
	}
	return false
}

// callOps adds SQLCallRoutine for a statement that calls a routine by its
// kinds (EXECUTE IMMEDIATE 'CALL p()', a call merged from a text the
// words do not show) when no operation says so yet.
func callOps(tf *engine.TextFacts) {
	for _, o := range tf.SQLOps {
		if o.Kind == engine.SQLCallRoutine {
			return
		}
	}
	for i := range tf.Stmts {
		if tf.Stmts[i].Kinds.Has(engine.KindCall) {
			tf.SQLOps = append(tf.SQLOps, engine.SQLOp{Kind: engine.SQLCallRoutine, Stmt: i})
			return
		}
	}
}

// mentionsOps reports whether text has, in any case, a word that starts a
// statement unparsedOps looks for.
func mentionsOps(text string) bool {
	for i := 0; i+4 <= len(text); i++ {
		switch text[i] | 0x20 {
		case 'e', 'p', 'd', 'c':
		default:
			continue
		}
		for _, w := range [...]string{"execute", "prepare", "deallocate", "drop", "call"} {
			if i+len(w) <= len(text) && strings.EqualFold(text[i:i+len(w)], w) {
				return true
			}
		}
	}
	return false
}

// usingValues reads the values of EXECUTE ... USING from its tokens (to
// the end of the statement): each one's text when it is a literal the
// server reads as the same value in any statement (a number, a quoted
// string without a backslash, NULL, TRUE, FALSE, with a sign) or a user
// variable, "" otherwise (an expression: its value is not known here).
func usingValues(text string, toks []token) []string {
	var out []string
	for _, v := range topLevelList(toks) {
		out = append(out, usingValue(text, v))
	}
	return out
}

// topLevelList splits a USING list's tokens at the commas outside
// parentheses, up to the first ';' outside them.
func topLevelList(toks []token) [][]token {
	var out [][]token
	depth, lo := 0, 0
	end := len(toks)
	for k, t := range toks {
		if t.kind == ';' && depth == 0 {
			end = k
			break
		}
		switch t.kind {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, toks[lo:k])
				lo = k + 1
			}
		}
	}
	return append(out, toks[lo:end])
}

func usingValue(text string, toks []token) string {
	if len(toks) == 0 {
		return ""
	}
	src := text[toks[0].lo:toks[len(toks)-1].hi]
	if toks[0].kind == '@' {
		if len(toks) == 2 && toks[1].lo == toks[0].hi && (toks[1].kind == tokWord || toks[1].kind == tokIdent ||
			toks[1].kind == tokString) {
			return src // @v, @`v`, @'v'
		}
		return ""
	}
	k := 0
	for k < len(toks) && (toks[k].kind == '-' || toks[k].kind == '+') {
		k++
	}
	rest := toks[k:]
	switch {
	case len(rest) == 1 && rest[0].kind == tokString && text[rest[0].lo] == '\'' && k == 0:
		if strings.IndexByte(text[rest[0].lo:rest[0].hi], '\\') < 0 {
			return src
		}
	case len(rest) == 1 && rest[0].kind == tokWord && k == 0 && (rest[0].is(text, "null") || rest[0].is(text, "true") || rest[0].is(text, "false")):
		return src
	case len(rest) > 0 && numberText(text[rest[0].lo:rest[len(rest)-1].hi]):
		return src
	}
	return ""
}

// numberText: s is digits[.digits][e[+-]digits] or .digits[...], with no
// spaces.
func numberText(s string) bool {
	i, d := 0, 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			d++
		}
	}
	if d == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		e := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			e++
		}
		if e == 0 {
			return false
		}
	}
	return i == len(s)
}
