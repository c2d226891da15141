package e2e

// sql_mode and the server's own settings (issue 21, the red team's "still
// gets through"), judged by what MariaDB 10.11 does: an application account
// that holds ALL ON *.* WITH GRANT OPTION, through sqlfwd (enforce, the
// embedded default policy).
//
//   - A GRANT to an account that does not exist creates it, without a
//     password, when the session's sql_mode lacks NO_AUTO_CREATE_USER:
//     after every way of setting the mode the relay follows (a literal,
//     @@session., a variable, a subquery, EXECUTE IMMEDIATE), under SET
//     STATEMENT, in a procedure body, and prepared before the mode changed
//     (SQL-level and binary), it gets ERR 1227, never reaches the general
//     log, and no account appears in mysql.user; the same sequence sent
//     straight to MariaDB creates one. After SET sql_mode = 'TRADITIONAL'
//     and after COM_RESET_CONNECTION the GRANT to an existing account runs.
//   - SET GLOBAL in its spellings leaves the global variables as they were;
//     REVOKE ALL ON *.* FROM root@localhost leaves root's grants; an
//     unqualified CREATE FUNCTION in mysql creates nothing; SHOW GRANTS FOR
//     the session's own account runs, another's does not.

import (
	"database/sql"
	"encoding/binary"
	"strings"
	"testing"
)

