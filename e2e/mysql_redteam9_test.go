package e2e

// Issue 21's independent rerun, ninth round, judged by what MariaDB 10.11
// does, through sqlfwd (enforce, the embedded default policy), with the
// general log and the effect checked on a direct connection:
//
//   - DELETE ... WHERE VALUE(id) IS NULL: VALUE(c) outside an INSERT's ON
//     DUPLICATE KEY UPDATE is NULL, so straight to MariaDB it deletes every
//     row; through sqlfwd it is blocked (no-unfiltered-writes), absent from
//     the log, and the rows stay.
//   - conditions MariaDB makes true for every row: t.id = id and
//     app.t.id = id (one column spelled two ways), id IN (SELECT id), a
//     subquery that returns no row (NOT IN, > ALL, NOT EXISTS, IS NULL of
//     it), CHARSET(x) IS NOT NULL, LAST_VALUE(x, 1): straight to MariaDB
//     each deletes every row; through sqlfwd each is blocked, absent from
//     the log, the rows stay; their filtered faces delete one row.
//   - a routine body with a DO statement or a CASE expression between its
//     PREPARE s FROM 'literal' and EXECUTE s is created and runs through
//     sqlfwd (it was refused as dynamic SQL); an IF between is refused.
//   - mysql.event read: straight to MariaDB it returns an event's body and
//     DEFINER; through sqlfwd it is blocked (no-credential-tables) and absent
//     from the log.

import (
	"database/sql"
	"strings"
	"testing"
)

