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

	"github.com/jackc/pgx/v5/pgconn"

	mysqlsql "github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// TestCatalogObjectsPG: sqlfwd with a catalog connection (a monitoring role
// with no grants: PostgreSQL's catalogs are readable by every role) judges
// statements by what the database's own objects do, objects created in
// another session it never saw: a view over a table the application role
// is scoped away from, a function that deletes every row, a trigger with a
// WHERE-less UPDATE fired by an INSERT, a DO ALSO DELETE rule fired by an
// INSERT, and a DELETE whose WHERE is IS NOT NULL on a NOT NULL column.
// Each is denied with the rule the direct statement would meet; the
// server's statement log never holds it and the rows are all there. A view
// created through sqlfwd is known by the read its DDL starts. The benign
// faces run.
func TestCatalogObjectsPG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog: not meaningful in direct mode")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	run := randomHex(t)
	name := func(s string) string { return "e2e_cat_" + s + "_" + run }
	sec, ord, aud, ev := name("sec"), name("ord"), name("aud"), name("ev")
	app, mon := "e2e_cat_app", "e2e_cat_monitor"
	pgRoles(t, app, mon)
	directExec(t, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, s text)", sec))
	directExec(t, fmt.Sprintf("INSERT INTO %s VALUES (1, 'k1'), (2, 'k2')", sec))
	directExec(t, fmt.Sprintf("CREATE TABLE %s (id int NOT NULL, total int, note text)", ord))
	directExec(t, fmt.Sprintf("INSERT INTO %s VALUES (1, 10, NULL), (2, 20, 'x'), (3, 30, NULL)", ord))
	directExec(t, fmt.Sprintf("CREATE TABLE %s (id int)", aud))
	directExec(t, fmt.Sprintf("CREATE TABLE %s (id int)", ev))
	directExec(t, fmt.Sprintf("GRANT ALL ON %s, %s, %s, %s TO %s", sec, ord, aud, ev, app))
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP TABLE IF EXISTS %s, %s, %s, %s CASCADE; DROP FUNCTION IF EXISTS %s(), %s(); DROP VIEW IF EXISTS %s",
			sec, ord, aud, ev, name("wipe"), name("touch"), name("v2")))
	})

	// The objects, created in another session before sqlfwd starts: it
	// learns them from its first read.
	directExec(t, fmt.Sprintf("CREATE VIEW %s AS SELECT id, s FROM %s", name("v"), sec))
	directExec(t, fmt.Sprintf("GRANT SELECT ON %s TO %s", name("v"), app))
	directExec(t, fmt.Sprintf("CREATE FUNCTION %s() RETURNS void LANGUAGE sql AS 'DELETE FROM %s'", name("wipe"), ord))
	directExec(t, fmt.Sprintf("CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE %s SET total = 0; RETURN NEW; END $$", name("touch"), ord))
	directExec(t, fmt.Sprintf("CREATE TRIGGER %s AFTER INSERT ON %s FOR EACH ROW EXECUTE FUNCTION %s()", name("tg"), aud, name("touch")))
	directExec(t, fmt.Sprintf("CREATE RULE %s AS ON INSERT TO %s DO ALSO DELETE FROM %s", name("r"), ev, ord))

	pol := policyWith(t, pgsql.DefaultPolicyYAML(), "", scopeRule("app-no-secrets", app, "the application role may not read the secrets table", sec))
	d := pgCatalogDaemon(t, pol, mon)
	port := portOf(t, d.addr)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	markers := map[string]bool{} // marker → allowed
	send := func(i int, user, sql, rule string) {
		t.Helper()
		m := fmt.Sprintf("sqlfwcat_%s_%d", run, i)
		markers[m] = rule == ""
		text := "/* " + m + " */ " + sql
		conn, err := pgconn.Connect(ctx, dsn(pg.Host, port, user, ""))
		if err != nil {
			t.Fatalf("connecting as %s: %v", user, err)
		}
		_, err = conn.Exec(ctx, text).ReadAll()
		conn.Close(context.Background())
		var pgErr *pgconn.PgError
		switch {
		case rule == "" && err != nil:
			t.Errorf("%s: %q: got %v, want it allowed and run", user, text, err)
		case rule != "" && (!errors.As(err, &pgErr) || pgErr.Code != codeBlocked || !strings.Contains(pgErr.Message, rule)):
			t.Errorf("%s: %q: got %v, want SQLSTATE %s naming %s", user, text, err, codeBlocked, rule)
		}
	}
	cases := []struct{ user, sql, rule string }{
		{app, "SELECT * FROM " + name("v"), "app-no-secrets"},
		{app, "SELECT s FROM (SELECT * FROM " + name("v") + " WHERE id = 1) x", "app-no-secrets"},
		{app, "SELECT " + name("wipe") + "()", "no-unfiltered-writes"},
		{app, "SELECT id FROM " + ord + " WHERE id = 1 AND " + name("wipe") + "() IS NULL", "no-unfiltered-writes"},
		{app, "INSERT INTO " + aud + " VALUES (1)", "no-unfiltered-writes"},
		{app, "INSERT INTO " + ev + " VALUES (1)", "no-unfiltered-writes"},
		{app, "DELETE FROM " + ord + " WHERE id IS NOT NULL", "no-unfiltered-writes"},
		{app, "UPDATE " + ord + " SET total = 1 WHERE id IS NOT NULL OR id = 2", "no-unfiltered-writes"},
		// benign faces: allowed and run
		{app, "SELECT id, total FROM " + ord + " WHERE id = 1", ""},
		{app, "DELETE FROM " + ord + " WHERE id > 100", ""},
		{app, "DELETE FROM " + ord + " WHERE note IS NOT NULL AND id = 99", ""},
		{pg.User, "SELECT * FROM " + name("v"), ""},
	}
	for i, c := range cases {
		send(i, c.user, c.sql, c.rule)
	}

	// A view created through sqlfwd: its DDL starts a read, after which
	// reading the secrets through it is denied too.
	send(len(cases), pg.User, fmt.Sprintf("CREATE VIEW %s AS SELECT s FROM %s; GRANT SELECT ON %s TO %s", name("v2"), sec, name("v2"), app), "")
	waitLog(t, d, `"catalog read"`, `"reads":2`)
	send(len(cases)+1, app, "SELECT * FROM "+name("v2"), "app-no-secrets")

	// The catalog in force, dumped from the running sqlfwd and read
	// directly with the monitoring role's DSN: fwctl check --catalog
	// --explain judges the same statements offline and shows the chain.
	explainOffline(t, d, "postgres", pol, fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", pg.Host, pg.Port, mon, pg.Database), app, []explainCase{
		{"SELECT * FROM " + name("v"), "app-no-secrets", "view public." + name("v") + " → " + sec},
		{"SELECT " + name("wipe") + "()", "no-unfiltered-writes", "call public." + name("wipe") + " → DELETE without WHERE"},
		{"INSERT INTO " + aud + " VALUES (1)", "no-unfiltered-writes", "trigger public." + name("tg") + " on public." + aud + " → UPDATE without WHERE"},
		{"SELECT id FROM " + ord + " WHERE id = 1", "", ""},
	})

	if got, want := directInts(t, "SELECT id FROM "+ord+" ORDER BY id"), []int{1, 2, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows of %s: %v, want %v", ord, got, want)
	}
	if got := directInts(t, "SELECT count(*)::int FROM "+ord+" WHERE total = 0"); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("rows of %s the trigger zeroed: %v, want none", ord, got)
	}
	if got := directInts(t, "SELECT count(*)::int FROM "+aud); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("rows of %s: %v, want none (the INSERT that fires the trigger was denied)", aud, got)
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

