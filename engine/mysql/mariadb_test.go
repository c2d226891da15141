package mysql

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// stripLoc returns the facts of each statement without their locations
// (a rewritten text's are the original's, its canonical form's differ).
func stripLoc(sts []engine.StmtFacts) []engine.StmtFacts {
	out := make([]engine.StmtFacts, len(sts))
	for i, st := range sts {
		st.Loc, st.Length = 0, 0
		out[i] = st
	}
	return out
}

// TestMariaDBFormsHaveCanonicalFacts: each MariaDB-only form is read
// (not a parse error) with exactly the facts of the statement TiDB parses
// that means the same to the server.
func TestMariaDBFormsHaveCanonicalFacts(t *testing.T) {
	for _, tc := range []struct{ name, maria, canonical string }{
		{"explain extended", "EXPLAIN EXTENDED SELECT a FROM t WHERE b = 1", "EXPLAIN SELECT a FROM t WHERE b = 1"},
		{"table alias =", "SELECT t1.period FROM t3 = t1 LIMIT 1", "SELECT t1.period FROM t3 AS t1 LIMIT 1"},
		{"load data concurrent", "LOAD DATA CONCURRENT LOCAL INFILE 'x' REPLACE INTO TABLE t", "LOAD DATA LOCAL INFILE 'x' REPLACE INTO TABLE t"},
		{"having after group by without a table (main.subselect4)", "SELECT (SELECT 0 GROUP BY c HAVING (SELECT c)) FROM t GROUP BY c", "SELECT (SELECT 0 HAVING (SELECT c) GROUP BY c) FROM t GROUP BY c"},
		{"having after where and group by", "SELECT 0 WHERE 1 GROUP BY 1 HAVING (SELECT password FROM mysql.user)", "SELECT 0 HAVING (SELECT password FROM mysql.user) WHERE 1 GROUP BY 1"},
		{"having after from dual", "SELECT 0 FROM DUAL WHERE 1 GROUP BY 1 HAVING SLEEP(1) ORDER BY 1 LIMIT 1", "SELECT 0 HAVING SLEEP(1) FROM DUAL WHERE 1 GROUP BY 1 ORDER BY 1 LIMIT 1"},
		{"having with rollup, comments", "SELECT 1 GROUP BY 1 WITH ROLLUP /* a */ HAVING 1 -- b\n AND @x FOR UPDATE", "SELECT 1 HAVING 1 AND @x GROUP BY 1 WITH ROLLUP FOR UPDATE"},
		{"having nested in having", "SELECT 1 GROUP BY 1 HAVING (SELECT a FROM t WHERE b IN (SELECT 2 GROUP BY 2 HAVING 2)) LIMIT 1", "SELECT 1 HAVING (SELECT a FROM t WHERE b IN (SELECT 2 HAVING 2 GROUP BY 2)) GROUP BY 1 LIMIT 1"},
		{"having in union arms", "SELECT 1 GROUP BY 1 HAVING 1 UNION SELECT a FROM t GROUP BY a HAVING a > 1 UNION SELECT 2 WHERE 1 GROUP BY 1 HAVING CASE WHEN 1 THEN 1 END", "SELECT 1 HAVING 1 GROUP BY 1 UNION SELECT a FROM t GROUP BY a HAVING a > 1 UNION SELECT 2 HAVING CASE WHEN 1 THEN 1 END WHERE 1 GROUP BY 1"},
		{"having in insert select", "INSERT INTO t (a) SELECT 1 GROUP BY 1 HAVING 1", "INSERT INTO t (a) SELECT 1 HAVING 1 GROUP BY 1"},
		{"having in a delete's where", "DELETE FROM t WHERE id = 1 OR (SELECT 1 GROUP BY 1 HAVING 1)", "DELETE FROM t WHERE id = 1 OR (SELECT 1 HAVING 1 GROUP BY 1)"},
		{"having after into @v", "SELECT 1 INTO @a GROUP BY 1 HAVING 1", "SELECT 1 HAVING 1 GROUP BY 1"},
		{"having with sounds like", "SELECT 1 GROUP BY 1 HAVING 'a' SOUNDS LIKE 'b'", "SELECT 1 HAVING SOUNDEX('a') = SOUNDEX('b') GROUP BY 1"},
		{"load xml", "LOAD XML LOCAL INFILE 'x.xml' REPLACE INTO TABLE t CHARACTER SET utf8 ROWS IDENTIFIED BY '<row>' IGNORE 1 ROWS (a, @b) SET c = @b", "LOAD DATA LOCAL INFILE 'x.xml' REPLACE INTO TABLE t CHARACTER SET utf8 IGNORE 1 LINES (a, @b) SET c = @b"},
		{"load xml from a server file", "LOAD XML INFILE '/etc/passwd' INTO TABLE t", "LOAD DATA INFILE '/etc/passwd' INTO TABLE t"},
		{"table aliases = in a list", "SELECT a.x FROM t = a, db.u = b, v c WHERE a.id = b.id", "SELECT a.x FROM t AS a, db.u AS b, v c WHERE a.id = b.id"},
		{"table aliases = in a join and an update", "UPDATE t1 = a, t2 = b JOIN t3 = c ON b.x = c.x SET a.x = 1, a.y = b.y WHERE a.id = b.id", "UPDATE t1 AS a, t2 AS b JOIN t3 AS c ON b.x = c.x SET a.x = 1, a.y = b.y WHERE a.id = b.id"},
		{"a comparison in a select list stays one", "SELECT a, b = c, d = 1 FROM t = x, u = y", "SELECT a, b = c, d = 1 FROM t AS x, u AS y"},
		{"table alias = in a delete", "DELETE t1 FROM mysql.user = t1", "DELETE t1 FROM mysql.user AS t1"},
		{"table alias = after join", "SELECT * FROM t JOIN u = x ON x.id = t.id WHERE t.a = 1", "SELECT * FROM t JOIN u AS x ON x.id = t.id WHERE t.a = 1"},
		{"integer past 81 digits", "SELECT " + strings.Repeat("9", 134) + " AS x", "SELECT " + strings.Repeat("9", 65) + " AS x"},
		{"long integer saturates alike", "DELETE FROM t WHERE " + strings.Repeat("9", 100) + " = " + strings.Repeat("9", 90), "DELETE FROM t WHERE 1 = 1"},
		{"long integer with leading zeros", "DELETE FROM t WHERE " + strings.Repeat("0", 100) + "1", "DELETE FROM t WHERE 1"},
		{"weight_string level", "SELECT HEX(WEIGHT_STRING('a' LEVEL 1)), WEIGHT_STRING(a AS CHAR(4) LEVEL 1-3 DESC REVERSE) FROM t", "SELECT HEX(`weight_string`('a')), `weight_string`(a) FROM t"},
		{"flush des_key_file", "FLUSH DES_KEY_FILE", "FLUSH HOSTS"},
		{"flush ssl, user_resources", "FLUSH NO_WRITE_TO_BINLOG SSL, USER_RESOURCES", "FLUSH HOSTS"},
		{"flush relay logs", "FLUSH RELAY LOGS", "FLUSH HOSTS"},
		{"flush query cache", "FLUSH QUERY CACHE", "FLUSH STATUS"},
		{"flush statistics", "FLUSH USER_STATISTICS, INDEX_STATISTICS, TABLE_STATISTICS", "FLUSH STATUS"},
		{"flush tables for export", "FLUSH TABLES t1, t2 FOR EXPORT", "FLUSH TABLES t1, t2 WITH READ LOCK"},
		{"for system_time as of", "SELECT * FROM t FOR SYSTEM_TIME AS OF TIMESTAMP '2020-01-01 00:00:00' WHERE a = 1", "SELECT * FROM t WHERE a = 1"},
		{"for system_time between, its expressions judged", "SELECT * FROM t FOR SYSTEM_TIME BETWEEN CONCAT(@a, b) AND NOW() AS x", "SELECT *, CONCAT(@a, b), NOW() FROM t AS x"},
		{"for system_time from to", "SELECT * FROM t FOR SYSTEM_TIME FROM @a TO @b", "SELECT * FROM t"},
		{"for system_time as of an expression", "SELECT * FROM t FOR SYSTEM_TIME AS OF TIMESTAMP '2020-01-01' + INTERVAL 1 DAY WHERE a = 1", "SELECT *, '2020-01-01' + INTERVAL 1 DAY FROM t WHERE a = 1"},
		{"for system_time between expressions", "SELECT * FROM t FOR SYSTEM_TIME BETWEEN NOW() - INTERVAL 2 DAY AND @b << 1 | 0 AS x", "SELECT *, NOW() - INTERVAL 2 DAY, @b << 1 | 0 FROM t AS x"},
		{"for system_time from to expressions", "SELECT * FROM t FOR SYSTEM_TIME FROM -@a + 1 TO ABS(@b) DIV 2 MOD 7", "SELECT *, -@a + 1, ABS(@b) DIV 2 MOD 7 FROM t"},
		{"delete history before", "DELETE HISTORY FROM t BEFORE SYSTEM_TIME '2020-01-01'", "DELETE HISTORY FROM t"},
		{"row start and end, period for system_time", "CREATE TABLE t (a INT, s TIMESTAMP(6) GENERATED ALWAYS AS ROW START, e TIMESTAMP(6) GENERATED ALWAYS AS ROW END, PERIOD FOR SYSTEM_TIME(s, e)) WITH SYSTEM VERSIONING", "CREATE TABLE t (a INT, s TIMESTAMP(6), e TIMESTAMP(6))"},
		{"period for", "CREATE TABLE t (id INT, s DATE, e DATE, PERIOD FOR p(s, e))", "CREATE TABLE t (id INT, s DATE, e DATE)"},
		{"add period for alone", "ALTER TABLE t ADD PERIOD FOR p(s, e)", "ALTER TABLE t FORCE"},
		{"add system versioning", "ALTER TABLE t ADD SYSTEM VERSIONING", "ALTER TABLE t FORCE"},
		{"backup stage", "BACKUP STAGE BLOCK_COMMIT", "FLUSH TABLES WITH READ LOCK"},
		{"backup lock", "BACKUP LOCK db.t1", "LOCK TABLES db.t1 READ"},
		{"backup unlock", "BACKUP UNLOCK", "UNLOCK TABLES"},
		{"row in a condition", "SELECT * FROM t WHERE row <> order_number AND t.row > 1", "SELECT * FROM t WHERE `row` <> order_number AND t.`row` > 1"},
		{"explain extended delete", "EXPLAIN EXTENDED DELETE FROM mysql.user", "EXPLAIN DELETE FROM mysql.user"},
		{"explain partitions", "EXPLAIN PARTITIONS SELECT * FROM t", "EXPLAIN SELECT * FROM t"},
		{"describe extended", "DESCRIBE EXTENDED SELECT 1", "DESCRIBE SELECT 1"},
		{"cast as int", "SELECT CAST(a AS INT) FROM t", "SELECT CAST(a AS SIGNED) FROM t"},
		{"cast as integer", "SELECT CAST(a AS INTEGER), CONVERT(b, INT) FROM t", "SELECT CAST(a AS SIGNED), CONVERT(b, SIGNED) FROM t"},
		{"sounds like", "SELECT * FROM t WHERE a SOUNDS LIKE 'x' AND b = 1", "SELECT * FROM t WHERE SOUNDEX(a) = SOUNDEX('x') AND b = 1"},
		{"sounds like call", "SELECT * FROM t WHERE lower(a) SOUNDS LIKE (SELECT n FROM u)", "SELECT * FROM t WHERE SOUNDEX(lower(a)) = SOUNDEX((SELECT n FROM u))"},
		{"sounds like tautology", "DELETE FROM t WHERE id = 1 OR 'a' SOUNDS LIKE 'a'", "DELETE FROM t WHERE id = 1 OR SOUNDEX('a') = SOUNDEX('a')"},
		{"value()", "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = VALUE(a) + 1", "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = VALUES(a) + 1"},
		{"into @var", "SELECT a, b INTO @x, @y FROM t WHERE id = 1", "SELECT a, b FROM t WHERE id = 1"},
		{"into @var at the end", "SELECT a FROM t WHERE id = 1 INTO @x", "SELECT a FROM t WHERE id = 1"},
		{"into dumpfile", "SELECT a FROM t INTO DUMPFILE '/tmp/x'", "SELECT a FROM t INTO OUTFILE '/tmp/x'"},
		{"charset koi8r", "CREATE TABLE t (a CHAR(10) CHARACTER SET koi8r) CHARSET=latin2", "CREATE TABLE t (a CHAR(10) CHARACTER SET utf8mb4) CHARSET=utf8mb4"},
		{"introducer", "SELECT _koi8r 'a', CONVERT('b' USING cp1251) FROM t", "SELECT _utf8mb4 'a', CONVERT('b' USING utf8mb4) FROM t"},
		{"set names", "SET NAMES koi8r", "SET NAMES utf8mb4"},
		{"collation ci", "DELETE FROM t WHERE id = 1 OR 'a' = 'A' COLLATE koi8r_general_ci", "DELETE FROM t WHERE id = 1 OR 'a' = 'A' COLLATE utf8mb4_general_ci"},
		{"collation bin", "DELETE FROM t WHERE id = 1 OR 'a' = 'A' COLLATE koi8r_bin", "DELETE FROM t WHERE id = 1 OR 'a' = 'A' COLLATE utf8mb4_bin"},
		{"check table", "CHECK TABLE t1, db.t2 EXTENDED", "ADMIN CHECK TABLE t1, db.t2"},
		{"checksum table", "CHECKSUM TABLE t QUICK", "ADMIN CHECKSUM TABLE t"},
		{"analyze persistent", "ANALYZE TABLE t PERSISTENT FOR ALL", "ANALYZE TABLE t"},
		{"json_table", "SELECT jt.a FROM JSON_TABLE((SELECT doc FROM mysql.user), '$[*]' COLUMNS (a INT PATH '$')) AS jt", "SELECT jt.a FROM (SELECT (SELECT doc FROM mysql.user), '$[*]') AS jt"},
		{"show create trigger", "SHOW CREATE TRIGGER tr", "SHOW PROCESSLIST"},
		{"cast as double(m,d)", "SELECT CAST(a AS DOUBLE(30,6)), CAST(b AS VARCHAR(10)) FROM t", "SELECT CAST(a AS DECIMAL(30,6)), CAST(b AS CHAR(10)) FROM t"},
		{"cast as interval", "SELECT CAST(a AS INTERVAL DAY_SECOND(6)) FROM t", "SELECT CAST(a AS TIME(6)) FROM t"},
		{"alias rank", "SELECT a, RANK() OVER (ORDER BY a) AS rank FROM t", "SELECT a, RANK() OVER (ORDER BY a) AS `rank` FROM t"},
		{"drop constraint if exists", "ALTER TABLE t DROP CONSTRAINT IF EXISTS c, DROP FOREIGN KEY IF EXISTS f", "ALTER TABLE t DROP CONSTRAINT c, DROP FOREIGN KEY f"},
		{"rows examined", "SELECT * FROM t WHERE a = 1 LIMIT 10 ROWS EXAMINED 100", "SELECT * FROM t WHERE a = 1 LIMIT 10"},
		{"rows examined alone", "SELECT * FROM t LIMIT ROWS EXAMINED 100", "SELECT * FROM t"},
		{"spatial", "CREATE TABLE g (id INT, p POINT NOT NULL, SPATIAL INDEX (p))", "CREATE TABLE g (id INT, p BLOB NOT NULL, INDEX (p))"},
		{"check option", "CREATE VIEW v AS SELECT a FROM t WHERE a > 0 WITH CASCADED CHECK OPTION", "CREATE VIEW v AS SELECT a FROM t WHERE a > 0"},
		{"ascii attribute", "CREATE TABLE t (a CHAR(10) ASCII NOT NULL)", "CREATE TABLE t (a CHAR(10) CHARACTER SET utf8mb4 NOT NULL)"},
		{"year(2)", "CREATE TABLE t (y YEAR(2))", "CREATE TABLE t (y YEAR)"},
		{"escape expression", "SELECT a LIKE 'x%' ESCAPE (SELECT e FROM u) FROM t", "SELECT a LIKE 'x%' ESCAPE '!' FROM t WHERE (SELECT e FROM u)"},
		{"cycle restrict", "WITH RECURSIVE c AS (SELECT 1 AS a UNION SELECT a + 1 FROM c) CYCLE a RESTRICT SELECT * FROM c", "WITH RECURSIVE c AS (SELECT 1 AS a UNION SELECT a + 1 FROM c) SELECT * FROM c"},
		{"column_create as", "SELECT COLUMN_CREATE(1, a AS CHAR CHARACTER SET utf8, 2, b AS INT) FROM t", "SELECT COLUMN_CREATE(1, a, 2, b) FROM t"},
		{"group_concat limit", "SELECT GROUP_CONCAT(a ORDER BY a LIMIT 2, 3), JSON_ARRAYAGG(b LIMIT 1) FROM t", "SELECT GROUP_CONCAT(a ORDER BY a), JSON_ARRAYAGG(b) FROM t"},
		{"nth_value expression", "SELECT NTH_VALUE(a, b + 1) OVER (ORDER BY a) FROM t", "SELECT NTH_VALUE(a, 1) OVER (ORDER BY a), b + 1 FROM t"},
		{"percentile", "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY a) OVER (PARTITION BY b) FROM t", "SELECT PERCENTILE_CONT(0.5), a, b FROM t"},
		{"xa", "XA START 'x', 'y', 1", "BEGIN"},
		{"check tables", "CHECK TABLES t", "ADMIN CHECK TABLE t"},
		{"analyze statement", "ANALYZE FORMAT=JSON UPDATE t SET a = 1", "EXPLAIN ANALYZE UPDATE t SET a = 1"},
		{"analyze select", "ANALYZE SELECT * FROM mysql.user", "EXPLAIN ANALYZE SELECT * FROM mysql.user"},
		{"alter table if exists", "ALTER TABLE IF EXISTS t ADD PRIMARY KEY IF NOT EXISTS (a), ALTER COLUMN IF EXISTS b SET DEFAULT 1", "ALTER TABLE t ADD PRIMARY KEY (a), ALTER COLUMN b SET DEFAULT 1"},
		{"create view if not exists", "CREATE VIEW IF NOT EXISTS v AS SELECT * FROM mysql.user", "CREATE VIEW v AS SELECT * FROM mysql.user"},
		{"drop constraint primary key", "ALTER TABLE t DROP CONSTRAINT PRIMARY KEY", "ALTER TABLE t DROP PRIMARY KEY"},
		{"persistent", "CREATE TABLE t (a INT, b INT AS (a + 1) PERSISTENT)", "CREATE TABLE t (a INT, b INT AS (a + 1) STORED)"},
		{"limit variable", "SELECT a FROM t LIMIT lo, n", "SELECT a FROM t LIMIT 1, 1"},
		{"fetch first", "SELECT a FROM t ORDER BY a OFFSET 1 ROWS FETCH FIRST 2 ROWS WITH TIES", "SELECT a FROM t ORDER BY a LIMIT 1, 2"},
		{"fetch next only", "SELECT a FROM t ORDER BY a FETCH NEXT ROW ONLY", "SELECT a FROM t ORDER BY a LIMIT 1"},
		{"values statement", "VALUES (1, (SELECT a FROM u)), (3, 4) UNION VALUES (5, 6)", "SELECT 1, (SELECT a FROM u), 3, 4 UNION SELECT 5, 6"},
		{"values in", "SELECT a FROM t WHERE a IN (VALUES (1), (2))", "SELECT a FROM t WHERE a IN (SELECT 1, 2)"},
		{"create table values", "CREATE TABLE t AS VALUES (7), (3)", "CREATE TABLE t AS SELECT 7, 3"},
		{"default expression", "CREATE TABLE t (a TEXT, b BLOB DEFAULT COMPRESS(a), c INT DEFAULT (a + 1))", "CREATE TABLE t (a TEXT, b BLOB DEFAULT NULL, c INT DEFAULT NULL) SELECT COMPRESS(a), (a + 1)"},
		{"column named generated", "CREATE TABLE t (generated TINYINT, row INT, rank INT)", "CREATE TABLE t (`generated` TINYINT, `row` INT, `rank` INT)"},
		{"match without parentheses", "SELECT * FROM t WHERE MATCH a, b AGAINST ('x' IN BOOLEAN MODE WITH QUERY EXPANSION)", "SELECT * FROM t WHERE MATCH (a, b) AGAINST ('x' IN BOOLEAN MODE)"},
		{"json_arrayagg distinct order", "SELECT JSON_ARRAYAGG(DISTINCT a ORDER BY b DESC) FROM t", "SELECT JSON_ARRAYAGG(a), b FROM t"},
		{"last_value function", "SELECT LAST_VALUE(@a := 1, a) FROM t", "SELECT `last_value`(@a := 1, a) FROM t"},
		{"escape hex", "SELECT a LIKE 'x' ESCAPE 0x5c FROM t", "SELECT a LIKE 'x' ESCAPE '!' FROM t WHERE 0x5c"},
		{"frame exclude", "SELECT COUNT(*) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE NO OTHERS) FROM t", "SELECT COUNT(*) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t"},
		{"show local", "SHOW LOCAL VARIABLES LIKE 'sql_mode'", "SHOW SESSION VARIABLES LIKE 'sql_mode'"},
		{"outfile charset", "SELECT a FROM t INTO OUTFILE 'f' CHARACTER SET ucs2", "SELECT a FROM t INTO OUTFILE 'f'"},
		{"cast nchar", "SELECT CAST(a AS NCHAR(2)) FROM t", "SELECT CAST(a AS CHAR(2)) FROM t"},
		{"invisible compressed ignored", "CREATE TABLE t (a INT INVISIBLE, b BLOB COMPRESSED NOT NULL, KEY (a) IGNORED, KEY (b) NOT IGNORED) TRANSACTIONAL=1 PAGE_CHECKSUM=0", "CREATE TABLE t (a INT, b BLOB NOT NULL, KEY (a), KEY (b))"},
		{"system versioning", "CREATE TABLE t (a INT) WITH SYSTEM VERSIONING", "CREATE TABLE t (a INT)"},
		{"for system_time all", "SELECT * FROM t FOR SYSTEM_TIME ALL WHERE a = 1", "SELECT * FROM t WHERE a = 1"},
		{"default case", "CREATE TABLE t (a INT, c INT DEFAULT CASE WHEN a THEN (SELECT 1 FROM u) ELSE 2 END)", "CREATE TABLE t (a INT, c INT DEFAULT NULL) SELECT CASE WHEN a THEN (SELECT 1 FROM u) ELSE 2 END"},
		{"alias row", "SELECT @r := @r + 1 AS row, a FROM t", "SELECT @r := @r + 1 AS `row`, a FROM t"},
		{"row in group by", "SELECT MAX(a) FROM t GROUP BY row", "SELECT MAX(a) FROM t GROUP BY `row`"},
		{"generated in insert", "INSERT INTO t (id, generated, sum) VALUES (1, 2, 3)", "INSERT INTO t (id, `generated`, sum) VALUES (1, 2, 3)"},
		{"weight_string", "SELECT WEIGHT_STRING('abc', 1, 2, 0xC0)", "SELECT `weight_string`('abc', 1, 2, 0xC0)"},
		{"match compared", "SELECT * FROM t WHERE MATCH(a, b) AGAINST ('x') > 0", "SELECT * FROM t WHERE (MATCH(a, b) AGAINST ('x')) > 0"},
		{"cycle in a view", "CREATE VIEW v AS WITH RECURSIVE c (a) AS (SELECT 1 UNION SELECT a + 1 FROM c) CYCLE a RESTRICT SELECT * FROM c", "CREATE VIEW v AS WITH RECURSIVE c (a) AS (SELECT 1 UNION SELECT a + 1 FROM c) SELECT * FROM c"},
		{"into outfile before from", "SELECT a INTO OUTFILE '/tmp/x' FIELDS TERMINATED BY ',' FROM t", "SELECT a FROM t INTO OUTFILE '/tmp/x' FIELDS TERMINATED BY ','"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := analyze(tc.maria, engine.LexStats{})
			want := analyze(tc.canonical, engine.LexStats{})
			if got.ParseError || want.ParseError {
				t.Fatalf("%q: parse error %v (%s); canonical %q: %v", tc.maria, got.ParseError, got.ParseReason, tc.canonical, want.ParseError)
			}
			if g, w := stripLoc(got.Stmts), stripLoc(want.Stmts); !reflect.DeepEqual(g, w) {
				t.Errorf("%q:\n got %+v\nwant %+v (%q)", tc.maria, g, w, tc.canonical)
			}
			if st := got.Stmts[0]; st.Loc != 0 || int(st.Length) != len(tc.maria) {
				t.Errorf("%q: located at %d+%d, want the whole original text", tc.maria, st.Loc, st.Length)
			}
		})
	}
}