func TestMySQLRedTeam9JudgedByEffect(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	fw := myDB(t, my, d.addr, true)
	suffix := randomHex(t)
	marker := "rt9_attack_" + suffix
	tbl := "rt9_t_" + suffix
	tag := func(n string) string { return " /* " + marker + " " + n + " */" }
	reset, count := myVictim(t, direct, tbl, "id int not null primary key, a int", "(1, 1), (2, 2), (3, 3)")

	t.Run("VALUE(id) IS NULL", func(t *testing.T) {
		for i, q := range []string{
			"delete from " + tbl + " where value(id) is null",
			"delete from " + tbl + " where id = 9 or isnull(value(id))",
		} {
			_, err := fw.Exec(q + tag("value"))
			wantMyBlocked(t, q, err, "no-unfiltered-writes")
			if n := count(); n != 3 {
				t.Fatalf("after the blocked %s the table holds %d rows, want 3", q, n)
			}
			// straight to MariaDB the same statement deletes every row
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s directly: %v", q, err)
			}
			if n := count(); n != 0 {
				t.Fatalf("control %d: %s directly left %d rows: it did not delete every row", i, q, n)
			}
			reset()
		}
		mustNotReach(t, my, marker+" value")
		// the benign face answers as directly
		ok := "rt9_ok_" + suffix
		q := "insert into " + tbl + " (id, a) values (1, 7) on duplicate key update a = value(a) /* " + ok + " */"
		if _, err := fw.Exec(q); err != nil {
			t.Fatalf("%s through sqlfwd: %v", q, err)
		}
		var a int
		if err := direct.QueryRow("select a from " + tbl + " where id = 1").Scan(&a); err != nil || a != 7 {
			t.Errorf("after the upsert through sqlfwd a = %d, %v; want 7", a, err)
		}
		if !strings.Contains(generalLog(t, my), ok) {
			t.Errorf("the allowed upsert is not in the general log")
		}
	})

	t.Run("always-true conditions MariaDB folds", func(t *testing.T) {
		for i, w := range []string{
			my.Database + "." + tbl + ".id = id",
			"id = " + tbl + ".id",
			"id in (select id)",
			"id not in (select 1 from dual where 0)",
			"(select id from " + tbl + " where 1 = 0) is null",
			"(select max(id) from " + tbl + " where 0) is null",
			"id > all (select 1 from dual where 0)",
			"not exists (select 1 from " + tbl + " limit 0)",
			"charset(id) is not null",
			"last_value(id, 1)",
		} {
			q := "delete from " + tbl + " where " + w
			_, err := fw.Exec(q + tag("fold"))
			wantMyBlocked(t, q, err, "no-unfiltered-writes")
			if n := count(); n != 3 {
				t.Fatalf("after the blocked %s the table holds %d rows, want 3", q, n)
			}
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s directly: %v", q, err)
			}
			if n := count(); n != 0 {
				t.Fatalf("control %d: %s directly left %d rows: it did not delete every row", i, q, n)
			}
			reset()
		}
		mustNotReach(t, my, marker+" fold")
		// the filtered faces delete what they name through sqlfwd
		for _, w := range []string{"id in (select 2)", "last_value(0, id = 2)", "id not in (select id from " + tbl + " where id <> 2)"} {
			q := "delete from " + tbl + " where " + w
			if _, err := fw.Exec(q); err != nil {
				t.Errorf("%s through sqlfwd: %v", q, err)
			}
			if n := count(); n != 2 {
				t.Errorf("%s through sqlfwd left %d rows, want 2", q, n)
			}
			reset()
		}
	})

	t.Run("DO and CASE between a body's PREPARE and EXECUTE", func(t *testing.T) {
		// was refused as dynamic SQL: a DO statement or a CASE expression's
		// THEN/ELSE read as the start of a statement list
		proc := "rt9_p_" + suffix[:8]
		t.Cleanup(func() { _, _ = direct.Exec("drop procedure if exists " + proc) })
		body := "create procedure " + proc + "() begin prepare s from 'select a from " + tbl +
			" where id = 2'; do 1; select case when 1 then 2 else 3 end into @rt9; execute s; deallocate prepare s; end"
		if _, err := fw.Exec(body); err != nil {
			t.Fatalf("CREATE PROCEDURE with DO and CASE between through sqlfwd: %v", err)
		}
		var a int
		if err := fw.QueryRow("call " + proc + "()").Scan(&a); err != nil || a != 2 {
			t.Errorf("CALL through sqlfwd: %d, %v; want 2", a, err)
		}
		// a compound statement's THEN between still makes the EXECUTE unsure
		bad := "create procedure " + proc + "x() begin prepare s from 'select 1'; if 1 then do 1; end if; execute s; end"
		_, err := fw.Exec(bad + tag("unsure"))
		wantMyBlocked(t, bad, err, "no-dynamic-sql")
		mustNotReach(t, my, marker+" unsure")
	})

	t.Run("mysql.event", func(t *testing.T) {
		ev := "rt9_e_" + suffix[:8]
		body := "update " + my.Database + "." + tbl + " set a = 42 where id = 1"
		if _, err := direct.Exec("create event " + ev + " on schedule at now() + interval 1 day do " + body); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = direct.Exec("drop event if exists " + ev) })
		q := "select body, definer from mysql.event where name = '" + ev + "'"
		var b, def sql.NullString
		if err := direct.QueryRow(q).Scan(&b, &def); err != nil || !strings.Contains(b.String, "set a = 42") {
			t.Fatalf("%s directly: %q, %v: the control reads no body", q, b.String, err)
		}
		_, err := fw.Query(q + tag("event"))
		wantMyBlocked(t, q, err, "no-credential-tables")
		r := rawLogin(t, d.addr, my.User, "", "mysql")
		defer r.c.Close()
		got := r.query("select body from event" + tag("event_cur"))
		wantRawBlocked(t, "select body from event in mysql", got, "no-credential-tables")
		mustNotReach(t, my, marker+" event")
		// SHOW EVENTS and information_schema.EVENTS stay allowed
		if _, err := fw.Query("show events"); err != nil {
			t.Errorf("SHOW EVENTS through sqlfwd: %v", err)
		}
	})
}

// myVictim makes the table tbl (columns cols, rows values) on the direct
// connection, dropped when the test ends: reset makes it anew, count says
// how many rows it holds.
func myVictim(t *testing.T, direct *sql.DB, tbl, cols, values string) (reset func(), count func() int) {
	reset = func() {
		t.Helper()
		for _, q := range []string{
			"drop table if exists " + tbl,
			"create table " + tbl + " (" + cols + ")",
			"insert into " + tbl + " values " + values,
		} {
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	count = func() int {
		t.Helper()
		var n int
		if err := direct.QueryRow("select count(*) from " + tbl).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	reset()
	t.Cleanup(func() { _, _ = direct.Exec("drop table if exists " + tbl) })
	return reset, count
}
