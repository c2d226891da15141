package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// scopedPolicy is a dialect's default policy with, first, a rule that keeps
// user from reading table (issue 24: a role scoped away from a table).
func scopedPolicy(t *testing.T, def []byte, user, table string) string {
	t.Helper()
	return policyWith(t, def, "", fmt.Sprintf(`  - id: app-not-payroll
    action: deny
    users: [%s]
    reason: the application role does not read payroll
    match:
      kind: [select]
      tables: [%s]

`, user, table))
}

// TestStoredCodePG creates functions, a trigger function, a rewrite rule
// and views through sqlfwd (default policy, enforce, plus a rule keeping
// the application role from payroll) and judges by PostgreSQL: a denied
// CREATE's marker is not in the statement log, the object does not exist,
// and the statement that would have run its code leaves the rows; an
// allowed one (audit and updated_at triggers, a cascade by OLD.id, a view
// the role may read) is logged and has its effect.
func TestStoredCodePG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's policy: not meaningful in direct mode")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	run := randomHex(t)
	tbl, victim, payroll := "e2e_body_"+run, "e2e_body_v_"+run, "e2e_body_pay_"+run
	app := "e2e_body_app"
	freshTable(t, tbl, 1, 2, 3)
	freshTable(t, victim, 1, 2, 3)
	freshTable(t, payroll, 7)
	directExec(t, "ALTER TABLE "+tbl+" ADD COLUMN touched timestamptz")
	pgRoles(t, app)
	directExec(t, fmt.Sprintf("GRANT ALL ON %s, %s, %s TO %s; GRANT CREATE ON SCHEMA public TO %s", tbl, victim, payroll, app, app))
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf(`DROP OWNED BY %s CASCADE; REVOKE CREATE ON SCHEMA public FROM %s; DROP ROLE IF EXISTS %s`, app, app, app))
	})
	d := ownDaemon(t, "--policy", scopedPolicy(t, pgsql.DefaultPolicyYAML(), app, payroll))

	r := strings.NewReplacer("TBL", tbl, "VICTIM", victim, "PAYROLL", payroll, "RUN", run)
	cases := []struct {
		sql, rule string // rule "" when allowed
		object    string // the object the statement would create
	}{
		{`CREATE FUNCTION wipe_RUN() RETURNS void LANGUAGE sql AS 'DELETE FROM VICTIM'`, "no-unfiltered-writes", "wipe_RUN"},
		{`CREATE OR REPLACE PROCEDURE wipe2_RUN() BEGIN ATOMIC UPDATE VICTIM SET id = 0; END`, "no-unfiltered-writes", "wipe2_RUN"},
		{`CREATE FUNCTION wipe3_RUN() RETURNS void LANGUAGE plpgsql AS $x$ BEGIN IF true THEN EXECUTE 'DELETE FROM VICTIM'; END IF; END $x$`, "no-unfiltered-writes", "wipe3_RUN"},
		{`CREATE FUNCTION trg_RUN() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE VICTIM SET id = 0; RETURN NEW; END $$`, "no-unfiltered-writes", "trg_RUN"},
		{`CREATE RULE rule_RUN AS ON INSERT TO TBL DO ALSO DELETE FROM VICTIM`, "no-unfiltered-writes", "rule_RUN"},
		{`CREATE VIEW pv_RUN AS SELECT * FROM PAYROLL`, "app-not-payroll", "pv_RUN"},
		{`CREATE FUNCTION pf_RUN() RETURNS SETOF PAYROLL LANGUAGE sql SECURITY DEFINER AS 'SELECT * FROM PAYROLL'`, "app-not-payroll", "pf_RUN"},
		// The benign face: what migrations create.
		{`CREATE FUNCTION touch_RUN() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.touched := now(); RETURN NEW; END $$`, "", "touch_RUN"},
		{`CREATE TRIGGER touch_RUN BEFORE UPDATE ON TBL FOR EACH ROW EXECUTE FUNCTION touch_RUN()`, "", ""},
		{`CREATE FUNCTION casc_RUN() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM VICTIM WHERE id = OLD.id; RETURN OLD; END $$`, "", "casc_RUN"},
		{`CREATE TRIGGER casc_RUN AFTER DELETE ON TBL FOR EACH ROW EXECUTE FUNCTION casc_RUN()`, "", ""},
		{`CREATE VIEW tv_RUN AS SELECT id FROM TBL WHERE id > 0`, "", "tv_RUN"},
		// What would run the denied code: nothing of it exists.
		{`INSERT INTO TBL (id) VALUES (4)`, "", ""},
		{`UPDATE TBL SET id = 5 WHERE id = 4`, "", ""},
		{`DELETE FROM TBL WHERE id = 1`, "", ""},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	markers := map[string]bool{}
	for i, c := range cases {
		m := fmt.Sprintf("sqlfwbody_%s_%d", run, i)
		q := "/* " + m + " */ " + r.Replace(c.sql)
		markers[m] = c.rule == ""
		conn, err := pgconn.Connect(ctx, dsn(pg.Host, portOf(t, d.addr), app, ""))
		if err != nil {
			t.Fatalf("connecting as %s: %v", app, err)
		}
		_, err = conn.Exec(ctx, q).ReadAll()
		conn.Close(context.Background())
		var pgErr *pgconn.PgError
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("input %q: got %v, want it allowed and run", q, err)
		case c.rule != "" && (!errors.As(err, &pgErr) || pgErr.Code != codeBlocked || !strings.Contains(pgErr.Message, c.rule)):
			t.Errorf("input %q: got %v, want SQLSTATE %s naming %s", q, err, codeBlocked, c.rule)
		}
		if c.object != "" {
			name := r.Replace(c.object)
			n := directInts(t, fmt.Sprintf(`SELECT count(*)::int FROM (SELECT proname FROM pg_proc WHERE proname = '%[1]s'
				UNION ALL SELECT relname FROM pg_class WHERE relname = '%[1]s' UNION ALL SELECT rulename FROM pg_rewrite WHERE rulename = '%[1]s') x`, name))
			if exists := n[0] > 0; exists != (c.rule == "") {
				t.Errorf("%s: exists on the server %v, want %v", name, exists, c.rule == "")
			}
		}
	}
	// The effect: the victim lost only the row the cascade trigger removes
	// with the application's own delete; the touch trigger ran.
	if got, want := directInts(t, "SELECT id FROM "+victim+" ORDER BY id"), []int{2, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows of %s: got %v, want %v", victim, got, want)
	}
	if got, want := directInts(t, "SELECT id FROM "+tbl+" ORDER BY id"), []int{2, 3, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows of %s: got %v, want %v", tbl, got, want)
	}
	if got := directInts(t, "SELECT count(*)::int FROM "+tbl+" WHERE touched IS NOT NULL"); got[0] != 1 {
		t.Errorf("the updated_at trigger touched %d rows, want 1", got[0])
	}
	// The client's error names the rule; the block line gives the reason,
	// which says it was stored code.
	if !strings.Contains(d.log(), "this statement creates, judged as it will run") {
		t.Errorf("no block line of sqlfwd says it judged stored code")
	}
	log := serverLog(t)
	for m, allowed := range markers {
		logged := strings.Contains(log, m+" ")
		switch {
		case allowed && !logged:
			t.Errorf("marker %s of an allowed statement is not in the server log", m)
		case !allowed && logged:
			t.Errorf("marker %s of a denied statement is in the server log: PostgreSQL received it", m)
		}
	}
}

