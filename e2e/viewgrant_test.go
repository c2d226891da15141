package e2e

import (
	"fmt"
	"testing"

	mysqlsql "github.com/sqlfw/sqlfw/engine/mysql"
)

// TestCatalogViewGrantMariaDB: the least privilege that lets the monitoring
// account read a view's definition on MariaDB 10.11 is SHOW VIEW with
// SELECT on the view itself (not on the tables behind it,
// docs/operations.md). With SHOW VIEW alone information_schema.VIEWS shows
// the view with an empty definition: a read through it is unknown_object
// (logged, and it runs); after GRANT SELECT on the view it is expanded and
// the read of the table behind it is denied by the account's scope (not in
// the general log). The monitoring account cannot read the table itself.
func TestCatalogViewGrantMariaDB(t *testing.T) {
	my := mariadbEnv(t)
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if my.Log == "" {
		t.Skip("SQLFW_MY_LOG not set")
	}
	run := randomHex(t)
	sec, v := "e2e_vg_sec_"+run, "e2e_vg_v_"+run
	app, mon := "e2e_vg_app_"+run[:6], "e2e_vg_mon_"+run[:6]
	root := myDB(t, my, my.addr(), true)
	exec := func(q string) {
		t.Helper()
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		"create table " + sec + " (id int)", "insert into " + sec + " values (7)",
		"create view " + v + " as select id from " + sec,
		"create user '" + app + "'@'%'", "grant all on " + my.Database + ".* to '" + app + "'@'%'",
		"create user '" + mon + "'@'%'", "grant show view on " + my.Database + ".* to '" + mon + "'@'%'",
	} {
		exec(q)
	}
	t.Cleanup(func() {
		for _, q := range []string{"drop view if exists " + v, "drop table if exists " + sec, "drop user if exists '" + app + "'@'%', '" + mon + "'@'%'"} {
			root.Exec(q)
		}
	})
	pol := policyWith(t, mysqlsql.DefaultPolicyYAML(), "", scopeRule("app-no-secrets", app, "the application account may not read the secrets table", sec))
	dsn := fmt.Sprintf("%s@tcp(%s)/%s", mon, my.addr(), my.Database)

	// SHOW VIEW alone: the definition is hidden, the view unknown.
	d := catalogDaemon(t, "mysql", my.addr(), pol, dsn)
	appEnv := my
	appEnv.User = app
	m0 := "sqlfwvg_" + run + "_0"
	if _, err := myDB(t, appEnv, d.addr, true).Exec("select * from " + v + " /* " + m0 + " */"); err != nil {
		t.Errorf("with SHOW VIEW only: %v, want it logged as unknown_object and run", err)
	}
	waitLog(t, d, `"rule":"unknown-object"`, "no definition visible to the monitoring role")
	d.stop()

	// SHOW VIEW and SELECT on the view: expanded, the scope meets the table.
	exec("grant select on " + my.Database + "." + v + " to '" + mon + "'@'%'")
	monEnv := my
	monEnv.User = mon
	if _, err := myDB(t, monEnv, my.addr(), true).Exec("select * from " + sec); err == nil {
		t.Errorf("the monitoring account reads %s itself", sec)
	}
	d = catalogDaemon(t, "mysql", my.addr(), pol, dsn)
	m1 := "sqlfwvg_" + run + "_1"
	q := "select * from " + v + " /* " + m1 + " */"
	_, err := myDB(t, appEnv, d.addr, true).Exec(q)
	wantMyBlocked(t, q, err, "app-no-secrets")
	mustNotReach(t, my, m1+" ")
}
