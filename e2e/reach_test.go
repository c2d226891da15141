package e2e

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// TestCatalogReachedTablesPG: triggers that fire on tables the statement
// does not name, all created in another session: an AFTER INSERT row
// trigger on a partition, fired by an INSERT into its partitioned table,
// and an AFTER DELETE row trigger on a table whose foreign key cascades,
// fired by a filtered DELETE of the referenced row; each trigger deletes
// every row of a victim table. Through sqlfwd both are denied with
// no-unfiltered-writes naming the trigger (absent from the statement log,
// the victim's rows there, the partition empty, the referenced row there);
// a write that reaches no such trigger runs and has its effect.
func TestCatalogReachedTablesPG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set")
	}
	run := randomHex(t)
	victim, fn := "e2e_rch_victim_"+run, "e2e_rch_wipe_"+run
	m, part, parent, child := "e2e_rch_m_"+run, "e2e_rch_m1_"+run, "e2e_rch_parent_"+run, "e2e_rch_child_"+run
	mon := "e2e_sp_mon"
	pgRoles(t, mon)
	freshTable(t, victim, 1, 2, 3)
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP TABLE IF EXISTS %s, %s, %s; DROP FUNCTION IF EXISTS %s()", m, child, parent, fn))
	})
	for _, q := range []string{
		fmt.Sprintf("CREATE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM %s; RETURN NULL; END $$", fn, victim),
		fmt.Sprintf("CREATE TABLE %s (id int) PARTITION BY RANGE (id)", m),
		fmt.Sprintf("CREATE TABLE %s PARTITION OF %s FOR VALUES FROM (0) TO (100)", part, m),
		fmt.Sprintf("CREATE TRIGGER t_%s AFTER INSERT ON %s FOR EACH ROW EXECUTE FUNCTION %s()", part, part, fn),
		fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY)", parent),
		fmt.Sprintf("CREATE TABLE %s (pid int REFERENCES %s ON DELETE CASCADE)", child, parent),
		fmt.Sprintf("INSERT INTO %s VALUES (1); INSERT INTO %s VALUES (1)", parent, child),
		fmt.Sprintf("CREATE TRIGGER t_%s AFTER DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s()", child, child, fn),
	} {
		directExec(t, q)
	}
	d := pgCatalogDaemon(t, policyWith(t, pgsql.DefaultPolicyYAML(), "", ""), mon)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn(pg.Host, portOf(t, d.addr), pg.User, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	mk := newMarkedPG(t, "sqlfwrch_"+run)
	for _, c := range []struct{ sql, rule, says string }{
		{"SELECT id FROM " + m + " WHERE id = 1", "", ""},
		{"INSERT INTO " + m + " VALUES (5)", "no-unfiltered-writes", "trigger public.t_" + part + " on public." + part},
		{"DELETE FROM " + parent + " WHERE id = 1", "no-unfiltered-writes", "trigger public.t_" + child + " on public." + child},
		{"INSERT INTO " + parent + " VALUES (2)", "", ""},
	} {
		mk.send(ctx, conn, c.sql, c.rule)
		if c.says != "" && !strings.Contains(d.log(), c.says) {
			t.Errorf("%q: sqlfwd's log does not name %q", c.sql, c.says)
		}
	}
	if got := directInts(t, "SELECT id FROM "+victim+" ORDER BY id"); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("rows of %s: %v, want 1 2 3", victim, got)
	}
	if got := directInts(t, "SELECT count(*)::int FROM "+m); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("rows of %s: %v, want none", m, got)
	}
	if got := directInts(t, "SELECT id FROM "+parent+" ORDER BY id"); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("rows of %s: %v, want 1 (denied DELETE) and 2 (the allowed INSERT)", parent, got)
	}
	mk.checkLog()
}

// TestCatalogImplicitCallsPG: a function created in another session that
// deletes every row of a victim table, called by no statement but by a
// column DEFAULT of one table and a row security policy of another (for a
// role the policy applies to): through sqlfwd the INSERT that takes the
// default and that role's SELECT of the other table are denied with
// no-unfiltered-writes naming the function (absent from the statement log,
// the victim's rows there, no row inserted); a table without them is read
// and written.
func TestCatalogImplicitCallsPG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set")
	}
	run := randomHex(t)
	victim, fn, dft, pol, plain := "e2e_imp_victim_"+run, "e2e_imp_wipe_"+run, "e2e_imp_dft_"+run, "e2e_imp_pol_"+run, "e2e_imp_plain_"+run
	app, mon := "e2e_imp_app_"+run[:8], "e2e_sp_mon"
	pgRoles(t, app, mon)
	freshTable(t, victim, 1, 2, 3)
	freshTable(t, plain, 1)
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP TABLE IF EXISTS %s, %s; DROP FUNCTION IF EXISTS %s(); DROP OWNED BY %s CASCADE; DROP ROLE IF EXISTS %s", dft, pol, fn, app, app))
	})
	for _, q := range []string{
		fmt.Sprintf("CREATE FUNCTION %s() RETURNS int LANGUAGE plpgsql AS $$ BEGIN DELETE FROM %s; RETURN 1; END $$", fn, victim),
		fmt.Sprintf("CREATE TABLE %s (id int, x int DEFAULT %s())", dft, fn),
		fmt.Sprintf("CREATE TABLE %s (id int)", pol),
		fmt.Sprintf("INSERT INTO %s VALUES (1)", pol),
		fmt.Sprintf("ALTER TABLE %s ENABLE ROW LEVEL SECURITY", pol),
		fmt.Sprintf("CREATE POLICY p ON %s USING (%s() = 1)", pol, fn),
		fmt.Sprintf("GRANT ALL ON %s, %s, %s, %s TO %s", victim, dft, pol, plain, app),
	} {
		directExec(t, q)
	}
	d := pgCatalogDaemon(t, policyWith(t, pgsql.DefaultPolicyYAML(), "", ""), mon)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mk := newMarkedPG(t, "sqlfwimp_"+run)
	for _, c := range []struct{ user, sql, rule string }{
		{app, "INSERT INTO " + dft + " (id) VALUES (1)", "no-unfiltered-writes"},
		{app, "SELECT id FROM " + pol + " WHERE id = 1", "no-unfiltered-writes"},
		{app, "SELECT id FROM " + plain + " WHERE id = 1", ""},
		{app, "INSERT INTO " + plain + " VALUES (2)", ""},
	} {
		mk.sendAs(ctx, portOf(t, d.addr), c.user, c.sql, c.rule)
	}
	if !strings.Contains(d.log(), "call public."+fn+" → DELETE without WHERE") {
		t.Errorf("sqlfwd's log does not name %s", fn)
	}
	if got := directInts(t, "SELECT id FROM "+victim+" ORDER BY id"); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("rows of %s: %v, want 1 2 3", victim, got)
	}
	if got := directInts(t, "SELECT count(*)::int FROM "+dft); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("rows of %s: %v, want none", dft, got)
	}
	if got := directInts(t, "SELECT id FROM "+plain+" ORDER BY id"); !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf("rows of %s: %v, want 1 2", plain, got)
	}
	mk.checkLog()
}
