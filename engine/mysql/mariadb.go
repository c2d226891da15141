package mysql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/charset"

	"github.com/sqlfw/sqlfw/engine"
)

// MariaDB's own syntax, read where TiDB's grammar stops. A text TiDB's
// parser rejects (only then: a text it parses never comes here, so the
// cached and the parsed paths are unchanged) is read again as the server's
// statements, each one as MariaDB reads it:
//
//	EXPLAIN EXTENDED SELECT 1; SELECT CAST(a AS INT) FROM t
//
// is read as the two statements "EXPLAIN SELECT 1" and "SELECT CAST(a AS
// SIGNED) FROM t", each parsed by TiDB and judged with its full facts, at
// the location of its original text (fingerprints are of the original).
//
// Why rewriting tokens and not a grammar of our own: TiDB's parser already
// reads all of each statement but a word or a clause, and every fact
// (tables, functions, effects, kinds, folding) comes from its tree. A
// rewrite replaces only words whose meaning is the same in TiDB's
// spelling, so the facts of the rewritten text are the facts of the
// original; a clause TiDB has no spelling for is judged as the statement
// it can be split into (RETURNING list: the statement and SELECT list).
// The rewrites, on the tokens of the reading (prescan.go's nextToken, which
// tokenises as the server does), never on raw text:
//
//	EXPLAIN | DESCRIBE EXTENDED | PARTITIONS      EXPLAIN
//	CAST(x AS INT | INTEGER)                      CAST(x AS SIGNED)
//	a SOUNDS LIKE b                               SOUNDEX(a) = SOUNDEX(b) (a and b names,
//	                                              literals, calls or parenthesised)
//	VALUE(c)                                      VALUES(c)
//	SELECT ... INTO @v, local_v [FROM ...]        SELECT ... [FROM ...] (a variable is
//	                                              not a fact; INTO OUTFILE stays, DUMPFILE
//	                                              is OUTFILE)
//	CHARACTER SET | CHARSET | USING | NAMES cs,   utf8mb4, _utf8mb4, for a character set
//	_cs 'literal'                                 MariaDB has and TiDB does not (koi8r,
//	                                              ucs2, utf16, cp1251, ...)
//	COLLATE co (one TiDB does not know)           utf8mb4_bin (co is _bin or _cs: folded
//	                                              as case-sensitive) or utf8mb4_general_ci
//	CHECK | CHECKSUM TABLE t, ... [options]       ADMIN CHECK | CHECKSUM TABLE t, ...
//	REPAIR TABLE t, ... [options]                 OPTIMIZE TABLE t, ... (it rebuilds)
//	ANALYZE TABLE t PERSISTENT FOR ...            ANALYZE TABLE t
//	INSERT | REPLACE | DELETE ... RETURNING list  the statement, with SELECT list's facts
//	SET STATEMENT v = x, ... FOR stmt             stmt read so, with SET v = x's facts
//	JSON_TABLE(e, p COLUMNS (...)) [AS] a         (SELECT e, p) AS a: the columns clause
//	                                              holds names, types and literals only
//	CREATE OR REPLACE TABLE | SEQUENCE | DATABASE CREATE ..., and DROP ... IF EXISTS name as
//	                                              a statement of its own at the same place
//	CAST(x AS DOUBLE(m, d) | VARCHAR(n) |         CAST(x AS DECIMAL(m, d) | CHAR(n) | TIME)
//	  INTERVAL DAY_SECOND(n))
//	AS rank (a window function's name)            AS `rank`
//	DROP CONSTRAINT | FOREIGN KEY IF EXISTS c     DROP CONSTRAINT | FOREIGN KEY c
//	[LIMIT n] ROWS EXAMINED m                     [LIMIT n]
//	WITH [CASCADED | LOCAL] CHECK OPTION (views)  nothing (it checks writes through the view)
//	POINT, GEOMETRY, ... columns; SPATIAL INDEX   BLOB columns; INDEX
//	CHAR(n) ASCII | UNICODE; YEAR(2) columns      CHARACTER SET utf8mb4; YEAR
//	WITH RECURSIVE ... CYCLE a, ... RESTRICT      without the CYCLE clause (judged as the
//	                                              unbounded recursion it would be)
//	COLUMN_CREATE | COLUMN_ADD | COLUMN_GET       the same without AS type
//	  (..., v AS type, ...)
//	GROUP_CONCAT | JSON_ARRAYAGG(... LIMIT n)     without the LIMIT
//	XA START | END | PREPARE | COMMIT | ... xid   a transaction statement
//	RESET MASTER | SLAVE | REPLICA | QUERY CACHE  utility; signals_server but QUERY CACHE
//	FLUSH DES_KEY_FILE | SSL | USER_RESOURCES |   FLUSH HOSTS (signals_server); FLUSH
//	  QUERY CACHE | *_STATISTICS, ...             STATUS for the counters and caches (flush)
//	FROM t = a (table_alias "=")                  FROM t AS a
//	an integer of more than 81 digits             MariaDB's DECIMAL of it (longInteger)
//	WEIGHT_STRING(s AS CHAR(n) LEVEL 1-3)         WEIGHT_STRING(s)
//	row, generated, ... as a column in a WHERE    `row`, `generated`, ...
//	FOR SYSTEM_TIME AS OF e | BETWEEN e AND e |   nothing, each e judged on its own
//	  FROM e TO e; BEFORE SYSTEM_TIME e           (systemTime)
//	GENERATED ALWAYS AS ROW START | END,          nothing (names only); alone in an ALTER:
//	  PERIOD FOR p (a, b), ADD | DROP SYSTEM      FORCE
//	  VERSIONING
//	BACKUP STAGE s | LOCK t | UNLOCK              FLUSH TABLES WITH READ LOCK | LOCK TABLES t
//	                                              READ | UNLOCK TABLES (backup)
//	SIGNAL, RESIGNAL, GET DIAGNOSTICS             utility, with the facts of SET item = e
//	DROP FUNCTION | TRIGGER | EVENT, SHOW CREATE   what unparsed.go's classifyLead gives
//	  TRIGGER | FUNCTION | EVENT | PACKAGE, SHOW
//	  PROCEDURE | FUNCTION CODE
//	SHOW PACKAGE [BODY] STATUS [LIKE | WHERE]    SHOW PROCEDURE STATUS with its condition
//	SHOW BINARY | MASTER LOGS, SHOW ENGINE e     utility (the server's state)
//	  STATUS | MUTEX | LOGS
//	EXECUTE s USING 100, 'a', e                   EXECUTE s, with SELECT 100, 'a', e's facts
//
// Some forms have an expression where TiDB takes a literal or nothing; the
// expression is then judged on its own, as SELECT e, and its facts are the
// statement's (mread.extra), while a literal stands in its place:
//
//	LIKE p ESCAPE (e)                             LIKE p ESCAPE '!'
//	LEAD | LAG | NTH_VALUE(x, e), NTILE(e)        the same with 1 for e
//	PERCENTILE_CONT | PERCENTILE_DISC(x) WITHIN   f(x), with the ORDER BY list and the
//	  GROUP (ORDER BY l) OVER (spec), MEDIAN(x)   spec read as ROW_NUMBER() OVER (spec)
//	  OVER (spec)                                 (whose call is not the text's)
//
// Stored programs and compound statements (CREATE PROCEDURE, FUNCTION,
// TRIGGER, EVENT; BEGIN NOT ATOMIC, IF, CASE, LOOP, WHILE, REPEAT, FOR
// outside a routine) are read by body.go: the header by its grammar, the
// body statement by statement, each statement read as above.
//
// Whatever is not read so stays a parse error, with what unparsed.go is
// certain of it: nothing the dialect did not read is judged as read. A
// text with a kept executable comment (two readings: lex.go) is not read
// here at all.

