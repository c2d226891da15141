package mysql

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// stmtsOf returns the facts of text's statements, parsed or, for a parse
// error, recognized (unparsed.go).
func stmtsOf(text string) []engine.StmtFacts {
	return analyze(text, engine.LexStats{}).Stmts
}

// anyProbes is the union of the probes of text's statements.
func anyProbes(text string) engine.ProbeSet {
	var p engine.ProbeSet
	for _, st := range stmtsOf(text) {
		p |= st.Probes
	}
	return p
}

func TestProbeFacts(t *testing.T) {
	const (
		cat = engine.ProbeCatalog
		srv = engine.ProbeServerInfo
		eb  = engine.ProbeErrorBased
		uc  = engine.ProbeUnionConstants
	)
	tests := []struct {
		name, sql string
		want      engine.ProbeSet
	}{
		// catalog reads embedded in a statement on application tables
		{"scalar subquery", "SELECT a FROM t WHERE id = (SELECT table_name FROM information_schema.tables LIMIT 1)", cat},
		{"exists", "SELECT a FROM t WHERE id = 1 AND EXISTS (SELECT 1 FROM information_schema.columns WHERE column_name = 'pw')", cat},
		{"in subquery", "SELECT a FROM t WHERE id IN (SELECT 1 FROM mysql.db)", cat},
		{"derived table", "SELECT a FROM t, (SELECT schema_name FROM information_schema.schemata) x", cat},
		{"cte", "WITH c AS (SELECT table_name FROM information_schema.tables) SELECT a FROM t JOIN c", cat},
		{"join", "SELECT t.a, p.user FROM t JOIN performance_schema.threads p ON p.thread_id = t.id", cat},
		{"order by", "SELECT a FROM t ORDER BY (SELECT count(*) FROM information_schema.columns)", cat},
		{"function argument", "SELECT a FROM t WHERE id = 1 AND length((SELECT group_concat(table_name) FROM information_schema.tables)) > 0", cat},
		{"sys schema", "SELECT a FROM t WHERE id = (SELECT count(*) FROM sys.processlist)", cat},
		{"insert select", "INSERT INTO t (a) SELECT table_name FROM information_schema.tables", cat},
		{"update subquery", "UPDATE t SET a = (SELECT group_concat(user) FROM mysql.db) WHERE id = 1", cat},
		{"create table as", "CREATE TABLE snap AS SELECT * FROM information_schema.tables", cat},
		{"union arm qualified app table", "SELECT a FROM shop.t UNION SELECT table_name FROM information_schema.tables", cat},
		{"view over app and catalog", "CREATE VIEW v AS SELECT a FROM t WHERE a IN (SELECT table_name FROM information_schema.tables)", cat},
		// the tools' own catalog queries
		{"catalog only", "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()", 0},
		{"catalog subqueries", "SELECT DISTINCT TABLESPACE_NAME FROM INFORMATION_SCHEMA.FILES WHERE TABLESPACE_NAME IN (SELECT DISTINCT TABLESPACE_NAME FROM INFORMATION_SCHEMA.PARTITIONS WHERE TABLE_SCHEMA IN ('shop'))", 0},
		{"catalog joins", "SELECT c.table_name FROM information_schema.key_column_usage kc JOIN information_schema.table_constraints c ON c.constraint_name = kc.constraint_name", 0},
		{"catalog with a cte", "WITH x AS (SELECT table_name FROM information_schema.tables) SELECT * FROM x", 0},
		{"laravel has table", "select exists (select 1 from information_schema.tables where table_schema = 'db' and table_name = 'users' and table_type in ('BASE TABLE', 'SYSTEM VERSIONED')) as `exists`", 0},
		{"view over the catalog", "CREATE VIEW v AS SELECT * FROM mysql.help_topic", 0},
		{"lock tables", "LOCK TABLES t READ, mysql.proc READ", 0},

		// server information
		{"union user", "SELECT a FROM t WHERE id = 1 UNION SELECT user()", srv},
		{"union datadir", "SELECT a FROM t WHERE id = 1 UNION ALL SELECT @@datadir", srv},
		{"union without tables", "SELECT 1 UNION SELECT version()", srv},
		{"union derived table", "SELECT a FROM t WHERE id = 1 UNION SELECT * FROM (SELECT user()) x", srv},
		{"union nested", "SELECT a FROM t WHERE id = 1 UNION SELECT concat(database(), 0x3a, current_user)", srv},
		{"ascii substr", "SELECT a FROM t WHERE id = 1 AND ASCII(SUBSTR(user(), 1, 1)) > 64", srv},
		{"ord mid", "SELECT a FROM t WHERE id = 1 AND ORD(MID(version(), 1, 1)) = 49", srv},
		{"like", "SELECT a FROM t WHERE id = 1 AND user() LIKE 'root%'", srv},
		{"regexp", "SELECT a FROM t WHERE id = 1 AND database() REGEXP '^s'", srv},
		{"between", "SELECT a FROM t WHERE id = 1 AND connection_id() BETWEEN 1 AND 100", srv},
		{"in list", "SELECT a FROM t WHERE id = 1 AND schema() IN ('shop', 'app')", srv},
		{"length", "SELECT a FROM t WHERE id = length(database())", srv},
		{"subquery compared", "SELECT a FROM t WHERE id = 1 AND (SELECT system_user()) LIKE 'r%'", srv},
		{"variable in condition", "SELECT a FROM t WHERE id = 1 AND @@version_compile_os = 'Linux'", srv},
		{"variable in select list", "SELECT a, @@hostname FROM t", srv},
		{"global variable", "SELECT a FROM t WHERE id = 1 AND @@global.max_connections > 10", srv},
		{"order by if", "SELECT a FROM t ORDER BY IF(session_user() LIKE 'r%', a, id)", srv},
		{"owner column", "SELECT a FROM t WHERE owner = USER()", 0},
		{"owner substring_index", "SELECT a FROM t WHERE owner = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)", 0},
		{"insert value", "INSERT INTO log (who, at) VALUES (CURRENT_USER(), NOW())", 0},
		{"update set", "UPDATE t SET by_user = USER() WHERE id = 1", 0},
		{"alone", "SELECT @@version", 0},
		{"driver", "SELECT DATABASE(), USER() LIMIT 1", 0},
		{"cli", "select @@version_comment limit 1", 0},
		{"session variable in app statement", "SELECT a FROM t WHERE id = 1 AND @@session.sql_mode LIKE '%STRICT%'", 0},
		{"bare instr", "SELECT a FROM t WHERE id = 1 AND INSTR(user(), 'root')", srv},
		{"bare not nullif", "SELECT a FROM t WHERE id = 1 AND NOT NULLIF(version(), 'x')", srv},
		{"bare xor subquery", "SELECT a FROM t WHERE id = 1 XOR (SELECT LOCATE('r', user()))", srv},
		{"bare with a column", "SELECT a FROM t WHERE owner = USER() AND active", 0},
		{"instr of a column", "SELECT a FROM t WHERE id = 1 AND INSTR(name, 'a')", 0},

		// error-based
		{"updatexml", "SELECT a FROM t WHERE id = 1 AND updatexml(1, concat(0x7e, (SELECT user())), 1)", eb},
		{"extractvalue", "SELECT a FROM t WHERE id = 1 AND extractvalue(1, concat(0x7e, version()))", eb},
		{"extractvalue column", "SELECT extractvalue(1, concat(0x7e, pw)) FROM users", eb},
		{"extractvalue constant", "SELECT extractvalue(doc, '/a/b') FROM t", 0},
		{"updatexml constant", "UPDATE t SET doc = updatexml(doc, '/a', '<b/>') WHERE id = 1", 0},
		{"name_const", "SELECT * FROM (SELECT NAME_CONST(VERSION(), 1), NAME_CONST(VERSION(), 1)) a", eb},
		{"name_const binlog", "INSERT INTO t VALUES (NAME_CONST('x', 5))", 0},
		{"gtid_subset", "SELECT a FROM t WHERE id = 1 AND gtid_subset(concat(0x7e, user()), 1)", eb},
		{"gtid_subtract", "SELECT gtid_subtract((SELECT pw FROM users LIMIT 1), 1)", eb},
		{"exp bitneg", "SELECT a FROM t WHERE id = 1 AND exp(~(SELECT * FROM (SELECT user()) x))", eb},
		{"exp column", "SELECT exp(rate) FROM t", 0},
		{"bitneg minus", "SELECT a FROM t WHERE id = 1 AND !(SELECT * FROM (SELECT user()) x) - ~0", eb},
		{"bitneg plus", "SELECT ~0 + (SELECT pw FROM users LIMIT 1)", eb},
		{"huge literal", "SELECT a FROM t WHERE id = 1 AND (SELECT 2 FROM dual) + 18446744073709551615", eb},
		{"bitneg constant", "SELECT ~0 + 1", 0},
		{"group by rand alias", "SELECT count(*), concat(version(), floor(rand(0) * 2)) x FROM t GROUP BY x", eb},
		{"group by rand expr", "SELECT count(*) FROM t GROUP BY concat((SELECT user()), floor(rand(0) * 2))", eb},
		{"group by rand position", "SELECT concat(user(), floor(rand(0) * 2)), count(*) FROM t GROUP BY 1", eb},
		{"order by rand", "SELECT a FROM t ORDER BY rand() LIMIT 1", 0},
		{"json_keys", "SELECT a FROM t WHERE id = 1 AND json_keys((SELECT convert((SELECT concat(0x7e, user())) using utf8)))", eb},
		{"json_extract subquery", "SELECT json_extract((SELECT pw FROM users LIMIT 1), '$.a')", eb},
		{"json_extract column", "SELECT json_extract(doc, '$.a') FROM t", 0},
		{"json_object", "SELECT json_object('k', (SELECT max(id) FROM t2)) FROM t", 0},
		{"polygon", "SELECT a FROM t WHERE id = 1 AND polygon((SELECT * FROM (SELECT * FROM (SELECT user()) a) b))", eb},
		{"multipoint", "SELECT multipoint((SELECT pw FROM users LIMIT 1))", eb},
		{"linestring", "SELECT a FROM t WHERE id = 1 AND linestring(version())", eb},
		{"geometry", "SELECT ST_AsText(POLYGON(LINESTRING(POINT(0, 0), POINT(1, 0), POINT(0, 1), POINT(0, 0))))", 0},
		{"geohash", "SELECT a FROM t WHERE id = 1 AND ST_LatFromGeoHash(version())", eb},
		{"geohash column", "SELECT ST_LatFromGeoHash(gh) FROM t", 0},
		// a UNION arm of constants, or a UUID, after an application read
		{"union of numbers", "SELECT a FROM t WHERE id = -78 UNION SELECT 1,2", uc},
		{"union all of nulls", "SELECT a, b FROM t WHERE id = 1 UNION ALL SELECT NULL, NULL", uc},
		{"union of hex markers", "SELECT a FROM t WHERE id = 1 UNION ALL SELECT CONCAT(0x71786b7171, 0x4a, 0x7170767a71)", uc},
		{"union from dual, negative, bits", "SELECT a, b FROM t WHERE id = 1 UNION SELECT -1.5, b'1' FROM DUAL", uc},
		{"union in parentheses", "(SELECT a FROM t WHERE id = 1) UNION (SELECT 1)", uc},
		{"union in a derived table", "SELECT * FROM (SELECT a FROM t WHERE id = -1 UNION SELECT 1) x", uc},
		{"union of uuid", "SELECT a FROM t WHERE id = 1 UNION SELECT UUID()", srv},
		{"union of uuid_short", "SELECT a, b FROM t WHERE id = 1 UNION SELECT 1, UUID_SHORT()", srv},
		{"union of sys_guid", "SELECT a FROM t WHERE id = 1 UNION SELECT HEX(SYS_GUID())", srv},
		{"union of a labelled sentinel row", "SELECT id, name FROM t WHERE active = 1 UNION ALL SELECT 0, 'All'", 0},
		{"union of constants first", "SELECT 0 UNION SELECT id FROM t WHERE a = 1", 0},
		{"union after a read without a condition", "SELECT id FROM t UNION ALL SELECT 0", 0},
		{"insert select of constant rows", "INSERT INTO t (a, b) SELECT 1, 2 UNION ALL SELECT 3, 4", 0},
		{"insert select with a constant row", "INSERT INTO t (a) SELECT a FROM u WHERE x = 1 UNION ALL SELECT 3", 0},
		{"uuid alone", "SELECT UUID()", 0},
		{"uuid in a read", "SELECT UUID(), a FROM t WHERE id = 1", 0},
		{"uuid in an insert", "INSERT INTO t (id, a) SELECT UUID(), a FROM u WHERE x = 1", 0},
		{"recursive cte seed", "WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 10) SELECT n FROM seq", 0},
		// in a routine's body too
		{"procedure block", "CREATE PROCEDURE p() BEGIN SELECT updatexml(1, concat(0x7e, user()), 1); END", eb},
		{"procedure body", "CREATE PROCEDURE p() SELECT a FROM t WHERE id = (SELECT count(*) FROM information_schema.tables)", cat},
		{"prepared text", "PREPARE s FROM 'SELECT a FROM t WHERE id = 1 AND extractvalue(1, concat(0x7e, user()))'", eb},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// want's shapes must be there (a probe may have others:
			// AND updatexml(... user() ...) is also server information
			// alone deciding a condition); none when want is none.
			if got := anyProbes(tt.sql); got&tt.want != tt.want || tt.want == 0 && got != 0 {
				t.Errorf("%s\ngot probes %q, want %q", tt.sql, got, tt.want)
			}
		})
	}
}

