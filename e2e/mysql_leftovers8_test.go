package e2e

// Issue 21's leftovers in the MySQL dialect, eighth round, judged by what
// MariaDB 10.11 does, through sqlfwd (enforce, the embedded default
// policy), with the general log and the rows checked on a direct
// connection:
//
//   - A SELECT with no table but GROUP BY and HAVING (MariaDB's own suite,
//     main.subselect4) answers through sqlfwd as it does directly and is in
//     the log; the same form holding an always-true condition in a DELETE
//     is blocked, never reaches the log and the rows stay (straight to
//     MariaDB it deletes every row); holding a password-hash read it is
//     blocked.
//   - An application read followed by a UNION arm of constants (the
//     column-count probe, -78 UNION SELECT 1,2), of UUID() (the server's MAC
//     address), or ending in an empty "-- " is blocked and never reaches the
//     log; straight to MariaDB the constants and the UUID come back as rows.
//     A labelled sentinel row (UNION ALL SELECT 0, 'All') answers as
//     directly and is in the log.

import (
	"database/sql"
	"strings"
	"testing"
)

func TestMySQLLeftovers8JudgedByEffect(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	fw := myDB(t, my, d.addr, true)
	suffix := randomHex(t)
	marker := "lo8_attack_" + suffix
	tbl := "lo8_t_" + suffix
	reset := func() {
		t.Helper()
		for _, q := range []string{
			"drop table if exists " + tbl,
			"create table " + tbl + " (id int not null primary key, c int, v varchar(20))",
			"insert into " + tbl + " values (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c')",
		} {
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	reset()
	t.Cleanup(func() { _, _ = direct.Exec("drop table if exists " + tbl) })
	rows := func() string {
		t.Helper()
		var v sql.NullString
		if err := direct.QueryRow("select group_concat(id, '=', v order by id) from " + tbl).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v.String
	}
	const full = "1=a,2=b,3=c"
	tag := func(n string) string { return " /* " + marker + " " + n + " */" }
	// answer is the rows of q on db, one string.
	answer := func(db *sql.DB, q string) (string, error) {
		rs, err := db.Query(q)
		if err != nil {
			return "", err
		}
		defer rs.Close()
		cols, err := rs.Columns()
		if err != nil {
			return "", err
		}
		var out string
		for rs.Next() {
			vs := make([]sql.NullString, len(cols))
			ps := make([]any, len(cols))
			for i := range vs {
				ps[i] = &vs[i]
			}
			if err := rs.Scan(ps...); err != nil {
				return "", err
			}
			for _, v := range vs {
				out += v.String + ","
			}
			out += ";"
		}
		return out, rs.Err()
	}

	t.Run("HAVING in a SELECT with no table", func(t *testing.T) {
		ok := "lo8_ok_" + suffix
		for _, q := range []string{
			"select (select 0 group by c having (select c)) from " + tbl + " group by c",
			"select 1 group by 1 having 1",
			"select 0 from dual where 1 group by 1 having 1 order by 1 limit 1",
			"select v from " + tbl + " where id = (select 1 group by 1 having 1)",
		} {
			want, err := answer(direct, q)
			if err != nil {
				t.Fatalf("%s directly: %v", q, err)
			}
			got, err := answer(fw, q+" /* "+ok+" */")
			if err != nil || got != want {
				t.Errorf("%s through sqlfwd: %q, %v; directly %q", q, got, err, want)
			}
		}
		if n := strings.Count(generalLog(t, my), ok); n != 4 {
			t.Errorf("the general log holds %d of the 4 allowed statements marked %s", n, ok)
		}

		del := "delete from " + tbl + " where id = 9 or (select 1 group by 1 having 1)"
		_, err := fw.Exec(del + tag("delete"))
		wantMyBlocked(t, del, err, "no-unfiltered-writes")
		_, err = fw.Query("select 1 group by 1 having (select authentication_string from mysql.user limit 1)" + tag("hash"))
		wantMyBlocked(t, "HAVING (SELECT authentication_string ...)", err, "no-credential-tables")
		if got := rows(); got != full {
			t.Errorf("after the blocked delete the rows are %q, want %q", got, full)
		}
		mustNotReach(t, my, marker+" delete", marker+" hash")
		// straight to MariaDB the same DELETE empties the table
		if _, err := direct.Exec(del); err != nil {
			t.Fatalf("%s directly: %v", del, err)
		}
		if got := rows(); got != "" {
			t.Fatalf("the direct delete left %q: the control did not delete every row", got)
		}
		reset()
	})

	t.Run("UNION arms of constants and UUID()", func(t *testing.T) {
		for _, tc := range []struct{ name, sql, rule, leak string }{
			{"numbers", "select v from " + tbl + " where id = -78 union select 1234567", "no-union-constants-probe", "1234567"},
			{"nulls and a marker", "select v, c from " + tbl + " where id = 1 union all select null, concat(0x716b6b71, 0x7a)", "no-union-constants-probe", "qkkqz"},
			{"uuid", "select v from " + tbl + " where id = -1 union select uuid()", "no-server-info-probe", "-"},
			{"empty comment tail", "select v from " + tbl + " where id = 1 -- ", "no-comment-tricks", "a"},
		} {
			_, err := fw.Query(strings.Replace(tc.sql, " where ", tag(tc.name)+" where ", 1))
			wantMyBlocked(t, tc.name, err, tc.rule)
			got, err := answer(direct, tc.sql)
			if err != nil || !strings.Contains(got, tc.leak) {
				t.Errorf("%s directly: %q, %v; want the probe's row (%q) back: the control shows nothing", tc.sql, got, err, tc.leak)
			}
		}
		mustNotReach(t, my, marker+" numbers", marker+" nulls", marker+" uuid", marker+" empty")
		ok := "lo8_sentinel_" + suffix
		q := "select id, v from " + tbl + " where c = 1 union all select 0, 'All' /* " + ok + " */"
		want, err := answer(direct, q)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := answer(fw, q); err != nil || got != want {
			t.Errorf("the sentinel row through sqlfwd: %q, %v; directly %q", got, err, want)
		}
		if n := strings.Count(generalLog(t, my), ok); n != 2 {
			t.Errorf("the general log holds %s %d times, want 2 (direct and through sqlfwd)", ok, n)
		}
	})
}