// TestStoredCodeMySQL does the same against MariaDB: a view with a catalog
// UNION, a view and a procedure over a table the scoped account may not
// read, routines and a trigger with a WHERE-less write are denied at CREATE
// (not in the general log, not on the server, the rows stay); mysqldump's
// and migrations' triggers and views pass and have their effect.
func TestStoredCodeMySQL(t *testing.T) {
	my := mariadbEnv(t)
	run := randomHex(t)
	app, appPW := "body_app_"+run, "pw_"+run
	db := "body_db_" + run
	direct := myDB(t, my, my.addr(), true)
	for _, q := range []string{
		"create user '" + app + "'@'%' identified by '" + appPW + "'",
		"create database " + db,
		"grant all on " + db + ".* to '" + app + "'@'%'",
		"create table " + db + ".t (id int primary key, touched datetime null)",
		"insert into " + db + ".t (id) values (1), (2), (3)",
		"create table " + db + ".victim (id int primary key)",
		"insert into " + db + ".victim values (1), (2), (3)",
		"create table " + db + ".payroll (id int primary key)",
		"insert into " + db + ".payroll values (7)",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		_, _ = direct.Exec("drop user if exists '" + app + "'@'%'")
		_, _ = direct.Exec("drop database if exists " + db)
	})
	d := mysqlDaemon(t, my, "--policy", scopedPolicy(t, mysql.DefaultPolicyYAML(), app, "payroll"))
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = app, appPW, "tcp", d.addr, db
	appDB, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer appDB.Close()
	appDB.SetMaxOpenConns(1)

	cases := []struct {
		sql, rule, object string // rule "" when allowed; object: routine, view or trigger name
	}{
		{"CREATE VIEW cu_RUN AS SELECT id FROM t UNION SELECT user FROM mysql.user", "no-catalog-union", "cu_RUN"},
		{"CREATE OR REPLACE VIEW cu2_RUN AS SELECT id FROM t UNION SELECT table_name FROM information_schema.tables", "no-catalog-union", "cu2_RUN"},
		{"CREATE VIEW pv_RUN AS SELECT * FROM payroll", "app-not-payroll", "pv_RUN"},
		{"CREATE PROCEDURE pp_RUN() SELECT * FROM payroll", "app-not-payroll", "pp_RUN"},
		{"CREATE PROCEDURE wipe_RUN() BEGIN IF 1 THEN DELETE FROM victim; END IF; END", "no-unfiltered-writes", "wipe_RUN"},
		{"CREATE FUNCTION wf_RUN() RETURNS INT BEGIN UPDATE victim SET id = id + 10; RETURN 1; END", "no-unfiltered-writes", "wf_RUN"},
		{"CREATE TRIGGER wt_RUN AFTER INSERT ON t FOR EACH ROW DELETE FROM victim", "no-unfiltered-writes", "wt_RUN"},
		{"CREATE TRIGGER wt2_RUN AFTER INSERT ON t FOR EACH ROW UPDATE victim SET id = id + 10 WHERE NEW.id > 0", "no-unfiltered-writes", "wt2_RUN"},
		// The benign face.
		{"CREATE TRIGGER touch_RUN BEFORE UPDATE ON t FOR EACH ROW SET NEW.touched = NOW()", "", "touch_RUN"},
		{"CREATE TRIGGER casc_RUN AFTER DELETE ON t FOR EACH ROW DELETE FROM victim WHERE id = OLD.id", "", "casc_RUN"},
		{"CREATE OR REPLACE VIEW tv_RUN AS SELECT id FROM t WHERE id > 0", "", "tv_RUN"},
		{"CREATE PROCEDURE del_RUN(IN uid INT) DELETE FROM t WHERE id = uid", "", "del_RUN"},
		{"INSERT INTO t (id) VALUES (4)", "", ""},
		{"UPDATE t SET id = 5 WHERE id = 4", "", ""},
		{"CALL del_RUN(1)", "", ""},
	}
	var markers []string
	for i, c := range cases {
		m := fmt.Sprintf("sqlfwbody_%s_%d", run, i)
		q := "/* " + m + " */ " + strings.ReplaceAll(c.sql, "RUN", run)
		_, err := appDB.Exec(q)
		if c.rule == "" {
			if err != nil {
				t.Errorf("%s: got %v, want it allowed and run", q, err)
			}
		} else {
			markers = append(markers, m)
			wantMyBlocked(t, q, err, c.rule)
		}
		if c.object != "" {
			name := strings.ReplaceAll(c.object, "RUN", run)
			var n int
			if err := direct.QueryRow(`SELECT (SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = ? AND routine_name = ?)
				+ (SELECT COUNT(*) FROM information_schema.views WHERE table_schema = ? AND table_name = ?)
				+ (SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = ? AND trigger_name = ?)`,
				db, name, db, name, db, name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if exists := n > 0; exists != (c.rule == "") {
				t.Errorf("%s: exists on the server %v, want %v", name, exists, c.rule == "")
			}
		}
	}
	ints := func(q string) []int {
		t.Helper()
		rows, err := direct.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []int
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := ints("SELECT id FROM "+db+".victim ORDER BY id"), []int{2, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows of victim: got %v, want %v (only the cascade of the application's own delete)", got, want)
	}
	if got, want := ints("SELECT id FROM "+db+".t ORDER BY id"), []int{2, 3, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows of t: got %v, want %v", got, want)
	}
	if got := ints("SELECT COUNT(*) FROM " + db + ".t WHERE touched IS NOT NULL"); got[0] != 1 {
		t.Errorf("the updated_at trigger touched %d rows, want 1", got[0])
	}
	// The client's error may cut the reason short; the block line has it
	// whole, saying it was stored code.
	if !strings.Contains(d.log(), "this statement creates, judged as it will run") {
		t.Errorf("no block line of sqlfwd says it judged stored code")
	}
	log := generalLog(t, my)
	for _, m := range markers {
		if strings.Contains(log, m+" ") {
			t.Errorf("marker %s of a denied statement is in the general log: MariaDB received it", m)
		}
	}
}
