package relaytest

import (
	"hash/fnv"
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// Dialect is a toy dialect: it reads a text as statements separated by
// ";", each of the kind its first word names, with just enough more for
// the relays' decisions: SQL-level PREPARE, EXECUTE, DEALLOCATE and CALL
// (as engine/mysql reports them), a bare parameter after WHERE, FLUSH and
// RESET signalling the server, CONCAT( as text assembled at run time.
type Dialect struct{}

func (Dialect) Name() string { return "test" }
func (Dialect) Read(sql []byte, _ *engine.LexState) ([]byte, string, string, bool) {
	return sql, "", "", true
}
func (Dialect) Prescan(text string, _ int) engine.LexStats {
	return engine.LexStats{Bytes: len(text)}
}
func (Dialect) Analyze(text string, lex engine.LexStats) *engine.TextFacts {
	tf := &engine.TextFacts{Lex: lex}
	off := 0
	for _, st := range strings.Split(text, ";") {
		loc := off
		off += len(st) + 1
		w := strings.Fields(strings.ToLower(st))
		if len(w) == 0 {
			continue
		}
		k := engine.KindUtility
		switch w[0] {
		case "select":
			k = engine.KindSelect
		case "insert", "load":
			k = engine.KindInsert
		case "delete":
			k = engine.KindDelete
		case "drop", "create":
			k = engine.KindDDL
		case "use", "set":
			k = engine.KindSetStmt
		case "begin", "commit", "rollback":
			k = engine.KindTransaction
		}
		kinds := engine.KindSet(1 << k)
		var bare []engine.BareParam
		var bareWhere engine.KindSet
		if strings.HasSuffix(strings.TrimSpace(strings.ToLower(st)), "where ?") {
			// a bare parameter (engine/mysql params.go)
			bare = []engine.BareParam{{Index: 0}}
			if k == engine.KindDelete {
				bareWhere = 1 << k
			}
		}
		// SQL-level prepared statements, as engine/mysql reports them
		// (sqlprepare.go): PREPARE name FROM <statement> has the kind of
		// the statement it prepares too
		i := len(tf.Stmts)
		switch {
		case w[0] == "prepare" && len(w) > 3 && w[2] == "from":
			inner := Dialect{}.Analyze(strings.Join(w[3:], " "), lex)
			if len(inner.Stmts) > 0 {
				kinds |= inner.Stmts[0].Kinds
				bare, bareWhere = inner.Stmts[0].BareParams, inner.Stmts[0].BareWhere
			}
			tf.SQLOps = append(tf.SQLOps, engine.SQLOp{Kind: engine.SQLPrepare, Name: w[1], Stmt: i, InnerLo: loc, InnerHi: loc + len(st)})
		case w[0] == "execute" && len(w) > 1 && w[1] != "immediate":
			tf.SQLOps = append(tf.SQLOps, engine.SQLOp{Kind: engine.SQLExecute, Name: w[1], Stmt: i})
		case w[0] == "deallocate" && len(w) > 2:
			tf.SQLOps = append(tf.SQLOps, engine.SQLOp{Kind: engine.SQLDeallocate, Name: w[2], Stmt: i})
		}
		if strings.Contains(strings.ToLower(st), "call ") {
			tf.SQLOps = append(tf.SQLOps, engine.SQLOp{Kind: engine.SQLCallRoutine, Stmt: i})
		}
		var eff engine.EffectSet
		if w[0] == "reset" || w[0] == "flush" && len(w) > 1 && w[1] != "status" && w[1] != "tables" {
			eff = engine.EffSignalsServer // as engine/mysql effects.go (FLUSH LOGS, RESET MASTER, ...)
		}
		tf.Stmts = append(tf.Stmts, engine.StmtFacts{Kind: k, Kinds: kinds, Loc: int32(loc), Length: int32(len(st)),
			BareParams: bare, BareWhere: bareWhere, Effects: eff,
			DynamicSQL: strings.Contains(strings.ToLower(st), "concat(")}) // text assembled at run time
	}
	return tf
}
func (Dialect) Fingerprint(stmt string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(stmt))
	return h.Sum64()
}
func (Dialect) Normalize(stmt string) (string, error) { return stmt, nil }
func (Dialect) Objects() []string                     { return []string{"table"} }
func (Dialect) Fills(string) bool                     { return true }

// Sessions reads what a text changes in the session for Dialect
// (engine.SessionEffector): a relay's tests set it to their protocol's
// dialect, whose reading the relay applies; nil reads nothing.
var Sessions engine.SessionEffector

func (Dialect) SessionEffects(sql []byte, dynamic bool) engine.SessionEffects {
	if Sessions == nil {
		return engine.SessionEffects{}
	}
	return Sessions.SessionEffects(sql, dynamic)
}

func (Dialect) ReportedGrant(mode []byte) (engine.GrantMode, bool) {
	if Sessions == nil {
		return engine.GrantSame, false
	}
	return Sessions.ReportedGrant(mode)
}

func (Dialect) DatabaseName(name []byte) string {
	if Sessions == nil {
		return string(name)
	}
	return Sessions.DatabaseName(name)
}
