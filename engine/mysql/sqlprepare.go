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

// foldName is a prepared statement's name as the server compares it,
// case-insensitively (MariaDB: its statement map's keys in
// utf8mb3_general_ci, which also equates letters with and without accents:
// relay/mysql treats any non-ASCII name as possibly the same as another).
func foldName(name string) string { return strings.ToLower(name) }

// unparsedOps finds the operations of a text TiDB rejected, from the words
// each statement starts with: EXECUTE name (not IMMEDIATE), PREPARE name
// FROM, DEALLOCATE or DROP PREPARE name, CALL. A statement starts a piece
// of the text (unparsed.go's cut, at each ";"), follows SET STATEMENT ...
// FOR, or follows the words that open a statement inside MariaDB's
// compound statements (BEGIN NOT ATOMIC ..., IF ... THEN ..., ELSE, LOOP,
// REPEAT, DO, a label's ":"), which run now. A stored program's body is
// read the same way, though it runs only when called: its EXECUTE of a
// name it does not PREPARE is then judged (or refused) already at CREATE.
// A PREPARE is not located ([0, 0)): the whole text is judged again, which
// is how it was judged. Texts without such a word pay one scan.
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
			if k > 0 && !opensStatement(text, toks, k-1) {
				continue
			}
			if op, ok := opAt(text, toks[k:], stmt); ok {
				ops = append(ops, op)
			}
		}
		stmt++
	}
	return ops
}

// opensStatement: a statement may start after token k.
func opensStatement(text string, toks []token, k int) bool {
	t := toks[k]
	if t.kind == ':' {
		return true // a label
	}
	if t.kind != tokWord {
		return false
	}
	for _, w := range [...]string{"atomic", "then", "else", "loop", "repeat", "do", "begin"} {
		if t.is(text, w) {
			return true
		}
	}
	// SET STATEMENT ... FOR stmt
	return t.is(text, "for") && len(toks) > 1 && toks[0].is(text, "set") && toks[1].is(text, "statement")
}

// opAt reads the operation the tokens start with.
func opAt(text string, toks []token, stmt int) (engine.SQLOp, bool) {
	l := &lead{text: text, t: toks}
	op := engine.SQLOp{Stmt: stmt}
	switch {
	case l.eat("execute"):
		if !l.at("immediate") && l.isName() {
			op.Kind, op.Name = engine.SQLExecute, l.t[l.i].name(text)
		}
	case l.eat("prepare"):
		if l.isName() {
			op.Kind, op.Name = engine.SQLPrepare, l.t[l.i].name(text)
		}
	case l.eat("deallocate", "drop"):
		if l.eat("prepare") && l.isName() {
			op.Kind, op.Name = engine.SQLDeallocate, l.t[l.i].name(text)
		}
	case l.at("call"):
		op.Kind = engine.SQLCallRoutine
	}
	return op, op.Kind != 0
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
