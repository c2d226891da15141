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

// TestDynamicSQL sends SQL hidden in strings (DO blocks, EXECUTE, a function
// that runs its text argument, a function created and called in one
// message) through sqlfwd running the default policy plus the documented
// exception for a trusted role (docs/policy.md, "Allowing dynamic SQL for a
// trusted role"), and judges by the server: a denied statement's marker must
// not be in the statement log and its rows must still be there; an allowed
// one must be logged and have its effect.
func TestDynamicSQL(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's policy: not meaningful in direct mode")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	run := randomHex(t)
	tbl := "e2e_dyn_" + run
	fn := "e2e_dyn_f_" + run
	freshTable(t, tbl, 1, 2, 3)
	app := "e2e_dyn_app"
	pgRoles(t, app)
	directExec(t, fmt.Sprintf("GRANT ALL ON %s TO %s; GRANT CREATE ON SCHEMA public TO %s", tbl, app, app))
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP FUNCTION IF EXISTS %s(); REVOKE ALL ON %s FROM %s; REVOKE CREATE ON SCHEMA public FROM %s; DROP ROLE IF EXISTS %s", fn, tbl, app, app, app))
	})

	// The default policy with the trusted-role rule directly before
	// no-dynamic-sql, as docs/policy.md shows it.
	polFile := policyWith(t, pgsql.DefaultPolicyYAML(), "no-dynamic-sql", fmt.Sprintf(`  - id: migrations-may-use-dynamic-sql
    action: allow
    users: [%s]
    match:
      dynamic_sql: true

`, pg.User))
	d, err := startDaemon("--policy", polFile)
	if err != nil {
		t.Fatalf("starting sqlfwd: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log (last lines):\n%s", tail(d.log(), 40))
		}
		if err := d.stop(); err != nil {
			t.Errorf("stopping sqlfwd: %v", err)
		}
	})

	cases := []struct {
		user, sql string
		rule      string // "" when allowed
	}{
		{app, `DO $$ DECLARE t text := 'TBL'; BEGIN EXECUTE format('DELETE FROM %I WHERE id = 1', t); END $$`, "no-dynamic-sql"},
		{app, `DO $$ BEGIN EXECUTE 'DELETE FROM TBL'; END $$`, "no-unfiltered-writes"},
		{app, `DO $$ BEGIN EXECUTE 'DELETE ' || 'FROM TBL'; END $$`, "no-unfiltered-writes"},
		{app, `SELECT query_to_xml('DELETE FROM TBL RETURNING id', true, true, '')`, "no-unfiltered-writes"},
		{app, `CREATE FUNCTION FN() RETURNS void LANGUAGE sql AS 'DELETE FROM TBL'; SELECT FN()`, "no-unfiltered-writes"},
		{app, `DO $$ DECLARE s text COLLATE "C"; BEGIN DELETE FROM TBL; END $$`, "no-unfiltered-writes"},
		{app, `DO $$ DECLARE c CURSOR (a int) FOR SELECT a; BEGIN OPEN c(1); CLOSE c; DELETE FROM TBL WHERE id = 2; END $$`, "no-unparsed-body"},
		{app, `DO $$ DECLARE r record; BEGIN FOR r IN EXECUTE 'DELETE FROM TBL WHERE id = ' || 2 + 0 || ' RETURNING id' LOOP END LOOP; END $$`, "no-dynamic-sql"},
		// The trusted role: dynamic SQL passes, every other rule still holds.
		{pg.User, `DO $$ BEGIN EXECUTE 'DELETE FROM TBL'; END $$`, "no-unfiltered-writes"},
		{pg.User, `DO $$ DECLARE t text := 'TBL'; BEGIN EXECUTE format('DELETE FROM %I WHERE id = 3', t); END $$`, ""},
		// The benign face for the application role.
		{app, `SELECT query_to_xml('SELECT id FROM TBL ORDER BY id', true, true, '')`, ""},
		{app, `DO $$ BEGIN EXECUTE 'UPDATE TBL SET id = id WHERE id = 1'; END $$`, ""},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	markers := map[string]bool{} // marker → allowed
	for i, c := range cases {
		m := fmt.Sprintf("sqlfwdyn_%s_%d", run, i)
		sql := "/* " + m + " */ " + strings.NewReplacer("TBL", tbl, "FN", fn).Replace(c.sql)
		markers[m] = c.rule == ""
		conn, err := pgconn.Connect(ctx, dsn(pg.Host, portOf(t, d.addr), c.user, ""))
		if err != nil {
			t.Fatalf("connecting as %s: %v", c.user, err)
		}
		_, err = conn.Exec(ctx, sql).ReadAll()
		conn.Close(context.Background())
		var pgErr *pgconn.PgError
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("%s: input %q: got %v, want it allowed and run", c.user, sql, err)
		case c.rule != "" && (!errors.As(err, &pgErr) || pgErr.Code != codeBlocked || !strings.Contains(pgErr.Message, c.rule)):
			t.Errorf("%s: input %q: got %v, want SQLSTATE %s naming %s", c.user, sql, err, codeBlocked, c.rule)
		}
	}

	// Only the trusted role's dynamic DELETE of id 3 ran.
	if got, want := directInts(t, "SELECT id FROM "+tbl+" ORDER BY id"), []int{1, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows of %s after the run: got %v, want %v (only the trusted role's dynamic delete runs)", tbl, got, want)
	}

	log := serverLog(t)
	for m, allowed := range markers {
		// The trailing space keeps marker _1 from matching _10.
		logged := strings.Contains(log, m+" ")
		switch {
		case allowed && !logged:
			t.Errorf("marker %s of an allowed statement is not in the server log", m)
		case !allowed && logged:
			t.Errorf("marker %s of a denied statement is in the server log: PostgreSQL received it", m)
		}
	}
}
