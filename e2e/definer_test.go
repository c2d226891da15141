package e2e

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	mysqlsql "github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// TestCatalogDefinerPG: functions created in another session: a SECURITY
// DEFINER one owned by the superuser that reads the secrets table, an
// invoker one that does the same, a SECURITY DEFINER one that deletes every
// row of a victim table. The application role, scoped away from the
// secrets, calls the definer's (judged as its owner: runs) and the
// invoker's (judged as itself: denied); the deleting one is denied whoever
// owns it. ALTER FUNCTION ... OWNER TO the application role of the invoker
// one is denied (its body judged as the new owner), ALTER FUNCTION ...
// SECURITY DEFINER of it by its owner runs. Checked in the statement log,
// the catalog (owner, prosecdef) and the victim's rows.
func TestCatalogDefinerPG(t *testing.T) {
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set")
	}
	run := randomHex(t)
	sec, victim := "e2e_def_sec_"+run, "e2e_def_victim_"+run
	peekDef, peekInv, wipeDef := "e2e_def_peekd_"+run, "e2e_def_peeki_"+run, "e2e_def_wipe_"+run
	app, mon := "e2e_def_app_"+run[:8], "e2e_sp_mon"
	pgRoles(t, app, mon)
	freshTable(t, sec, 7)
	freshTable(t, victim, 1, 2, 3)
	for _, q := range []string{
		fmt.Sprintf("CREATE FUNCTION %s() RETURNS bigint LANGUAGE sql SECURITY DEFINER AS 'SELECT count(*) FROM %s'", peekDef, sec),
		fmt.Sprintf("CREATE FUNCTION %s() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM %s'", peekInv, sec),
		fmt.Sprintf("CREATE FUNCTION %s() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'DELETE FROM %s; SELECT 1'", wipeDef, victim),
		fmt.Sprintf("GRANT ALL ON %s, %s TO %s", sec, victim, app),
	} {
		directExec(t, q)
	}
	t.Cleanup(func() {
		directExec(t, fmt.Sprintf("DROP FUNCTION IF EXISTS %s(), %s(), %s(); DROP OWNED BY %s CASCADE; DROP ROLE IF EXISTS %s", peekDef, peekInv, wipeDef, app, app))
	})
	pol := policyWith(t, pgsql.DefaultPolicyYAML(), "", scopeRule("app-no-secrets", app, "the application role may not read the secrets table", sec))
	d := pgCatalogDaemon(t, pol, mon)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	mk := newMarkedPG(t, "sqlfwdef_"+run)
	for _, c := range []struct{ user, sql, rule string }{
		{app, "SELECT " + peekDef + "()", ""},
		{app, "SELECT " + peekInv + "()", "app-no-secrets"},
		{pg.User, "SELECT " + peekInv + "()", ""},
		{app, "SELECT " + wipeDef + "()", "no-unfiltered-writes"},
		{pg.User, "SELECT " + wipeDef + "()", "no-unfiltered-writes"},
		{pg.User, "ALTER FUNCTION " + peekInv + "() OWNER TO " + app, "app-no-secrets"},
		{pg.User, "ALTER FUNCTION " + peekInv + "() SECURITY DEFINER", ""},
	} {
		mk.sendAs(ctx, portOf(t, d.addr), c.user, c.sql, c.rule)
	}
	if got := directInts(t, "SELECT id FROM "+victim+" ORDER BY id"); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("rows of %s: %v, want 1 2 3", victim, got)
	}
	if got := directInts(t, fmt.Sprintf("SELECT count(*)::int FROM pg_proc WHERE proname = '%s' AND pg_get_userbyid(proowner) = current_user AND prosecdef", peekInv)); !reflect.DeepEqual(got, []int{1}) {
		t.Errorf("%s: owned by the superuser and SECURITY DEFINER: %v, want 1 (the OWNER TO denied, the SECURITY DEFINER run)", peekInv, got)
	}
	mk.checkLog()
}

