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
//   - The privilege tables and mysql.proc read unqualified in a session
//     whose database is mysql (USE, COM_INIT_DB, the handshake's database)
//     are blocked (no-credential-tables) and absent from the log; straight
//     to MariaDB the same reads return the grant rows. LOAD XML is read as
//     LOAD DATA: of a client file into an application table it loads the
//     rows through sqlfwd, with REPLACE it is blocked and the rows stay.

import (
	"database/sql"
	"os"
	"path/filepath"
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

	t.Run("privilege tables through the current database", func(t *testing.T) {
		// a table grant, so that tables_priv has a row to leak
		acct := "lo8_u_" + suffix[:8]
		for _, q := range []string{"create user " + acct + "@localhost", "grant select on " + my.Database + "." + tbl + " to " + acct + "@localhost"} {
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		t.Cleanup(func() { _, _ = direct.Exec("drop user if exists " + acct + "@localhost") })
		reads := []string{"tables_priv", "columns_priv", "procs_priv", "proxies_priv", "roles_mapping", "proc"}
		for _, how := range []string{"use", "init_db", "handshake"} {
			var r *myRaw
			switch how {
			case "use":
				r = rawLogin(t, d.addr, my.User, "", my.Database)
				r.exec("use mysql")
			case "init_db":
				r = rawLogin(t, d.addr, my.User, "", my.Database)
				r.write(rawPacket(0, append([]byte{0x02}, "mysql"...)))
				if got := r.result(); got != "OK" {
					t.Fatalf("COM_INIT_DB mysql through sqlfwd: %s", got)
				}
			case "handshake":
				r = rawLogin(t, d.addr, my.User, "", "mysql")
			}
			for _, tb := range reads {
				got := r.query("select * from " + tb + " /* " + marker + " priv_" + how + " */")
				wantRawBlocked(t, how+": select * from "+tb, got, "no-credential-tables")
			}
			r.c.Close()
		}
		mustNotReach(t, my, marker+" priv_")
		// straight to MariaDB the same read returns the grant
		dr := rawLogin(t, my.addr(), my.User, "", "mysql")
		defer dr.c.Close()
		if got := dr.query("select user, table_name from tables_priv where user = '" + acct + "'"); !strings.Contains(got, tbl) {
			t.Errorf("tables_priv directly: %q, want the grant on %s", got, tbl)
		}
	})

	t.Run("LOAD XML", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "rows.xml")
		xml := "<rows><row><field name=\"id\">1</field><field name=\"c\">9</field><field name=\"v\">x</field></row>" +
			"<row><field name=\"id\">2</field><field name=\"c\">9</field><field name=\"v\">x</field></row>" +
			"<row><field name=\"id\">3</field><field name=\"c\">9</field><field name=\"v\">x</field></row>" +
			"<row><field name=\"id\">4</field><field name=\"c\">9</field><field name=\"v\">d</field></row></rows>"
		if err := os.WriteFile(file, []byte(xml), 0o644); err != nil {
			t.Fatal(err)
		}
		load := func(mode string) string {
			return "load xml local infile '" + file + "' " + mode + " into table " + tbl + " rows identified by '<row>'"
		}
		_, err := fw.Exec(load("replace") + tag("xml_replace"))
		wantMyBlocked(t, "LOAD XML ... REPLACE", err, "no-unfiltered-writes")
		if got := rows(); got != full {
			t.Errorf("after the blocked LOAD XML ... REPLACE the rows are %q, want %q", got, full)
		}
		mustNotReach(t, my, marker+" xml_replace")
		if _, err := fw.Exec(load("ignore")); err != nil {
			t.Fatalf("LOAD XML ... IGNORE through sqlfwd: %v", err)
		}
		if got := rows(); got != full+",4=d" {
			t.Errorf("after LOAD XML ... IGNORE through sqlfwd the rows are %q, want %q", got, full+",4=d")
		}
		// straight to MariaDB the REPLACE rewrites every row
		if _, err := direct.Exec(load("replace")); err != nil {
			t.Fatalf("LOAD XML ... REPLACE directly: %v", err)
		}
		if got := rows(); got != "1=x,2=x,3=x,4=d" {
			t.Errorf("the direct LOAD XML ... REPLACE left %q: the control did not rewrite the rows", got)
		}
		reset()
	})
}