func TestWaitFacts(t *testing.T) {
	tests := []struct {
		name, sql       string
		probe, long     bool
		sleepSecondsMin float64
	}{
		{"master_gtid_wait without timeout", "SELECT master_gtid_wait('0-1-100')", false, true, 0},
		{"master_gtid_wait short", "SELECT master_gtid_wait('0-1-100', 1)", false, false, 1},
		{"master_gtid_wait long", "SELECT master_gtid_wait('0-1-100', 60)", false, true, 60},
		{"master_gtid_wait in a condition", "SELECT a FROM t WHERE id = 1 AND master_gtid_wait('0-1-100', 1) = 0", true, false, 1},
		{"master_pos_wait computed", "SELECT master_pos_wait('f', 4, (SELECT count(*) FROM t))", true, true, 0},
		{"master_pos_wait next to a table", "SELECT master_pos_wait('f', 4, 1) FROM t", true, false, 1},
		{"source_pos_wait", "SELECT source_pos_wait('f', 4)", false, true, 0},
		{"wait_for_executed_gtid_set", "SELECT wait_for_executed_gtid_set('x', 100)", false, true, 100},
		{"get_lock migration", "SELECT GET_LOCK('x', 10)", false, false, 0},
		{"get_lock parameter", "SELECT GET_LOCK(?, ?)", false, false, 0},
		{"get_lock for ever", "SELECT GET_LOCK('x', -1)", false, true, 0},
		{"get_lock hours", "SELECT GET_LOCK('x', 3600)", false, true, 0},
		{"get_lock computed", "SELECT GET_LOCK('x', (SELECT count(*) FROM users))", true, true, 0},
		{"get_lock in a condition", "SELECT a FROM t WHERE id = 1 AND GET_LOCK('x', 5)", true, false, 0},
		{"release_lock", "SELECT RELEASE_LOCK('x')", false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts := stmtsOf(tt.sql)
			if len(sts) != 1 {
				t.Fatalf("%s: %d statements", tt.sql, len(sts))
			}
			st := sts[0]
			long := st.Effects&engine.EffLongSleep != 0
			if st.TimeProbe != tt.probe || long != tt.long || st.SleepSeconds < tt.sleepSecondsMin {
				t.Errorf("%s\ngot time_probe %v, long_sleep %v, %v s; want %v, %v, at least %v s",
					tt.sql, st.TimeProbe, long, st.SleepSeconds, tt.probe, tt.long, tt.sleepSecondsMin)
			}
		})
	}
}

