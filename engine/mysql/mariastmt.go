package mysql

import (
	"strings"

	"github.com/sqlfw/sqlfw/engine"
)

// dropObject is DROP FUNCTION | TRIGGER | EVENT [IF EXISTS] name: what
// unparsedlead.go's classifyLead knows of it, once its grammar is read whole.
func (r *mread) dropObject(i, j int) (engine.StmtFacts, bool) {
	k := i + 2
	if r.is(k, "if") {
		if !r.is(k+1, "exists") {
			return engine.StmtFacts{}, false
		}
		k += 2
	}
	if r.name(k) != j {
		return engine.StmtFacts{}, false
	}
	return r.lead(i, j)
}

// alterRoutine is ALTER {PROCEDURE | FUNCTION} name characteristic ...,
// each COMMENT 'x', LANGUAGE SQL, CONTAINS SQL, NO SQL, READS SQL DATA,
// MODIFIES SQL DATA or SQL SECURITY {DEFINER | INVOKER}: DDL on the
// routine; SQL SECURITY DEFINER makes its body run as its DEFINER from now
// on, so with a catalog the body is judged again as that account
// (engine.Reowned, as PostgreSQL's ALTER FUNCTION ... SECURITY DEFINER).
func (r *mread) alterRoutine(i, j int) (engine.StmtFacts, bool) {
	e := r.name(i + 2)
	if e < 0 || e == j {
		return engine.StmtFacts{}, false
	}
	var schema, name string
	if e == i+3 {
		name = r.t[i+2].name(r.text)
	} else if e == i+5 {
		schema, name = r.t[i+2].name(r.text), r.t[i+4].name(r.text)
	} else {
		return engine.StmtFacts{}, false
	}
	definer := false
	for k := e; k < j; {
		switch {
		case r.is(k, "comment") && r.kind(k+1) == tokString:
			k += 2
		case r.is(k, "language") && r.is(k+1, "sql"), r.is(k, "contains") && r.is(k+1, "sql"), r.is(k, "no") && r.is(k+1, "sql"):
			k += 2
		case r.isAny(k, "reads", "modifies") && r.is(k+1, "sql") && r.is(k+2, "data"):
			k += 3
		case r.is(k, "sql") && r.is(k+1, "security") && r.isAny(k+2, "definer", "invoker"):
			definer = r.is(k+2, "definer")
			k += 3
		default:
			return engine.StmtFacts{}, false
		}
	}
	st := engine.StmtFacts{Kind: engine.KindDDL, Kinds: 1 << engine.KindDDL, Verb: engine.VerbAlter, Object: r.t[i+1].name(r.text)}
	if definer {
		st.Reowned = []engine.Reowned{{Kind: engine.CatalogRoutine, Schema: schema, Name: name}}
	}
	return st, true
}

// orReplace is CREATE OR REPLACE [TEMPORARY] TABLE | SEQUENCE | DATABASE
// name ...: the server drops what has the name, then creates it. It is read
// as the CREATE, and the DROP ... IF EXISTS name is a statement of the
// text's own at the same place (r.inner), so that a rule on either verb
// sees it.
func (r *mread) orReplace(i, j int) (engine.StmtFacts, bool) {
	k := i + 3
	temp := r.is(k, "temporary")
	if temp {
		k++
	}
	object := r.t[k].name(r.text)
	if !r.isAny(k, "table", "sequence", "database", "schema") {
		return engine.StmtFacts{}, false
	}
	e := r.name(k + 1)
	if e < 0 {
		return engine.StmtFacts{}, false
	}
	st, ok := r.simple(i+3, j)
	if !ok || st.Kind != engine.KindDDL || st.Verb != engine.VerbCreate {
		// reparse "CREATE ..." without OR REPLACE
		st, ok = r.parseOne("CREATE " + r.src(i+3, j))
		if !ok {
			if st, ok = r.rewriteParse(i+3, j, "CREATE "); !ok {
				return st, false
			}
		}
	}
	drop := "DROP "
	if temp {
		drop += "TEMPORARY "
	}
	d, ok := r.parseOne(drop + object + " IF EXISTS " + r.src(k+1, e))
	if !ok || d.Verb != engine.VerbDrop {
		return st, false
	}
	d.Kinds |= 1 << d.Kind
	d.Loc, d.Length = int32(r.t[i].lo), int32(r.t[j-1].hi-r.t[i].lo)
	r.inner = append(r.inner, d)
	return st, true
}

// reset is RESET MASTER [TO n], RESET SLAVE | REPLICA ['name'] [ALL] and
// RESET QUERY CACHE. RESET MASTER deletes every binary log (the record of
// what ran, and what replicas read), RESET SLAVE a replica's position and
// connection settings: as FLUSH LOGS, they signal the server.
func (r *mread) reset(i, j int) (engine.StmtFacts, bool) {
	st := engine.StmtFacts{Kind: engine.KindUtility}
	k := i + 1
	switch {
	case r.is(k, "query") && r.is(k+1, "cache"):
		return st, k+2 == j
	case r.is(k, "master"):
		k++
		if r.is(k, "to") && r.kind(k+1) == tokWord && isDigits(r.text[r.t[k+1].lo:r.t[k+1].hi]) {
			k += 2
		}
	case r.isAny(k, "slave", "replica"):
		k++
		if r.kind(k) == tokString {
			k++
		}
		if r.is(k, "all") {
			k++
		}
	default:
		return st, false
	}
	st.Effects |= engine.EffSignalsServer
	return st, k == j
}