// TestMariaDBAlterView: ALTER VIEW has the facts of CREATE OR REPLACE VIEW
// of the same, with the verb alter.
func TestMariaDBAlterView(t *testing.T) {
	got := analyze("ALTER ALGORITHM = MERGE VIEW v AS SELECT a FROM t", engine.LexStats{})
	want := analyze("CREATE OR REPLACE ALGORITHM = MERGE VIEW v AS SELECT a FROM t", engine.LexStats{})
	if got.ParseError || len(got.Stmts) != 1 || len(want.Stmts) != 1 {
		t.Fatalf("got %+v, want one statement", got)
	}
	g, w := stripLoc(got.Stmts)[0], stripLoc(want.Stmts)[0]
	if g.Verb != engine.VerbAlter || g.Object != "view" {
		t.Errorf("verb %v object %q, want alter view", g.Verb, g.Object)
	}
	w.Verb = engine.VerbAlter
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got %+v\nwant %+v", g, w)
	}
}

// TestMariaDBReadKeepsEffects: a form read by a rewrite or split is still
// denied by the rule its effect names, with the default policy.
func TestMariaDBReadKeepsEffects(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ sql, rule string }{
		{"EXPLAIN EXTENDED DELETE FROM mysql.user", "no-credential-tables"},
		{"EXPLAIN EXTENDED SELECT * FROM mysql.user", "no-credential-tables"},
		{"SET STATEMENT max_statement_time=1 FOR DELETE FROM t", "no-unfiltered-writes"},
		{"SET STATEMENT max_statement_time=1 FOR SELECT password FROM mysql.user", "no-credential-tables"},
		{"SET STATEMENT general_log=0 FOR SELECT 1", "no-logging-changes"},
		{"SET STATEMENT character_set_client = 'gbk' FOR SELECT 1", "parse-error"},
		{"DELETE FROM t WHERE id = 1 RETURNING (SELECT password FROM mysql.user LIMIT 1)", "no-credential-tables"},
		{"DELETE FROM t RETURNING id", "no-unfiltered-writes"},
		{"INSERT INTO t VALUES (1) RETURNING LOAD_FILE('/etc/passwd')", "no-server-files"},
		{"SELECT a FROM t INTO DUMPFILE '/tmp/x'", "no-server-files"},
		{"SELECT CAST(LOAD_FILE('/etc/passwd') AS INT)", "no-server-files"},
		{"SELECT * FROM t WHERE a SOUNDS LIKE LOAD_FILE('/etc/passwd')", "no-server-files"},
		{"SELECT * FROM JSON_TABLE(LOAD_FILE('/etc/passwd'), '$' COLUMNS (a TEXT PATH '$')) AS j", "no-server-files"},
		{"SELECT * FROM JSON_TABLE('[]', '$' COLUMNS (a TEXT PATH '$' DEFAULT (SELECT 1) ON EMPTY)) AS j", "parse-error"},
		{"CHECK TABLE t; DELETE FROM u", "no-unfiltered-writes"},
		{"SELECT 1 SOUNDS LIKE 1; UPDATE t SET a = 1 WHERE id = 2", "no-stacked-after-select"},
		{"SELECT a + 1 SOUNDS LIKE b FROM t", "parse-error"}, // an operand the rewrite does not delimit
		{"CREATE FUNCTION f() RETURNS INT BEGIN DELETE FROM t; RETURN 1; END", "no-unfiltered-writes"},
		{"CREATE FUNCTION f() RETURNS INT RETURN (SELECT COUNT(*) FROM mysql.user WHERE password <> '')", "no-credential-tables"},
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW BEGIN CREATE USER x; END", "no-account-management"},
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO mysql.global_priv VALUES ('%', 'x', '{}')", "no-catalog-writes"},
		{"CREATE DEFINER = root@localhost FUNCTION f() RETURNS INT RETURN 1", "no-definer-views"},
		{"CREATE PROCEDURE p() BEGIN DECLARE x INT DEFAULT (SELECT LOAD_FILE('/etc/passwd')); END", "no-server-files"},
		{"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR FOR SELECT authentication_string FROM mysql.user; OPEN c; END", "no-credential-tables"},
		{"CREATE PROCEDURE p() BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION DELETE FROM t; SELECT 1; END", "no-unfiltered-writes"},
		{"CREATE PROCEDURE p() BEGIN FOR i IN 1 .. (SELECT SLEEP(100)) DO SELECT i; END FOR; END", "no-time-probe"},
		{"CREATE PROCEDURE p() BEGIN IF (SELECT 1 FROM mysql.user LIMIT 1) THEN SELECT 1; END IF; END", "no-credential-tables"},
		{"CREATE PROCEDURE p() BEGIN l: LOOP INSTALL SONAME 'x'; LEAVE l; END LOOP l; END", "no-code-loading"},
		{"CREATE PROCEDURE p() BEGIN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = (SELECT password FROM mysql.user LIMIT 1); END", "no-credential-tables"},
		{"CREATE PROCEDURE p() BEGIN RESIGNAL; SET GLOBAL general_log = 0; END", "no-logging-changes"},
		{"CREATE PROCEDURE p() BEGIN SELECT 1 INTO OUTFILE '/tmp/x'; END", "no-server-files"},
		{"CREATE PROCEDURE p() BEGIN WHILE 1 DO BEGIN NOT ATOMIC UPDATE t SET a = 1; END; END WHILE; END", "no-unfiltered-writes"},
		{"CREATE PROCEDURE p() BEGIN SELECT 1; END; DELETE FROM t", "no-unfiltered-writes"},
		{"CREATE PROCEDURE p() BEGIN SELECT 1; END END; SELECT 2", "parse-error"},
		{"CREATE PROCEDURE p() BEGIN SELECT 1; garbage here; END", "parse-error"},
		{"CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO UPDATE t SET a = 1 WHERE b = 2", "no-scheduled-sql"},
		{"BEGIN NOT ATOMIC DELETE FROM t; END", "no-unfiltered-writes"},
		{"IF 1 THEN SELECT * FROM mysql.user; END IF", "no-credential-tables"},
	} {
		v := e.Judge([]byte(tc.sql), nil)
		if !v.Action.Denies() || v.RuleID != tc.rule {
			t.Errorf("%q: got %v %s (%s), want deny %s", tc.sql, v.Action, v.RuleID, v.Reason, tc.rule)
		}
	}
}

