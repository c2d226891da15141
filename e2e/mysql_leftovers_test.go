package e2e

// Issue 21's leftovers in the MySQL dialect, judged by what MariaDB 10.11
// does, through sqlfwd (enforce, the embedded default policy), with the
// general log and the rows checked on a direct connection:
//
//   - LOAD DATA LOCAL INFILE ... REPLACE, whose file holds a row for every
//     key, is blocked (no-unfiltered-writes), never reaches the log and the
//     rows stay; sent straight to MariaDB it rewrites every row. The same
//     load with IGNORE adds its new rows through sqlfwd.
//   - A procedure whose body EXECUTEs a name the calling session prepared
//     (CREATE PROCEDURE p() EXECUTE s USING 1), or its own parameterised
//     DELETE with an always-true value, is not created; created and CALLed
//     straight on MariaDB after PREPARE s FROM 'DELETE FROM t WHERE ?', it
//     empties the table. A body that prepares a filtered statement right
//     before its EXECUTE is created.
//   - EXECUTE IMMEDIATE 'SET sql_mode = ''NO_BACKSLASH_ESCAPES''' runs
//     through sqlfwd and the relay follows it: the next DELETE, whose
//     quote the new mode ends early ('a\' OR 1=1 -- '), is judged as the
//     server reads it and blocked; straight to MariaDB it deletes every row.
//   - FROM t = a, u = b and FOR SYSTEM_TIME AS OF an expression answer as
//     they do directly; a credential read in the bound is blocked.
//   - BEGIN NOT ATOMIC SET NAMES gbk; END; DELETE ... WHERE id = '你\' OR
//     1=1 -- ' is refused (lexing-ambiguous); straight to MariaDB the
//     character set stays gbk after the compound statement and the DELETE
//     empties the table.

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMySQLLeftoversJudgedByEffect(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	fw := myDB(t, my, d.addr, true)
	suffix := randomHex(t)
	marker := "lo_attack_" + suffix
	tbl, tbl2, vt := "lo_t_"+suffix, "lo_u_"+suffix, "lo_v_"+suffix
	reset := func() {
		t.Helper()
		for _, q := range []string{
			"drop table if exists " + tbl, "drop table if exists " + tbl2,
			"create table " + tbl + " (id int primary key, v varchar(20))",
			"insert into " + tbl + " values (1, 'a'), (2, 'b'), (3, 'c')",
			"create table " + tbl2 + " (id int primary key, w varchar(20))",
			"insert into " + tbl2 + " values (1, 'x'), (2, 'y')",
		} {
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	reset()
	t.Cleanup(func() {
		for _, q := range []string{"drop table if exists " + tbl, "drop table if exists " + tbl2, "drop table if exists " + vt,
			"drop procedure if exists lo_pa_" + suffix, "drop procedure if exists lo_pb_" + suffix,
			"drop procedure if exists lo_pc_" + suffix, "drop procedure if exists lo_ctl_" + suffix} {
			_, _ = direct.Exec(q)
		}
	})
	rows := func() string {
		t.Helper()
		var v sql.NullString
		if err := direct.QueryRow("select group_concat(id, '=', v order by id) from " + tbl).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v.String
	}
	const full = "1=a,2=b,3=c"
	routines := func(name string) string {
		t.Helper()
		var n string
		if err := direct.QueryRow("select count(*) from information_schema.routines where routine_schema = database() and routine_name = ?", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tag := func(n string) string { return " /* " + marker + " " + n + " */" }

	t.Run("LOAD DATA REPLACE", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "rows.csv")
		if err := os.WriteFile(file, []byte("1,x\n2,x\n3,x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		load := "load data local infile '" + file + "' replace into table " + tbl + " fields terminated by ','"
		_, err := fw.Exec(load + tag("load"))
		wantMyBlocked(t, "LOAD DATA ... REPLACE", err, "no-unfiltered-writes")
		if got := rows(); got != full {
			t.Errorf("after the blocked load the rows are %q, want %q", got, full)
		}
		mustNotReach(t, my, marker+" load")
		// straight to MariaDB the same load rewrites every row
		if _, err := direct.Exec(load); err != nil {
			t.Fatalf("%s directly: %v", load, err)
		}
		if got := rows(); got != "1=x,2=x,3=x" {
			t.Fatalf("the direct load left %q: the control did not rewrite the rows", got)
		}
		reset()
		// the benign face: IGNORE keeps the rows and adds the new ones
		if err := os.WriteFile(file, []byte("1,x\n4,d\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Exec("load data local infile '" + file + "' ignore into table " + tbl + " fields terminated by ','"); err != nil {
			t.Fatalf("LOAD DATA ... IGNORE through sqlfwd: %v", err)
		}
		if got := rows(); got != full+",4=d" {
			t.Errorf("after LOAD DATA ... IGNORE the rows are %q, want %q", got, full+",4=d")
		}
		reset()
	})

	t.Run("a procedure's EXECUTE", func(t *testing.T) {
		ctx := context.Background()
		c, err := fw.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// the session's PREPARE of a write its value decides passes: its
		// EXECUTE is judged with the value (relay/mysql)
		if _, err := c.ExecContext(ctx, "prepare lo_s from 'delete from "+tbl+" where ?'"); err != nil {
			t.Fatalf("PREPARE through sqlfwd: %v", err)
		}
		_, err = c.ExecContext(ctx, "execute lo_s using 1"+tag("exec"))
		wantMyBlocked(t, "EXECUTE ... USING 1", err, "no-unfiltered-writes")
		pa, pb, pc := "lo_pa_"+suffix, "lo_pb_"+suffix, "lo_pc_"+suffix
		for _, tc := range []struct{ name, sql, rule string }{
			{pa, "create procedure " + pa + "() execute lo_s using 1", "no-dynamic-sql"},
			{pb, "create procedure " + pb + "() begin prepare lo_s from 'delete from " + tbl + " where ?'; execute lo_s using 1; end", "no-unfiltered-writes"},
		} {
			_, err := c.ExecContext(ctx, tc.sql+tag(tc.name))
			wantMyBlocked(t, tc.sql, err, tc.rule)
			if n := routines(tc.name); n != "0" {
				t.Errorf("%s: %s routines named so, want none", tc.sql, n)
			}
			mustNotReach(t, my, marker+" "+tc.name)
		}
		if got := rows(); got != full {
			t.Errorf("the rows are %q, want %q", got, full)
		}
		// the benign face: a body that prepares a filtered statement right
		// before its EXECUTE is created, and runs
		benign := "create procedure " + pc + "() begin prepare lo_s from 'select v from " + tbl + " where id = ?'; execute lo_s using 2; deallocate prepare lo_s; end"
		if _, err := c.ExecContext(ctx, benign); err != nil {
			t.Fatalf("%s through sqlfwd: %v", benign, err)
		}
		if n := routines(pc); n != "1" {
			t.Errorf("%s: %s routines, want it created", benign, n)
		}
		var v string
		if err := c.QueryRowContext(ctx, "call "+pc+"()").Scan(&v); err != nil || v != "b" {
			t.Errorf("CALL %s through sqlfwd: %q, %v; want b", pc, v, err)
		}
		// straight to MariaDB the attack empties the table: the procedure
		// runs the session's statement under the name
		dc, err := direct.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer dc.Close()
		ctl := "lo_ctl_" + suffix
		for _, q := range []string{"create procedure " + ctl + "() execute lo_s using 1",
			"prepare lo_s from 'delete from " + tbl + " where ?'", "call " + ctl + "()"} {
			if _, err := dc.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s directly: %v", q, err)
			}
		}
		if got := rows(); got != "" {
			t.Fatalf("the direct CALL left %q: the control did not delete the rows", got)
		}
		reset()
	})

	t.Run("EXECUTE IMMEDIATE of SET sql_mode", func(t *testing.T) {
		set := "execute immediate 'set sql_mode = ''NO_BACKSLASH_ESCAPES'''"
		attack := "delete from " + tbl + " where v = 'a\\' or 1=1 -- '"
		r := rawLogin(t, d.addr, my.User, "", my.Database)
		if got := r.query(set); strings.HasPrefix(got, "ERR") {
			t.Fatalf("%s through sqlfwd: %s", set, got)
		}
		if got := r.query("select @@sql_mode"); !strings.Contains(got, "NO_BACKSLASH_ESCAPES") {
			t.Fatalf("sql_mode through sqlfwd after %s: %q", set, got)
		}
		wantRawBlocked(t, attack, r.query(attack+tag("immediate")), "no-unfiltered-writes")
		if got := rows(); got != full {
			t.Errorf("after the blocked DELETE the rows are %q, want %q", got, full)
		}
		mustNotReach(t, my, marker+" immediate")
		// a benign statement in the new mode still runs
		if got := r.query("select 'a\\'"); !strings.Contains(got, `a\`) {
			t.Errorf("select 'a\\' through sqlfwd in NO_BACKSLASH_ESCAPES: %q", got)
		}
		// straight to MariaDB the same two statements delete every row
		dr := rawLogin(t, my.addr(), my.User, "", my.Database)
		dr.exec(set)
		dr.exec(attack)
		if got := rows(); got != "" {
			t.Fatalf("the direct DELETE left %q: the control did not delete the rows", got)
		}
		reset()
	})

	t.Run("SET NAMES in a compound statement", func(t *testing.T) {
		// the character set a compound statement sets stays after it, and
		// the DELETE after it in the same text is lexed in gbk: 你 is
		// E4 BD A0, gbk reads A0 5C as one character, and the quote after
		// the backslash ends the string
		attack := "BEGIN NOT ATOMIC SET NAMES gbk; END; DELETE FROM " + tbl + " WHERE id = '\xe4\xbd\xa0\\' OR 1=1 -- '"
		r := rawLogin(t, d.addr, my.User, "", my.Database)
		wantRawBlocked(t, "a DELETE after a compound SET NAMES", r.query(attack+tag("compound")), "lexing-ambiguous")
		if got := rows(); got != full {
			t.Errorf("after the blocked text the rows are %q, want %q", got, full)
		}
		mustNotReach(t, my, marker+" compound")
		// a compound statement without a lexing change, and the statement
		// after it, run
		if got := r.query("BEGIN NOT ATOMIC SELECT 1; END; SELECT 2"); strings.HasPrefix(got, "ERR") {
			t.Errorf("a benign compound statement through sqlfwd: %s", got)
		}
		// straight to MariaDB (utf8mb4 client) the text deletes every row
		dr := rawLogin(t, my.addr(), my.User, "", my.Database)
		if got := dr.query(attack); strings.Contains(got, "ERR") {
			t.Fatalf("the direct text: %s", got)
		}
		if got := rows(); got != "" {
			t.Fatalf("the direct text left %q: the control did not delete the rows", got)
		}
		reset()
	})

	t.Run("BINLOG", func(t *testing.T) {
		// mariadb-binlog's output of INSERT INTO sqlfw.lo_binlog VALUES (1,
		// 'replayed') on a MariaDB 10.11 with log-bin and ROW format: the
		// format description event, then the table map and write-rows
		// events. Row events write any table (mysql.global_priv as well)
		// without a statement sqlfw could read.
		const fde = "SLMPaw8BAAAA/AAAAAABAAAAAAQAMTAuMTEuMTktTWFyaWFEQi0wK2RlYjEydTEtbG9nAAAAAAAA\n" +
			"AAAAAAAAAAAAAAAAAAAAAAAAEzgNAAgAEgAEBAQEEgAA5AAEGggAAAAICAgCAAAACgoKAAAAAAAA\n" +
			"CgoKAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n" +
			"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n" +
			"AAAAAAAAAAAEEwQADQgICAoKCgFPkK7x\n"
		const rowsEv = "SLMPaxMBAAAAOAAAACACAAAAABIAAAAAAAEABXNxbGZ3AAlsb19iaW5sb2cAAgMPAhQAAoRcxeA=\n" +
			"SLMPaxcBAAAALwAAAE8CAAAAABIAAAAAAAEAAgP8AQAAAAhyZXBsYXllZJkgRKc=\n"
		for _, q := range []string{"create database if not exists sqlfw", "drop table if exists sqlfw.lo_binlog",
			"create table sqlfw.lo_binlog (id int primary key, v varchar(20))"} {
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		t.Cleanup(func() { _, _ = direct.Exec("drop table if exists sqlfw.lo_binlog") })
		count := func() string {
			t.Helper()
			var n string
			if err := direct.QueryRow("select count(*) from sqlfw.lo_binlog").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		r := rawLogin(t, d.addr, my.User, "", my.Database)
		wantRawBlocked(t, "BINLOG of a format description", r.query("BINLOG '\n"+fde+"'"+tag("binlog1")), "no-dynamic-sql")
		wantRawBlocked(t, "BINLOG of row events", r.query("BINLOG '\n"+rowsEv+"'"+tag("binlog2")), "no-dynamic-sql")
		if n := count(); n != "0" {
			t.Errorf("after the blocked BINLOG statements %s rows, want none", n)
		}
		mustNotReach(t, my, marker+" binlog1", marker+" binlog2")
		// straight to MariaDB the same two statements write the row
		dr := rawLogin(t, my.addr(), my.User, "", my.Database)
		dr.exec("BINLOG '\n" + fde + "'")
		dr.exec("BINLOG '\n" + rowsEv + "'")
		if n := count(); n != "1" {
			t.Fatalf("the direct BINLOG left %s rows: the control did not replay the write", n)
		}
	})

	t.Run("MariaDB syntax", func(t *testing.T) {
		if _, err := direct.Exec("create table " + vt + " (id int, v varchar(20)) with system versioning"); err != nil {
			t.Fatal(err)
		}
		if _, err := direct.Exec("insert into " + vt + " values (1, 'a')"); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			"select a.v, b.w from " + tbl + " = a, " + tbl2 + " = b where a.id = b.id order by a.id",
			"select count(*) from " + vt + " for system_time as of timestamp now() + interval 1 day",
			"select count(*) from " + vt + " for system_time between now() - interval 1 day and now() + interval 1 day",
		} {
			sameRows(t, fw, direct, q)
		}
		probe := "select * from " + vt + " for system_time as of (select password from mysql.user limit 1) + 0"
		_, err := fw.Exec(probe + tag("probe"))
		wantMyBlocked(t, probe, err, "no-credential-tables")
		mustNotReach(t, my, marker+" probe")
	})
}
