package e2e

// Privileges and the session's current database, judged by what MariaDB
// does (issue 21, classes 1 and 2): an application account that holds ALL
// ON *.* WITH GRANT OPTION, as many do, tries through sqlfwd (enforce, the
// embedded default policy) to make an account superuser, to change another
// account's password, to read password hashes and to register code, by
// pattern, by role and by the current database. Each attempt must get
// sqlfw's ERR 1227, never reach MariaDB's general log, and leave grants,
// accounts and rows as they were, checked on a direct connection; the
// benign faces of the same statements still work through sqlfwd.

import (
	"database/sql"
	"strings"
	"testing"
)

func TestMySQLEffectPrivilegesAndCurrentDatabase(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	suffix := randomHex(t)
	app, appPW := "fx_app_"+suffix, "pw_"+suffix
	victim, victimPW := "fx_victim_"+suffix, "vpw_"+suffix
	grantee := "fx_grantee_" + suffix
	role := "fx_role_" + suffix
	appDB := "fx_db_" + suffix
	udf := "fx_udf_" + suffix
	sysTable := "fx_sys_" + suffix
	marker := "fx_attack_" + suffix
	for _, q := range []string{
		"create user '" + app + "'@'%' identified by '" + appPW + "'",
		"grant all on *.* to '" + app + "'@'%' with grant option",
		"create user '" + victim + "'@'%' identified by '" + victimPW + "'",
		"create user '" + grantee + "'@'%'",
		"create role " + role,
		"grant all on *.* to " + role,
		"grant " + role + " to '" + app + "'@'%'", // granted by an administrator; taking it up is the attack
		"create database " + appDB,
		"create table " + appDB + ".user (id int primary key, name varchar(32))",
		"create table " + appDB + ".func (name varchar(64))",
		"insert into " + appDB + ".user values (1, 'one')",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{
			"drop user if exists '" + app + "'@'%'", "drop user if exists '" + victim + "'@'%'",
			"drop user if exists '" + grantee + "'@'%'", "drop user if exists 'fx_renamed_" + suffix + "'@'%'",
			"drop role if exists " + role, "drop database if exists " + appDB, "drop table if exists sys." + sysTable,
			"delete from mysql.func where name = '" + udf + "'",
		} {
			_, _ = direct.Exec(q)
		}
	})

	// What the attempts must leave as it is.
	state := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		one := func(name, q string, args ...any) {
			var v sql.NullString
			if err := direct.QueryRow(q, args...).Scan(&v); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			out[name] = v.String
		}
		one("victim's global_priv", "select priv from mysql.global_priv where user = ? and host = '%'", victim)
		one("grantee's global_priv", "select priv from mysql.global_priv where user = ? and host = '%'", grantee)
		one("accounts", "select count(*) from mysql.global_priv where user like ?", "fx\\_%"+suffix)
		one("db grants", "select count(*) from mysql.db where user = ?", grantee)
		one("table grants", "select count(*) from mysql.tables_priv where user = ?", grantee)
		one("roles granted", "select count(*) from mysql.roles_mapping where user = ?", grantee)
		one("registered functions", "select count(*) from mysql.func where name = ?", udf)
		one("tables in sys", "select count(*) from information_schema.tables where table_schema = 'sys' and table_name = ?", sysTable)
		out["grantee's grants"] = showGrants(t, direct, "'"+grantee+"'@'%'")
		return out
	}
	before := state()
	if before["grantee's grants"] != "GRANT USAGE ON *.* TO `"+grantee+"`@`%`" || !strings.Contains(before["victim's global_priv"], "authentication_string") {
		t.Fatalf("the accounts are not as created: %v", before)
	}

	// connect opens a raw session as the application account in db.
	connect := func(t *testing.T, db string) *myRaw {
		t.Helper()
		r := dialRaw(t, d.addr)
		r.write(r.handshake(app, appPW, db, 45))
		r.auth(appPW)
		return r
	}
	q := func(r *myRaw, sql string) string {
		r.t.Helper()
		r.write(rawQuery(sql))
		return r.result()
	}
	to := "'" + grantee + "'@'%'"
	attacks := []struct {
		name, db string
		setup    func(r *myRaw)
		sql      string
		rule     string
	}{
		{"USE mysql, GRANT ALL ON *", appDB, func(r *myRaw) { r.exec("use mysql") }, "grant all on * to " + to, "no-privileged-grants"},
		{"USE mysql, GRANT ON an unqualified table", appDB, func(r *myRaw) { r.exec("use mysql") }, "grant select, update on global_priv to " + to, "no-privileged-grants"},
		{"handshake database mysql, GRANT ALL ON *", "mysql", nil, "GRANT ALL PRIVILEGES ON * TO " + to, "no-privileged-grants"},
		{"COM_INIT_DB mysql, GRANT ALL ON *", appDB, func(r *myRaw) { initDB(r, "mysql") }, "grant all on * to " + to, "no-privileged-grants"},
		{"pattern m_sql", appDB, nil, "grant all on `m_sql`.* to " + to, "no-privileged-grants"},
		{"pattern %", appDB, nil, "grant select on `%`.* to " + to, "no-privileged-grants"},
		{"pattern my%", appDB, nil, "grant all on `my%`.* to " + to, "no-privileged-grants"},
		{"pattern _____", appDB, nil, "grant all on `_____`.* to " + to, "no-privileged-grants"},
		{"mysql in capitals, spaced", appDB, nil, "grant all on MYSQL . * to " + to, "no-privileged-grants"},
		{"column grant on mysql.global_priv", appDB, nil, "grant select (priv) on mysql.global_priv to " + to, "no-privileged-grants"},
		{"a role that holds ALL ON *.*", appDB, nil, "grant " + role + " to " + to, "no-privileged-grants"},
		{"privileges to a role", appDB, nil, "grant super on *.* to " + role, "no-privileged-grants"},
		{"SET DEFAULT ROLE for another account", appDB, nil, "set default role " + role + " for " + to, "no-privileged-grants"},
		{"GRANT TO PUBLIC", appDB, nil, "grant select on " + appDB + ".* to public", "no-privileged-grants"},
		{"USE mysql, UPDATE global_priv", appDB, func(r *myRaw) { r.exec("use mysql") },
			"update global_priv set priv = json_set(priv, '$.authentication_string', '') where user = '" + victim + "'", "no-catalog-writes"},
		{"handshake database mysql, INSERT INTO global_priv", "mysql", nil,
			"replace into global_priv values ('%', '" + grantee + "', '{\"access\":1073741823}')", "no-catalog-writes"},
		{"COM_INIT_DB mysql, INSERT INTO func", appDB, func(r *myRaw) { initDB(r, "mysql") },
			"insert into func values ('" + udf + "', 0, 'fx.so', 'function')", "no-catalog-writes"},
		{"COM_INIT_DB mysql, INSERT INTO roles_mapping", appDB, func(r *myRaw) { initDB(r, "mysql") },
			"insert into roles_mapping values ('%', '" + grantee + "', '" + role + "', 'N')", "no-catalog-writes"},
		{"ALTER USER another account", appDB, nil, "alter user '" + victim + "'@'%' identified by 'owned'", "no-account-management"},
		{"SET PASSWORD FOR another account", appDB, nil, "set password for '" + victim + "'@'%' = password('owned')", "no-account-management"},
		{"RENAME USER", appDB, nil, "rename user '" + victim + "'@'%' to 'fx_renamed_" + suffix + "'@'%'", "no-account-management"},
		{"handshake database mysql, unqualified global_priv", "mysql", nil,
			"select priv from global_priv where user = '" + victim + "'", "no-credential-tables"},
		{"USE mysql, unqualified user", appDB, func(r *myRaw) { r.exec("use mysql") }, "select user, password from user", "no-credential-tables"},
		{"COM_CHANGE_USER into mysql, unqualified user", appDB, func(r *myRaw) { changeUser(r, app, appPW, "mysql") },
			"select authentication_string from user", "no-credential-tables"},
		{"SHOW CREATE USER", appDB, nil, "show create user root@localhost", "no-credential-tables"},
		{"COM_INIT_DB mysql, EXECUTE IMMEDIATE of an unqualified read", appDB, func(r *myRaw) { initDB(r, "mysql") },
			"execute immediate 'select authentication_string from user'", "no-credential-tables"},
		{"USE mysql, PREPARE of GRANT ALL ON *", appDB, func(r *myRaw) { r.exec("use mysql") },
			"prepare s from 'grant all on * to ''" + grantee + "''@''%'''", "no-privileged-grants"},
		{"USE mysql, SET STATEMENT ... FOR an unqualified write", appDB, func(r *myRaw) { r.exec("use mysql") },
			"set statement max_statement_time = 10 for update global_priv set priv = '{}' where user = '" + victim + "'", "no-catalog-writes"},
		{"USE sys, CREATE TABLE", appDB, func(r *myRaw) { r.exec("use sys") }, "create table " + sysTable + " (a int)", "no-catalog-writes"},
		{"GRANT ON PACKAGE in mysql", appDB, nil, "grant execute on package body `m_sql`.pk to " + to, "no-privileged-grants"},
		{"SHOW GRANTS FOR another account", appDB, nil, "show grants for '" + victim + "'@'%'", "no-credential-tables"},
	}
	for i, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := connect(t, a.db)
			if a.setup != nil {
				a.setup(r)
			}
			got := q(r, a.sql+" /* "+marker+" "+string(rune('a'+i%26))+" */")
			wantRawBlocked(t, a.sql, got, a.rule)
		})
	}
	t.Run("SET ROLE", func(t *testing.T) {
		r := connect(t, appDB)
		wantRawBlocked(t, "set role", q(r, "set role "+role+" /* "+marker+" */"), "no-privileged-grants")
		if got := q(r, "select current_role()"); got != "NULL" {
			t.Errorf("current_role() after a blocked SET ROLE: %q, want NULL", got)
		}
		if got := q(r, "set role none"); got != "OK" {
			t.Errorf("set role none: %q", got)
		}
	})

	// The benign faces, through sqlfwd: the application's own tables named
	// like the system ones, its own grants, grants on its own database.
	t.Run("benign", func(t *testing.T) {
		r := connect(t, appDB)
		for _, c := range [][2]string{
			{"select name from user where id = 1", "one"},
			{"insert into func (name) values ('x')", "OK"},
			{"update user set name = 'uno' where id = 1", "OK"},
			{"select name from user where id = 1 /* 2 */", "uno"},
			{"select count(*) from func", "1"},
			{"select current_user()", app + "@%"},
			{"select database()", appDB},
		} {
			if got := q(r, c[0]); got != c[1] {
				t.Errorf("%s: %q, want %q", c[0], got, c[1])
			}
		}
		for _, sql := range []string{"show grants", "show grants for current_user", "show grants for current_user()"} {
			if got := q(r, sql); !strings.Contains(got, "GRANT ALL PRIVILEGES ON *.* TO `"+app+"`") {
				t.Errorf("%s: %q, want the application's own grants", sql, got)
			}
		}
		if got := q(r, "grant select on "+appDB+".* to "+to); got != "OK" {
			t.Errorf("a grant on the application's database: %q", got)
		}
		if got := q(r, "grant select on `"+appDB+"`.`user` to "+to); got != "OK" {
			t.Errorf("a grant on the application's table: %q", got)
		}
		// In the mysql database, what does not touch its tables.
		r.exec("use mysql")
		for _, c := range [][2]string{{"select database()", "mysql"}, {"select 1", "1"}, {"select count(*) from time_zone_name where 1 = 0", "0"}} {
			if got := q(r, c[0]); got != c[1] {
				t.Errorf("in mysql, %s: %q, want %q", c[0], got, c[1])
			}
		}
		// The catalog as tools read it, from information_schema.
		r.exec("use information_schema")
		if got := q(r, "select count(*) from tables where table_schema = '"+appDB+"'"); got != "2" {
			t.Errorf("in information_schema, the application's tables: %q, want 2", got)
		}
		r.exec("use " + appDB)
		if got := q(r, "select name from user where id = 1"); got != "uno" {
			t.Errorf("back in %s: %q", appDB, got)
		}
	})

	mustNotReach(t, my, marker)
	after := state()
	for k, v := range before {
		want := v
		switch k {
		case "db grants", "table grants":
			want = "1" // the benign grants
		case "grantee's grants":
			continue
		}
		if after[k] != want {
			t.Errorf("%s: %q after the attempts, want %q", k, after[k], want)
		}
	}
	g := after["grantee's grants"]
	for _, bad := range []string{"ON `mysql`", "ON `m_sql`", "ON `%`", "ON `my%`", "ON `_____`", role, "ALL PRIVILEGES ON *.*", "SELECT ON *.*"} {
		if strings.Contains(g, bad) {
			t.Errorf("the grantee holds %s after the attempts: %s", bad, g)
		}
	}
	if !strings.Contains(g, "GRANT SELECT ON `"+appDB+"`.*") {
		t.Errorf("the benign grant is missing: %s", g)
	}
	var n int
	if err := direct.QueryRow("select count(*) from mysql.roles_mapping where user = ? and role = ?", app, role).Scan(&n); err != nil || n != 1 {
		t.Errorf("the administrator's role grant to the application: %d, %v", n, err)
	}
	// the victim still logs in with its own password
	vr := dialRaw(t, my.addr())
	vr.write(vr.handshake(victim, victimPW, "", 45))
	vr.auth(victimPW)
}

// initDB sends COM_INIT_DB and wants its OK.
func initDB(r *myRaw, db string) {
	r.t.Helper()
	r.write(rawPacket(0, append([]byte{0x02}, db...)))
	if got := r.result(); got != "OK" {
		r.t.Fatalf("COM_INIT_DB %s: %q", db, got)
	}
}

// changeUser sends COM_CHANGE_USER to user in db and completes its
// authentication.
func changeUser(r *myRaw, user, password, db string) {
	r.t.Helper()
	sc := nativeScramble(r.nonce, password)
	cu := append(append([]byte{0x11}, user...), 0, byte(len(sc)))
	cu = append(cu, sc...)
	cu = append(append(cu, db...), 0)
	cu = append(cu, 45, 0)
	cu = append(cu, "mysql_native_password\x00"...)
	r.write(rawPacket(0, cu))
	r.auth(password)
	r.write(rawQuery("select database()"))
	if got := r.result(); got != db {
		r.t.Fatalf("COM_CHANGE_USER into %s: database() is %q", db, got)
	}
}
