package e2e

// Issue 21, classes 4 and 5: always-true conditions and whole-table writes
// against MariaDB 10.11. The corpus' conditions are first run on a direct
// connection, to show that the server treats them as the folding says;
// then a sample of each class goes through sqlfwd (embedded default
// policy, enforce): the client gets sqlfw's ERR 1227, the statement is not
// in the general log, and the rows are unchanged on a direct connection.

import (
	"bufio"
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"
	"time"
)

// foldingCorpus reads engine/mysql's 11-folding.tsv: the condition of each
// DELETE face, with what the server must count on a 3-row table: "all"
// (always true), "all-or-none" (the same for every row), "none" (true only
// in MySQL's reading of X'...', false in MariaDB's) or "some" (fewer than
// all: the benign faces).
func foldingCorpus(t *testing.T) (conds []string, want []string) {
	t.Helper()
	f, err := os.Open("../engine/mysql/testdata/adversarial/11-folding.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# Always true."):
			section = "all"
		case strings.HasPrefix(line, "# True in MySQL's reading"):
			section = "none" // MariaDB reads X'...' as a string
		case strings.HasPrefix(line, "# The same for every row"):
			section = "all-or-none"
		case strings.HasPrefix(line, "# Never true"):
			section = "some"
		case strings.HasPrefix(line, "# UPDATE faces"), strings.HasPrefix(line, "# Query-builder"):
			section = "" // faces of other shapes
		}
		expect, stmt, ok := strings.Cut(line, "\t")
		const del = "DELETE FROM users WHERE "
		if !ok || section == "" || !strings.HasPrefix(stmt, del) || (expect != "no-unfiltered-writes" && expect != "allow") {
			continue
		}
		conds = append(conds, strings.TrimPrefix(stmt, del))
		want = append(want, section)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(conds) < 150 {
		t.Fatalf("read %d conditions from 11-folding.tsv, want at least 150", len(conds))
	}
	return conds, want
}

