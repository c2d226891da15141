package pgsql

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

	"github.com/sqlfw/sqlfw/engine"
)

// sqlOps finds the operations of a parsed text. It looks only at each
// statement's top node (and the statement an EXPLAIN ANALYZE or CREATE
// TABLE AS runs), so it costs nothing measurable on the cold path.
func sqlOps(tree *pg_query.ParseResult, text string) []engine.SQLOp {
	var ops []engine.SQLOp
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
		op := engine.SQLOp{Stmt: i}
		switch s := n.Node.(type) {
		case *pg_query.Node_PrepareStmt:
			op.Kind, op.Name = engine.SQLPrepare, s.PrepareStmt.Name
			op.InnerLo, op.InnerHi = innerSpan(text, raw, pg_query.Token_AS)
		case *pg_query.Node_ExecuteStmt:
			op.Kind, op.Name = engine.SQLExecute, s.ExecuteStmt.Name
		case *pg_query.Node_DeallocateStmt:
			op.Kind, op.Name = engine.SQLDeallocate, s.DeallocateStmt.Name
		case *pg_query.Node_DeclareCursorStmt:
			op.Kind, op.Name = engine.SQLDeclare, s.DeclareCursorStmt.Portalname
			op.Hold = s.DeclareCursorStmt.Options&cursorOptHold != 0
			op.InnerLo, op.InnerHi = innerSpan(text, raw, pg_query.Token_FOR)
		case *pg_query.Node_FetchStmt:
			op.Kind, op.Name = engine.SQLFetch, s.FetchStmt.Portalname
		case *pg_query.Node_ClosePortalStmt:
			op.Kind, op.Name = engine.SQLClose, s.ClosePortalStmt.Portalname
		case *pg_query.Node_DiscardStmt:
			if s.DiscardStmt.Target != pg_query.DiscardMode_DISCARD_ALL {
				continue
			}
			op.Kind = engine.SQLDiscardAll
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