// maxMariaParses bounds the parses one text may cost here (a statement is
// parsed at most twice, a body's expressions once each): a text of a
// million statements is not read, and stays a parse error.
const maxMariaParses = 4096

// maxSoundsLike bounds the SOUNDS LIKE of one statement rewritten: each
// looks back over its left operand.
const maxSoundsLike = 64

// mread reads one text.
type mread struct {
	text   string
	t      []token
	parses int
	nest   int // compound statements open (maxNest)
	// inner are the statements of the bodies read, in text order, each
	// with its own facts and location (body.go).
	inner []engine.StmtFacts
	// extra are the facts of expressions a rewrite took out of the text
	// (ESCAPE (e)), merged into the rewritten statement's.
	extra []engine.StmtFacts
	// whole: TiDB rejected the whole text (all of r.t), so simple does
	// not parse it as is again.
	whole bool
}

// readMariaDB returns the facts of each of text's statements, read as
// MariaDB reads them, and false when some part of it is not read.
func readMariaDB(text string) ([]engine.StmtFacts, bool) {
	if _, two := skipReading(text); two {
		return nil, false
	}
	r := &mread{text: text, whole: true}
	r.tokenize()
	var out []engine.StmtFacts
	var prev engine.KindSet
	for i := 0; i < len(r.t); {
		if r.t[i].kind == ';' {
			i++
			continue
		}
		st, end, ok := r.top(i)
		if !ok || end <= i || end < len(r.t) && r.t[end].kind != ';' {
			return nil, false
		}
		st.Loc, st.Length = int32(r.t[i].lo), int32(r.t[end-1].hi-r.t[i].lo)
		st.PrevKinds = prev
		st.Kinds |= 1 << st.Kind
		if st.Kind == engine.KindSelect && st.SleepSeconds > 0 && prev != 0 {
			st.TimeProbe = true // a sleep stacked after another statement (stmtFacts)
		}
		prev |= 1 << st.Kind
		tablesInDatabases(&st)
		out = append(out, st)
		// A body's statements follow their program: not stacked ones.
		for k := range r.inner {
			tablesInDatabases(&r.inner[k])
		}
		out = append(out, r.inner...)
		r.inner = r.inner[:0]
		i = end
	}
	if len(out) == 0 {
		return nil, false
	}
	return out, true
}

// top reads the server statement at token i: a stored program, a compound
// statement, or a statement up to the next ";" outside parentheses.
func (r *mread) top(i int) (engine.StmtFacts, int, bool) {
	if r.programAt(i) {
		return r.program(i)
	}
	if r.compoundAt(i, true) {
		var st engine.StmtFacts
		st.Kind = engine.KindUtility // a block run now: its statements' kinds are in Kinds
		end, ok := r.bodyStmt(i, &st)
		return st, end, ok
	}
	end := r.stmtEnd(i)
	st, ok := r.simple(i, end)
	return st, end, ok
}

// stmtEnd is the index of the ";" that ends the statement at i (at
// parenthesis depth 0), or len(r.t).
func (r *mread) stmtEnd(i int) int {
	depth := 0
	for ; i < len(r.t); i++ {
		switch r.t[i].kind {
		case '(':
			depth++
		case ')':
			depth--
		case ';':
			if depth <= 0 {
				return i
			}
		}
	}
	return i
}

// is reports whether token i is the bare word w.
func (r *mread) is(i int, w string) bool {
	return i >= 0 && i < len(r.t) && r.t[i].is(r.text, w)
}

// isAny reports whether token i is one of the bare words ws.
func (r *mread) isAny(i int, ws ...string) bool {
	for _, w := range ws {
		if r.is(i, w) {
			return true
		}
	}
	return false
}

func (r *mread) kind(i int) byte {
	if i < 0 || i >= len(r.t) {
		return 0
	}
	return r.t[i].kind
}

// isName reports whether token i can be a name.
func (r *mread) isName(i int) bool {
	k := r.kind(i)
	return k == tokWord || k == tokIdent
}

// name reads [a.]b[.c] at i and returns the index after it, or -1.
func (r *mread) name(i int) int {
	if !r.isName(i) {
		return -1
	}
	i++
	for n := 0; n < 2 && r.kind(i) == '.' && r.isName(i+1); n++ {
		i += 2
	}
	return i
}

// src is the original text of tokens [i, j).
func (r *mread) src(i, j int) string {
	if i >= j {
		return ""
	}
	return r.text[r.t[i].lo:r.t[j-1].hi]
}

// parseOne parses s as one statement and returns its facts.
func (r *mread) parseOne(s string) (engine.StmtFacts, bool) {
	if r.parses >= maxMariaParses {
		return engine.StmtFacts{}, false
	}
	r.parses++
	sts, ok := parsePiece(s)
	if !ok || len(sts) != 1 {
		return engine.StmtFacts{}, false
	}
	st := sts[0]
	st.Loc, st.Length = 0, 0
	return st, true
}

