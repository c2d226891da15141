package engine

// SQL-level statements that act on a session's named objects. The server
// keeps prepared statements and cursors by name and runs them later:
//
//	PREPARE del AS DELETE FROM t        -- judged now: its DELETE
//	EXECUTE del                         -- runs the DELETE, says nothing of it
//	DECLARE c CURSOR WITH HOLD FOR SELECT pg_read_file('/etc/passwd')
//	FETCH ALL FROM c                    -- reads what the DECLARE named
//
// The engine judges texts, not sessions, so it only reports what such a
// text does by name (SQLOps); the daemon remembers the PREPAREd and DECLAREd
// texts and judges them again when an EXECUTE or FETCH comes after a policy
// reload or a mode switch. The operations depend on the text alone, so they
// are cached with its facts.

import (
	pg_query "github.com/pganalyze/pg_query_go/v5"
)

// SQLOpKind is what a statement does to a named session object.
type SQLOpKind uint8

const (
	// SQLPrepare is PREPARE name AS statement; Inner locates the statement.
	SQLPrepare SQLOpKind = iota + 1
	// SQLExecute runs a prepared statement: EXECUTE name, also inside
	// EXPLAIN ANALYZE and CREATE TABLE ... AS EXECUTE.
	SQLExecute
	// SQLDeallocate is DEALLOCATE name, or DEALLOCATE ALL when Name is "".
	SQLDeallocate
	// SQLDeclare is DECLARE name CURSOR FOR query; Inner locates the query,
	// Hold is set for WITH HOLD.
	SQLDeclare
	// SQLFetch reads a cursor: FETCH or MOVE.
	SQLFetch
	// SQLClose is CLOSE name, or CLOSE ALL when Name is "".
	SQLClose
	// SQLDiscardAll is DISCARD ALL (every prepared statement and cursor).
	SQLDiscardAll
)

// SQLOp is one such operation of a judged text.
type SQLOp struct {
	Kind SQLOpKind
	// Name is the object's name as the server folds it (lower case unless
	// quoted).
	Name string
	// Stmt is the index of the statement in the text (0 for a Parse).
	Stmt int
	// Inner is the byte span [lo, hi) of the PREPAREd statement or the
	// DECLAREd query in the text; [0, 0) when it could not be located, in
	// which case the caller must not trust the operation.
	InnerLo, InnerHi int
	Hold             bool
}

// SQLOps returns the named-object operations of a text JudgePostgres judged
// in session s (Verdict.SessionOps says whether there are any), and the text
// their spans refer to: sql itself, or, when the session's settings change
// how the server lexes it, the text the engine judged in its place (a text
// to judge again with the default LexState). The slice is shared: callers
// must not modify it.
func (e *Engine) SQLOps(sql []byte, s *Session) ([]SQLOp, []byte) {
	if s != nil && !s.Lex.readsAsIs() {
		var ok bool
		if sql, _, ok = e.lexRead(sql, &s.Lex); !ok {
			return nil, nil
		}
	}
	return e.facts(sql).SQLOps, sql
}

// sqlOps finds the operations of a parsed text. It looks only at each
// statement's top node (and the statement an EXPLAIN ANALYZE or CREATE
// TABLE AS runs), so it costs nothing measurable on the cold path.
func sqlOps(tree *pg_query.ParseResult, text string) []SQLOp {
	var ops []SQLOp
	for i, raw := range tree.Stmts {
		n := raw.GetStmt()
		// the statements that run another one
		for {
			if ex := n.GetExplainStmt(); ex != nil && explainAnalyze(ex) {
				n = ex.Query
				continue
			}
			if ct := n.GetCreateTableAsStmt(); ct != nil {
				n = ct.Query
				continue
			}
			break
		}
		if n == nil {
			continue
		}
		op := SQLOp{Stmt: i}
		switch s := n.Node.(type) {
		case *pg_query.Node_PrepareStmt:
			op.Kind, op.Name = SQLPrepare, s.PrepareStmt.Name
			op.InnerLo, op.InnerHi = innerSpan(text, raw, pg_query.Token_AS)
		case *pg_query.Node_ExecuteStmt:
			op.Kind, op.Name = SQLExecute, s.ExecuteStmt.Name
		case *pg_query.Node_DeallocateStmt:
			op.Kind, op.Name = SQLDeallocate, s.DeallocateStmt.Name
		case *pg_query.Node_DeclareCursorStmt:
			op.Kind, op.Name = SQLDeclare, s.DeclareCursorStmt.Portalname
			op.Hold = s.DeclareCursorStmt.Options&cursorOptHold != 0
			op.InnerLo, op.InnerHi = innerSpan(text, raw, pg_query.Token_FOR)
		case *pg_query.Node_FetchStmt:
			op.Kind, op.Name = SQLFetch, s.FetchStmt.Portalname
		case *pg_query.Node_ClosePortalStmt:
			op.Kind, op.Name = SQLClose, s.ClosePortalStmt.Portalname
		case *pg_query.Node_DiscardStmt:
			if s.DiscardStmt.Target != pg_query.DiscardMode_DISCARD_ALL {
				continue
			}
			op.Kind = SQLDiscardAll
		default:
			continue
		}
		ops = append(ops, op)
	}
	return ops
}

// cursorOptHold is CURSOR_OPT_HOLD (src/include/nodes/parsenodes.h).
const cursorOptHold = 0x0020

// innerSpan locates the statement after the first `sep` keyword outside
// parentheses (AS for PREPARE name (types) AS ..., FOR for DECLARE name
// ... CURSOR FOR ...): from the token after it to the end of the statement.
// It returns 0, 0 when the text does not scan as expected.
func innerSpan(text string, raw *pg_query.RawStmt, sep pg_query.Token) (int, int) {
	lo := int(raw.StmtLocation)
	hi := len(text)
	if raw.StmtLen > 0 {
		hi = lo + int(raw.StmtLen)
	}
	if lo < 0 || lo > hi || hi > len(text) {
		return 0, 0
	}
	sc, err := pg_query.Scan(text[lo:hi])
	if err != nil {
		return 0, 0
	}
	depth := 0
	for i, t := range sc.Tokens {
		switch t.Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			depth--
		case sep:
			if depth == 0 && i+1 < len(sc.Tokens) {
				return lo + int(sc.Tokens[i+1].Start), hi
			}
		}
	}
	return 0, 0
}