func TestMySQLFolding(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sfx := randomHex(t)
	users, u, t2, jobs := "e2e_fold_users_"+sfx, "e2e_fold_u_"+sfx, "e2e_fold_t2_"+sfx, "e2e_fold_jobs_"+sfx
	direct, err := myDB(t, my, my.addr(), true).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	dexec := func(q string) {
		t.Helper()
		if _, err := direct.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		myDB(t, my, my.addr(), true).Exec("drop table if exists " + users + ", " + u + ", " + t2 + ", " + jobs)
	})
	dexec("set names utf8mb4")
	dexec("create table " + users + " (id int primary key, a int not null, name varchar(20) not null, role varchar(20) not null default 'user') engine=InnoDB")
	dexec("insert into " + users + " (id, a, name) values (1, 1, 'x'), (2, 20, 'y'), (3, 30, 'abc')")
	dexec("create table " + u + " (id int primary key, tid int, x int, b int) engine=InnoDB")
	dexec("insert into " + u + " values (1, 1, 1, 2), (2, 2, 0, 0)")
	dexec("create table " + t2 + " like " + users)
	dexec("insert into " + t2 + " (id, a, name) values (1, 11, 'z')")
	dexec("create table " + jobs + " (id int primary key) engine=InnoDB")
	dexec("insert into " + jobs + " values (1), (2), (3)")
	dexec("set @a = 1")
	snapshot := func(table string) string {
		t.Helper()
		var s sql.NullString
		if err := direct.QueryRowContext(ctx, "select group_concat(concat_ws(':', id, a, name, role) order by id) from "+table).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s.String
	}
	before := snapshot(users)

	// The server agrees with the folding, for every condition of the corpus.
	t.Run("server agrees", func(t *testing.T) {
		conds, want := foldingCorpus(t)
		for i, c := range conds {
			var n int
			err := direct.QueryRowContext(ctx, "select count(*) from "+users+" where "+strings.ReplaceAll(c, "users", users)).Scan(&n)
			if err != nil {
				t.Errorf("%s: %v", c, err)
				continue
			}
			switch {
			case want[i] == "all" && n != 3, want[i] == "all-or-none" && n != 3 && n != 0, want[i] == "some" && n == 3,
				want[i] == "none" && n != 0:
				t.Errorf("MariaDB counts %d of 3 rows for WHERE %s; the corpus says %s", n, c, want[i])
			}
		}
	})

	// The server agrees with writes.go: every deny line of 12-writes.tsv
	// touches every row of t, every allow line fewer (but a LIMIT of at most
	// 10 on this 3-row table).
	t.Run("server agrees on writes", func(t *testing.T) {
		db := "e2e_fold_db_" + sfx
		dexec("create database " + db)
		t.Cleanup(func() { myDB(t, my, my.addr(), true).Exec("drop database if exists " + db) })
		w, err := myDB(t, my, my.addr(), true).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		wexec := func(q string) {
			t.Helper()
			if _, err := w.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		wexec("use " + db)
		wexec("set @a = 1")
		wexec("create table t (id int primary key, a int not null) engine=InnoDB")
		wexec("insert into t values (1, 10), (2, 20), (3, 30)")
		wexec("create table t2 like t")
		wexec("insert into t2 values (1, 11)")
		wexec("create table u (id int primary key, tid int, x int, b int) engine=InnoDB")
		wexec("insert into u values (1, 1, 1, 2), (2, 2, 0, 0), (3, 3, 0, 0)")
		wexec("create table touched (id int) engine=InnoDB")
		for _, ev := range []string{"insert", "update", "delete"} {
			row := "NEW"
			if ev == "delete" {
				row = "OLD"
			}
			wexec("create trigger t_" + ev + " after " + ev + " on t for each row insert into touched values (" + row + ".id)")
		}
		f, err := os.ReadFile("../engine/mysql/testdata/adversarial/12-writes.tsv")
		if err != nil {
			t.Fatal(err)
		}
		checked, section := 0, "deny"
		for _, line := range strings.Split(string(f), "\n") {
			switch {
			case strings.HasPrefix(line, "# The same through"):
				section = ""
			case strings.HasPrefix(line, "# Benign faces"):
				section = "allow"
			}
			expect, stmt, ok := strings.Cut(line, "\t")
			if !ok || section == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if (section == "deny") != (expect == "no-unfiltered-writes") {
				t.Fatalf("12-writes.tsv: %q in the %s section", line, section)
			}
			stmt = strings.ReplaceAll(stmt, "sqlfw.", db+".")
			wexec("start transaction")
			wexec("delete from touched")
			if _, err := w.ExecContext(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
				wexec("rollback")
				continue
			}
			var n int
			if err := w.QueryRowContext(ctx, "select count(distinct id) from touched where id <= 3").Scan(&n); err != nil {
				t.Fatal(err)
			}
			wexec("rollback")
			checked++
			limited := strings.Contains(stmt, "LIMIT 10") && !strings.Contains(stmt, "SELECT")
			switch {
			case section == "deny" && n != 3:
				t.Errorf("MariaDB touched %d of the 3 rows of t with %s; the corpus says every row", n, stmt)
			case section == "allow" && n == 3 && !limited:
				t.Errorf("MariaDB touched every row of t with %s; the corpus allows it", stmt)
			}
		}
		if checked < 50 {
			t.Errorf("checked %d statements of 12-writes.tsv, want at least 50", checked)
		}
	})

	// Through sqlfwd: a sample of each class is blocked and never runs.
	sub := func(q string) string {
		return strings.NewReplacer("{users}", users, "{u}", u, "{t2}", t2).Replace(q)
	}
	blocked := []struct{ sql, rule string }{
		// class 4: always-true and same-for-every-row conditions
		{"DELETE FROM {users} WHERE ~0", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE 1|2", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE 5 DIV 2 = 2", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE 1/0 IS NULL", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE (1,1) = (1,1)", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE CASE WHEN 1 THEN 1 END", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE IFNULL(NULL, 1)", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE DATE'2020-01-01'", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE _binary'a' = 'a'", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE X'31' = 1", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE CHAR(97) = 'a'", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE LENGTH('abc') = 3", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE EXISTS(SELECT 1)", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE '1abc' = 1", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE 'a' RLIKE '.*'", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE @a", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE @@version > 0", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE id = id + 0", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE a = 1 OR NOT a = 1", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE name LIKE '%'", "no-unfiltered-writes"},
		{"UPDATE {users} SET role = 'admin' WHERE id IS NULL OR id IS NOT NULL", "no-unfiltered-writes"},
		{"UPDATE {users} SET role = 'admin' WHERE id = 9 OR 0x01", "no-unfiltered-writes"},
		{"UPDATE {users} SET role = 'admin' WHERE id = 9 OR 1 XOR 0", "no-unfiltered-writes"},
		{"SELECT * FROM {users} WHERE id = 9 OR ~0", "no-tautology"},
		{"SELECT * FROM {users} WHERE id = 9 OR @a", "no-tautology"},
		{"SELECT * FROM {users} WHERE name = '' OR X'31' = 1", "no-tautology"},
		{"SELECT * FROM {users} WHERE id = 9 OR EXISTS (SELECT * FROM {users})", "no-tautology"},
		// class 5: whole-table writes that are not a plain UPDATE or DELETE
		{"REPLACE INTO {users} SELECT * FROM {users}", "no-unfiltered-writes"},
		{"REPLACE INTO {users} (id, a, name, role) SELECT id, a + 1, name, 'admin' FROM {users}", "no-unfiltered-writes"},
		{"REPLACE INTO {users} SELECT * FROM (SELECT * FROM {users}) x", "no-unfiltered-writes"},
		{"INSERT INTO {users} SELECT * FROM {users} ON DUPLICATE KEY UPDATE role = 'admin'", "no-unfiltered-writes"},
		{"INSERT INTO {users} SELECT * FROM {users} WHERE id > 0 OR 1 ON DUPLICATE KEY UPDATE a = 0", "no-unfiltered-writes"},
		{"UPDATE {users}, {u} SET {users}.role = 'admin' WHERE {u}.id = 1", "no-unfiltered-writes"},
		{"UPDATE {users} JOIN {u} ON 1 SET {users}.a = 0 WHERE {u}.b = 2", "no-unfiltered-writes"},
		{"UPDATE {users} JOIN (SELECT 1) x SET {users}.a = 0", "no-unfiltered-writes"},
		{"DELETE {users} FROM {users} JOIN {u} ON 1 WHERE {u}.id = 1", "no-unfiltered-writes"},
		{"DELETE FROM {users} USING {users}, {u} WHERE {u}.id = 1", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE id IN (SELECT id FROM {users})", "no-unfiltered-writes"},
		{"DELETE FROM {users} WHERE EXISTS (SELECT 1 FROM {u} WHERE {u}.x = 1)", "no-unfiltered-writes"},
		{"DELETE FROM {users} ORDER BY id LIMIT 100", "no-unfiltered-writes"},
	}
	conn, err := myDB(t, my, d.addr, true).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "set @a = 1"); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, b := range blocked {
		q := sub(b.sql)
		sent = append(sent, q)
		var err error
		if strings.HasPrefix(q, "SELECT") {
			var rows *sql.Rows
			rows, err = conn.QueryContext(ctx, q)
			if err == nil {
				rows.Close()
			}
		} else {
			_, err = conn.ExecContext(ctx, q)
		}
		wantMyBlocked(t, q, err, b.rule)
	}
	if after := snapshot(users); after != before {
		t.Errorf("rows of %s changed through sqlfwd: %q, were %q", users, after, before)
	}

	// Benign faces pass and take effect.
	if _, err := conn.ExecContext(ctx, "UPDATE "+users+" SET a = 99 WHERE id = 2"); err != nil {
		t.Errorf("an UPDATE with a real WHERE: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "DELETE FROM "+jobs+" ORDER BY id LIMIT 1"); err != nil {
		t.Errorf("DELETE … ORDER BY id LIMIT 1 (a queue's pop): %v", err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+users+" WHERE (name = @n OR @n IS NULL)").Scan(&n); err != nil || n != 3 {
		t.Errorf("the optional-filter idiom: %d rows, %v; want 3 rows", n, err)
	}
	if got, want := snapshot(users), strings.Replace(before, "2:20:", "2:99:", 1); got != want {
		t.Errorf("after the benign UPDATE, %s holds %q, want %q", users, got, want)
	}
	var left string
	if err := direct.QueryRowContext(ctx, "select group_concat(id order by id) from "+jobs).Scan(&left); err != nil || left != "2,3" {
		t.Errorf("after DELETE … LIMIT 1, %s holds %q (%v), want \"2,3\"", jobs, left, err)
	}

	log := generalLog(t, my)
	for _, q := range sent {
		if strings.Contains(log, q) {
			t.Errorf("a blocked statement reached the server: %s", q)
		}
	}
	if !strings.Contains(log, "UPDATE "+users+" SET a = 99 WHERE id = 2") {
		t.Errorf("the benign UPDATE is not in the general log:\n%s", linesWith(log, users))
	}
}