// simple reads the statement of tokens [i, j): as TiDB parses it, else by
// one of the statement forms TiDB has no grammar for, else rewritten.
func (r *mread) simple(i, j int) (engine.StmtFacts, bool) {
	if i >= j {
		return engine.StmtFacts{}, false
	}
	if !(r.whole && i == 0 && j == len(r.t)) {
		if st, ok := r.parseOne(r.src(i, j)); ok {
			return st, true
		}
	}
	switch {
	case r.is(i, "set") && r.is(i+1, "statement"):
		return r.setStatement(i, j)
	case r.is(i, "create") && r.is(i+1, "or") && r.is(i+2, "replace") && r.isAny(i+3, "table", "temporary", "sequence", "database", "schema"):
		return r.orReplace(i, j)
	case r.is(i, "execute") && r.is(i+1, "immediate"):
		// a routine body's EXECUTE IMMEDIATE 'text': as the statement
		// it holds (unparsed.go immediateParsed); anything else is
		// left to the recognizer (dynamic_sql)
		return immediateParsed(r.src(i, j))
	case r.is(i, "execute") && r.isName(i+1) && r.is(i+2, "using"):
		// EXECUTE s USING 100, 'a', expr: MariaDB takes any expression
		// where TiDB takes @variables only; the values are judged as
		// SELECT list (their reads, calls), the EXECUTE as itself, and
		// sqlprepare.go's usingValues gives the relay their values
		st, ok := r.parseOne("EXECUTE " + r.src(i+1, i+2))
		if !ok || i+3 >= j {
			return st, false
		}
		vals, ok := r.usingList(i+3, j)
		if !ok {
			return st, false
		}
		merge(&st, &vals)
		return st, true
	case r.is(i, "xa"):
		return r.xa(i, j)
	case r.is(i, "alter") && r.alterView(i, j):
		// ALTER [ALGORITHM = a] [DEFINER = u] [SQL SECURITY x] VIEW v AS
		// select: what CREATE OR REPLACE VIEW of the same makes it,
		// altered
		st, ok := r.parseOne("CREATE OR REPLACE " + r.src(i+1, j))
		if !ok {
			st, ok = r.rewriteParse(i+1, j, "CREATE OR REPLACE ")
		}
		if !ok || st.Object != "view" {
			return st, false
		}
		st.Verb = engine.VerbAlter
		return st, true
	case r.is(i, "reset"):
		return r.reset(i, j)
	case r.is(i, "flush"):
		return r.flush(i, j)
	case r.is(i, "backup"):
		return r.backup(i, j)
	case r.isAny(i, "insert", "replace", "delete", "explain", "describe", "desc"):
		if st, ok := r.returning(i, j); ok {
			return st, true
		}
	case r.isAny(i, "signal", "resignal", "get"):
		var st engine.StmtFacts
		st.Kind = engine.KindUtility
		end, ok := r.condStmt(i, &st)
		return st, ok && end == j
	case r.is(i, "drop") && r.isAny(i+1, "function", "trigger", "event"):
		return r.dropObject(i, j)
	case r.is(i, "show") && r.is(i+1, "create") && r.isAny(i+2, "trigger", "function", "event", "package"):
		k := i + 3
		if r.is(i+2, "package") && r.is(k, "body") {
			k++
		}
		if r.name(k) == j {
			return engine.StmtFacts{Kind: engine.KindUtility}, true
		}
		return engine.StmtFacts{}, false
	case r.is(i, "show") && r.is(i+1, "package"):
		// SHOW PACKAGE [BODY] STATUS [LIKE 'x' | WHERE expr] (mariadb-dump
		// sends it): SHOW PROCEDURE STATUS's shape, its condition judged.
		k := i + 2
		if r.is(k, "body") {
			k++
		}
		if !r.is(k, "status") {
			return engine.StmtFacts{}, false
		}
		rest := ""
		if k+1 < j {
			rest = r.text[r.t[k+1].lo:r.t[j-1].hi]
		}
		return r.parseOne("SHOW PROCEDURE STATUS " + rest)
	case r.is(i, "show") && r.isAny(i+1, "binary", "master") && r.is(i+2, "logs") && i+3 == j,
		r.is(i, "show") && r.is(i+1, "engine") && r.isName(i+2) && r.isAny(i+3, "status", "mutex", "logs") && i+4 == j:
		// SHOW BINARY LOGS, SHOW ENGINE INNODB STATUS: the server's own
		// state, like SHOW MASTER STATUS and SHOW PROCESSLIST.
		return engine.StmtFacts{Kind: engine.KindUtility}, true
	case r.is(i, "show") && r.isAny(i+1, "procedure", "function") && r.is(i+2, "code"):
		if r.name(i+3) == j {
			return engine.StmtFacts{Kind: engine.KindUtility}, true
		}
		return engine.StmtFacts{}, false
	}
	return r.rewriteParse(i, j, "")
}

// rewriteParse parses prefix and the rewrite of tokens [i, j), with the
// facts of the expressions a rewrite took out of the text (r.extra).
func (r *mread) rewriteParse(i, j int, prefix string) (engine.StmtFacts, bool) {
	s, changed, ok := r.rewrite(i, j)
	extra := r.extra
	r.extra = nil
	if !ok || !changed {
		return engine.StmtFacts{}, false
	}
	st, ok := r.parseOne(prefix + s)
	if !ok {
		return st, false
	}
	for k := range extra {
		merge(&st, &extra[k])
	}
	return st, true
}

// dropObject is DROP FUNCTION | TRIGGER | EVENT [IF EXISTS] name: what
// unparsed.go's classifyLead knows of it, once its grammar is read whole.
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

// lead is classifyLead of tokens [i, j) (unparsed.go).
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

// expr reads the expression list of tokens [i, j) as SELECT list does, and
// returns its facts without the SELECT's kind: a condition, a DEFAULT or a
// RETURNING list is not a statement of its own.
func (r *mread) expr(i, j int) (engine.StmtFacts, bool) {
	if i >= j {
		return engine.StmtFacts{}, false
	}
	s := "SELECT " + r.src(i, j)
	st, ok := r.parseOne(s)
	if !ok {
		sub := &mread{text: s, parses: r.parses}
		sub.tokenize()
		st, ok = sub.rewriteParse(0, len(sub.t), "")
		r.parses = sub.parses
		if !ok {
			return st, false
		}
	}
	if st.Kind != engine.KindSelect {
		return st, false
	}
	st.Kinds &^= 1 << engine.KindSelect
	st.Kind = engine.KindUtility
	return st, true
}

// aside keeps, among the statement's facts (r.extra), those of the
// expression in tokens [i, j), judged on its own, before a rewrite replaces
// it with a stand-in TiDB accepts; false when it cannot be read.
func (r *mread) aside(i, j int) bool {
	f, ok := r.expr(i, j)
	if ok {
		r.extra = append(r.extra, f)
	}
	return ok
}

// edit replaces the tokens [i, j) (j == i: inserts before token i) with s.
type edit struct {
	i, j int
	s    string
}