// BenchmarkVerdictColdSearched: a cold verdict of a statement that makes the
// probe search run (it calls USER()), against VerdictColdPointSelect, which
// does not (docs/performance.md).
func BenchmarkVerdictColdSearched(b *testing.B) {
	benchCold(b, "SELECT c FROM sbtest1 WHERE id = 4990 AND owner = USER()")
}

// BenchmarkProbeSearch3Join: the probe search alone over a parsed 3-way join
// that calls a function it looks at.
func BenchmarkProbeSearch3Join(b *testing.B) {
	const q = "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id JOIN order_lines l ON l.order_id = o.id WHERE o.owner = CURRENT_USER() AND o.created > '2024-01-01' ORDER BY o.id LIMIT 20"
	parse(q, func(stmts []ast.StmtNode, err error) {
		if err != nil {
			b.Fatal(err)
		}
		var st engine.StmtFacts
		fillStmt(&st, stmts[0], 0)
		b.ReportAllocs()
		for b.Loop() {
			st.Probes = 0
			probes(&st, stmts[0], true, false)
		}
		if st.Probes != 0 {
			b.Fatal(st.Probes)
		}
	})
}

func TestHeavyCatalogJoin(t *testing.T) {
	for _, tt := range []struct {
		sql   string
		heavy bool
	}{
		{"SELECT count(*) FROM information_schema.columns A, information_schema.columns B", true},
		{"SELECT IF(1 = 1, (SELECT count(*) FROM information_schema.columns A, information_schema.columns B, information_schema.columns C), 0)", true},
		{"SELECT count(*) FROM mysql.help_topic A CROSS JOIN performance_schema.threads B", true},
		{"SELECT count(*) FROM information_schema.columns A, information_schema.columns B WHERE A.table_name = B.table_name", false},
		{"SELECT count(*) FROM information_schema.columns A JOIN information_schema.tables B ON A.table_name = B.table_name", false},
		{"SELECT count(*) FROM information_schema.columns A JOIN information_schema.tables B USING (table_name)", false},
		{"SELECT count(*) FROM information_schema.columns", false},
		{"SELECT count(*) FROM orders A, order_lines B", false},
	} {
		var tp bool
		for _, st := range stmtsOf(tt.sql) {
			tp = tp || st.TimeProbe
		}
		if tp != tt.heavy {
			t.Errorf("%s: got time_probe %v, want %v", tt.sql, tp, tt.heavy)
		}
	}
}