// TestMariaDBReadAllows: MariaDB's own forms that do nothing a rule names
// are allowed (they were parse errors).
func TestMariaDBReadAllows(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"EXPLAIN EXTENDED SELECT * FROM t WHERE a = 1",
		"SELECT CAST(a AS INT) FROM t",
		"SELECT 'mood' SOUNDS LIKE 'mud'",
		"INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = VALUE(a)",
		"SELECT a INTO @x FROM t WHERE id = 1",
		"CHECK TABLE t1, t2",
		"REPAIR TABLE t QUICK",
		"SET NAMES koi8r",
		"SELECT CONVERT(_koi8r 'x' USING cp1251)",
		"SET STATEMENT max_statement_time = 10 FOR SELECT * FROM t WHERE id = 1",
		"DELETE FROM t WHERE id = 1 RETURNING id, a",
		"SELECT * FROM JSON_TABLE('[1,2]', '$[*]' COLUMNS (a INT PATH '$', NESTED PATH '$' COLUMNS (b FOR ORDINALITY))) AS jt",
		"CREATE FUNCTION f(a INT) RETURNS INT DETERMINISTIC RETURN a + 1",
		"CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = NEW.a + 1",
		"CREATE PROCEDURE p(IN lo INT, hi INT) BEGIN DECLARE done INT DEFAULT FALSE; DECLARE v INT; DECLARE c CURSOR (a INT, b INT) FOR SELECT id FROM t WHERE id BETWEEN a AND b; DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = TRUE; OPEN c(lo, hi); l: LOOP FETCH c INTO v; IF done THEN LEAVE l; END IF; END LOOP l; CLOSE c; END",
		"CREATE PROCEDURE p() BEGIN DECLARE r ROW (a INT, b VARCHAR(10)); DECLARE s ROW TYPE OF t; DECLARE x TYPE OF t.a; SET r.a = 1; FOR i IN REVERSE 1..3 DO SELECT i; END FOR; END",
		"CREATE PROCEDURE p() BEGIN DECLARE e CONDITION FOR SQLSTATE '45000'; DECLARE EXIT HANDLER FOR e RESIGNAL SET MESSAGE_TEXT = 'x'; SIGNAL e; END",
		"CREATE PROCEDURE p() BEGIN GET DIAGNOSTICS CONDITION 1 @a = MESSAGE_TEXT, @b = RETURNED_SQLSTATE; END",
		"CREATE PROCEDURE p() BEGIN CASE WHEN 1 THEN SELECT 1; ELSE BEGIN END; END CASE; REPEAT SELECT 1; UNTIL 1 END REPEAT; END",
		"DROP FUNCTION IF EXISTS f",
		"DROP TRIGGER tr",
		"SHOW CREATE FUNCTION f",
	} {
		if v := e.Judge([]byte(sql), nil); v.Action != engine.ActionAllow || v.ParseError {
			t.Errorf("%q: got %v %s (%s) parse error %v, want allow", sql, v.Action, v.RuleID, v.Reason, v.ParseError)
		}
	}
}

