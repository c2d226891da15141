package mysql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestServerProcedureCall: a CALL of the server's own procedures that
// PREPARE their arguments is dynamic SQL, of sys's performance_schema
// switches a logging change, qualified or through the current database;
// the reading ones and an application's of the same name are neither.
func TestServerProcedureCall(t *testing.T) {
	for _, tc := range []struct {
		sql     string
		db      string // the database the facts are taken in ("": an application's)
		dynamic bool
		effects engine.EffectSet
	}{
		{"CALL sys.execute_prepared_stmt('GRANT ALL ON *.* TO x')", "", true, 0},
		{"CALL SYS.EXECUTE_PREPARED_STMT('SELECT 1')", "", true, 0},
		{"CALL sys.create_synonym_db('mysql', 'm2')", "", true, 0},
		{"CALL mysql.DropGeometryColumn('', 'mysql', 'global_priv', 'Priv')", "", true, 0},
		{"CALL execute_prepared_stmt('SELECT 1')", "sys", true, 0},
		{"CALL execute_prepared_stmt('SELECT 1')", "", false, 0},
		{"CALL DropGeometryColumn('', 'a', 'b', 'c')", "mysql", true, 0},
		{"CALL DropGeometryColumn('', 'a', 'b', 'c')", "sys", false, 0},
		{"CALL sys.ps_setup_disable_instrument('')", "", false, engine.EffDisablesLogging},
		{"CALL sys.ps_truncate_all_tables(FALSE)", "", true, engine.EffDisablesLogging},
		{"CALL sys.ps_setup_show_enabled(TRUE, TRUE)", "", false, 0},
		{"CALL app.execute_prepared_stmt('x')", "", false, 0},
		{"CREATE PROCEDURE p() CALL sys.execute_prepared_stmt('DELETE FROM t')", "", true, 0},
	} {
		tf := analyze(tc.sql, engine.LexStats{})
		if tf.ParseError || len(tf.Stmts) == 0 {
			t.Errorf("%q: parse error %v", tc.sql, tf.ParseError)
			continue
		}
		st := tf.Stmts[0] // a body's CALL is also an entry of its own
		if tc.db != "" {
			st = selected(st, tc.db)
		}
		if st.DynamicSQL != tc.dynamic || st.Effects != tc.effects {
			t.Errorf("%q in %q: dynamic_sql %v effects %v, want %v %v", tc.sql, tc.db, st.DynamicSQL, st.Effects, tc.dynamic, tc.effects)
		}
	}
}

// TestProcedureBodyEntries: a parsed procedure's body statements with a
// verb of their own are entries of their own, after the text's statements,
// with that verb and object; the CREATE keeps its own.
func TestProcedureBodyEntries(t *testing.T) {
	for _, tc := range []struct {
		sql   string
		verbs []string // verb object of each entry after the first
	}{
		{"CREATE PROCEDURE p() SET PASSWORD FOR root@localhost = PASSWORD('x')", []string{"alter user"}},
		{"CREATE PROCEDURE p() BEGIN SELECT 1; IF 1 THEN SET PASSWORD FOR root = 'x'; END IF; END", []string{"alter user"}},
		{"CREATE PROCEDURE p() SET PASSWORD = PASSWORD('x')", []string{"alter "}},
		{"CREATE PROCEDURE p() BEGIN SELECT 1; UPDATE t SET v = 1 WHERE id = 1; END", nil},
		{"CREATE PROCEDURE p() BEGIN CREATE TABLE t2 (id INT); DROP TABLE t2; END", []string{"create table", "drop table"}},
	} {
		tf := analyze(tc.sql, engine.LexStats{})
		if tf.ParseError || len(tf.Stmts) != 1+len(tc.verbs) {
			t.Errorf("%q: parse error %v, %d entries, want %d", tc.sql, tf.ParseError, len(tf.Stmts), 1+len(tc.verbs))
			continue
		}
		if c := tf.Stmts[0]; c.Verb != engine.VerbCreate || c.Object != "procedure" {
			t.Errorf("%q: the CREATE is %v %s", tc.sql, c.Verb, c.Object)
		}
		for i, want := range tc.verbs {
			e := tf.Stmts[1+i]
			if got := verbWords[e.Verb] + " " + e.Object; got != want {
				t.Errorf("%q: entry %d is %q, want %q", tc.sql, i+1, got, want)
			}
			if int(e.Loc+e.Length) > len(tc.sql) {
				t.Errorf("%q: entry %d not located in the text (%d+%d)", tc.sql, i+1, e.Loc, e.Length)
			}
		}
	}
}