// TestCatalogObjectsMariaDB: the same through a MariaDB 10.11 catalog
// (information_schema, read by a monitoring account with SHOW VIEW and
// TRIGGER on the application's database and SELECT on mysql.proc): a view
// over a table the application account is scoped away from, a procedure
// that deletes every row, a trigger whose action is a WHERE-less UPDATE
// fired by an INSERT, a view that UNIONs mysql.user into an application
// read, all created on a direct connection, are denied with the rule the
// direct statement would meet; the general log never holds them and the
// rows are all there. The benign faces run.
func TestCatalogObjectsMariaDB(t *testing.T) {
	my := mariadbEnv(t)
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if my.Log == "" {
		t.Skip("SQLFW_MY_LOG not set")
	}
	run := randomHex(t)
	name := func(s string) string { return "e2e_cat_" + s + "_" + run }
	sec, ord, aud := name("sec"), name("ord"), name("aud")
	app, mon := "e2e_cat_app_"+run[:6], "e2e_cat_mon_"+run[:6]
	root := myDB(t, my, my.addr(), true)
	exec := func(q string) {
		t.Helper()
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		"create table " + sec + " (id int primary key, s text)",
		"insert into " + sec + " values (1, 'k1'), (2, 'k2')",
		"create table " + ord + " (id int not null, total int)",
		"insert into " + ord + " values (1, 10), (2, 20), (3, 30)",
		"create table " + aud + " (id int)",
		"create user '" + app + "'@'%'",
		"grant all on " + my.Database + ".* to '" + app + "'@'%'",
		"create user '" + mon + "'@'%'",
		"grant select, show view, trigger on " + my.Database + ".* to '" + mon + "'@'%'",
		"grant select on mysql.proc to '" + mon + "'@'%'",
		"create view " + name("v") + " as select id, s from " + sec,
		"create view " + name("vu") + " as select id from " + ord + " union select user from mysql.user",
		"create procedure " + name("wipe") + "() begin delete from " + ord + "; end",
		"create trigger " + name("tg") + " after insert on " + aud + " for each row update " + ord + " set total = 0",
	} {
		exec(q)
	}
	t.Cleanup(func() {
		for _, q := range []string{"drop table if exists " + sec + ", " + ord + ", " + aud, "drop view if exists " + name("v") + ", " + name("vu"),
			"drop procedure if exists " + name("wipe"), "drop user if exists '" + app + "'@'%', '" + mon + "'@'%'"} {
			root.Exec(q)
		}
	})

	pol := policyWith(t, mysqlsql.DefaultPolicyYAML(), "", scopeRule("app-no-secrets", app, "the application account may not read the secrets table", sec))
	d := catalogDaemon(t, "mysql", my.addr(), pol, fmt.Sprintf("%s@tcp(%s)/%s", mon, my.addr(), my.Database))
	addr := d.addr

	appEnv := my
	appEnv.User = app
	appDB := myDB(t, appEnv, addr, true)
	rootDB := myDB(t, my, addr, true)
	var denied []string
	cases := []struct {
		db        *sql.DB
		sql, rule string
	}{
		{appDB, "select * from " + name("v"), "app-no-secrets"},
		{appDB, "select s from (select * from " + name("v") + " where id = 1) x", "app-no-secrets"},
		{appDB, "call " + name("wipe") + "()", "no-unfiltered-writes"},
		{appDB, "insert into " + aud + " values (1)", "no-unfiltered-writes"},
		{appDB, "select * from " + name("vu"), "no-catalog-union"},
		{appDB, "delete from " + ord + " where id is not null", "no-unfiltered-writes"},
		{appDB, "delete from " + ord + " where total is not null and id = 99", ""},
		{appDB, "select id, total from " + ord + " where id = 1", ""},
		{appDB, "delete from " + aud + " where id = 99", ""},
		{rootDB, "select * from " + name("v"), ""},
	}
	for i, c := range cases {
		m := fmt.Sprintf("sqlfwcat_%s_%d", run, i)
		q := c.sql + " /* " + m + " */"
		rows, err := c.db.Query(q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if c.rule == "" {
			if err != nil {
				t.Errorf("%q: %v, want it run", q, err)
			}
			continue
		}
		wantMyBlocked(t, q, err, c.rule)
		denied = append(denied, m+" ")
	}
	var n, zeroed, audited int
	if err := root.QueryRow("select count(*), sum(total = 0) from "+ord).Scan(&n, &zeroed); err != nil || n != 3 || zeroed != 0 {
		t.Errorf("rows of %s: %d, %d zeroed (%v); want 3, none zeroed", ord, n, zeroed, err)
	}
	if err := root.QueryRow("select count(*) from " + aud).Scan(&audited); err != nil || audited != 0 {
		t.Errorf("rows of %s: %d (%v); want none", aud, audited, err)
	}
	mustNotReach(t, my, denied...)
}
