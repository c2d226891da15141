package mysql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestRoutineBodyKeepsItsKind: a routine's body counts as what its
// statements are, whatever the body's form, parsed or not.
func TestRoutineBodyKeepsItsKind(t *testing.T) {
	const (
		trunc = engine.KindTruncate
		del   = engine.KindDelete
		upd   = engine.KindUpdate
		ins   = engine.KindInsert
		dcl   = engine.KindDCL
	)
	tests := []struct {
		name, sql  string
		kind       engine.StmtKind // in Kinds of some statement
		unfiltered bool
		effects    engine.EffectSet
	}{
		{"procedure single statement", "CREATE PROCEDURE p() TRUNCATE t", trunc, false, 0},
		{"procedure begin end", "CREATE PROCEDURE p() BEGIN TRUNCATE t; END", trunc, false, 0},
		{"procedure if block", "CREATE PROCEDURE p() BEGIN IF 1 THEN TRUNCATE t; END IF; END", trunc, false, 0},
		{"procedure label", "CREATE PROCEDURE p() l: BEGIN TRUNCATE t; END l", trunc, false, 0},
		{"procedure not atomic", "CREATE PROCEDURE p() BEGIN NOT ATOMIC TRUNCATE t; END", trunc, false, 0},
		{"procedure characteristics", "CREATE PROCEDURE p() COMMENT 'x' MODIFIES SQL DATA SQL SECURITY INVOKER TRUNCATE t", trunc, false, 0},
		{"procedure delete", "CREATE PROCEDURE p() DELETE FROM t", del, true, 0},
		{"procedure update", "CREATE PROCEDURE p(x INT) UPDATE t SET a = x", upd, true, 0},
		{"procedure credentials", "CREATE PROCEDURE p() SELECT authentication_string FROM mysql.global_priv", engine.KindSelect, false, engine.EffReadsCredentials},
		{"procedure server file", "CREATE PROCEDURE p() SELECT 'x' INTO OUTFILE '/tmp/x'", engine.KindSelect, false, engine.EffWritesServerFile},
		{"procedure grant", "CREATE PROCEDURE p() GRANT ALL ON *.* TO app", dcl, false, engine.EffGrantsPrivilege},
		{"procedure grant in block", "CREATE PROCEDURE p() BEGIN GRANT ALL ON *.* TO app; END", dcl, false, engine.EffGrantsPrivilege},
		{"procedure while", "CREATE PROCEDURE p() WHILE 1 DO DELETE FROM t; END WHILE", del, true, 0},
		{"procedure handler", "CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION TRUNCATE t; SELECT 1; END", trunc, false, 0},
		{"procedure definer", "CREATE DEFINER = CURRENT_USER PROCEDURE p() TRUNCATE t", trunc, false, 0},
		{"function return subquery", "CREATE FUNCTION f() RETURNS INT RETURN (SELECT count(*) FROM t WHERE a IN (SELECT 1 FROM mysql.user))", engine.KindDDL, false, engine.EffReadsCredentials},
		{"function block delete", "CREATE FUNCTION f() RETURNS INT BEGIN DELETE FROM t; RETURN 1; END", del, true, 0},
		{"function if", "CREATE FUNCTION f() RETURNS INT BEGIN IF 1 THEN UPDATE t SET a = 1; END IF; RETURN 1; END", upd, true, 0},
		{"function characteristics", "CREATE FUNCTION f() RETURNS VARCHAR(10) CHARSET utf8mb4 DETERMINISTIC READS SQL DATA RETURN (SELECT authentication_string FROM mysql.user LIMIT 1)", engine.KindDDL, false, engine.EffReadsCredentials},
		{"function handler", "CREATE FUNCTION f() RETURNS INT BEGIN DECLARE EXIT HANDLER FOR NOT FOUND, SQLSTATE '42S02' DELETE FROM t; RETURN 1; END", del, true, 0},
		{"function loop label", "CREATE FUNCTION f() RETURNS INT BEGIN l: LOOP DELETE FROM t; END LOOP; RETURN 1; END", del, true, 0},
		{"function repeat", "CREATE FUNCTION f() RETURNS INT BEGIN REPEAT TRUNCATE t; UNTIL 1 END REPEAT; RETURN 1; END", trunc, false, 0},
		{"function case", "CREATE FUNCTION f() RETURNS INT BEGIN CASE WHEN 1 THEN INSERT INTO t SELECT * FROM u; END CASE; RETURN 1; END", ins, false, 0},
		{"trigger single statement", "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW DELETE FROM t2", del, true, 0},
		{"trigger follows", "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW FOLLOWS other UPDATE t2 SET a = 1", upd, true, 0},
		{"trigger block", "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW BEGIN DELETE FROM t2; END", del, true, 0},
		{"trigger grant", "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW GRANT SUPER ON *.* TO app", dcl, false, engine.EffGrantsPrivilege},
		{"event", "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t", del, true, 0},
		{"event truncate", "CREATE EVENT e ON SCHEDULE AT CURRENT_TIMESTAMP + INTERVAL 1 HOUR ON COMPLETION PRESERVE DO TRUNCATE t", trunc, false, 0},
		{"anonymous block", "BEGIN NOT ATOMIC TRUNCATE t; END", trunc, false, 0},
		{"top-level if", "IF 1 THEN DELETE FROM t; END IF", del, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kinds, unf engine.KindSet
			var eff engine.EffectSet
			for _, st := range stmtsOf(tt.sql) {
				kinds |= st.Kinds
				unf |= st.Unfiltered
				eff |= st.Effects
			}
			if !kinds.Has(tt.kind) || (unf != 0) != tt.unfiltered || eff&tt.effects != tt.effects {
				t.Errorf("%s\ngot kinds %b, unfiltered %b, effects %s; want kind %s, unfiltered %v, effects %s",
					tt.sql, kinds, unf, eff, tt.kind, tt.unfiltered, tt.effects)
			}
		})
	}
}