func TestMySQLSQLModeAndSettings(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	suffix := randomHex(t)
	app, appPW := "sm_app_"+suffix, "pw_"+suffix
	existing, control := "sm_existing_"+suffix, "sm_control_"+suffix
	appDB := "sm_db_" + suffix
	marker := "sm_attack_" + suffix
	for _, q := range []string{
		"create user '" + app + "'@'%' identified by '" + appPW + "'",
		"grant all on *.* to '" + app + "'@'%' with grant option",
		"create user '" + existing + "'@'%'",
		"create user '" + control + "'@'%'",
		"grant all on *.* to '" + control + "'@'%'",
		"create database " + appDB,
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var created []string // accounts the direct controls make, dropped at the end
	t.Cleanup(func() {
		for _, u := range append(created, app, existing, control) {
			_, _ = direct.Exec("drop user if exists '" + u + "'@'%'")
		}
		_, _ = direct.Exec("drop database if exists " + appDB)
	})
	one := func(q string, args ...any) string {
		t.Helper()
		var v sql.NullString
		if err := direct.QueryRow(q, args...).Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v.String
	}
	accounts := func(like string) string {
		t.Helper()
		return one("select count(*) from mysql.user where user like ?", like)
	}
	grants := func(account string) string {
		t.Helper()
		return showGrants(t, direct, account)
	}
	connect := func(t *testing.T, addr string) *myRaw {
		t.Helper()
		return rawLogin(t, addr, app, appPW, appDB)
	}
	grant := func(user string) string {
		return "grant select on " + appDB + ".* to '" + user + "'@'%'"
	}
	tag := func(n string) string { return " /* " + marker + " " + n + " */" }

	t.Run("GRANT that creates its grantee", func(t *testing.T) {
		for i, tc := range []struct {
			name  string
			setup []string // sent first, each must succeed
			sql   string   // %s: the new account
		}{
			{"SET sql_mode = ''", []string{"set sql_mode = ''"}, ""},
			{"SET @@session.sql_mode", []string{"set @@session.sql_mode = 'STRICT_TRANS_TABLES'"}, ""},
			{"SET sql_mode from a variable", []string{"set @m = ''", "set sql_mode = @m"}, ""},
			{"SET sql_mode from a subquery", []string{"set sql_mode = (select '')"}, ""},
			{"EXECUTE of a PREPAREd SET sql_mode", []string{"prepare m from 'set sql_mode = '''''", "execute m"}, ""},
			{"EXECUTE of a PREPAREd SET sql_mode from a variable", []string{"set @m = ''", "prepare m from 'set sql_mode = @m'", "execute m"}, ""},
			{"after the mode was kept and then dropped", []string{"set sql_mode = 'TRADITIONAL'", "set sql_mode = 'ANSI'"}, ""},
			{"SET STATEMENT sql_mode = '' FOR", nil, "set statement sql_mode = '' for grant select on " + appDB + ".* to '%s'@'%%'"},
			{"SET STATEMENT of a variable FOR", []string{"set @m = ''"}, "set statement sql_mode = @m for grant select on " + appDB + ".* to '%s'@'%%'"},
			{"a procedure body that sets the mode", nil, "create procedure p_%s() begin set sql_mode = ''; grant select on " + appDB + ".* to '%s'@'%%'; end"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := func(r *myRaw, user, tag string) string {
					for _, s := range tc.setup {
						r.exec(s)
					}
					q := grant(user)
					if tc.sql != "" {
						q = strings.ReplaceAll(strings.ReplaceAll(tc.sql, "%s", user), "%%", "%")
					}
					return r.query(q + tag)
				}
				newu := "sm_new" + string(rune('a'+i)) + "_" + suffix
				wantRawBlocked(t, tc.name, run(connect(t, d.addr), newu, tag(string(rune('a'+i)))), "no-account-management")
				if n := accounts(newu); n != "0" {
					t.Errorf("%s: %s accounts %s, want none", tc.name, n, newu)
				}
				// straight to MariaDB the same sequence makes the account
				// (a procedure makes it when called)
				ctl := "sm_ctl" + string(rune('a'+i)) + "_" + suffix
				created = append(created, ctl)
				c := connect(t, my.addr())
				if got := run(c, ctl, ""); strings.HasPrefix(got, "ERR") {
					t.Fatalf("direct: %s", got)
				}
				if strings.HasPrefix(tc.sql, "create procedure") {
					c.exec("set sql_mode = default")
					c.exec("call p_" + ctl + "()")
				}
				if n := accounts(ctl); n != "1" {
					t.Errorf("direct, %s: %s accounts %s, want the one it creates", tc.name, n, ctl)
				}
			})
		}
	})
	t.Run("prepared in the default mode, executed after it changed", func(t *testing.T) {
		// the PREPAREs reach the server (allowed in the default mode):
		// their text carries prepared, not the marker; an execution would
		// be an Execute line of the general log, or the account
		prepared := "sm_prepared_" + suffix
		sqlLevel := "sm_prep_" + suffix
		r := connect(t, d.addr)
		if got := r.query("prepare s from '" + strings.ReplaceAll(grant(sqlLevel), "'", "''") + " /* " + prepared + " */'"); got != "OK" {
			t.Fatalf("PREPARE in the default mode: %q", got)
		}
		r.exec("set sql_mode = ''")
		wantRawBlocked(t, "EXECUTE s", r.query("execute s"+tag("exec")), "no-account-management")

		binaryUser := "sm_bin_" + suffix
		r = connect(t, d.addr)
		r.write(rawPacket(0, append([]byte{0x16}, grant(binaryUser)+" /* "+prepared+" */"...)))
		ok := r.read()
		if ok[4] != 0 {
			t.Fatalf("COM_STMT_PREPARE in the default mode: %q", ok)
		}
		id := ok[5:9]
		if cols, params := binary.LittleEndian.Uint16(ok[9:]), binary.LittleEndian.Uint16(ok[11:]); cols != 0 || params != 0 {
			t.Fatalf("PREPARE_OK of a GRANT: %d columns, %d parameters", cols, params)
		}
		r.exec("set sql_mode = ''")
		r.write(rawPacket(0, append(append([]byte{0x17}, id...), 0, 1, 0, 0, 0)))
		wantRawBlocked(t, "COM_STMT_EXECUTE", r.result(), "no-account-management")
		for _, u := range []string{sqlLevel, binaryUser} {
			if n := accounts(u); n != "0" {
				t.Errorf("%s: %s accounts, want none", u, n)
			}
		}
		for _, l := range strings.Split(linesWith(generalLog(t, my), prepared), "\n") {
			if strings.Contains(l, "Execute") {
				t.Errorf("the server executed a prepared GRANT: %s", l)
			}
		}
	})
	t.Run("benign: GRANT to an existing account in a mode that keeps NO_AUTO_CREATE_USER", func(t *testing.T) {
		r := connect(t, d.addr)
		if got := r.query(grant(existing)); got != "OK" {
			t.Errorf("GRANT in the default mode: %q", got)
		}
		if got := r.query("grant select on " + appDB + ".* to 'sm_nobody_" + suffix + "'@'%'"); !strings.HasPrefix(got, "ERR 1133") {
			t.Errorf("GRANT to a missing account in the default mode: %q, want the server's ERR 1133", got)
		}
		r.exec("set sql_mode = ''")
		r.exec("set sql_mode = 'TRADITIONAL'")
		if got := r.query("grant insert on " + appDB + ".* to '" + existing + "'@'%'"); got != "OK" {
			t.Errorf("GRANT after SET sql_mode = 'TRADITIONAL': %q", got)
		}
		r.exec("set sql_mode = ''")
		r.write(rawPacket(0, []byte{0x1f})) // COM_RESET_CONNECTION
		if got := r.result(); got != "OK" {
			t.Fatalf("COM_RESET_CONNECTION: %q", got)
		}
		if got := r.query("grant update on " + appDB + ".* to '" + existing + "'@'%'"); got != "OK" {
			t.Errorf("GRANT after COM_RESET_CONNECTION: %q", got)
		}
		if g := grants("'" + existing + "'@'%'"); !strings.Contains(g, "GRANT SELECT, INSERT, UPDATE ON `"+appDB+"`.*") {
			t.Errorf("the existing account's grants: %s", g)
		}
	})

	t.Run("server-wide settings", func(t *testing.T) {
		globals := "select concat_ws('|', @@global.max_connections, @@global.local_infile, @@global.read_only, @@global.event_scheduler, @@global.sql_mode, @@global.wait_timeout)"
		before := one(globals)
		r := connect(t, d.addr)
		for i, sql := range []string{
			"set global max_connections = 7",
			"SET GLOBAL local_infile = 0",
			"set @@global.read_only = 1",
			"set @@GLOBAL.event_scheduler = ON",
			"set global sql_mode = ''",
			"set @@global . max_connections = 9",
			"set session wait_timeout = 10, global max_connections = 8",
			"set wait_timeout = 10, @@global.wait_timeout = 11",
			"set statement max_statement_time = 5 for set global max_connections = 6",
			"execute immediate 'set global max_connections = 5'",
		} {
			wantRawBlocked(t, sql, r.query(sql+tag("g"+string(rune('a'+i)))), "no-server-settings")
		}
		if got := r.query("create procedure ps_" + suffix + "() set global read_only = 1" + tag("gproc")); !strings.Contains(got, "no-server-settings") {
			t.Errorf("a procedure that sets a global: %q", got)
		}
		if after := one(globals); after != before {
			t.Errorf("global variables after the attempts: %s, want %s", after, before)
		}
		// the session's own settings and reading the global ones pass
		for _, sql := range []string{"set session wait_timeout = 600", "set max_statement_time = 10", "select @@global.max_connections"} {
			if got := r.query(sql); strings.HasPrefix(got, "ERR") {
				t.Errorf("%s: %q", sql, got)
			}
		}
		// straight to MariaDB the first changes the server
		c := rawLogin(t, my.addr(), app, appPW, appDB)
		old := one("select @@global.max_connections")
		c.exec("set global max_connections = 17")
		if got := one("select @@global.max_connections"); got != "17" {
			t.Errorf("direct SET GLOBAL max_connections: %s", got)
		}
		c.exec("set global max_connections = " + old)
	})
	t.Run("REVOKE of the administrator's rights", func(t *testing.T) {
		rootGrants := grants("root@localhost")
		r := connect(t, d.addr)
		for i, sql := range []string{
			"revoke all on *.* from root@localhost",
			"revoke all privileges, grant option from root@localhost",
			"revoke select on mysql.* from root@localhost",
		} {
			wantRawBlocked(t, sql, r.query(sql+tag("rv"+string(rune('a'+i)))), "no-privileged-grants")
		}
		if g := grants("root@localhost"); g != rootGrants {
			t.Errorf("root's grants after the attempts: %s, want %s", g, rootGrants)
		}
		// an application database's privileges may still be revoked
		if got := r.query("revoke select on " + appDB + ".* from '" + existing + "'@'%'"); got != "OK" {
			t.Errorf("REVOKE on the application's database: %q", got)
		}
		// straight to MariaDB the first empties an administrator's grants
		c := rawLogin(t, my.addr(), app, appPW, appDB)
		c.exec("revoke all on *.* from '" + control + "'@'%'")
		if g := grants("'" + control + "'@'%'"); strings.Contains(g, "ALL PRIVILEGES") {
			t.Errorf("direct REVOKE: %s", g)
		}
	})
	t.Run("CREATE FUNCTION in mysql, OPTIMIZE of mysql.*", func(t *testing.T) {
		r := connect(t, d.addr)
		initDB(r, "mysql")
		fn := "smf_" + suffix
		wantRawBlocked(t, "create function", r.query("create function "+fn+"() returns int return 1"+tag("fn")), "no-catalog-writes")
		wantRawBlocked(t, "repair", r.query("repair table global_priv use_frm"+tag("repair")), "no-catalog-writes")
		wantRawBlocked(t, "optimize", r.query("optimize table mysql.db"+tag("optimize")), "no-catalog-writes")
		if n := one("select count(*) from information_schema.routines where routine_name = ?", fn); n != "0" {
			t.Errorf("routines named %s: %s", fn, n)
		}
	})
	t.Run("SHOW GRANTS FOR the session's own account", func(t *testing.T) {
		r := connect(t, d.addr)
		if got := r.query("show grants for '" + app + "'@'%'"); !strings.Contains(got, "GRANT ALL PRIVILEGES ON *.*") {
			t.Errorf("SHOW GRANTS FOR its own account: %q", got)
		}
		wantRawBlocked(t, "another account", r.query("show grants for '"+existing+"'@'%'"+tag("sg")), "no-credential-tables")
	})

	mustNotReach(t, my, marker)
}