// TestCatalogDefinerMariaDB: procedures created on a direct connection: one
// of DEFINER root (SQL SECURITY DEFINER, the default) that reads the
// secrets table, the same with SQL SECURITY INVOKER. The application
// account, scoped away from the secrets, calls the first (judged as root:
// runs) and the second (judged as itself: denied). General log checked.
func TestCatalogDefinerMariaDB(t *testing.T) {
	my := mariadbEnv(t)
	needSqlfwd(t)
	if direct {
		t.Skip("needs sqlfwd's catalog")
	}
	if my.Log == "" {
		t.Skip("SQLFW_MY_LOG not set")
	}
	run := randomHex(t)
	sec := "e2e_mdef_sec_" + run
	pd, pi, pa := "e2e_mdef_pd_"+run, "e2e_mdef_pi_"+run, "e2e_mdef_pa_"+run
	app, mon := "e2e_mdef_app_"+run[:6], "e2e_mdef_mon_"+run[:6]
	root := myDB(t, my, my.addr(), true)
	for _, q := range []string{
		"create table " + sec + " (id int)", "insert into " + sec + " values (7)",
		"create definer = current_user procedure " + pd + "() select count(*) from " + sec,
		"create definer = current_user procedure " + pi + "() sql security invoker select count(*) from " + sec,
		"create user '" + app + "'@'%'",
		"create definer = '" + app + "'@'%' procedure " + pa + "() sql security invoker select count(*) from " + sec,
		"grant all on " + my.Database + ".* to '" + app + "'@'%'",
		"create user '" + mon + "'@'%'",
		"grant select, show view on " + my.Database + ".* to '" + mon + "'@'%'",
		"grant select on mysql.proc to '" + mon + "'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{"drop table if exists " + sec, "drop procedure if exists " + pd, "drop procedure if exists " + pi, "drop procedure if exists " + pa,
			"drop user if exists '" + app + "'@'%', '" + mon + "'@'%'"} {
			root.Exec(q)
		}
	})
	pol := policyWith(t, mysqlsql.DefaultPolicyYAML(), "", scopeRule("app-no-secrets", app, "the application account may not read the secrets table", sec))
	d := catalogDaemon(t, "mysql", my.addr(), pol, fmt.Sprintf("%s@tcp(%s)/%s", mon, my.addr(), my.Database))
	appEnv := my
	appEnv.User = app
	db := myDB(t, appEnv, d.addr, true)
	var denied []string
	for i, c := range []struct{ sql, rule string }{
		{"call " + pd + "()", ""},
		{"call " + pi + "()", "app-no-secrets"},
	} {
		m := fmt.Sprintf("sqlfwmdef_%s_%d", run, i)
		q := c.sql + " /* " + m + " */"
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
	// ALTER PROCEDURE ... SQL SECURITY DEFINER, sent by root: pa's body
	// would run as its DEFINER app from now on, which may not read sec;
	// pi's as root, which may.
	rootVia := myDB(t, my, d.addr, true)
	for i, c := range []struct{ sql, rule string }{
		{"alter procedure " + pa + " sql security definer", "app-no-secrets"},
		{"alter procedure " + pi + " comment 'x' sql security definer", ""},
	} {
		m := fmt.Sprintf("sqlfwmdefa_%s_%d", run, i)
		q := c.sql + " /* " + m + " */"
		_, err := rootVia.Exec(q)
		if c.rule == "" {
			if err != nil {
				t.Errorf("%q: %v, want it run", q, err)
			}
			continue
		}
		wantMyBlocked(t, q, err, c.rule)
		denied = append(denied, m+" ")
	}
	for name, want := range map[string]string{pa: "INVOKER", pi: "DEFINER"} {
		var got string
		if err := root.QueryRow("select security_type from information_schema.routines where routine_schema = database() and routine_name = ?", name).Scan(&got); err != nil || got != want {
			t.Errorf("%s: SECURITY_TYPE %q (%v), want %s", name, got, err, want)
		}
	}
	mustNotReach(t, my, denied...)
}