// rewrite returns the text of tokens [i, j) with MariaDB's spellings
// replaced by TiDB's (see the table above); changed is false when none
// applies, ok false when a form is there but cannot be rewritten soundly.
func (r *mread) rewrite(i, j int) (s string, changed, ok bool) {
	var eds []edit
	add := func(e edit) { eds = append(eds, e) }
	// Statement-level forms.
	switch {
	case r.isAny(i, "explain", "describe", "desc") && r.isAny(i+1, "extended", "partitions"):
		add(edit{i + 1, i + 2, ""})
	case r.is(i, "check") && r.isAny(i+1, "table", "tables", "view"):
		return r.tableList(i, j, "ADMIN CHECK TABLE")
	case r.is(i, "checksum") && r.isAny(i+1, "table", "tables"):
		return r.tableList(i, j, "ADMIN CHECKSUM TABLE")
	case r.is(i, "repair") && r.isAny(i+1, "table", "tables", "view"):
		return r.tableList(i, j, "OPTIMIZE TABLE")
	case r.isAny(i, "create", "alter") && r.is(j-1, "option") && r.is(j-2, "check"):
		// CREATE | ALTER VIEW ... WITH [CASCADED | LOCAL] CHECK OPTION:
		// a check on writes through the view
		k := j - 3
		if r.isAny(k, "cascaded", "local") {
			k--
		}
		if !r.is(k, "with") {
			return "", false, false
		}
		add(edit{k, j, ""})
	case r.is(i, "analyze") && !r.isAny(i+1, "table", "tables", "local", "no_write_to_binlog"):
		// MariaDB's ANALYZE [FORMAT=JSON] stmt runs stmt and shows its
		// plan: TiDB's EXPLAIN ANALYZE, which the walker judges as the
		// statement it runs
		k := i + 1
		if r.is(k, "format") && r.kind(k+1) == '=' && r.kind(k+2) == tokWord {
			k += 3
		}
		if !r.isAny(k, "select", "with", "update", "delete", "insert", "replace", "values") && r.kind(k) != '(' {
			return "", false, false
		}
		add(edit{i, k, "EXPLAIN ANALYZE"})
	case r.is(i, "analyze") && r.isAny(i+1, "table", "tables"):
		for k := i + 2; k < j; k++ {
			if r.is(k, "persistent") && r.is(k+1, "for") {
				// PERSISTENT FOR ALL | COLUMNS (...) INDEXES (...):
				// names only
				for m := k + 2; m < j; m++ {
					if c := r.kind(m); c != tokWord && c != tokIdent && c != '(' && c != ')' && c != ',' {
						return "", false, false
					}
				}
				add(edit{k, j, ""})
				break
			}
		}
	}
	depth, sounds := 0, 0
	for k := i; k < j; k++ {
		t := r.t[k]
		switch t.kind {
		case '(':
			depth++
			continue
		case ')':
			depth--
			continue
		}
		switch {
		case depth == 0 && r.is(i, "set") && r.isAny(k, "persist", "persist_only") && (k == i+1 || r.kind(k-1) == ',') &&
			(r.kind(k+1) == tokWord || r.kind(k+1) == tokIdent):
			// MySQL 8's SET PERSIST x = v (and PERSIST_ONLY, which
			// writes mysqld-auto.cnf only): a server-wide setting, as
			// SET GLOBAL x = v is
			add(edit{k, k + 1, "GLOBAL"})
		case (t.is(r.text, "as") || t.kind == ',') && r.isAny(k+1, "int", "integer") && r.kind(k+2) == ')':
			// CAST(x AS INT), CONVERT(x, INT): INT is a reserved word,
			// a type here
			add(edit{k + 1, k + 2, "SIGNED"})
		case t.is(r.text, "as") && r.isAny(k+1, "double", "float", "real") && r.kind(k+2) == '(':
			// CAST(x AS DOUBLE(m, d)): a number of that precision
			add(edit{k + 1, k + 2, "DECIMAL"})
		case t.is(r.text, "as") && r.isAny(k+1, "varchar", "varchar2") && r.kind(k+2) == '(':
			add(edit{k + 1, k + 2, "CHAR"})
		case t.is(r.text, "as") && r.kind(k+1) == tokWord && (windowName(r.t[k+1].name(r.text)) || r.isAny(k+1, "row", "rows", "generated", "groups")) &&
			r.kind(k+2) != '(' && !r.isAny(k-1, "generated", "always"):
			// an alias TiDB reserves (AS rank): a name to MariaDB
			add(edit{k + 1, k + 2, "`" + r.t[k+1].name(r.text) + "`"})
		case t.is(r.text, "if") && r.isAny(i, "create", "alter", "drop", "rename") && !r.is(i+1, "procedure") &&
			(r.is(k+1, "exists") || r.is(k+1, "not") && r.is(k+2, "exists")):
			// DDL's IF [NOT] EXISTS where TiDB has none (ALTER TABLE IF
			// EXISTS, ADD PRIMARY KEY IF NOT EXISTS, DROP CONSTRAINT
			// IF EXISTS, CREATE VIEW IF NOT EXISTS, ...): whether the
			// server errs when the object is there or not, not what
			// the statement does to it (an expression's IF is a
			// call: IF(...))
			if r.is(k+1, "not") {
				add(edit{k, k + 3, ""})
			} else {
				add(edit{k, k + 2, ""})
			}
		case t.is(r.text, "constraint") && r.is(k-1, "drop") && r.is(k+1, "primary") && r.is(k+2, "key"):
			add(edit{k, k + 1, ""}) // DROP CONSTRAINT PRIMARY KEY
		case t.is(r.text, "persistent") && r.kind(k-1) == ')' && r.isAny(i, "create", "alter"):
			add(edit{k, k + 1, "STORED"}) // a generated column: AS (e) PERSISTENT
		case t.is(r.text, "limit") && depth >= 0 && r.kind(k+1) == tokWord && !isDigits(r.text[r.t[k+1].lo:r.t[k+1].hi]) && !r.is(k+1, "rows") &&
			(r.kind(k+2) != '.' && r.kind(k+2) != '('):
			// LIMIT v, a routine's variable or parameter: a count the
			// text does not hold, so the largest (a DELETE ... LIMIT v
			// is not limited to a few rows: writes.go limited)
			add(edit{k + 1, k + 2, unknownCount})
			if r.kind(k+2) == ',' && r.kind(k+3) == tokWord && !isDigits(r.text[r.t[k+3].lo:r.t[k+3].hi]) {
				add(edit{k + 3, k + 4, unknownCount})
			}
		case t.is(r.text, "offset") && r.kind(k+1) == tokWord && r.isAny(k+2, "row", "rows") && r.is(k+3, "fetch"):
			// OFFSET n ROWS FETCH FIRST | NEXT [m] ROW | ROWS ONLY | WITH TIES
			e, good := r.fetchFirst(k+3, j)
			if !good {
				return "", false, false
			}
			add(edit{k, e, "LIMIT " + e2s(r, k+1) + ", " + r.fetchCount(k+3)})
		case t.is(r.text, "fetch") && r.isAny(k+1, "first", "next") && !r.isAny(k-3, "offset"):
			e, good := r.fetchFirst(k, j)
			if !good {
				return "", false, false
			}
			add(edit{k, e, "LIMIT " + r.fetchCount(k)})
		case t.is(r.text, "values") && r.kind(k+1) == '(' && (k == i || r.kind(k-1) == '(' || r.isAny(k-1, "union", "except", "intersect", "all", "distinct", "as") ||
			r.isName(k-1) && r.is(i, "create") && r.is(i+1, "table")):
			// a table value constructor, VALUES (row), ...: its
			// expressions as one SELECT list
			es, good := r.valuesRows(k, j)
			if !good {
				return "", false, false
			}
			eds = append(eds, es...)
		case t.is(r.text, "into") && r.isAny(k+1, "outfile", "dumpfile") && r.kind(k+2) == tokString && r.isAny(i, "select") && depth == 0:
			// SELECT list INTO OUTFILE 'f' [options] FROM ...: TiDB takes
			// the clause at the end only
			m := k + 3
			for m < j && (r.kind(m) == tokWord || r.kind(m) == tokString) && !r.is(m, "from") {
				m++
			}
			if r.is(m, "from") {
				add(edit{k, m, ""})
				add(edit{j, j, r.src(k, m)})
			}
		case t.is(r.text, "character") && r.is(k+1, "set") && r.kind(k-1) == tokString && r.isAny(k-2, "outfile", "dumpfile"),
			t.is(r.text, "charset") && r.kind(k-1) == tokString && r.isAny(k-2, "outfile", "dumpfile"):
			// INTO OUTFILE 'f' CHARACTER SET cs: how the file is written
			if t.is(r.text, "charset") {
				add(edit{k, k + 2, ""})
			} else {
				add(edit{k, k + 3, ""})
			}
		case t.is(r.text, "rows") && r.is(k+1, "examined") && r.kind(k+2) == tokWord:
			// LIMIT [n] ROWS EXAMINED m: a bound on the work, not a fact
			if r.is(k-1, "limit") {
				add(edit{k - 1, k + 3, ""})
			} else {
				add(edit{k, k + 3, ""})
			}
		case t.kind == tokWord && spatialType(t.name(r.text)) && r.kind(k+1) != '(' && r.kind(k+1) != '.' && r.isName(k-1) && r.kind(k-2) != '.' &&
			r.isAny(i, "create", "alter"):
			// a column of a spatial type (TiDB has none): its values are
			// bytes to every rule
			add(edit{k, k + 1, "BLOB"})
		case t.is(r.text, "spatial") && r.isAny(k+1, "index", "key") && r.isAny(i, "create", "alter"):
			add(edit{k, k + 1, ""})
		case t.kind == tokWord && r.isAny(k, "percentile_cont", "percentile_disc", "median") && r.kind(k+1) == '(':
			e, good := r.percentile(k, j)
			if !good {
				return "", false, false
			}
			add(e)
		case t.kind == tokWord && r.isAny(k, "lead", "lag", "nth_value", "ntile") && r.kind(k+1) == '(' && depth >= 0:
			// TiDB takes a literal offset, count or bucket number only:
			// another expression is judged on its own (r.extra)
			e := r.closeParen(k+1, j)
			if e < 0 {
				return "", false, false
			}
			argStart, n := k+2, 0
			if r.is(k, "ntile") {
				n = 1 // the first argument
			}
			d := 0
			for m := k + 2; m <= e; m++ {
				switch {
				case r.kind(m) == '(':
					d++
				case r.kind(m) == ')' && m < e:
					d--
				case d == 0 && (r.kind(m) == ',' || m == e):
					n++
					if n == 2 && !(m == argStart+1 && r.kind(argStart) == tokWord && isDigits(r.text[r.t[argStart].lo:r.t[argStart].hi])) {
						if !r.aside(argStart, m) {
							return "", false, false
						}
						add(edit{argStart, m, "1"})
					}
					argStart = m + 1
				}
			}
		case t.is(r.text, "limit") && depth > 0 && r.aggregateLimit(i, k):
			// GROUP_CONCAT | JSON_ARRAYAGG(... LIMIT n [, m | OFFSET m]):
			// how many values are joined, not a fact
			m := k + 1
			for m < j && (r.kind(m) == tokWord && (isDigits(r.text[r.t[m].lo:r.t[m].hi]) || r.is(m, "offset")) || r.kind(m) == ',') {
				m++
			}
			if r.kind(m) != ')' || m == k+1 {
				return "", false, false
			}
			add(edit{k, m, ""})
		case t.is(r.text, "escape") && r.kind(k+1) == tokWord && r.kind(k+2) != '(' && r.kind(k+2) != '.':
			// LIKE p ESCAPE 0x5c: a literal TiDB takes only as a string
			if !r.aside(k+1, k+2) {
				return "", false, false
			}
			add(edit{k + 1, k + 2, "'!'"})
		case t.is(r.text, "match") && r.isName(k+1) && r.kind(k+1) != '(' && r.matchColumns(k+1, j) > 0:
			// MATCH a, b AGAINST (...): MATCH (a, b) AGAINST (...)
			e := r.matchColumns(k+1, j)
			add(edit{k + 1, k + 1, "("})
			add(edit{e, e, ")"})
		case t.is(r.text, "last_value") && r.kind(k+1) == '(' && !r.is(r.closeParen(k+1, j)+1, "over"):
			// MariaDB's LAST_VALUE(e, ...) function, not the window one
			add(edit{k, k + 1, "`last_value`"})
		case t.kind == tokWord && r.isAny(k, "json_arrayagg") && r.kind(k+1) == '(':
			// JSON_ARRAYAGG([DISTINCT] e [ORDER BY l] [LIMIT n]): TiDB has
			// neither DISTINCT nor ORDER BY in it; l is judged on its own
			e := r.closeParen(k+1, j)
			if e < 0 {
				return "", false, false
			}
			if r.is(k+2, "distinct") {
				add(edit{k + 2, k + 3, ""})
			}
			d := 0
			for m := k + 2; m < e; m++ {
				switch r.kind(m) {
				case '(':
					d++
				case ')':
					d--
				}
				if d == 0 && r.is(m, "order") && r.is(m+1, "by") {
					end := e
					for x := m + 2; x < e; x++ {
						if r.is(x, "limit") {
							end = x
							break
						}
					}
					f, good := r.windowSpec(r.src(m, end)) // ORDER BY l [ASC | DESC], ...
					if !good {
						return "", false, false
					}
					r.extra = append(r.extra, f)
					add(edit{m, end, ""})
					break
				}
			}
		case t.is(r.text, "exclude") && depth > 0 && (r.is(k+1, "no") && r.is(k+2, "others") || r.is(k+1, "current") && r.is(k+2, "row")):
			add(edit{k, k + 3, ""}) // a window frame's EXCLUDE
		case t.is(r.text, "exclude") && depth > 0 && r.isAny(k+1, "group", "ties") && r.kind(k+2) == ')':
			add(edit{k, k + 2, ""})
		case t.kind == tokWord && windowName(t.name(r.text)) && r.kind(k+1) != '(' && !r.is(k-1, "as"):
			// a column named rank, lead, ...: a name to MariaDB
			add(edit{k, k + 1, "`" + t.name(r.text) + "`"})
		case t.kind == tokWord && r.isAny(k, "generated", "row", "rows", "groups") && r.isAny(i, "create", "alter") &&
			(r.kind(k-1) == '(' || r.kind(k-1) == ',' || r.isAny(k-1, "add", "column", "modify", "change")) && r.kind(k+1) == tokWord && !r.isAny(k+1, "always", "format"):
			// a column named so (TiDB reserves the word, MariaDB does not)
			add(edit{k, k + 1, "`" + t.name(r.text) + "`"})
		case r.isAny(i, "create", "alter") && t.kind == tokWord && r.isAny(k, "invisible", "compressed", "ignored") && !r.is(k-1, "row_format") && r.kind(k-1) != '=' && r.kind(k+1) != '=':
			// column and index attributes: INVISIBLE (not in SELECT *),
			// COMPRESSED (stored compressed), [NOT] IGNORED (an index the
			// optimizer skips); none changes what a statement reads or
			// writes
			if r.is(k, "ignored") && r.is(k-1, "not") {
				add(edit{k - 1, k + 1, ""})
			} else {
				add(edit{k, k + 1, ""})
			}
		case r.isAny(i, "create", "alter") && t.kind == tokWord && r.isAny(k, "transactional", "page_checksum", "page_compressed", "page_compression_level", "encrypted", "encryption_key_id", "ietf_quotes") &&
			(r.kind(k+1) == '=' && (r.kind(k+2) == tokWord || r.kind(k+2) == tokString) || r.kind(k+1) == tokWord && isDigits(r.text[r.t[k+1].lo:r.t[k+1].hi])):
			// storage options of Aria, InnoDB and CSV tables
			if r.kind(k+1) == '=' {
				add(edit{k, k + 3, ""})
			} else {
				add(edit{k, k + 2, ""})
			}
		case r.isAny(i, "create", "alter") && r.isAny(k, "with", "without") && r.is(k+1, "system") && r.is(k+2, "versioning"):
			// a system-versioned table keeps its rows' history: what the
			// statement creates or alters is the same table
			add(edit{k, k + 3, ""})
		case t.is(r.text, "for") && r.is(k+1, "system_time") && r.is(k+2, "all"):
			// SELECT ... FROM t FOR SYSTEM_TIME ALL: t's rows, old ones too
			add(edit{k, k + 3, ""})
		case t.is(r.text, "default") && r.isAny(i, "create", "alter") && r.is(k+1, "case"):
			// DEFAULT CASE ... END: judged on its own
			d, m := 0, k+2
			for ; m < j; m++ {
				if r.is(m, "case") {
					d++
				} else if r.is(m, "end") {
					if d == 0 {
						break
					}
					d--
				}
			}
			if m >= j {
				return "", false, false
			}
			if !r.aside(k+1, m+1) {
				return "", false, false
			}
			add(edit{k + 1, m + 1, "NULL"})
		case t.kind == tokWord && r.isAny(k, "generated", "row", "rows", "groups") && r.kind(k+1) != '(' &&
			(r.isAny(k-1, "where", "and", "or", "on", "having", "when", "then", "else") || r.kind(k-1) == '.' && r.isName(k-2) || operator(r.kind(k-1))) &&
			(operator(r.kind(k+1)) || r.kind(k+1) == ')' || r.kind(k+1) == ',' || k+1 == j || r.isAny(k+1, "is", "in", "like", "between", "and", "or", "from", "order", "group", "limit", "having", "asc", "desc", "then", "end")):
			// a column named so in a condition (WHERE row <> n, t.row):
			// a name to MariaDB
			add(edit{k, k + 1, "`" + t.name(r.text) + "`"})
		case t.kind == tokWord && len(r.text[t.lo:t.hi]) > maxTiDBDigits && isDigits(r.text[t.lo:t.hi]) && r.kind(k-1) != '.' && r.kind(k+1) != '.':
			// an integer literal longer than TiDB reads: MariaDB's
			// DECIMAL, which saturates at 65 nines
			add(edit{k, k + 1, longInteger(r.text[t.lo:t.hi])})
		case t.kind == '=' && r.isName(k-1) && r.isName(k+1) && r.kind(k+2) != '.' && r.kind(k+2) != '(' &&
			(r.isAny(k-2, "from", "join", "straight_join", "update") || r.kind(k-2) == '.' && r.isName(k-3) && r.isAny(k-4, "from", "join", "straight_join", "update")):
			// FROM t = a: MariaDB's table_alias is AS or "=" (sql_yacc.yy)
			add(edit{k, k + 1, "AS"})
		case t.kind == tokWord && r.isAny(k, "generated", "row", "rows", "groups") &&
			(r.kind(k-1) == '(' || r.kind(k-1) == ',' || r.is(k-1, "by") || r.is(k-1, "select")) &&
			(r.kind(k+1) == ',' || r.kind(k+1) == ')' || k+1 == j || r.isAny(k+1, "from", "order", "limit", "having", "asc", "desc")):
			// a column named so in a list (INSERT INTO t (…, generated),
			// GROUP BY row): a name to MariaDB
			add(edit{k, k + 1, "`" + t.name(r.text) + "`"})
		case t.is(r.text, "for") && r.is(k+1, "system_time") && !r.is(k+2, "all") && !r.is(k-1, "period"),
			t.is(r.text, "before") && r.is(k+1, "system_time") && r.is(i, "delete"):
			// FOR SYSTEM_TIME AS OF e | BETWEEN e AND e | FROM e TO e,
			// DELETE HISTORY ... BEFORE SYSTEM_TIME e: which of the rows'
			// versions; each e judged on its own
			e, good := r.systemTime(k, j)
			if !good {
				return "", false, false
			}
			add(edit{k, e, ""})
			k = e - 1
		case t.is(r.text, "generated") && r.is(k+1, "always") && r.is(k+2, "as") && r.is(k+3, "row") && r.isAny(k+4, "start", "end") && r.isAny(i, "create", "alter"):
			// a system-versioned table's row start/end column: set by the
			// server
			add(edit{k, k + 5, ""})
		case t.is(r.text, "period") && r.is(k+1, "for") && r.kind(k-1) == ',' && r.isAny(i, "create", "alter"),
			t.is(r.text, "period") && r.is(k+1, "for") && r.is(k-1, "add") && r.is(i, "alter"):
			// PERIOD FOR name | SYSTEM_TIME (start, end): two of the
			// table's columns named as its period
			e, good := r.periodFor(k, j)
			if !good {
				return "", false, false
			}
			switch {
			case !r.is(k-1, "add"):
				add(edit{k - 1, e, ""}) // CREATE TABLE's ", PERIOD FOR ..."
			case r.kind(k-2) == ',':
				add(edit{k - 2, e, ""})
			case r.kind(e) == ',':
				add(edit{k - 1, e + 1, ""})
			default:
				add(edit{k - 1, e, "FORCE"}) // ALTER TABLE t ADD PERIOD ... alone
			}
			k = e - 1
		case r.is(i, "alter") && r.isAny(k, "add", "drop") && r.is(k+1, "system") && r.is(k+2, "versioning"):
			// ALTER TABLE t ADD | DROP SYSTEM VERSIONING: the table altered
			// (dropping it drops the old rows' versions)
			add(edit{k, k + 3, "FORCE"})
		case t.is(r.text, "weight_string") && r.kind(k+1) == '(':
			// MariaDB's WEIGHT_STRING(s, n, m, flags): a call of it;
			// WEIGHT_STRING(s [AS CHAR | BINARY (n)] [LEVEL levels]):
			// of s alone, the rest is numbers and words
			add(edit{k, k + 1, "`weight_string`"})
			if m, e := r.weightOptions(k+1, j); m > 0 {
				add(edit{m, e, ""})
			}
		case t.is(r.text, "match") && r.kind(k+1) == '(' && !r.is(k-1, "full") && !r.is(k-1, "simple") && !r.is(k-1, "partial"):
			// MATCH (...) AGAINST (...) as an operand (… > 0): in
			// parentheses, which is how MariaDB binds it
			e := r.closeParen(k+1, j)
			if e < 0 || !r.is(e+1, "against") || r.kind(e+2) != '(' {
				break
			}
			a := r.closeParen(e+2, j)
			if a < 0 {
				return "", false, false
			}
			add(edit{k, k, "("})
			add(edit{a + 1, a + 1, ")"})
		case t.is(r.text, "with") && r.is(k+1, "query") && r.is(k+2, "expansion") && r.is(k-1, "mode"):
			// MATCH ... AGAINST (... IN BOOLEAN MODE WITH QUERY EXPANSION)
			add(edit{k, k + 3, ""})
		case t.is(r.text, "local") && k == i+1 && r.is(i, "show"):
			add(edit{k, k + 1, "SESSION"}) // SHOW LOCAL VARIABLES | STATUS
		case t.is(r.text, "default") && r.isAny(i, "create", "alter") && (r.kind(k+1) == '(' || r.kind(k+1) == tokWord && r.kind(k+2) == '(') && !r.is(k-1, "character"):
			// a column's DEFAULT (e) or DEFAULT f(...), which TiDB takes
			// only for a few functions: e is judged on its own
			open := k + 1
			if r.kind(open) != '(' {
				open++
			}
			e := r.closeParen(open, j)
			if e < 0 {
				return "", false, false
			}
			if !r.aside(k+1, e+1) {
				return "", false, false
			}
			add(edit{k + 1, e + 1, "NULL"})
		case t.is(r.text, "as") && r.isAny(k+1, "nchar", "nvarchar"):
			add(edit{k + 1, k + 2, "CHAR"})
		case t.is(r.text, "escape") && r.kind(k+1) == '(':
			// LIKE p ESCAPE (e): TiDB takes a literal only. The
			// escape character does not change what the text does; e's
			// facts are the statement's.
			e := r.closeParen(k+1, j)
			if e < 0 {
				return "", false, false
			}
			if !r.aside(k+1, e+1) {
				return "", false, false
			}
			add(edit{k + 1, e + 1, "'!'"})
		case t.is(r.text, "cycle") && r.isName(k+1) && r.kind(k-1) == ')':
			// WITH RECURSIVE ... CYCLE col, ... RESTRICT: without it the
			// recursion is judged as unbounded as it can be
			m := k + 1
			for r.isName(m) && !r.is(m, "restrict") {
				m++
				if r.kind(m) == ',' {
					m++
				}
			}
			if !r.is(m, "restrict") {
				return "", false, false
			}
			add(edit{k, m + 1, ""})
		case t.kind == tokWord && r.isAny(k, "column_create", "column_add", "column_get") && r.kind(k+1) == '(':
			// dynamic columns: COLUMN_CREATE(n, v [AS type], ...), COLUMN_GET(c, n AS type)
			e := r.closeParen(k+1, j)
			if e < 0 {
				return "", false, false
			}
			d := 0
			for m := k + 2; m < e; m++ {
				switch r.kind(m) {
				case '(':
					d++
				case ')':
					d--
				}
				if d == 0 && r.is(m, "as") {
					te := r.typ(m + 1)
					if te < 0 || te > e || r.kind(te) != ',' && te != e {
						return "", false, false
					}
					add(edit{m, te, ""})
				}
			}
		case t.is(r.text, "as") && r.is(k+1, "interval") && r.kind(k+2) == tokWord:
			// CAST(x AS INTERVAL DAY_SECOND(n)): a time
			add(edit{k + 1, k + 3, "TIME"})
		case t.kind == tokWord && r.isAny(k, "ascii", "unicode") && r.isAny(i, "create", "alter") && (r.kind(k-1) == ')' || r.isAny(k-1, "char", "varchar", "text", "tinytext", "mediumtext", "longtext")):
			// CHAR(n) ASCII | UNICODE: a character set
			add(edit{k, k + 1, "CHARACTER SET utf8mb4"})
		case t.is(r.text, "year") && r.kind(k+1) == '(' && r.kind(k+2) == tokWord && r.kind(k+3) == ')' && r.isName(k-1) && r.isAny(i, "create", "alter"):
			// a YEAR(2) column: MariaDB makes it YEAR
			add(edit{k + 1, k + 4, ""})
		case t.is(r.text, "value") && r.kind(k+1) == '(':
			add(edit{k, k + 1, "VALUES"})
		case t.is(r.text, "sounds") && r.is(k+1, "like"):
			sounds++
			es, good := r.soundsLike(i, j, k)
			if !good || sounds > maxSoundsLike {
				return "", false, false
			}
			eds = append(eds, es...)
		case t.is(r.text, "dumpfile") && r.is(k-1, "into"):
			add(edit{k, k + 1, "OUTFILE"})
		case t.is(r.text, "into") && !r.isAny(k-1, "insert", "replace", "ignore", "delayed", "low_priority", "high_priority") &&
			!r.isAny(k+1, "outfile", "dumpfile", "table"):
			end, good := r.intoVars(k+1, j)
			if good {
				add(edit{k, end, ""})
			}
		case t.kind == tokWord && (r.isAny(k-1, "charset", "using", "names") || r.is(k-1, "set") && r.is(k-2, "character") ||
			r.kind(k-1) == '=' && (r.is(k-2, "charset") || r.is(k-2, "set") && r.is(k-3, "character"))):
			if mariaCharset(t.name(r.text)) {
				add(edit{k, k + 1, "utf8mb4"})
			}
		case t.kind == tokWord && t.hi-t.lo > 1 && r.text[t.lo] == '_' && mariaCharset(t.name(r.text)[1:]) &&
			(r.kind(k+1) == tokString || r.kind(k+1) == tokWord && hexish(r.text[r.t[k+1].lo:r.t[k+1].hi])):
			add(edit{k, k + 1, "_utf8mb4"})
		case (t.kind == tokWord || t.kind == tokIdent || t.kind == tokString) && (r.is(k-1, "collate") || r.kind(k-1) == '=' && r.is(k-2, "collate")):
			co := t.name(r.text)
			if t.kind == tokString {
				co = strings.ToLower(r.text[t.lo+1 : t.hi-1])
			}
			if _, err := charset.GetCollationByName(co); err != nil {
				if strings.Contains(co, "_bin") || strings.HasSuffix(co, "_cs") {
					add(edit{k, k + 1, "utf8mb4_bin"})
				} else {
					add(edit{k, k + 1, "utf8mb4_general_ci"})
				}
			} else if t.kind == tokString && isNameWord(co) {
				add(edit{k, k + 1, co}) // COLLATE 'name': the name
			}
		case t.is(r.text, "json_table") && r.kind(k+1) == '(':
			e, good := r.jsonTable(k, j)
			if !good {
				return "", false, false
			}
			add(e)
		}
	}
	if len(eds) == 0 {
		return "", false, true
	}
	return r.apply(i, j, eds), true, true
}

