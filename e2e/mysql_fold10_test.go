package e2e

// Issue 21, tenth round: conditions MariaDB 10.11 makes true for every row
// that the folding did not follow before (engine/mysql tautwrap.go, the
// self-subqueries of writes.go, the disguised NULL tests of catalog.go),
// judged by what the server does. Through sqlfwd (enforce, the embedded
// default policy, no catalog) each DELETE is blocked, is absent from the
// general log, and the table keeps its rows; the same DELETE straight to
// MariaDB deletes every row (the control: it is an attack, not a guess).
// The filtered faces delete the one row they name through sqlfwd, and the
// strings-only UNION probe is blocked where straight to MariaDB it returns
// its marked row.

import (
	"strings"
	"testing"
)

func TestMySQLFolding10JudgedByEffect(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	fw := myDB(t, my, d.addr, true)
	suffix := randomHex(t)
	marker := "f10_attack_" + suffix
	tbl := "f10_t_" + suffix
	tag := func(n string) string { return " /* " + marker + " " + n + " */" }
	reset, count := myVictim(t, direct, tbl, "id int not null primary key, a int, name varchar(20)", "(1, 1, 'ann'), (2, NULL, 'bob'), (3, 3, ' cy')")

	t.Run("true for every row", func(t *testing.T) {
		reset()
		for i, w := range []string{
			"row(id, 1) > row(id, 0)",
			"(id, 'b') > (id, 'a')",
			"id | ~0 = ~0",
			"id | -1",
			"id << 64 = 0",
			"id xor id = 0",
			"not (a = 1 xor a = 1) or a is null",
			"cast(id as char) = id",
			"convert(id using latin1) = id",
			"trim(id) = id",
			"json_extract(json_object('k', id), '$.k') = id",
			"concat(id, 'x') like '%x'",
			"concat('a', id, 'b') like 'a%b'",
			"json_valid(json_array(id))",
			"json_length(json_array(id, a)) = 2",
			"ifnull(a, 1) or a is not null",
			"greatest(id, 1) >= 1",
			"id > -1e30",
			"id <> 1e300",
			"id between -1e30 and 1e30",
			"id in (select id from " + tbl + " union select 0)",
			"id in (select 1 union select id)",
			"id = any (select id from " + tbl + " x where x.id = " + tbl + ".id)",
			"exists (select 1 from " + tbl + " x where x.id + 0 = " + tbl + ".id)",
			"id = 0 or id in (select id from " + tbl + ")",
			"(id is null) is false",
			"not isnull(id)",
			"(id + 0) is not null",
		} {
			q := "delete from " + tbl + " where " + w
			_, err := fw.Exec(q + tag("fold"))
			wantMyBlocked(t, q, err, "no-unfiltered-writes")
			if n := count(); n != 3 {
				t.Errorf("after the blocked %s the table holds %d rows, want 3", q, n)
				reset()
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
		mustNotReach(t, my, marker+" fold")
	})

	t.Run("filtered faces", func(t *testing.T) {
		reset()
		ok := "f10_ok_" + suffix
		for _, w := range []string{
			"id = 2",
			"(id, a) > (2, 5)", // (3, 3)
			"id | 1 = 3",       // 2 and 3: two rows, below
			"cast(id as char) = '2'",
			"trim(name) = 'cy'",
			"concat(id, 'x') like '2%'",
			"ifnull(a, 0) = 0",
			"greatest(id, 2) > 2",
			"id in (select id from " + tbl + " x where x.id = " + tbl + ".id and x.a = 1)",
			"id is not null and name = 'bob'",
		} {
			want := 2
			if w == "id | 1 = 3" {
				want = 1
			}
			q := "delete from " + tbl + " where " + w
			if _, err := fw.Exec(q + " /* " + ok + " */"); err != nil {
				t.Errorf("%s through sqlfwd: %v", q, err)
			}
			if n := count(); n != want {
				t.Errorf("%s through sqlfwd left %d rows, want %d", q, n, want)
			}
			reset()
		}
		if strings.Count(generalLog(t, my), ok) < 10 {
			t.Errorf("the allowed filtered deletes are not all in the general log")
		}
	})

	t.Run("strings-only UNION arm", func(t *testing.T) {
		reset()
		q := "select id, name from " + tbl + " where id = -1 union select 'a', 'b'"
		var id, name string
		if err := direct.QueryRow(q).Scan(&id, &name); err != nil || id != "a" || name != "b" {
			t.Fatalf("%s directly: %q %q, %v: the control returns no marked row", q, id, name, err)
		}
		_, err := fw.Query(q + tag("union"))
		wantMyBlocked(t, q, err, "no-union-constants-probe")
		mustNotReach(t, my, marker+" union")
		// a list's sentinel row passes
		rows, err := fw.Query("select id, name from " + tbl + " where id = 1 union all select 0, 'All'")
		if err != nil {
			t.Fatalf("the sentinel row through sqlfwd: %v", err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n != 2 {
			t.Errorf("the sentinel row query returned %d rows, want 2", n)
		}
	})
}
