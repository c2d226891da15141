package e2e

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// TestCatalogDDLBetweenParseAndExecutePG: PostgreSQL runs a prepared
// statement as its objects are at the Execute, not at the Parse (plancache.c
// re-analyses a statement whose view was replaced or whose search_path
// changed; a function's body is looked up when it is called). Straight to
// PostgreSQL, a statement prepared while view v2 and function f2 were
// harmless reads the secrets and empties a table once they are replaced.
// Through sqlfwd with the catalog, statements the application role
// prepared while v, f and a_schema.pv were harmless are judged at the
// Execute by the catalog then in force: the view now over the secrets
// (app-no-secrets), the function now deleting every row
// (no-unfiltered-writes), and the same text under a search_path whose pv
// reads the secrets are blocked; the server's statement log holds only
// their first, harmless executions and the victim keeps its rows. A
// statement whose objects did not change runs again.
func TestCatalogDDLBetweenParseAndExecutePG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog: not meaningful in direct mode")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	run := randomHex(t)
	n := func(s string) string { return "e2e_pc_" + s + "_" + run }
	sec, victim, victim2, sa, sb := n("sec"), n("victim"), n("victim2"), n("a"), n("b")
	app, mon := "e2e_pc_app", "e2e_pc_monitor"
	pgRoles(t, app, mon)
	for _, q := range []string{
		fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, s text)", sec),
		fmt.Sprintf("INSERT INTO %s VALUES (41, 'k1'), (42, 'k2')", sec),
		fmt.Sprintf("CREATE TABLE %s (id int)", victim),
		fmt.Sprintf("INSERT INTO %s VALUES (1), (2), (3)", victim),
		fmt.Sprintf("CREATE TABLE %s (id int)", victim2),
		fmt.Sprintf("INSERT INTO %s VALUES (1), (2), (3)", victim2),
		fmt.Sprintf("CREATE VIEW %s AS SELECT 1::int AS x", n("v")),
		fmt.Sprintf("CREATE VIEW %s AS SELECT 1::int AS x", n("v2")),
		fmt.Sprintf("CREATE FUNCTION %s() RETURNS int LANGUAGE sql AS 'SELECT 1'", n("f")),
		fmt.Sprintf("CREATE FUNCTION %s() RETURNS int LANGUAGE sql AS 'SELECT 1'", n("f2")),
		fmt.Sprintf("CREATE SCHEMA %s; CREATE SCHEMA %s", sa, sb),
		fmt.Sprintf("CREATE VIEW %s.pv AS SELECT 1::int AS x", sa),
		fmt.Sprintf("CREATE VIEW %s.pv AS SELECT id AS x FROM public.%s", sb, sec),
		fmt.Sprintf("GRANT ALL ON %s, %s, %s, %s, %s TO %s", sec, victim, victim2, n("v"), n("v2"), app),
		fmt.Sprintf("GRANT USAGE ON SCHEMA %s, %s TO %s; GRANT SELECT ON %s.pv, %s.pv TO %s", sa, sb, app, sa, sb, app),
	} {
		directExec(t, q)
	}
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP SCHEMA IF EXISTS %s, %s CASCADE; DROP VIEW IF EXISTS %s, %s; DROP FUNCTION IF EXISTS %s(), %s(); DROP TABLE IF EXISTS %s, %s, %s, %s",
			sa, sb, n("v"), n("v2"), n("f"), n("f2"), sec, victim, victim2, n("kick")))
	})
	pol := policyWith(t, pgsql.DefaultPolicyYAML(), "", scopeRule("app-no-secrets", app, "the application role may not read the secrets table", sec))
	d := pgCatalogDaemon(t, pol, mon)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	connect := func(port int, user string) *pgconn.PgConn {
		t.Helper()
		c, err := pgconn.Connect(ctx, dsn(pg.Host, port, user, ""))
		if err != nil {
			t.Fatalf("connecting as %s: %v", user, err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	simple := func(c *pgconn.PgConn, sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql).ReadAll(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// execute runs a prepared statement and returns its first column.
	execute := func(c *pgconn.PgConn, name string) ([]string, error) {
		r := c.ExecPrepared(ctx, name, nil, nil, nil).Read()
		var got []string
		for _, row := range r.Rows {
			got = append(got, string(row[0]))
		}
		return got, r.Err
	}

	// Straight to PostgreSQL: the Execute runs the objects' new definitions.
	dc := connect(pg.Port, app)
	for name, sql := range map[string]string{"cv": "SELECT x FROM " + n("v2"), "cf": "SELECT " + n("f2") + "()"} {
		if _, err := dc.Prepare(ctx, name, sql, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := execute(dc, "cv"); err != nil || !reflect.DeepEqual(got, []string{"1"}) {
		t.Fatalf("the direct control before the change: %v, %v", got, err)
	}
	directExec(t, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT id AS x FROM %s", n("v2"), sec))
	directExec(t, fmt.Sprintf("CREATE OR REPLACE FUNCTION %s() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DELETE FROM %s; RETURN 1; END $$", n("f2"), victim2))
	if got, err := execute(dc, "cv"); err != nil || !reflect.DeepEqual(got, []string{"41", "42"}) {
		t.Errorf("straight to PostgreSQL, the statement prepared while %s was harmless: %v, %v; want the secrets' ids (the test's premise)", n("v2"), got, err)
	}
	if _, err := execute(dc, "cf"); err != nil {
		t.Errorf("straight to PostgreSQL, the call prepared while %s was harmless: %v", n("f2"), err)
	}
	if got := directInts(t, "SELECT count(*)::int FROM "+victim2); got[0] != 0 {
		t.Errorf("straight to PostgreSQL, %s kept %d rows; want none (the test's premise)", victim2, got[0])
	}

	// Through sqlfwd.
	port := portOf(t, d.addr)
	ac := connect(port, app)
	simple(ac, "SET search_path = "+sa+", public")
	stmts := map[string]string{
		"vs": "SELECT x FROM " + n("v"),
		"fs": "SELECT " + n("f") + "()",
		"ps": "SELECT x FROM pv",
		"cs": "SELECT count(*) FROM " + victim,
	}
	marker := func(name string) string { return fmt.Sprintf("sqlfwpc_%s_%s", run, name) }
	for name, sql := range stmts {
		if _, err := ac.Prepare(ctx, name, "/* "+marker(name)+" */ "+sql, nil); err != nil {
			t.Fatalf("Parse of %s through sqlfwd: %v", sql, err)
		}
		if _, err := execute(ac, name); err != nil {
			t.Fatalf("the first Execute of %s through sqlfwd: %v", sql, err)
		}
	}
	// The DDL, in another session: the view and the function replaced
	// straight on the server, then any DDL through sqlfwd starts the
	// catalog read that learns them.
	directExec(t, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT id AS x FROM %s", n("v"), sec))
	directExec(t, fmt.Sprintf("CREATE OR REPLACE FUNCTION %s() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DELETE FROM %s; RETURN 1; END $$", n("f"), victim))
	simple(connect(port, pg.User), "CREATE TABLE "+n("kick")+" (id int)")
	waitCatalogHas(t, d, "DELETE FROM "+victim+";")
	simple(ac, "SET search_path = "+sb+", public")

	for _, c := range []struct{ name, rule string }{
		{"vs", "app-no-secrets"},
		{"fs", "no-unfiltered-writes"},
		{"ps", "app-no-secrets"},
		{"cs", ""},
	} {
		_, err := execute(ac, c.name)
		var pgErr *pgconn.PgError
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("Execute of %s after the DDL: %v, want it run", stmts[c.name], err)
		case c.rule != "" && (!errors.As(err, &pgErr) || pgErr.Code != codeBlocked || !strings.Contains(pgErr.Message, c.rule)):
			t.Errorf("Execute of %s after the DDL: %v, want SQLSTATE %s naming %s", stmts[c.name], err, codeBlocked, c.rule)
		}
	}
	if got := directInts(t, "SELECT count(*)::int FROM "+victim); got[0] != 3 {
		t.Errorf("%s has %d rows after the blocked Execute; want 3", victim, got[0])
	}
	log := serverLog(t)
	for name, want := range map[string]int{"vs": 1, "fs": 1, "ps": 1, "cs": 2} {
		if got := strings.Count(log, marker(name)+" "); got != want {
			t.Errorf("the server log holds %d executions of %s, want %d:\n%s", got, stmts[name], want, linesWith(log, marker(name)))
		}
	}
}
