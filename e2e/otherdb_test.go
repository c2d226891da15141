package e2e

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// strictUnknownRule denies unknown_object (the default policies log it),
// for policyWith.
const strictUnknownRule = `  - id: strict-unknown-object
    action: deny
    reason: an object the catalog does not know
    match:
      unknown_object: true

`

// TestCatalogOtherDatabasePG: sqlfwd's catalog is the one database's its
// connection reads. A second database on the same server, reached through
// the same listener by the startup message's dbname, holds what an attacker
// made there directly: a function that deletes every row of a table, a
// view over a secret table, a trigger that deletes every row of another;
// the catalog's database holds harmless objects of the same names. A
// session to the second database is judged with that database's own
// catalog, which sqlfwd reads over a connection of its own when the session
// starts (daemon/catalogdb.go): the call and the firing write are blocked
// by no-unfiltered-writes and the read through the view by the scope rule
// (none in the statement log, every row still there), while the same
// statements in the catalog's database, and statements naming no user
// object in the second, run. With the default policy ordinary reads and
// writes of a table without objects in the second database run. A direct
// control shows what the second database's objects do.
func TestCatalogOtherDatabasePG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set")
	}
	run := randomHex(t)
	dbB := "e2e_odb_" + run[:8]
	f, v, audit := "e2e_odb_f_"+run, "e2e_odb_v_"+run, "e2e_odb_audit_"+run
	sec, victim, victim2, plain, harmless := "e2e_odb_sec_"+run, "e2e_odb_victim_"+run, "e2e_odb_victim2_"+run, "e2e_odb_plain_"+run, "e2e_odb_harmless_"+run
	app, mon := "e2e_odb_app_"+run[:8], "e2e_sp_mon"
	pgRoles(t, app, mon)

	// The catalog's database: harmless objects of the same names.
	freshTable(t, harmless, 1)
	freshTable(t, audit, 1)
	for _, q := range []string{
		fmt.Sprintf("CREATE FUNCTION %s() RETURNS int LANGUAGE sql AS 'SELECT 1'", f),
		fmt.Sprintf("CREATE VIEW %s AS SELECT id FROM %s", v, harmless),
		fmt.Sprintf("GRANT ALL ON %s, %s, %s TO %s", harmless, audit, v, app),
	} {
		directExec(t, q)
	}
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP VIEW IF EXISTS %s; DROP FUNCTION IF EXISTS %s()", v, f))
	})

	// The other database, made directly (as if before sqlfwd).
	directExec(t, "CREATE DATABASE "+dbB)
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", dbB))
		directExec(t, fmt.Sprintf("DROP OWNED BY %s CASCADE; DROP ROLE IF EXISTS %s", app, app))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	inB := func(sql string) {
		t.Helper()
		c := connect(t, ctx, fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", pg.Host, pg.Port, pg.User, dbB))
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("directly on PostgreSQL in %s: %s: %v", dbB, sql, err)
		}
	}
	countB := func(sql string) []int {
		t.Helper()
		c := connect(t, ctx, fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", pg.Host, pg.Port, pg.User, dbB))
		defer c.Close(context.Background())
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatalf("directly on PostgreSQL in %s: %s: %v", dbB, sql, err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			t.Fatalf("directly on PostgreSQL in %s: %s: %v", dbB, sql, err)
		}
		return got
	}
	for _, q := range []string{
		fmt.Sprintf("CREATE TABLE %s (id int); INSERT INTO %s VALUES (7), (8)", sec, sec),
		fmt.Sprintf("CREATE TABLE %s (id int); INSERT INTO %s VALUES (1), (2), (3)", victim, victim),
		fmt.Sprintf("CREATE TABLE %s (id int); INSERT INTO %s VALUES (1), (2), (3)", victim2, victim2),
		fmt.Sprintf("CREATE TABLE %s (id int); INSERT INTO %s VALUES (1), (2), (3)", plain, plain),
		fmt.Sprintf("CREATE TABLE %s (id int)", audit),
		fmt.Sprintf("CREATE FUNCTION %s() RETURNS int LANGUAGE sql AS 'DELETE FROM %s; SELECT 1'", f, victim),
		fmt.Sprintf("CREATE VIEW %s AS SELECT id FROM %s", v, sec),
		fmt.Sprintf("CREATE FUNCTION %s_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM %s; RETURN NULL; END $$", audit, victim2),
		fmt.Sprintf("CREATE TRIGGER %s_t AFTER INSERT ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s_touch()", audit, audit, audit),
		fmt.Sprintf("GRANT ALL ON %s, %s, %s, %s, %s, %s TO %s", sec, victim, victim2, plain, audit, v, app),
	} {
		inB(q)
	}

	viaB := func(d *daemon) *pgconn.PgConn {
		t.Helper()
		c, err := pgconn.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", portOf(t, d.addr), app, dbB))
		if err != nil {
			t.Fatalf("connecting through sqlfwd to %s: %v", dbB, err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	viaA := func(d *daemon) *pgconn.PgConn {
		t.Helper()
		c, err := pgconn.Connect(ctx, dsn("127.0.0.1", portOf(t, d.addr), app, ""))
		if err != nil {
			t.Fatalf("connecting through sqlfwd to %s: %v", pg.Database, err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}

	// Strict about unknown objects, and the application scoped away
	// from the secrets (as it would be, were the view known).
	strict := policyWith(t, pgsql.DefaultPolicyYAML(), "", scopeRule("app-no-secrets", app, "the application role may not read the secrets table", sec)+strictUnknownRule)
	d := pgCatalogDaemon(t, strict, mon)
	waitCatalogHas(t, d, f)
	mk := newMarkedPG(t, "sqlfwodb_"+run)
	a, b := viaA(d), viaB(d)
	for _, c := range []struct {
		conn      *pgconn.PgConn
		sql, rule string
	}{
		// the catalog's database: its harmless objects
		{a, "SELECT " + f + "()", ""},
		{a, "SELECT count(*) FROM " + v, ""},
		{a, "INSERT INTO " + audit + " VALUES (2)", ""},
		// the other database: its own objects, through its own catalog
		// (catalogdb.go in daemon/; once judged unknown_object)
		{b, "SELECT " + f + "()", "no-unfiltered-writes"},
		{b, "SELECT public." + f + "()", "no-unfiltered-writes"},
		{b, "SELECT * FROM " + v, "app-no-secrets"},
		{b, "SELECT id FROM " + v + " WHERE id = 7", "app-no-secrets"},
		{b, "INSERT INTO " + audit + " VALUES (1)", "no-unfiltered-writes"},
		// the other database: nothing of its own named
		{b, "SELECT 1", ""},
		{b, "SELECT now(), lower('A')", ""},
		{b, "SELECT count(*) FROM pg_catalog.pg_class", ""},
	} {
		mk.send(ctx, c.conn, c.sql, c.rule)
	}
	// The same through the extended protocol (pgx's Parse/Bind/Execute).
	rr := b.ExecParams(ctx, "SELECT "+f+"() /* sqlfwodb_"+run+"_ext */", nil, nil, nil, nil).Read()
	if pgErr, ok := rr.Err.(*pgconn.PgError); !ok || pgErr.Code != codeBlocked || !strings.Contains(pgErr.Message, "no-unfiltered-writes") {
		t.Errorf("extended SELECT %s() in %s: %v, want blocked as no-unfiltered-writes", f, dbB, rr.Err)
	}
	if got := countB("SELECT count(*)::int FROM " + victim); !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("%s in %s: %v rows, want 3 (f() never ran)", victim, dbB, got)
	}
	if got := countB("SELECT count(*)::int FROM " + victim2); !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("%s in %s: %v rows, want 3 (the trigger never fired)", victim2, dbB, got)
	}
	if got := countB("SELECT count(*)::int FROM " + audit); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("%s in %s: %v rows, want 0", audit, dbB, got)
	}
	if got := directInts(t, "SELECT count(*)::int FROM "+audit); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("%s in %s: %v rows, want 2", audit, pg.Database, got)
	}
	mk.checkLog()
	if log := serverLog(t); strings.Contains(log, "sqlfwodb_"+run+"_ext") {
		t.Errorf("the extended SELECT %s() reached the server", f)
	}

	// The default policy: unknown objects logged, so ordinary reads and
	// writes of a table without objects in the other database run.
	def := policyWith(t, pgsql.DefaultPolicyYAML(), "", "")
	d2 := pgCatalogDaemon(t, def, mon)
	mk2 := newMarkedPG(t, "sqlfwodbd_"+run)
	b2 := viaB(d2)
	for _, q := range []string{
		"SELECT id FROM " + plain + " WHERE id = 1",
		"SELECT count(*) FROM " + plain,
		"INSERT INTO " + plain + " VALUES (4)",
		"UPDATE " + plain + " SET id = 5 WHERE id = 4",
		"DELETE FROM " + plain + " WHERE id = 1",
		"SELECT 1",
	} {
		mk2.send(ctx, b2, q, "")
	}
	if got := countB("SELECT id FROM " + plain + " ORDER BY id"); !reflect.DeepEqual(got, []int{2, 3, 5}) {
		t.Errorf("%s in %s: %v, want 2 3 5", plain, dbB, got)
	}
	mk2.checkLog()
	waitLog(t, d2, `"catalog read"`, `"dbname":"`+dbB+`"`)

	// The control: what the other database's objects do, directly.
	inB("INSERT INTO " + audit + " VALUES (1)")
	inB("SELECT " + f + "()")
	if got := countB("SELECT (SELECT count(*) FROM " + victim + ")::int + (SELECT count(*) FROM " + victim2 + ")::int"); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("directly: %s() and the trigger left %v rows, want 0", f, got)
	}
	if got := countB("SELECT count(*)::int FROM " + v); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("directly: %s reads %v rows of the secrets, want 2", v, got)
	}
}

