package mysql

import (
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
//	LOAD XML ... [ROWS IDENTIFIED BY '<t>']       LOAD DATA ... (IGNORE n ROWS: LINES)
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
//	DROP FUNCTION | TRIGGER | EVENT, SHOW CREATE   what unparsedlead.go's classifyLead gives
//	  TRIGGER | FUNCTION | EVENT | PACKAGE, SHOW
//	  PROCEDURE | FUNCTION CODE
//	SHOW PACKAGE [BODY] STATUS [LIKE | WHERE]    SHOW PROCEDURE STATUS with its condition
//	SHOW BINARY | MASTER LOGS, SHOW ENGINE e     utility (the server's state)
//	  STATUS | MUTEX | LOGS
//	EXECUTE s USING 100, 'a', e                   EXECUTE s, with SELECT 100, 'a', e's facts
//	SELECT l [FROM DUAL] [WHERE w] [GROUP BY g]   SELECT l HAVING h [FROM DUAL] [WHERE w]
//	  HAVING h (no table)                         [GROUP BY g] (where TiDB takes it)
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
		// it holds (immediate.go immediateParsed); anything else is
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
	case r.is(i, "alter") && r.isAny(i+1, "procedure", "function"):
		return r.alterRoutine(i, j)
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
		if waits(&extra[k]) && readsTable(&st) {
			// a sleep in an expression taken aside (FOR SYSTEM_TIME AS
			// OF SLEEP(5)) runs next to the statement's table read,
			// which its own SELECT e did not have
			st.TimeProbe = true
		}
		merge(&st, &extra[k])
	}
	return st, true
}

// waits reports whether facts call a function that waits (SLEEP,
// BENCHMARK, GET_LOCK, the replication waits).
func waits(st *engine.StmtFacts) bool {
	for _, f := range st.Funcs {
		switch f.Name {
		case "sleep", "benchmark", "get_lock":
			return true
		}
		if _, ok := waitFuncs[f.Name]; ok {
			return true
		}
	}
	return false
}

// readsTable reports whether facts read a table that is no WITH query's.
func readsTable(st *engine.StmtFacts) bool {
	for _, t := range st.Tables {
		if !t.CTE {
			return true
		}
	}
	return false
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

// e2s is the text of token k.
func e2s(r *mread, k int) string { return r.src(k, k+1) }
