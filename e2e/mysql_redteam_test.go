package e2e

// The red team's finds for issue 21, judged by what MariaDB does: an
// application account that holds ALL ON *.* WITH GRANT OPTION sends,
// through sqlfwd (enforce, the embedded default policy), statements that
// got their effect past sqlfwd before their fixes — the server's own
// procedures that PREPARE what their arguments spell (sys's and mysql's,
// SQL SECURITY INVOKER), a procedure body's SET PASSWORD FOR another
// account, a GRANT's REQUIRE. Each must get sqlfw's ERR 1227, never reach
// the general log, and leave grants, accounts, schemas and columns as they
// were on a direct connection; the same statements sent straight to
// MariaDB by the same account show that each attack works there.

import (
	"database/sql"
	"strings"
	"testing"
)

func TestMySQLRedTeam(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	suffix := randomHex(t)
	app, appPW := "rt_app_"+suffix, "pw_"+suffix
	victim, victimPW := "rt_victim_"+suffix, "vpw_"+suffix
	grantee, control := "rt_grantee_"+suffix, "rt_control_"+suffix
	appDB := "rt_db_" + suffix
	synonym, controlSynonym := "rt_syn_"+suffix, "rt_csyn_"+suffix
	marker := "rt_attack_" + suffix
	for _, q := range []string{
		"create user '" + app + "'@'%' identified by '" + appPW + "'",
		"grant all on *.* to '" + app + "'@'%' with grant option",
		"create user '" + victim + "'@'%' identified by '" + victimPW + "'",
		"create user '" + grantee + "'@'%'",
		"create user '" + control + "'@'%'",
		"create database " + appDB,
		"create table " + appDB + ".t (id int primary key, v int not null)",
		"insert into " + appDB + ".t values (1, 1), (2, 2)",
		"create table " + appDB + ".ctl (id int primary key)",
		"insert into " + appDB + ".ctl values (1), (2)",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{
			"drop user if exists '" + app + "'@'%'", "drop user if exists '" + victim + "'@'%'",
			"drop user if exists '" + grantee + "'@'%'", "drop user if exists '" + control + "'@'%'",
			"drop database if exists " + appDB, "drop database if exists " + synonym,
			"drop database if exists " + controlSynonym,
		} {
			_, _ = direct.Exec(q)
		}
	})
	one := func(q string, args ...any) string {
		t.Helper()
		var v sql.NullString
		if err := direct.QueryRow(q, args...).Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v.String
	}
	grants := func(user string) string {
		t.Helper()
		return showGrants(t, direct, "'"+user+"'@'%'")
	}
	state := func() map[string]string {
		t.Helper()
		return map[string]string{
			"grantee's grants": grants(grantee),
			"victim's grants":  grants(victim),
			// without the time of the password change the general-log case makes and undoes
			"victim's account": one("select json_remove(priv, '$.password_last_changed') from mysql.global_priv where user = ? and host = '%'", victim),
			"synonym schema":   one("select count(*) from information_schema.schemata where schema_name = ?", synonym),
			"columns of t":     one("select group_concat(column_name order by ordinal_position) from information_schema.columns where table_schema = ? and table_name = 't'", appDB),
			"rows of t":        one("select count(*) from " + appDB + ".t"),
			"system schemas":   one("select group_concat(schema_name, ':', default_character_set_name order by schema_name) from information_schema.schemata where schema_name in ('mysql', 'sys', 'performance_schema')"),
			"routines":         one("select count(*) from information_schema.routines where routine_schema = ?", appDB),
		}
	}
	before := state()
	if before["grantee's grants"] != "GRANT USAGE ON *.* TO `"+grantee+"`@`%`" || before["columns of t"] != "id,v" || before["synonym schema"] != "0" {
		t.Fatalf("not as created: %v", before)
	}

	connect := func(t *testing.T, addr, db string) *myRaw {
		t.Helper()
		return rawLogin(t, addr, app, appPW, db)
	}
	q := func(r *myRaw, sql string) string {
		r.t.Helper()
		return r.query(sql)
	}
	to := func(u string) string { return "''" + u + "''@''%''" }
	attacks := []struct {
		name, db string
		setup    func(r *myRaw)
		sql      string // %s: the account it acts on (grantee through sqlfwd, control direct)
		rule     string
	}{
		{"sys.execute_prepared_stmt of GRANT ALL ON *.*", appDB, nil,
			"call sys.execute_prepared_stmt('grant all on *.* to %s with grant option')", "no-dynamic-sql"},
		{"COM_INIT_DB sys, unqualified execute_prepared_stmt", appDB, func(r *myRaw) { initDB(r, "sys") },
			"call execute_prepared_stmt('grant select on mysql.* to %s')", "no-dynamic-sql"},
		{"EXECUTE IMMEDIATE of a CALL of sys.execute_prepared_stmt", appDB, nil,
			"execute immediate 'call sys.execute_prepared_stmt(''grant select on mysql.global_priv to " + strings.ReplaceAll(to("%s"), "'", "''") + "'')'", "no-dynamic-sql"},
	}
	for i, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := connect(t, d.addr, a.db)
			if a.setup != nil {
				a.setup(r)
			}
			tag := " /* " + marker + " " + string(rune('a'+i)) + " */"
			wantRawBlocked(t, a.sql, q(r, strings.ReplaceAll(a.sql, "%s", grantee)+tag), a.rule)
			// straight to MariaDB, the same statement hands the control
			// account the privilege
			c := connect(t, my.addr(), a.db)
			if a.setup != nil {
				a.setup(c)
			}
			if got := q(c, strings.ReplaceAll(a.sql, "%s", control)); strings.Contains(got, "ERR") {
				t.Errorf("direct, %s: %q, want it to work", a.sql, got)
			}
		})
	}
	if g := grants(control); !strings.Contains(g, "ALL PRIVILEGES ON *.*") || !strings.Contains(g, "ON `mysql`.*") || !strings.Contains(g, "ON `mysql`.`global_priv`") {
		t.Errorf("direct, the control account did not get what the attacks grant: %s", g)
	}

	t.Run("sys.create_synonym_db of mysql", func(t *testing.T) {
		r := connect(t, d.addr, appDB)
		wantRawBlocked(t, "create_synonym_db", q(r, "call sys.create_synonym_db('mysql', '"+synonym+"') /* "+marker+" syn */"), "no-dynamic-sql")
		// direct: views over mysql's tables, password hashes read by a name
		// that is not mysql's
		c := connect(t, my.addr(), appDB)
		if got := q(c, "call sys.create_synonym_db('mysql', '"+controlSynonym+"')"); strings.HasPrefix(got, "ERR") {
			t.Fatalf("direct create_synonym_db: %s", got)
		}
		if got := q(c, "select count(*) from "+controlSynonym+".global_priv where priv like '%authentication_string%' and user = '"+victim+"'"); got != "1" {
			t.Errorf("direct, the victim's hash through the synonym: %q, want 1", got)
		}
	})
	t.Run("mysql.AddGeometryColumn and DropGeometryColumn", func(t *testing.T) {
		r := connect(t, d.addr, appDB)
		wantRawBlocked(t, "AddGeometryColumn", q(r, "call mysql.AddGeometryColumn('', '"+appDB+"', 't', 'g', 0) /* "+marker+" add */"), "no-dynamic-sql")
		initDB(r, "mysql")
		wantRawBlocked(t, "DropGeometryColumn", q(r, "call DropGeometryColumn('', '"+appDB+"', 't', 'v') /* "+marker+" drop */"), "no-dynamic-sql")
	})
	t.Run("a procedure body's SET PASSWORD FOR another account", func(t *testing.T) {
		r := connect(t, d.addr, appDB)
		wantRawBlocked(t, "create procedure", q(r, "create procedure p_"+suffix+"() set password for '"+victim+"'@'%' = password('owned') /* "+marker+" pw */"), "no-account-management")
		wantRawBlocked(t, "create procedure", q(r, "create procedure p2_"+suffix+"() begin select 1; set password for '"+victim+"'@'%' = password('owned'); end /* "+marker+" pw2 */"), "no-account-management")
	})
	t.Run("GRANT ... REQUIRE on another account", func(t *testing.T) {
		r := connect(t, d.addr, appDB)
		wantRawBlocked(t, "require", q(r, "grant select on "+appDB+".* to '"+victim+"'@'%' require x509 /* "+marker+" req */"), "no-privileged-grants")
		wantRawBlocked(t, "limit", q(r, "grant select on "+appDB+".* to '"+victim+"'@'%' with max_user_connections 1 /* "+marker+" lim */"), "no-privileged-grants")
	})
	t.Run("EXECUTE IMMEDIATE with the values of a condition of parameters alone", func(t *testing.T) {
		r := connect(t, d.addr, appDB)
		r.exec("set @one = 1")
		for i, sql := range []string{
			"execute immediate 'delete from t where ?' using 1",
			"execute immediate 'delete from t where ? = 1' using 1",
			"execute immediate 'delete from t where id = 5 or ?' using true",
			"execute immediate 'delete from t where ?' using @one",
			"execute immediate 'update t set v = 0 where ? > 0' using 1",
		} {
			wantRawBlocked(t, sql, q(r, sql+" /* "+marker+" imm"+string(rune('a'+i))+" */"), "no-unfiltered-writes")
		}
		// straight to MariaDB the first empties a table
		c := connect(t, my.addr(), appDB)
		if got := q(c, "execute immediate 'delete from ctl where ?' using 1"); got != "OK" {
			t.Errorf("direct: %q", got)
		}
		if got := q(c, "select count(*) from ctl"); got != "0" {
			t.Errorf("direct, rows left: %q, want 0", got)
		}
		// the benign face: a parameter compared with a column
		if got := q(r, "execute immediate 'update t set v = v where id = ?' using 1"); got != "OK" {
			t.Errorf("a filtered EXECUTE IMMEDIATE: %q", got)
		}
	})
	t.Run("MariaDB's executable comment in a PREPARE text", func(t *testing.T) {
		r := connect(t, d.addr, appDB)
		for i, sql := range []string{
			"prepare s from 'select 1 /*M!100000 , (select priv from mysql.global_priv where user = ''" + victim + "'') */'",
			"execute immediate 'select 1 /*M! , (select priv from mysql.global_priv where user = ''" + victim + "'') */'",
		} {
			wantRawBlocked(t, sql, q(r, sql+" /* "+marker+" ec"+string(rune('a'+i))+" */"), "no-credential-tables")
		}
		if got := q(r, "execute s"); !strings.HasPrefix(got, "ERR") || strings.Contains(got, "authentication_string") {
			t.Errorf("execute s after the blocked PREPARE: %q", got)
		}
		// straight to MariaDB the comment runs: the victim's hash
		c := connect(t, my.addr(), appDB)
		if got := q(c, "execute immediate 'select 1 /*M! , (select priv from mysql.global_priv where user = ''"+victim+"'') */'"); !strings.Contains(got, "authentication_string") {
			t.Errorf("direct: %q, want the victim's authentication string", got)
		}
		// a plain comment in a PREPARE text is no matter
		if got := q(r, "prepare p2 from 'select v /* m */ from t where id = ?'"); !strings.HasPrefix(got, "OK") {
			t.Errorf("a benign PREPARE: %q", got)
		}
	})
	t.Run("DROP and ALTER DATABASE of the server's own", func(t *testing.T) {
		r := connect(t, d.addr, appDB)
		wantRawBlocked(t, "drop sys", q(r, "drop database sys /* "+marker+" dropsys */"), "no-catalog-writes")
		wantRawBlocked(t, "drop mysql", q(r, "drop database if exists `mysql` /* "+marker+" dropmysql */"), "no-catalog-writes")
		wantRawBlocked(t, "alter mysql", q(r, "alter database mysql character set latin1 /* "+marker+" altermysql */"), "no-catalog-writes")
		initDB(r, "mysql")
		wantRawBlocked(t, "alter current", q(r, "alter database character set latin1 /* "+marker+" altercur */"), "no-catalog-writes")
	})
	t.Run("passwords in clear in the general log as a table", func(t *testing.T) {
		if _, err := direct.Exec("set global log_output = 'FILE,TABLE'"); err != nil {
			t.Fatal(err)
		}
		defer direct.Exec("set global log_output = 'FILE'")
		pw := "clear_" + suffix
		if _, err := direct.Exec("alter user '" + victim + "'@'%' identified by '" + pw + "'"); err != nil {
			t.Fatal(err)
		}
		defer direct.Exec("alter user '" + victim + "'@'%' identified by '" + victimPW + "'")
		read := "select argument from mysql.general_log where argument like '%" + pw + "%' limit 1"
		r := connect(t, d.addr, appDB)
		wantRawBlocked(t, "general_log", q(r, read+" /* "+marker+" glog */"), "no-credential-tables")
		initDB(r, "mysql")
		wantRawBlocked(t, "unqualified general_log", q(r, "select argument from general_log /* "+marker+" glog2 */"), "no-credential-tables")
		// straight to MariaDB, the password in clear
		c := connect(t, my.addr(), appDB)
		if got := q(c, read); !strings.Contains(got, pw) {
			t.Errorf("direct: %q, want the statement with the password", got)
		}
	})
	t.Run("benign", func(t *testing.T) {
		r := connect(t, d.addr, appDB)
		if got := q(r, "call sys.ps_setup_show_enabled(false, false)"); strings.HasPrefix(got, "ERR") {
			t.Errorf("a sys procedure that reads: %q", got)
		}
		r = connect(t, d.addr, appDB)
		if got := q(r, "create procedure own_"+suffix+"() begin select 1; update t set v = 3 where id = 1; end"); got != "OK" {
			t.Errorf("an application's procedure: %q", got)
		}
		if got := q(r, "call own_"+suffix+"()"); strings.HasPrefix(got, "ERR") {
			t.Errorf("its call: %q", got)
		}
		if got := q(r, "select v from t where id = 1"); got != "3" {
			t.Errorf("after its call: %q, want 3", got)
		}
	})

	mustNotReach(t, my, marker)
	after := state()
	for k, v := range before {
		want := v
		if k == "routines" {
			want = "1" // the benign procedure
		}
		if after[k] != want {
			t.Errorf("%s: %q after the attempts, want %q", k, after[k], want)
		}
	}
	// the victim still logs in with its own password
	vr := dialRaw(t, my.addr())
	vr.write(vr.handshake(victim, victimPW, "", 45))
	vr.auth(victimPW)
}

// rawLogin connects to addr as user with password, into database db.
func rawLogin(t *testing.T, addr, user, password, db string) *myRaw {
	t.Helper()
	r := dialRaw(t, addr)
	r.write(r.handshake(user, password, db, 45))
	r.auth(password)
	return r
}