// TestCatalogUncoveredDatabaseMariaDB: the monitoring account may read the
// application's database only, so the catalog does not cover a second
// database, made on a direct connection with a view v over the secrets
// and a procedure p that deletes every row of the victim; the
// application's database has a harmless v and p. After USE of the second,
// v and p are unknown_object, not the application's of the name: blocked
// by the policy made strict for unknown objects (none in the general log,
// the victim's rows all there); a name qualified with the covered database
// and a text naming no object run, and so does everything after USE back.
func TestCatalogUncoveredDatabaseMariaDB(t *testing.T) {
	root, hidden, victim, p := sameNamesTwoDatabasesMariaDB(t, "udb", "grant select, show view, trigger on "+mariadbEnv(t).Database+".*", strictUnknownRule,
		func(my myEnv, hidden, v, p string) []myStep {
			return []myStep{
				{"select * from " + v, ""},
				{"call " + p + "()", ""},
				{"use " + hidden, ""},
				{"select * from " + v, "strict-unknown-object"},
				{"select id from " + v + " where id = 1", "strict-unknown-object"},
				{"call " + p + "()", "strict-unknown-object"},
				{"call " + my.Database + "." + p + "()", ""},
				{"select * from " + my.Database + "." + v, ""},
				{"select 1", ""},
				{"use " + my.Database, ""},
				{"select * from " + v, ""},
				{"call " + p + "()", ""},
			}
		})
	// The control: the hidden database's procedure deletes every row.
	if _, err := root.Exec("call " + hidden + "." + p + "()"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := root.QueryRow("select count(*) from " + victim).Scan(&n); err != nil || n != 0 {
		t.Errorf("directly, %s.%s() left %d rows (%v), want 0", hidden, p, n, err)
	}
}