var verbWords = map[engine.DDLVerb]string{engine.VerbCreate: "create", engine.VerbAlter: "alter", engine.VerbDrop: "drop"}

// TestGrantAltersAccount: REQUIRE and resource limits in a GRANT change the
// grantee account at any level.
func TestGrantAltersAccount(t *testing.T) {
	for sql, want := range map[string]engine.EffectSet{
		"GRANT SELECT ON app.* TO v@'%' REQUIRE NONE":                engine.EffGrantsPrivilege,
		"GRANT SELECT ON app.t TO v@'%' REQUIRE SSL":                 engine.EffGrantsPrivilege,
		"GRANT SELECT ON app.* TO v@'%' WITH MAX_USER_CONNECTIONS 1": engine.EffGrantsPrivilege,
		"grant select on app.* to v@'%' with max_queries_per_hour 1": engine.EffGrantsPrivilege,
		"GRANT SELECT ON app.* TO v@'%'":                             0,
		"GRANT SELECT, INSERT ON app.t TO v@'%'":                     0,
	} {
		tf := analyze(sql, engine.LexStats{})
		if tf.ParseError || len(tf.Stmts) != 1 {
			t.Errorf("%q: parse error %v", sql, tf.ParseError)
			continue
		}
		if got := tf.Stmts[0].Effects; got != want {
			t.Errorf("%q: effects %v, want %v", sql, got, want)
		}
	}
}

// TestBindUsing: EXECUTE IMMEDIATE's USING values in the places of the
// parameters, strings' question marks left alone; whether all are literals.
func TestBindUsing(t *testing.T) {
	for _, tc := range []struct {
		body, args, want  string
		asIs, ok, literal bool
	}{
		{"DELETE FROM t WHERE ?", "1", "DELETE FROM t WHERE (1)", true, true, true},
		{"SELECT ?, ?", " 1, 'a,b'", "SELECT (1), ('a,b')", true, true, true},
		{"SELECT '?' = ?", "-1.5", "SELECT '?' = (-1.5)", true, true, true},
		{"SELECT ?", "@x", "SELECT (@x)", true, true, false},
		{"SELECT ?", "f(1, 2)", "SELECT (f(1, 2))", true, true, false},
		{"SELECT ?", "f(1, 2)", "SELECT (@sqlfw_unknown_0)", false, true, false},
		{"SELECT ?, ?", "1, (SELECT id FROM u)", "SELECT (1), (@sqlfw_unknown_1)", false, true, false},
		{"SELECT ?", "@x", "SELECT (@x)", false, true, false},
		{"SELECT ?", "'a\\'", "SELECT (@sqlfw_unknown_0)", false, true, false},
		{"SELECT ?, ?", "1", "", true, false, true},
		{"SELECT ?", "1, 2", "", true, false, true},
	} {
		literal := true
		got, ok := bindUsing(tc.body, tc.args, tc.asIs, &literal)
		if ok != tc.ok || ok && (got != tc.want || literal != tc.literal) {
			t.Errorf("bindUsing(%q, %q) = %q %v literal %v, want %q %v literal %v", tc.body, tc.args, got, ok, literal, tc.want, tc.ok, tc.literal)
		}
	}
}
