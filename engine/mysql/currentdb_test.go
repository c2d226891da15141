package mysql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// A GRANT's database name is the pattern the server matches: it covers a
// system database when it matches one, in any case; \ makes a wildcard
// literal.
func TestCoversSystem(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    bool
	}{
		{"mysql", true}, {"MYSQL", true}, {"m_sql", true}, {"my%", true}, {"%", true}, {"%%", true},
		{"_____", true}, {"m%l", true}, {"%sql", true}, {"my\\sql", true}, {"mysql ", true},
		{"ſys", true}, {"s_s", true}, {"information\\_schema", true}, {"performance%", true},
		{"m\\_sql", false}, {"my\\%", false}, {"mysqlx", false}, {"app", false}, {"app_db", false},
		{"____", false}, {"______", false}, {"m_sq", false}, {"", false}, {"my_app", false}, {"s\\ys", true},
		{"app%", false}, {"%x%", false},
	} {
		if got := coversSystem(tc.pattern); got != tc.want {
			t.Errorf("coversSystem(%q) = %v, want %v", tc.pattern, got, tc.want)
		}
	}
}

// The facts of a statement in each system database: the effects it has
// there, where they differ from its effects in an application's database.
func TestInDatabaseFacts(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		base engine.EffectSet
		in   map[string]engine.EffectSet // databases with facts of their own
	}{
		{"SELECT * FROM user WHERE id = 1", 0, map[string]engine.EffectSet{"mysql": engine.EffReadsCredentials}},
		{"SELECT * FROM orders WHERE id = 1", 0, nil},
		{"SELECT * FROM t JOIN u ON t.a = u.a", 0, nil},
		{"SELECT * FROM mysql.user", engine.EffReadsCredentials, nil},
		{"UPDATE global_priv SET priv = '{}' WHERE user = 'root'", 0, map[string]engine.EffectSet{
			"mysql": engine.EffReadsCredentials | engine.EffWritesCatalog, "information_schema": engine.EffWritesCatalog, "sys": engine.EffWritesCatalog}},
		{"INSERT INTO func VALUES ('f', 0, 'x.so', 'function')", 0, map[string]engine.EffectSet{
			"mysql": engine.EffWritesCatalog, "information_schema": engine.EffWritesCatalog, "sys": engine.EffWritesCatalog}},
		{"UPDATE setup_instruments SET enabled = 'NO' WHERE name = 'x'", 0, map[string]engine.EffectSet{
			"mysql": engine.EffWritesCatalog, "information_schema": engine.EffWritesCatalog, "sys": engine.EffWritesCatalog,
			"performance_schema": engine.EffDisablesLogging}},
		{"GRANT ALL ON * TO app", 0, map[string]engine.EffectSet{
			"mysql": engine.EffGrantsPrivilege, "information_schema": engine.EffGrantsPrivilege, "sys": engine.EffGrantsPrivilege,
			"performance_schema": engine.EffGrantsPrivilege}},
		{"GRANT ALL ON app.* TO x", 0, nil},
		{"GRANT ALL ON `m_sql`.* TO x", engine.EffGrantsPrivilege, nil},
		{"GRANT r TO x", engine.EffGrantsPrivilege, nil},
		{"SET ROLE r", engine.EffGrantsPrivilege, nil},
		{"SET ROLE NONE", 0, nil},
		{"SHOW GRANTS", 0, nil},
		{"SHOW GRANTS FOR CURRENT_USER()", 0, nil},
		{"SHOW GRANTS FOR root", engine.EffReadsCredentials, nil},
		{"WITH user AS (SELECT 1) SELECT * FROM user", 0, nil},
		{"PREPARE s FROM 'SELECT * FROM user'", 0, map[string]engine.EffectSet{"mysql": engine.EffReadsCredentials}},
	} {
		tf := analyze(tc.sql, engine.LexStats{})
		if tf.ParseError || len(tf.Stmts) != 1 {
			t.Errorf("%q: parse error %v, %d statements", tc.sql, tf.ParseError, len(tf.Stmts))
			continue
		}
		st := &tf.Stmts[0]
		if st.Effects != tc.base {
			t.Errorf("%q: effects %v, want %v", tc.sql, st.Effects, tc.base)
		}
		got := map[string]engine.EffectSet{}
		for _, d := range st.InDatabase {
			got[d.Database] = d.Facts.Effects
		}
		if len(got) != len(tc.in) {
			t.Errorf("%q: facts in %v, want in %v", tc.sql, got, tc.in)
			continue
		}
		for db, want := range tc.in {
			if got[db] != want {
				t.Errorf("%q in %s: effects %v, want %v", tc.sql, db, got[db], want)
			}
		}
	}
}

// Judging a cached statement in a system database allocates nothing, as
// in any other.
func TestInDatabaseJudgeAllocs(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sql := []byte("SELECT * FROM user WHERE id = 1")
	for _, db := range []string{"app", "MySQL", ""} {
		s := &engine.Session{User: "app", Database: db}
		e.Judge(sql, s)
		if n := testing.AllocsPerRun(100, func() { e.Judge(sql, s) }); n != 0 {
			t.Errorf("cached Judge in %q: %v allocations, want 0", db, n)
		}
	}
	if v := e.Judge(sql, &engine.Session{Database: "MySQL"}); v.RuleID != "no-credential-tables" {
		t.Errorf("in MySQL: got %v %s, want no-credential-tables", v.Action, v.RuleID)
	}
}

// A USE earlier in the same text decides where the names after it
// resolve: in mysql they are the system tables whatever the session's
// database; in an application's they are not, whatever it is.
func TestUseInText(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want engine.EffectSet // of the last statement
		in   int              // its facts in other databases
	}{
		{"USE mysql; SELECT * FROM user", engine.EffReadsCredentials, 0},
		{"USE MySQL; INSERT INTO func VALUES ('f', 0, 'x.so', 'function')", engine.EffWritesCatalog, 0},
		{"USE app; SELECT * FROM user", 0, 0},
		{"USE app; INSERT INTO func VALUES ('f', 0, 'x.so', 'function')", 0, 0},
		{"SELECT 1; SELECT * FROM user", 0, 1},
	} {
		tf := analyze(tc.sql, engine.LexStats{})
		if tf.ParseError || len(tf.Stmts) != 2 {
			t.Errorf("%q: parse error %v, %d statements", tc.sql, tf.ParseError, len(tf.Stmts))
			continue
		}
		st := &tf.Stmts[1]
		if st.Effects != tc.want || len(st.InDatabase) != tc.in {
			t.Errorf("%q: effects %v and %d sets in other databases, want %v and %d", tc.sql, st.Effects, len(st.InDatabase), tc.want, tc.in)
		}
	}
}

// A bulk INSERT's facts in other databases come through the shape cache
// too: texts of one shape that differ in their literals are judged in the
// session's database, the second one from the first one's shape.
func TestInDatabaseThroughShapes(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, db := range []string{"mysql", "app", "MYSQL", "app", "sys"} {
		sql := []byte("INSERT INTO func VALUES ('f" + string(rune('a'+i)) + "', 0, 'x.so', 'function'), ('g', 0, 'y.so', 'function')")
		v := e.Judge(sql, &engine.Session{Database: db})
		want := "no-catalog-writes"
		if db == "app" {
			want = ""
		}
		if v.RuleID != want {
			t.Errorf("%s in %s: got %v %s, want %q", sql, db, v.Action, v.RuleID, want)
		}
	}
	if st := e.Stats(); st.Shapes == 0 {
		t.Errorf("no shape was cached: %+v", st)
	}
}