// TestBlindFacts: the boolean-blind and character-extraction shapes
// (blind.go), server information in the select list, ORDER BY and
// RETURNING of an application statement, and a catalog read or server
// information stacked after one (probes.go), and their benign faces.
func TestBlindFacts(t *testing.T) {
	const (
		cat = engine.ProbeCatalog
		srv = engine.ProbeServerInfo
		eb  = engine.ProbeErrorBased
		bb  = engine.ProbeBooleanBlind
		ce  = engine.ProbeCharExtraction
	)
	tests := []struct {
		name, sql string
		want      engine.ProbeSet
	}{
		{"and true", "SELECT a FROM t WHERE id = 1 AND 5678=5678", bb},
		{"and false", "SELECT a FROM t WHERE id = 1 AND 5678=1234", bb},
		{"or false", "SELECT a FROM t WHERE id = 1 OR 5678=1234", bb},
		{"strings", "SELECT a FROM t WHERE name = 'x' AND 'abc'='abc'", bb},
		{"parenthesised chain", "SELECT a FROM t WHERE (id = 1 AND 2=2)", bb},
		{"middle of a chain", "SELECT a FROM t WHERE name = 'x' AND 2=2 AND pass = 'y'", bb},
		{"nested in or", "SELECT a FROM t WHERE id = 9 OR (b = 2 AND 3=3)", bb},
		{"on", "SELECT a FROM t JOIN u ON u.id = t.id AND 2=2", bb},
		{"having", "SELECT a FROM t GROUP BY a HAVING COUNT(*) > 1 AND 2=2", bb},
		{"case constant", "SELECT a FROM t ORDER BY (CASE WHEN 5=5 THEN a ELSE b END)", bb},
		{"if constant", "SELECT a FROM t WHERE id = 1 AND IF(5=5, 1, 0)", bb},
		{"elt", "SELECT a FROM t WHERE id = 1 AND ELT(5=5, 1)", bb},
		{"builder head", "SELECT a FROM t WHERE 1=1 AND id = 1", 0},
		{"builder head parenthesised", "SELECT a FROM t WHERE (1=1) AND id = 1", 0},
		{"whole constant", "SELECT a FROM t WHERE 1=0", 0},
		{"empty in list", "SELECT a FROM t WHERE active = 1 AND 1=0", 0},
		{"empty in list 0=1", "SELECT a FROM t WHERE active = 1 AND 0 = 1", 0},
		{"or head", "SELECT a FROM t WHERE (1=0 OR id = 3)", 0},
		{"optional filter", "SELECT a FROM t WHERE (name = 'x' OR 'x' IS NULL)", 0},
		{"tautology is no-tautology's", "SELECT a FROM t WHERE id = 1 OR 1=1", 0},
		{"no application table", "SELECT 1 FROM dual WHERE 1 AND 2=2", 0},
		{"case of columns", "SELECT CASE WHEN a > 1 THEN 'x' END FROM t", 0},

		{"ord mid subquery", "SELECT a FROM t WHERE id = 1 AND ORD(MID((SELECT v FROM s LIMIT 1), 1, 1)) > 64", ce},
		{"constant on the left", "SELECT a FROM t WHERE id = 1 AND 64 < ASCII(SUBSTR((SELECT v FROM s), 1, 1))", ce},
		{"between", "SELECT a FROM t WHERE id = 1 AND ASCII((SELECT v FROM s)) BETWEEN 1 AND 9", ce},
		{"in list", "SELECT a FROM t WHERE id = 1 AND ASCII((SELECT v FROM s)) IN (97, 98)", ce},
		{"inside the subquery", "SELECT a FROM t WHERE id = 1 AND (SELECT SUBSTR(v, 1, 1) FROM s) = 'a'", ce},
		{"like prefix", "SELECT a FROM t WHERE id = 1 AND (SELECT v FROM s) LIKE 'a%'", ce},
		{"regexp", "SELECT a FROM t WHERE id = 1 AND (SELECT v FROM s) REGEXP '^a'", ce},
		{"bare truth", "SELECT a FROM t WHERE id = 1 AND ORD(MID((SELECT v FROM s), 1, 1))", ce},
		{"of a column", "SELECT a FROM t WHERE LEFT(name, 1) = 'a'", 0},
		{"subquery compared with a column", "SELECT a FROM t WHERE price > (SELECT AVG(price) FROM t)", 0},

		{"select list", "SELECT user(), a FROM t", srv},
		{"scalar subquery", "SELECT a FROM t WHERE id = (SELECT user())", srv},
		{"order by", "SELECT a FROM t ORDER BY version()", srv},
		{"group by", "SELECT a FROM t GROUP BY a, database()", srv},
		{"returning", "INSERT INTO t (a) VALUES (1) RETURNING @@datadir", srv},
		{"stacked server info", "SELECT a FROM t WHERE id = 1; SELECT @@datadir", srv},
		{"stacked catalog", "SELECT a FROM t WHERE id = 1; SELECT table_name FROM information_schema.tables", cat},
		{"sys function", "SELECT a FROM t WHERE id = 1 AND sys.version_major() = 10", cat},
		{"compared with a column", "SELECT a FROM t WHERE owner = CURRENT_USER()", 0},
		{"values", "INSERT INTO audit (who) VALUES (CURRENT_USER())", 0},
		{"alone", "SELECT @@version_comment LIMIT 1", 0},
		{"connector", "SELECT @@max_allowed_packet, @@sql_mode, @@system_time_zone", 0},
		{"stacked without an application table", "SET NAMES utf8mb4; SELECT @@version", 0},
		{"stacked last insert id", "INSERT INTO t (a) VALUES (1); SELECT LAST_INSERT_ID()", 0},

		{"extractvalue of constants", "SELECT a FROM t WHERE id = 1 AND EXTRACTVALUE(1, CONCAT(0x5c, 0x71, (SELECT (ELT(1=1, 1))), 0x71))", eb},
		{"extractvalue bad literal", "SELECT a FROM t WHERE id = 1 AND EXTRACTVALUE(1, '~a')", eb},
		{"gtid_subset of constants", "SELECT a FROM t WHERE id = 1 AND GTID_SUBSET(CONCAT(0x71, 0x71), 1)", eb},
		{"bigint doubled", "SELECT a FROM t WHERE id = 1 AND (SELECT 2*(IF((SELECT 1), 8446744073709551610, 8446744073709551610)))", eb},
		{"column_get fed", "SELECT a FROM t WHERE id = 1 AND COLUMN_GET(COLUMN_CREATE('a', (SELECT v FROM s)), 'a' AS INT)", eb},
		{"extractvalue path", "SELECT EXTRACTVALUE(doc, '/a/b') FROM t", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := anyProbes(tt.sql); got&tt.want != tt.want || tt.want == 0 && got != 0 {
				t.Errorf("%s: probes %v, want %v", tt.sql, got, tt.want)
			}
		})
	}
}