// apply writes tokens [i, j) with the edits, which are in token order
// (edits inside another's range are dropped).
func (r *mread) apply(i, j int, eds []edit) string {
	// stable order by position; inserts before replacements at the same index
	for a := 1; a < len(eds); a++ {
		for b := a; b > 0 && (eds[b].i < eds[b-1].i || eds[b].i == eds[b-1].i && eds[b].j < eds[b-1].j); b-- {
			eds[b], eds[b-1] = eds[b-1], eds[b]
		}
	}
	var b strings.Builder
	pos := r.t[i].lo
	end := r.t[j-1].hi
	for _, e := range eds {
		at := end
		if e.i < j {
			at = r.t[e.i].lo
		}
		if at < pos {
			continue // inside an earlier edit
		}
		b.WriteString(r.text[pos:at])
		b.WriteByte(' ')
		b.WriteString(e.s)
		b.WriteByte(' ')
		pos = at
		if e.j > e.i {
			pos = r.t[e.j-1].hi
		}
	}
	b.WriteString(r.text[pos:end])
	return b.String()
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

// soundsLike rewrites the a SOUNDS LIKE b at token k (within [i, j)) as
// SOUNDEX(a) = SOUNDEX(b): = has SOUNDS LIKE's precedence. a and b must be
// operands that end at the comparison on both sides (a name, a literal, a
// variable, a call or a parenthesised expression, between tokens that
// bind less than a comparison); anything else is not rewritten.
func (r *mread) soundsLike(i, j, k int) ([]edit, bool) {
	la := r.operandBefore(i, k)
	rb := r.operandAfter(k+2, j)
	if la < 0 || rb < 0 {
		return nil, false
	}
	if !r.looseBefore(la-1, i) || !r.looseAfter(rb, j) {
		return nil, false
	}
	return []edit{
		{la, la, "SOUNDEX("},
		{k, k + 2, ") = SOUNDEX("},
		{rb, rb, ")"},
	}, true
}

// operandBefore returns the first token of the operand that ends just
// before k, or -1.
func (r *mread) operandBefore(i, k int) int {
	e := k - 1
	if e < i {
		return -1
	}
	if r.kind(e) == ')' {
		depth := 0
		for m := e; m >= i; m-- {
			switch r.kind(m) {
			case ')':
				depth++
			case '(':
				depth--
				if depth == 0 {
					if m-1 >= i && r.kind(m-1) == tokWord && !r.loose(m-1) {
						return m - 1 // a call
					}
					return m
				}
			}
		}
		return -1
	}
	if !r.atom(e) {
		return -1
	}
	for e-2 >= i && r.kind(e-1) == '.' && r.isName(e-2) {
		e -= 2
	}
	if e-1 >= i && r.kind(e-1) == '@' {
		e--
		if e-1 >= i && r.kind(e-1) == '@' {
			e--
		}
	}
	return e
}

// operandAfter returns the index after the operand that starts at k, or -1.
func (r *mread) operandAfter(k, j int) int {
	if k >= j {
		return -1
	}
	for r.kind(k) == '@' && k < j {
		k++
	}
	if r.kind(k) == tokWord && r.kind(k+1) == '(' || r.kind(k) == '(' {
		if r.kind(k) == tokWord {
			k++
		}
		depth := 0
		for m := k; m < j; m++ {
			switch r.kind(m) {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return m + 1
				}
			}
		}
		return -1
	}
	if !r.atom(k) {
		return -1
	}
	k++
	for k+1 < j && r.kind(k) == '.' && r.isName(k+1) {
		k += 2
	}
	return k
}