// alterView reports whether the ALTER at i alters a view.
func (r *mread) alterView(i, j int) bool {
	k := i + 1
	for n := 0; n < 4 && k < j; n++ {
		switch {
		case r.is(k, "algorithm") && r.kind(k+1) == '=':
			k += 3
		case r.is(k, "definer"):
			if k = r.account(k + 1); k < 0 {
				return false
			}
		case r.is(k, "sql") && r.is(k+1, "security"):
			k += 3
		}
	}
	return r.is(k, "view")
}

// xa is XA START | BEGIN | END | PREPARE | COMMIT | ROLLBACK | RECOVER
// with a transaction id of literals: a transaction statement.
func (r *mread) xa(i, j int) (engine.StmtFacts, bool) {
	if !r.isAny(i+1, "start", "begin", "end", "prepare", "commit", "rollback", "recover") {
		return engine.StmtFacts{}, false
	}
	for k := i + 2; k < j; k++ {
		switch r.kind(k) {
		case tokString, tokWord, ',', '=':
		default:
			return engine.StmtFacts{}, false
		}
	}
	return engine.StmtFacts{Kind: engine.KindTransaction}, true
}

// lead is classifyLead of tokens [i, j) (unparsedlead.go).
func (r *mread) lead(i, j int) (engine.StmtFacts, bool) {
	pc := piece{lo: r.t[i].lo, hi: r.t[j-1].hi, words: j - i}
	pc.lead = r.t[i:min(j, i+leadTokens)]
	return classifyLead(r.text, &pc)
}

// setStatement is SET STATEMENT v = x, ... FOR stmt: stmt read as any
// statement is, with the facts of SET v = x, ... (unparsed.go's
// setStatement gives what a lexing setting does to a dynamic statement).
func (r *mread) setStatement(i, j int) (engine.StmtFacts, bool) {
	depth, f := 0, -1
	for k := i + 2; k < j && f < 0; k++ {
		switch {
		case r.kind(k) == '(':
			depth++
		case r.kind(k) == ')':
			depth--
		case depth == 0 && r.is(k, "for"):
			f = k
		}
	}
	if f < 0 || f+1 >= j {
		return engine.StmtFacts{}, false
	}
	var st engine.StmtFacts
	var ok bool
	if r.programAt(f + 1) {
		var end int
		st, end, ok = r.program(f + 1)
		ok = ok && end == j
	} else {
		st, ok = r.simple(f+1, j)
	}
	if !ok {
		return st, false
	}
	set, ok := r.parseOne("SET " + r.src(i+2, f))
	if !ok || set.Kind != engine.KindSetStmt || len(set.Settings) == 0 {
		return st, false
	}
	st.Settings = append(st.Settings, set.Settings...)
	st.Effects |= set.Effects
	st.Kinds |= 1<<engine.KindSetStmt | set.Kinds&(1<<engine.KindAlterSystem)
	statementGrantee(&st, r.src(i+2, f)) // grantee.go
	for _, name := range set.Settings {
		if lexSetting(name) && !plainMode(r.src(i+2, f), name) {
			// The text a PREPARE or EXECUTE IMMEDIATE runs, a stored
			// body, and what the relay follows of the session's lexing
			// would be lexed otherwise than as read: left to
			// unparsed.go.
			return st, false
		}
	}
	return st, true
}

// returning is INSERT, REPLACE or DELETE ... RETURNING list: the
// statement (read as any is) with the facts of SELECT list. The RETURNING
// is the last one at depth 0 before which the statement reads.
func (r *mread) returning(i, j int) (engine.StmtFacts, bool) {
	depth := 0
	var at []int
	for k := i; k < j; k++ {
		switch {
		case r.kind(k) == '(':
			depth++
		case r.kind(k) == ')':
			depth--
		case depth == 0 && r.is(k, "returning"):
			at = append(at, k)
		}
	}
	for n := len(at) - 1; n >= 0 && n >= len(at)-maxReturning; n-- {
		k := at[n]
		if k+1 >= j {
			continue
		}
		st, ok := r.simple(i, k)
		if !ok {
			continue
		}
		switch {
		case st.Kind == engine.KindInsert, st.Kind == engine.KindDelete:
		case st.Kind == engine.KindExplain && !r.isAny(i, "insert", "replace", "delete"):
			// EXPLAIN DELETE ... RETURNING list: what EXPLAIN makes
			// of the DELETE, with the list's facts
		default:
			continue
		}
		list, ok := r.expr(k+1, j)
		if !ok {
			continue
		}
		merge(&st, &list)
		// The list is returned from the written table's rows: the probe
		// shapes of a select list on an application table (RETURNING
		// @@datadir, RETURNING (SELECT user())).
		if on, ok := r.parseOne("SELECT " + r.src(k+1, j) + " FROM returning_rows"); ok {
			st.Probes |= on.Probes &^ engine.ProbeCatalog
		}
		return st, true
	}
	return engine.StmtFacts{}, false
}