// TestRoutineBodyBenign: bodies that do what applications' routines do
// have none of the facts the deny rules read.
func TestRoutineBodyBenign(t *testing.T) {
	for _, sql := range []string{
		"CREATE PROCEDURE p() SELECT count(*) FROM users",
		"CREATE PROCEDURE p(IN x INT) UPDATE t SET a = 1 WHERE id = x",
		"CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1",
		"CREATE TRIGGER tr BEFORE INSERT ON orders FOR EACH ROW SET NEW.total = IFNULL(NEW.total, 0)",
		"CREATE TRIGGER tr AFTER DELETE ON orders FOR EACH ROW DELETE FROM order_lines WHERE order_id = OLD.id",
	} {
		for _, st := range stmtsOf(sql) {
			if st.Unfiltered != 0 || st.Effects != 0 || st.Probes != 0 || st.TimeProbe {
				t.Errorf("%s: got unfiltered %b, effects %s, probes %s, time_probe %v; want none", sql, st.Unfiltered, st.Effects, st.Probes, st.TimeProbe)
			}
		}
	}
}

// TestRecognizedRoutineBody: when nothing reads a routine's text (a part of
// it is syntax no reader knows), what is certain of it still has its body's
// statements (unparsed.go recognize, routine.go).
func TestRecognizedRoutineBody(t *testing.T) {
	tests := []struct {
		name, sql  string
		kind       engine.StmtKind
		unfiltered bool
		effects    engine.EffectSet
	}{
		{"trigger", "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW DELETE FROM t2", engine.KindDelete, true, 0},
		{"trigger follows", "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW FOLLOWS s.o TRUNCATE t2", engine.KindTruncate, false, 0},
		{"function return", "CREATE FUNCTION f() RETURNS INT RETURN (SELECT count(*) FROM t WHERE a IN (SELECT 1 FROM mysql.user))", engine.KindSelect, false, engine.EffReadsCredentials},
		{"procedure grant", "CREATE PROCEDURE p() COMMENT 'x' SQL SECURITY INVOKER GRANT ALL ON *.* TO app", engine.KindDCL, false, engine.EffGrantsPrivilege},
		{"event", "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO UPDATE t SET a = 1", engine.KindUpdate, true, 0},
		{"block", "CREATE FUNCTION f() RETURNS INT BEGIN IF 1 THEN IF 2 THEN DELETE FROM t; END IF; END IF; RETURN 1; END", engine.KindDelete, true, 0},
		{"handler", "CREATE FUNCTION f() RETURNS INT BEGIN DECLARE EXIT HANDLER FOR SQLSTATE VALUE '42S02', 1062 DELETE FROM t; RETURN 1; END", engine.KindDelete, true, 0},
		{"label loop", "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW BEGIN l: LOOP UPDATE t2 SET a = 1; END LOOP; END", engine.KindUpdate, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kinds, unf engine.KindSet
			var eff engine.EffectSet
			for _, st := range recognize(tt.sql) {
				kinds |= st.Kinds
				unf |= st.Unfiltered
				eff |= st.Effects
			}
			if !kinds.Has(tt.kind) || (unf != 0) != tt.unfiltered || eff&tt.effects != tt.effects {
				t.Errorf("%s\ngot kinds %b, unfiltered %b, effects %s; want kind %s, unfiltered %v, effects %s",
					tt.sql, kinds, unf, eff, tt.kind, tt.unfiltered, tt.effects)
			}
		})
	}
}