// atom reports whether token k is a name, literal or number, not a
// keyword that binds.
func (r *mread) atom(k int) bool {
	switch r.kind(k) {
	case tokString, tokIdent:
		return true
	case tokWord:
		return !r.loose(k)
	}
	return false
}

// loose reports whether token k is a word that binds less than a
// comparison, or starts a clause.
func (r *mread) loose(k int) bool {
	return r.isAny(k, "and", "or", "xor", "not", "where", "having", "on", "select", "when", "then", "else", "end",
		"from", "order", "group", "limit", "as", "by", "set", "if", "return", "into", "union", "case", "do", "until", "like", "sounds", "is", "in", "between", "regexp", "rlike", "escape", "div", "mod", "binary", "collate", "interval")
}

// looseBefore reports whether token k (before an operand) binds less than
// a comparison.
func (r *mread) looseBefore(k, i int) bool {
	if k < i {
		return true
	}
	switch r.kind(k) {
	case '(', ',':
		return true
	case '&':
		return r.kind(k-1) == '&'
	case '|':
		return r.kind(k-1) == '|'
	case '!':
		return true
	}
	return r.isAny(k, "and", "or", "xor", "not", "where", "having", "on", "select", "when", "then", "else", "if", "return", "do", "until", "set")
}

// looseAfter reports whether token k (after an operand) binds less than a
// comparison.
func (r *mread) looseAfter(k, j int) bool {
	if k >= j {
		return true
	}
	switch r.kind(k) {
	case ')', ',', ';':
		return true
	case '&':
		return r.kind(k+1) == '&'
	case '|':
		return r.kind(k+1) == '|'
	}
	return r.isAny(k, "and", "or", "xor", "then", "else", "end", "when", "from", "order", "group", "limit", "having", "as", "union", "do", "into", "for", "lock", "window")
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

// exprOf reads the SELECT s (text of the reader's making, with MariaDB's
// spellings of the original in it) as expr does.
func (r *mread) exprOf(s string) (engine.StmtFacts, bool) {
	sub := &mread{text: s, parses: r.parses}
	sub.tokenize()
	f, ok := sub.parseOne(s)
	if !ok {
		f, ok = sub.rewriteParse(0, len(sub.t), "")
	}
	r.parses = sub.parses
	if !ok || f.Kind != engine.KindSelect {
		return f, false
	}
	f.Kinds &^= 1 << engine.KindSelect
	f.Kind = engine.KindUtility
	return f, true
}

func isDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
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

// e2s is the text of token k.
func e2s(r *mread, k int) string { return r.src(k, k+1) }

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

// isNameWord reports whether w is spelt as a bare name.
func isNameWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isIdentByte(w[i]) {
			return false
		}
	}
	return w != ""
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
		e := r.operandAfter(m, j)
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

