package mysql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestRoutineExecutes: a routine body's EXECUTE is judged as the PREPARE
// right before it, else dynamic SQL; a body's parameterised write is
// judged with values not known (routineexec.go).
func TestRoutineExecutes(t *testing.T) {
	for _, tc := range []struct {
		sql                 string
		dynamic, unfiltered bool
	}{
		{"CREATE PROCEDURE p() EXECUTE s", true, false},
		{"CREATE PROCEDURE p() BEGIN execute `s` USING 1; END", true, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; EXECUTE s; END", false, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE `S` FROM 'SELECT 1' ; /* c */ EXECUTE s; END", false, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; EXECUTE s2; END", true, false},
		{"CREATE PROCEDURE p() BEGIN IF 0 THEN PREPARE s FROM 'SELECT 1'; END IF; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN DECLARE EXIT HANDLER FOR NOT FOUND PREPARE s FROM 'SELECT 1'; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM @q; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN EXECUTE IMMEDIATE 'SELECT 1'; END", false, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'DELETE FROM t WHERE ?'; EXECUTE s USING 1; END", false, true},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'DELETE FROM t WHERE id = ?'; EXECUTE s USING 1; END", false, false},
		{"CREATE PROCEDURE p() SELECT 'execute s'", false, false},
		// plain statements between (unsureExecute)
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; SELECT 2; SET @x = 1; EXECUTE s; END", false, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'DELETE FROM t WHERE ?'; SELECT 2; EXECUTE s USING 1; END", false, true},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; CALL q(); EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; DEALLOCATE PREPARE s; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT @v'; SET @v = 1; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; WHILE 0 DO SELECT 2; END WHILE; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN l: LOOP EXECUTE s; PREPARE s FROM 'SELECT 1'; END LOOP; END", true, false},
		{"CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION CALL q(); PREPARE s FROM 'SELECT 1'; SELECT 2; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET @e = 1; PREPARE s FROM 'SELECT 1'; SELECT 2; EXECUTE s; END", false, false},
		// a DO statement and a CASE expression between are plain (plainStatement)
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; DO 1; EXECUTE s; END", false, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; SELECT CASE WHEN 1 THEN 2 ELSE 3 END; EXECUTE s; END", false, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; DO CASE WHEN 1 THEN 2 ELSE 3 END; SET @x = CASE 1 WHEN 1 THEN 2 END; EXECUTE s; END", false, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'DELETE FROM t WHERE ?'; DO 1; EXECUTE s USING 1; END", false, true},
		// ... but not a compound statement's THEN, ELSE or DO, nor a handler's CASE
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; CASE WHEN 1 THEN SELECT 2; ELSE DO 3; END CASE; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; IF 1 THEN DO 1; ELSE SELECT 2; END IF; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; WHILE 0 DO DO 1; END WHILE; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN PREPARE s FROM 'SELECT 1'; DO 1; PREPARE s FROM @q; EXECUTE s; END", true, false},
		{"CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET @x = CASE WHEN 1 THEN 1 END; PREPARE s FROM 'SELECT 1'; DO 1; EXECUTE s; END", false, false},
		{"CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO EXECUTE s", true, false},
		{"CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO BEGIN PREPARE s FROM 'SELECT 1'; DO 1; EXECUTE s; END", false, false},
	} {
		tf := analyze(tc.sql, engine.LexStats{})
		if tf.ParseError || len(tf.Stmts) == 0 {
			t.Fatalf("%q: parse error %s", tc.sql, tf.ParseReason)
		}
		st := tf.Stmts[0]
		if st.DynamicSQL != tc.dynamic {
			t.Errorf("%q: dynamic %v, want %v", tc.sql, st.DynamicSQL, tc.dynamic)
		}
		if got := st.Unfiltered.Has(engine.KindDelete); got != tc.unfiltered {
			t.Errorf("%q: unfiltered delete %v, want %v", tc.sql, got, tc.unfiltered)
		}
	}
	// at the top of a session the relay judges EXECUTE with its values
	if st := analyze("PREPARE s FROM 'DELETE FROM t WHERE ?'", engine.LexStats{}).Stmts[0]; st.Unfiltered != 0 || st.DynamicSQL {
		t.Errorf("a session's PREPARE: %+v, want it left to its EXECUTE", st)
	}
}
