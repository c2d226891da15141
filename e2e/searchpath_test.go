package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	mysqlsql "github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// TestCatalogSearchPathPG: a function f and a view v of the same names in
// two schemas, created in another session: safe's harmless (f returns 1, v
// reads an ordinary table), evil's dangerous (f deletes every row of a
// victim table, v reads a table the application role is scoped away
// from). The role starts with search_path safe, public (ALTER ROLE, read
// by the catalog): f and v are safe's and run. After SET search_path =
// evil, public in the session they are evil's and denied; after SET
// search_path back to safe they run again; after a change sqlfwd does not
// follow (set_config, a SET inside a transaction block) every schema's f
// is judged, so evil's denies. A function with a search_path of its own
// (CREATE FUNCTION ... SET search_path = safe, public) runs its body's f
// and v as safe's whatever the session's path, and one with evil's path
// is denied as evil's f and v would be, in any session path; after an
// ALTER FUNCTION ... SET search_path to evil's in a transaction kept open
// past the catalog reads it starts, its call in that transaction is
// denied. Checked in
// the statement log and by the victim's rows; straight to PostgreSQL the
// function of evil's path empties the victim.
func TestCatalogSearchPathPG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set")
	}
	run := randomHex(t)
	safe, evil := "e2e_sp_safe_"+run, "e2e_sp_evil_"+run
	victim, sec, items := "e2e_sp_victim_"+run, "e2e_sp_sec_"+run, "e2e_sp_items_"+run
	app, mon := "e2e_sp_app_"+run[:8], "e2e_sp_mon"
	f, v := "f_"+run, "v_"+run
	pgRoles(t, app, mon)
	freshTable(t, victim, 1, 2, 3)
	freshTable(t, sec, 7)
	freshTable(t, items, 1)
	for _, q := range []string{
		"CREATE SCHEMA " + safe, "CREATE SCHEMA " + evil,
		fmt.Sprintf("CREATE FUNCTION %s.%s() RETURNS int LANGUAGE sql AS 'SELECT 1'", safe, f),
		fmt.Sprintf("CREATE FUNCTION %s.%s() RETURNS int LANGUAGE sql AS 'DELETE FROM public.%s; SELECT 1'", evil, f, victim),
		fmt.Sprintf("CREATE VIEW %s.%s AS SELECT id FROM public.%s", safe, v, items),
		fmt.Sprintf("CREATE VIEW %s.%s AS SELECT id FROM public.%s", evil, v, sec),
		fmt.Sprintf("GRANT USAGE ON SCHEMA %s, %s TO %s", safe, evil, app),
		fmt.Sprintf("GRANT SELECT ON ALL TABLES IN SCHEMA %s TO %s; GRANT SELECT ON ALL TABLES IN SCHEMA %s TO %s", safe, app, evil, app),
		fmt.Sprintf("GRANT ALL ON %s, %s, %s TO %s", victim, sec, items, app),
		fmt.Sprintf("ALTER ROLE %s SET search_path = %s, public", app, safe),
		// own paths: the body's f and v are the path's
		fmt.Sprintf("CREATE FUNCTION public.gs_%s() RETURNS int LANGUAGE sql SET search_path = %s, public AS 'SELECT %s()'", run, safe, f),
		fmt.Sprintf("CREATE FUNCTION public.ge_%s() RETURNS int LANGUAGE sql SET search_path = %s, public AS 'SELECT %s()'", run, evil, f),
		fmt.Sprintf(`CREATE FUNCTION public.gv_%s() RETURNS bigint LANGUAGE plpgsql SET search_path = "%s", pg_temp AS $$ BEGIN RETURN (SELECT count(*) FROM %s); END $$`, run, safe, v),
		fmt.Sprintf("CREATE FUNCTION public.gve_%s() RETURNS bigint LANGUAGE plpgsql SET search_path = %s AS $$ BEGIN RETURN (SELECT count(*) FROM %s); END $$", run, evil, v),
	} {
		directExec(t, q)
	}
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP SCHEMA IF EXISTS %s, %s CASCADE; DROP OWNED BY %s CASCADE; DROP ROLE IF EXISTS %s", safe, evil, app, app))
		directExec(t, fmt.Sprintf("DROP FUNCTION IF EXISTS public.gs_%[1]s(), public.ge_%[1]s(), public.gv_%[1]s(), public.gve_%[1]s()", run))
	})
	pol := policyWith(t, pgsql.DefaultPolicyYAML(), "", scopeRule("app-no-secrets", app, "the application role may not read the secrets table", sec))
	d := pgCatalogDaemon(t, pol, mon)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn(pg.Host, portOf(t, d.addr), app, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	mk := newMarkedPG(t, "sqlfwsp_"+run)
	for _, c := range []struct{ sql, rule string }{
		{"SELECT " + f + "()", ""},
		{"SELECT * FROM " + v, ""},
		{"SET search_path = " + evil + ", public", ""},
		{"SELECT " + f + "()", "no-unfiltered-writes"},
		{"SELECT * FROM " + v, "app-no-secrets"},
		{"SELECT " + safe + "." + f + "()", ""},
		{"SELECT gs_" + run + "()", ""},                     // its own path: safe's f
		{"SELECT gv_" + run + "()", ""},                     // safe's v
		{"SELECT ge_" + run + "()", "no-unfiltered-writes"}, // evil's f
		{"SELECT gve_" + run + "()", "app-no-secrets"},      // evil's v
		{"SET search_path TO " + safe + ", public", ""},
		{"SELECT " + f + "()", ""},
		{"SELECT * FROM " + v, ""},
		{"SELECT set_config('search_path', '" + evil + ", public', false)", ""},
		{"SELECT " + f + "()", "no-unfiltered-writes"}, // not followed: every f judged
		{"SET search_path = " + safe + ", public", ""},
		{"SELECT " + f + "()", ""},
		{"BEGIN", ""},
		{"SET search_path = " + evil + ", public", ""},
		{"SELECT " + f + "()", "no-unfiltered-writes"},
		{"ROLLBACK", ""},
		{"SELECT " + f + "()", "no-unfiltered-writes"}, // a SET in a transaction block: not followed
		{"RESET search_path", ""},                      // the role's default again
		{"SELECT " + f + "()", ""},
		{"SELECT ge_" + run + "()", "no-unfiltered-writes"}, // its own path, whatever the session's
		{"SELECT gs_" + run + "()", ""},
	} {
		mk.send(ctx, conn, c.sql, c.rule)
	}
	// Its own path changed in a transaction the catalog cannot see: the
	// call in that transaction, past the reads the ALTER started, is
	// judged in every schema (engine.Session.SchemaPending).
	owner, err := pgconn.Connect(ctx, dsn(pg.Host, portOf(t, d.addr), pg.User, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(context.Background())
	for _, c := range []struct{ sql, rule string }{
		{"BEGIN", ""},
		{fmt.Sprintf("ALTER FUNCTION public.gs_%s() SET search_path = %s, public", run, evil), ""},
		{"SELECT pg_sleep(2.6)", ""},
		{"SELECT gs_" + run + "()", "no-unfiltered-writes"},
		{"COMMIT", ""}, // of an aborted transaction: a ROLLBACK; had the call run, the victim empty
	} {
		mk.send(ctx, owner, c.sql, c.rule)
	}
	if got := directInts(t, "SELECT id FROM "+victim+" ORDER BY id"); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("rows of %s: %v, want 1 2 3 (evil's f never ran)", victim, got)
	}
	mk.checkLog()
	// Straight to PostgreSQL, the function of evil's path deletes.
	directExec(t, "SELECT ge_"+run+"()")
	if got := directInts(t, "SELECT count(*)::int FROM "+victim); got[0] != 0 {
		t.Errorf("straight to PostgreSQL, ge left %d rows of %s; want none (the test's premise)", got[0], victim)
	}
}

// TestCatalogCurrentDatabaseMariaDB: a view v and a procedure p of the same
// names in two databases, created on a direct connection: the
// application's (v reads an ordinary table, p deletes one row) and a
// second's (v reads a table the account is scoped away from, p deletes
// every row of the victim table). The session's current database picks
// the object: in the application's they run; after USE of the other they
// are denied, and run again after USE back. Checked in the general log and
// by the victim's rows.
func TestCatalogCurrentDatabaseMariaDB(t *testing.T) {
	sameNamesTwoDatabasesMariaDB(t, "cdb", "grant select, show view on *.*", "", func(my myEnv, other, v, p string) []myStep {
		return []myStep{
			{"select * from " + v, ""},
			{"call " + p + "()", ""},
			{"use " + other, ""},
			{"select * from " + v, "app-no-secrets"},
			{"call " + p + "()", "no-unfiltered-writes"},
			{"call " + my.Database + "." + p + "()", ""},
			{"use " + my.Database, ""},
			{"select * from " + v, ""},
			{"call " + p + "()", ""},
		}
	})
}

// myStep is a statement of a session and the rule that must block it ("":
// it must run).
type myStep struct{ sql, rule string }

// sameNamesTwoDatabasesMariaDB makes, on a direct connection, a view v and a
// procedure p of the same names in the application's database (v reads an
// ordinary table, p deletes one row) and in a second one (v reads a table
// the application account is scoped away from, p deletes every row of the
// victim table); an application account with every privilege on both and
// a monitoring account granted monGrant ("grant … on X") and mysql.proc. A
// catalog-reading sqlfwd runs the default policy with app-no-secrets and
// extraRules. The steps (given the second database's name and v and p) run
// in one session of the application account, each behind a marker, each
// run or blocked by its rule; then the victim must hold its 3 rows and no
// blocked marker be in the general log. It returns the direct connection
// and the second database's, the victim's and p's names, for a control.
func sameNamesTwoDatabasesMariaDB(t *testing.T, prefix, monGrant, extraRules string, steps func(my myEnv, other, v, p string) []myStep) (root *sql.DB, other, victim, p string) {
	t.Helper()
	my := mariadbEnv(t)
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if my.Log == "" {
		t.Skip("SQLFW_MY_LOG not set")
	}
	run := randomHex(t)
	other = "e2e_" + prefix + "_" + run[:10]
	victim, sec, items := "e2e_"+prefix+"_victim_"+run, "e2e_"+prefix+"_sec_"+run, "e2e_"+prefix+"_items_"+run
	app, mon := "e2e_"+prefix+"_app_"+run[:6], "e2e_"+prefix+"_mon_"+run[:6]
	v := "v_" + run
	p = "p_" + run
	root = myDB(t, my, my.addr(), true)
	for _, q := range []string{
		"create database " + other,
		"create table " + victim + " (id int primary key)",
		"insert into " + victim + " values (1), (2), (3)",
		"create table " + sec + " (id int)", "create table " + items + " (id int)",
		"create view " + v + " as select id from " + items,
		"create view " + other + "." + v + " as select id from " + my.Database + "." + sec,
		"create procedure " + p + "() delete from " + victim + " where id = 99",
		"create procedure " + other + "." + p + "() delete from " + my.Database + "." + victim,
		"create user '" + app + "'@'%'",
		"grant all on " + my.Database + ".* to '" + app + "'@'%'",
		"grant all on " + other + ".* to '" + app + "'@'%'",
		"create user '" + mon + "'@'%'",
		monGrant + " to '" + mon + "'@'%'",
		"grant select on mysql.proc to '" + mon + "'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{"drop database if exists " + other, "drop table if exists " + victim + ", " + sec + ", " + items,
			"drop view if exists " + v, "drop procedure if exists " + p, "drop user if exists '" + app + "'@'%', '" + mon + "'@'%'"} {
			root.Exec(q)
		}
	})
	pol := policyWith(t, mysqlsql.DefaultPolicyYAML(), "", scopeRule("app-no-secrets", app, "the application account may not read the secrets table", sec)+extraRules)
	d := catalogDaemon(t, "mysql", my.addr(), pol, fmt.Sprintf("%s@tcp(%s)/%s", mon, my.addr(), my.Database))

	appEnv := my
	appEnv.User = app
	db := myDB(t, appEnv, d.addr, true)
	db.SetMaxOpenConns(1) // one session: USE carries over
	var denied []string
	for i, c := range steps(my, other, v, p) {
		m := fmt.Sprintf("sqlfw%s_%s_%d", prefix, run, i)
		q := c.sql + " /* " + m + " */"
		if strings.HasPrefix(c.sql, "use ") {
			q = c.sql // USE is read alone (a comment makes it lexing-ambiguous)
		}
		_, err := db.Exec(q)
		if c.rule == "" {
			if err != nil {
				t.Errorf("%q: %v, want it run", q, err)
			}
			continue
		}
		wantMyBlocked(t, q, err, c.rule)
		denied = append(denied, m+" ")
	}
	var n int
	if err := root.QueryRow("select count(*) from " + victim).Scan(&n); err != nil || n != 3 {
		t.Errorf("rows of %s: %d (%v), want 3", victim, n, err)
	}
	mustNotReach(t, my, denied...)
	return root, other, victim, p
}
