package mysql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/charset"
)

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
	case r.is(i, "load") && r.is(i+1, "xml"):
		// LOAD XML ... INFILE 'f' [REPLACE | IGNORE] INTO TABLE t [CHARACTER
		// SET cs] [ROWS IDENTIFIED BY '<tag>'] [IGNORE n LINES | ROWS]
		// [(cols)] [SET ...]: LOAD DATA of the same file into the same
		// table, the same REPLACE; the tag says how rows are found in it
		add(edit{i + 1, i + 2, "DATA"})
		for k := i + 2; k < j; k++ {
			switch {
			case r.is(k, "rows") && r.is(k+1, "identified") && r.is(k+2, "by") && r.kind(k+3) == tokString:
				add(edit{k, k + 4, ""})
				k += 3
			case r.is(k, "rows") && r.is(k-2, "ignore") && r.kind(k-1) == tokWord:
				add(edit{k, k + 1, "LINES"})
			case r.isAny(k, "fields", "columns", "lines") && !r.is(k-2, "ignore"):
				return "", false, false // not LOAD XML's clauses
			}
		}
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
			(r.tableListStart(k-2) || r.kind(k-2) == '.' && r.isName(k-3) && r.tableListStart(k-4)):
			// FROM t = a, u = b: MariaDB's table_alias is AS or "="
			// (sql_yacc.yy)
			add(edit{k, k + 1, "AS"})
		case t.kind == tokWord && r.isAny(k, "generated", "row", "rows", "groups") &&
			(r.kind(k-1) == '(' || r.kind(k-1) == ',' || r.is(k-1, "by") || r.is(k-1, "select")) &&
			(r.kind(k+1) == ',' || r.kind(k+1) == ')' || k+1 == j || r.isAny(k+1, "from", "order", "limit", "having", "asc", "desc")):
			// a column named so in a list (INSERT INTO t (…, generated),
			// GROUP BY row): a name to MariaDB
			add(edit{k, k + 1, "`" + t.name(r.text) + "`"})
		case t.is(r.text, "concurrent") && r.is(k-1, "data") && r.is(i, "load") && k == i+2:
			// LOAD DATA CONCURRENT: MyISAM's concurrent inserts, the same
			// load (TiDB has LOW_PRIORITY only)
			add(edit{k, k + 1, ""})
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
		case t.is(r.text, "having"):
			// SELECT list [FROM DUAL] [WHERE w] [GROUP BY g] HAVING h, a
			// SELECT with no table: TiDB takes its HAVING right after the
			// list only (SelectStmtBasic), where it builds the same tree
			p, e := r.havingFirst(i, k, j)
			if p < 0 {
				break
			}
			hs, changed, good := r.rewrite(k, e)
			if !good {
				return "", false, false
			}
			if !changed {
				hs = r.src(k, e)
			}
			add(edit{p, p, hs})
			add(edit{k, e, ""})
			k = e - 1
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