// maxTiDBDigits is the longest integer literal TiDB's parser reads (its
// decimal has 81 digits); MariaDB reads a longer one as a DECIMAL.
const maxTiDBDigits = 81

// longInteger is the value MariaDB gives an integer literal of more digits
// than TiDB reads: the number without its leading zeros, or, past
// DECIMAL's 65 digits, DECIMAL's largest, 65 nines (str2my_decimal
// saturates on overflow: main.type_newdecimal).
func longInteger(w string) string {
	w = strings.TrimLeft(w, "0")
	switch {
	case w == "":
		return "0"
	case len(w) > 65:
		return strings.Repeat("9", 65)
	}
	return w
}

// operator reports whether a token kind is an operator byte.
func operator(k byte) bool {
	switch k {
	case '=', '<', '>', '!', '+', '-', '*', '/', '%', '|', '&', '^':
		return true
	}
	return false
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

// closeParen returns the index of the ")" that closes the "(" at k, or -1.
func (r *mread) closeParen(k, j int) int {
	depth := 0
	for m := k; m < j; m++ {
		switch r.kind(m) {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return m
			}
		}
	}
	return -1
}

// windowName reports whether w is a window function's name, which TiDB
// reserves and MariaDB does not.
func windowName(w string) bool {
	switch w {
	case "rank", "dense_rank", "row_number", "ntile", "lead", "lag", "first_value", "last_value", "nth_value", "cume_dist", "percent_rank":
		return true
	}
	return false
}

// spatialType reports whether w names one of MariaDB's spatial types.
func spatialType(w string) bool {
	switch w {
	case "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection":
		return true
	}
	return false
}

// hexish reports whether a word is a hex or bit literal (0x41, x or b
// before a quoted string is its own word: X'41').
func hexish(w string) bool {
	lw := strings.ToLower(w)
	return lw == "x" || lw == "b" || strings.HasPrefix(lw, "0x") || strings.HasPrefix(lw, "0b")
}

// mariaCharset reports whether name is a character set MariaDB 10.11 has
// and TiDB's parser does not (SHOW CHARACTER SET).
func mariaCharset(name string) bool {
	switch name {
	case "big5", "dec8", "cp850", "hp8", "koi8r", "latin2", "swe7", "ujis", "sjis", "hebrew", "tis620", "euckr",
		"koi8u", "gb2312", "greek", "cp1250", "latin5", "armscii8", "ucs2", "cp866", "keybcs2", "macce", "macroman",
		"cp852", "latin7", "cp1251", "utf16", "utf16le", "cp1256", "cp1257", "utf32", "geostd8", "cp932", "eucjpms", "gbk", "utf8mb3", "filename":
		return true
	}
	return false
}