// TestMariaDBBodyStatementsLocated: a body's statements are the text's own
// too, located in the original text, after their program.
func TestMariaDBBodyStatementsLocated(t *testing.T) {
	sql := "SELECT 1; CREATE FUNCTION f() RETURNS INT BEGIN UPDATE t SET a = 1 WHERE id = 2; RETURN 1; END; EXPLAIN EXTENDED SELECT 2"
	tf := analyze(sql, engine.LexStats{})
	if tf.ParseError {
		t.Fatalf("parse error: %s", tf.ParseReason)
	}
	var texts []string
	for _, st := range tf.Stmts {
		texts = append(texts, sql[st.Loc:st.Loc+st.Length])
	}
	want := []string{"SELECT 1", "CREATE FUNCTION f() RETURNS INT BEGIN UPDATE t SET a = 1 WHERE id = 2; RETURN 1; END", "UPDATE t SET a = 1 WHERE id = 2", "EXPLAIN EXTENDED SELECT 2"}
	if !reflect.DeepEqual(texts, want) {
		t.Errorf("statements %q, want %q", texts, want)
	}
	if k := tf.Stmts[1].Kinds; !k.Has(engine.KindDDL) || !k.Has(engine.KindUpdate) {
		t.Errorf("the function's kinds %b: want ddl and its body's update", k)
	}
	if tf.Stmts[2].PrevKinds != 0 || tf.Stmts[3].PrevKinds != 1<<engine.KindSelect|1<<engine.KindDDL {
		t.Errorf("prev kinds %b %b: a body statement is not stacked, the next top-level statement follows the program", tf.Stmts[2].PrevKinds, tf.Stmts[3].PrevKinds)
	}
}
