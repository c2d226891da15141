package mysql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestUnfilteredWrites: the Unfiltered fact (and the kinds it adds) of
// writes, each shape checked on MariaDB 10.11 (testdata/adversarial/
// 12-writes.tsv says how).
func TestUnfilteredWrites(t *testing.T) {
	const upd, del = engine.KindSet(1 << engine.KindUpdate), engine.KindSet(1 << engine.KindDelete)
	tests := []struct {
		name, sql string
		want      engine.KindSet
	}{
		{"delete without where", "DELETE FROM t", del},
		{"delete always true", "DELETE FROM t WHERE ~0", del},
		{"delete false", "DELETE FROM t WHERE 1 = 0", 0},
		{"delete null", "DELETE FROM t WHERE NULL", 0},
		{"delete filtered", "DELETE FROM t WHERE id = 5", 0},
		{"delete builder idiom", "DELETE FROM t WHERE 1 = 1 AND id = 5", 0},
		{"delete variable", "DELETE FROM t WHERE @a", del},
		{"delete variable and filter", "DELETE FROM t WHERE @a AND id = 5", 0},
		{"delete or variable", "DELETE FROM t WHERE id = 5 OR @a", del},
		{"delete parameter", "DELETE FROM t WHERE ?", 0}, // judged at execute time
		{"delete or parameter", "DELETE FROM t WHERE id = 5 OR ?", 0},
		{"delete exists constant", "DELETE FROM t WHERE EXISTS (SELECT 1)", del},
		{"self join on a column", "DELETE t FROM t, t AS t2 WHERE t.id = t2.id", del},
		{"self join update", "UPDATE t, t AS t2 SET t.a = 0 WHERE t2.a <=> t.a", upd},
		{"self join on two columns", "DELETE t FROM t, t AS t2 WHERE t.id = t2.a", 0},
		{"self join filtered", "DELETE t FROM t, t AS t2 WHERE t.id = t2.id AND t2.a = 1", 0},
		{"join of another table", "DELETE t FROM t, u WHERE t.id = u.id", 0},
		{"self lookup through a derived table", "DELETE FROM t WHERE id IN (SELECT id FROM (SELECT id FROM t) x)", del},
		{"self lookup through a filtered derived table", "DELETE FROM t WHERE id IN (SELECT id FROM (SELECT id FROM t WHERE a = 1) x)", 0},
		{"self lookup through WITH", "WITH x AS (SELECT id FROM t) DELETE FROM t WHERE id IN (SELECT id FROM x)", del},
		{"lookup through WITH of another table", "WITH x AS (SELECT id FROM u) DELETE FROM t WHERE id IN (SELECT id FROM x)", 0},
		{"insert select large limit", "INSERT INTO t (id, a) SELECT id, a FROM t LIMIT 1000000 ON DUPLICATE KEY UPDATE a = 0", upd},
		{"insert select small limit", "INSERT INTO t (id, a) SELECT id, a FROM t LIMIT 10 ON DUPLICATE KEY UPDATE a = 0", 0},
		{"replace select offset", "REPLACE INTO t SELECT * FROM t LIMIT 1000000 OFFSET 1", 0},
		{"replace select large limit", "REPLACE INTO t SELECT * FROM t LIMIT 1000000", del},
		{"replace select self join using", "REPLACE INTO t SELECT t.* FROM t JOIN t AS t2 USING (id)", del},
		{"insert select self join on", "INSERT INTO t SELECT t.* FROM t JOIN t AS t2 ON t.id = t2.id ON DUPLICATE KEY UPDATE a = 0", upd},
		{"replace select self join filtered", "REPLACE INTO t SELECT t.* FROM t JOIN t AS t2 USING (id) WHERE t2.a = 1", 0},
		{"replace select self join two columns", "REPLACE INTO t SELECT t.* FROM t JOIN t AS t2 ON t.id = t2.a", 0},
		{"delete exists other table", "DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.x = 1)", del},
		{"delete correlated", "DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.tid = t.id)", 0},
		{"delete unqualified in subquery", "DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE tid = 1)", 0},
		{"delete self match", "DELETE FROM t WHERE id IN (SELECT id FROM t)", del},
		{"delete self match any", "DELETE FROM t WHERE id = ANY (SELECT id FROM t)", del},
		{"delete self match all", "DELETE FROM t WHERE id = ALL (SELECT id FROM t)", 0},
		{"delete self exists", "DELETE FROM t WHERE EXISTS (SELECT 1 FROM t t2 WHERE t2.id = t.id)", del},
		{"delete self exists filtered", "DELETE FROM t WHERE EXISTS (SELECT 1 FROM t t2 WHERE t2.id = t.id AND t2.a = 1)", 0},
		{"delete exists other column", "DELETE FROM t WHERE EXISTS (SELECT 1 FROM t t2 WHERE t2.id = t.a)", 0},
		{"delete self match filtered", "DELETE FROM t WHERE id IN (SELECT id FROM t WHERE a = 1)", 0},
		{"self match in a union", "DELETE FROM t WHERE id IN (SELECT id FROM t UNION SELECT 0)", del},
		{"outer row in a union", "DELETE FROM t WHERE id IN (SELECT 1 UNION SELECT id)", del},
		{"self match in an intersect", "DELETE FROM t WHERE id IN (SELECT id FROM t INTERSECT SELECT 0)", 0},
		{"union of another table", "DELETE FROM t WHERE id IN (SELECT tid FROM u UNION SELECT 0)", 0},
		{"correlated self row", "DELETE FROM t WHERE id = ANY (SELECT id FROM t x WHERE x.id = t.id)", del},
		{"correlated self row by range", "UPDATE t SET a = 0 WHERE id IN (SELECT id FROM t x WHERE x.id >= t.id AND x.id <= t.id)", upd},
		{"correlated self row on another column", "DELETE FROM t WHERE id IN (SELECT id FROM t x WHERE x.a <=> t.a)", del},
		{"correlated self row filtered", "DELETE FROM t WHERE id IN (SELECT id FROM t x WHERE x.id = t.id AND x.a = 1)", 0},
		{"correlated self row strict", "DELETE FROM t WHERE id IN (SELECT id FROM t x WHERE x.id > t.id)", 0},
		{"correlated other column returned", "DELETE FROM t WHERE id IN (SELECT a FROM t x WHERE x.id = t.id)", 0},
		{"self match as an or arm", "DELETE FROM t WHERE id = 0 OR id IN (SELECT id FROM t)", del},
		{"self exists by a sum", "DELETE FROM t WHERE EXISTS (SELECT 1 FROM t x WHERE x.id + 0 = t.id)", del},
		{"disguised null test", "DELETE FROM t WHERE (id IS NULL) IS FALSE", del},
		{"disguised null test of an expression", "UPDATE t SET a = 0 WHERE (id + 0) IS NOT NULL", upd},
		{"plain null test", "DELETE FROM t WHERE id IS NOT NULL", 0},
		{"plain null tests", "DELETE FROM t WHERE NOT (id IS NULL) AND a IS NOT NULL", 0},
		{"delete limit 1", "DELETE FROM t ORDER BY id LIMIT 1", 0},
		{"delete limit 10", "DELETE FROM t WHERE 1 LIMIT 10", 0},
		{"delete limit 11", "DELETE FROM t LIMIT 11", del},
		{"delete limit huge", "DELETE FROM t LIMIT 18446744073709551615", del},
		{"delete limit parameter", "DELETE FROM t LIMIT ?", del},
		{"update without where", "UPDATE t SET a = 1", upd},
		{"update or true", "UPDATE t SET a = 1 WHERE id = 5 OR 'a' = 0", upd},
		{"update limit 1", "UPDATE t SET a = 1 LIMIT 1", 0},
		{"multi update other table", "UPDATE t, u SET t.a = 1 WHERE u.id = 1", upd},
		{"multi update joined", "UPDATE t, u SET t.a = 1 WHERE t.id = u.tid AND u.b = 2", 0},
		{"multi update on ties", "UPDATE t JOIN u ON t.id = u.tid SET t.a = 1 WHERE u.x = 1", 0},
		{"multi update on true", "UPDATE t JOIN u ON 1 SET t.a = 1 WHERE u.b = 2", upd},
		{"multi update on or true", "UPDATE t AS p JOIN u ON p.id = u.tid OR 1 SET p.a = 1 WHERE u.x = 1", upd},
		{"multi update derived", "UPDATE t JOIN (SELECT 1) x SET t.a = 1", upd},
		{"multi update only the other table set", "UPDATE t, u SET u.b = 1 WHERE t.id = 1", upd},
		{"multi delete on true", "DELETE t FROM t JOIN u ON 1 WHERE u.id = 1", del},
		{"multi delete on ties", "DELETE t FROM t JOIN u ON t.id = u.tid WHERE u.x = 1", 0},
		{"multi delete using", "DELETE FROM t USING t, u WHERE u.id = 1", del},
		{"multi delete using joined", "DELETE FROM t USING t, u WHERE t.id = u.tid AND u.x = 1", 0},
		{"multi delete alias", "DELETE p FROM t AS p, u WHERE u.x = 1", del},
		{"multi delete alias filtered", "DELETE p FROM t AS p, u WHERE p.id = u.tid", 0},
		{"replace self", "REPLACE INTO t SELECT * FROM t", del},
		{"replace self true where", "REPLACE INTO t SELECT * FROM t WHERE 1 = 1", del},
		{"replace self filtered", "REPLACE INTO t SELECT * FROM t WHERE id = 1", 0},
		{"replace self limit", "REPLACE INTO t SELECT * FROM t LIMIT 1", 0},
		{"replace derived", "REPLACE INTO t SELECT * FROM (SELECT * FROM t) x", del},
		{"replace union arm", "REPLACE INTO t SELECT * FROM t UNION SELECT * FROM t2", del},
		{"replace cte", "REPLACE INTO t WITH x AS (SELECT * FROM t) SELECT * FROM x", del},
		{"replace qualified", "REPLACE INTO db.t SELECT * FROM t", del},
		{"replace other schema", "REPLACE INTO db.t SELECT * FROM other.t", 0},
		{"replace other table", "REPLACE INTO t SELECT * FROM t2", 0},
		{"replace left join of itself", "REPLACE INTO t SELECT s.id, s.a FROM src AS s LEFT JOIN t AS old USING (id)", 0},
		{"replace cross join of itself", "REPLACE INTO t SELECT t.* FROM t, v", del},
		{"limit in a body read statement by statement", "CREATE PROCEDURE p() DETERMINISTIC BEGIN SELECT * FROM t; DELETE FROM t WHERE a = 'x'; DELETE FROM t LIMIT 3; DROP TABLE t; END", del},
		{"replace values", "REPLACE INTO t VALUES (1, 2)", 0},
		{"odku self", "INSERT INTO t SELECT * FROM t ON DUPLICATE KEY UPDATE a = 0", upd},
		{"odku self alias", "INSERT INTO t SELECT * FROM t AS x WHERE x.id = x.id ON DUPLICATE KEY UPDATE a = 0", upd},
		{"odku self join", "INSERT INTO t SELECT t.* FROM t JOIN u ON 1 ON DUPLICATE KEY UPDATE a = 0", upd},
		{"odku self filtered", "INSERT INTO t SELECT * FROM t WHERE id = 1 ON DUPLICATE KEY UPDATE a = 0", 0},
		{"odku other table", "INSERT INTO t SELECT * FROM t2 ON DUPLICATE KEY UPDATE a = VALUES(a)", 0},
		{"odku values", "INSERT INTO t VALUES (9, 9) ON DUPLICATE KEY UPDATE a = 0", 0},
		{"insert select self", "INSERT INTO t SELECT * FROM t", 0},
		{"insert ignore self", "INSERT IGNORE INTO t SELECT * FROM t", 0},
		{"prepared replace", "PREPARE s FROM 'REPLACE INTO t SELECT * FROM t'", del},
		{"limit 1 in a procedure loop", "CREATE PROCEDURE p() BEGIN WHILE 1 DO DELETE FROM t LIMIT 1; END WHILE; END", del},
		{"limit 1 in a procedure", "CREATE PROCEDURE p() UPDATE t SET a = 1 LIMIT 1", upd},
		{"limit 1 in a trigger", "CREATE TRIGGER tr AFTER INSERT ON u FOR EACH ROW DELETE FROM t LIMIT 1", del},
		{"limit 1 prepared", "PREPARE s FROM 'DELETE FROM t LIMIT 1'", del},
		{"limit 1 explain analyze", "EXPLAIN ANALYZE DELETE FROM t LIMIT 1", 0},
		{"limit 1 returning", "DELETE FROM t ORDER BY id LIMIT 1 RETURNING id", 0},
		{"limit 1 immediate", "EXECUTE IMMEDIATE 'DELETE FROM t LIMIT 1'", 0},
		{"limit variable in a procedure", "CREATE PROCEDURE p(n INT) DELETE FROM t LIMIT n", del},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf := analyze(tt.sql, engine.LexStats{})
			if tf.ParseError || len(tf.Stmts) == 0 {
				t.Fatalf("%q: parse error %v", tt.sql, tf.ParseReason)
			}
			// A routine MariaDB's reading gives its body statements as
			// entries of their own (mariadb.go): what any entry does counts.
			var unfiltered, kinds engine.KindSet
			for _, st := range tf.Stmts {
				unfiltered |= st.Unfiltered & (upd | del)
				if st.Unfiltered&tt.want != 0 {
					kinds |= st.Kinds
				}
			}
			if unfiltered != tt.want {
				t.Errorf("%q: Unfiltered %b, want %b (%d statements)", tt.sql, unfiltered, tt.want, len(tf.Stmts))
			}
			if kinds&tt.want != tt.want {
				t.Errorf("%q: Kinds %b lack the unfiltered kinds %b (the rule's kind condition would miss it)", tt.sql, kinds, tt.want)
			}
		})
	}
}

// TestLimitedWritesRepeated: a limited whole-table write is unfiltered when
// a message holds more than one.
func TestLimitedWritesRepeated(t *testing.T) {
	const del = engine.KindSet(1 << engine.KindDelete)
	for _, tt := range []struct {
		sql  string
		want []engine.KindSet
	}{
		{"DELETE FROM t LIMIT 1", []engine.KindSet{0}},
		{"DELETE FROM t LIMIT 1; DELETE FROM t LIMIT 1", []engine.KindSet{del, del}},
		{"DELETE FROM t LIMIT 1; DELETE FROM u WHERE id = 1", []engine.KindSet{0, 0}},
		{"SELECT 1; DELETE FROM t ORDER BY id LIMIT 1", []engine.KindSet{0, 0}},
	} {
		tf := analyze(tt.sql, engine.LexStats{})
		if tf.ParseError || len(tf.Stmts) != len(tt.want) {
			t.Fatalf("%q: %d statements, parse error %v", tt.sql, len(tf.Stmts), tf.ParseReason)
		}
		for i, w := range tt.want {
			if got := tf.Stmts[i].Unfiltered & del; got != w {
				t.Errorf("%q statement %d: Unfiltered %b, want %b", tt.sql, i, got, w)
			}
		}
	}
}