// tableList rewrites CHECK | CHECKSUM | REPAIR TABLE t, ... [options] as
// the TiDB statement of the same kind over the same tables: the options
// (QUICK, EXTENDED, FOR UPGRADE, USE_FRM, ...) are words only.
func (r *mread) tableList(i, j int, as string) (string, bool, bool) {
	k := i + 2
	var names []string
	for {
		e := r.name(k)
		if e < 0 || e > k+3 {
			return "", false, false
		}
		names = append(names, r.src(k, e))
		k = e
		if r.kind(k) != ',' {
			break
		}
		k++
	}
	for m := k; m < j; m++ {
		if r.kind(m) != tokWord {
			return "", false, false
		}
	}
	return as + " " + strings.Join(names, ", "), true, true
}

// usingList reads EXECUTE ... USING's values in tokens [i, j) as SELECT
// of them, each DEFAULT or IGNORE (a column's default, for INSERT and
// UPDATE: MariaDB's MDEV-15703) read as NULL, a constant.
func (r *mread) usingList(i, j int) (engine.StmtFacts, bool) {
	var b strings.Builder
	b.WriteString("SELECT ")
	depth, lo := 0, i
	piece := func(k int) {
		if lo > i {
			b.WriteString(", ")
		}
		if k == lo+1 && r.isAny(lo, "default", "ignore") {
			b.WriteString("NULL")
		} else {
			b.WriteString(r.src(lo, k))
		}
	}
	for k := i; k < j; k++ {
		switch r.kind(k) {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				piece(k)
				lo = k + 1
			}
		}
	}
	piece(j)
	return r.exprOf(b.String())
}

// backup reads MariaDB's BACKUP STAGE s, BACKUP LOCK t and BACKUP UNLOCK
// (mariabackup's): a stage blocks DDL or commits server-wide, as FLUSH
// TABLES WITH READ LOCK does (signals_server); BACKUP LOCK t takes t's
// metadata lock, as LOCK TABLES t READ; BACKUP UNLOCK is UNLOCK TABLES.
func (r *mread) backup(i, j int) (engine.StmtFacts, bool) {
	switch {
	case r.is(i+1, "stage") && r.isAny(i+2, "start", "flush", "block_ddl", "block_commit", "end") && i+3 == j:
		return r.parseOne("FLUSH TABLES WITH READ LOCK")
	case r.is(i+1, "lock") && i+2 < j && r.name(i+2) == j:
		return r.parseOne("LOCK TABLES " + r.src(i+2, j) + " READ")
	case r.is(i+1, "unlock") && i+2 == j:
		return r.parseOne("UNLOCK TABLES")
	}
	return engine.StmtFacts{}, false
}

// flush reads FLUSH [NO_WRITE_TO_BINLOG | LOCAL] option, ... with the
// options MariaDB has and TiDB does not read. Resetting counters or a
// cache's contents (QUERY CACHE, the *_STATISTICS, USER_VARIABLES,
// QUERY_RESPONSE_TIME) is what FLUSH STATUS does; reloading the server's
// keys, certificates, accounts' limits or replication state (DES_KEY_FILE,
// SSL, USER_RESOURCES, THREADS, MASTER, SLAVE, RELAY LOGS,
// CHANGED_PAGE_BITMAPS) signals the server as FLUSH HOSTS does; FLUSH
// TABLES t, ... FOR EXPORT locks them as WITH READ LOCK does.
func (r *mread) flush(i, j int) (engine.StmtFacts, bool) {
	k := i + 1
	if r.isAny(k, "no_write_to_binlog", "local") {
		k++
	}
	if r.isAny(k, "table", "tables") && r.is(j-1, "export") && r.is(j-2, "for") {
		return r.parseOne("FLUSH " + r.src(k, j-2) + " WITH READ LOCK")
	}
	signals := false
	for ; k < j; k++ {
		switch {
		case r.isAny(k, "client_statistics", "index_statistics", "table_statistics", "user_statistics", "user_variables",
			"query_response_time", "status", "tables", "table_statistics"):
		case r.is(k, "query") && r.is(k+1, "cache"):
			k++
		case r.isAny(k, "des_key_file", "ssl", "user_resources", "threads", "master", "slave", "changed_page_bitmaps",
			"hosts", "privileges", "logs"):
			signals = true
		case r.isAny(k, "error", "engine", "general", "slow", "binary", "relay") && r.is(k+1, "logs"):
			k++
			signals = true
		default:
			return engine.StmtFacts{}, false
		}
		if k+1 < j && r.kind(k+1) != ',' {
			return engine.StmtFacts{}, false
		}
		k++ // the comma
	}
	if signals {
		return r.parseOne("FLUSH HOSTS")
	}
	return r.parseOne("FLUSH STATUS")
}
