package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A stderr-format log as PostgreSQL 15 writes it with log_statement = all,
// a prefix naming user and database, an error with its STATEMENT: echo, a
// multi-line statement, the extended protocol's execute lines and the
// duration form.
const pgLogStderr = `2026-12-01 10:00:00.001 UTC [101] user=app,db=shop LOG:  statement: SELECT 1
2026-12-01 10:00:00.002 UTC [101] user=app,db=shop LOG:  statement: DELETE FROM orders
2026-12-01 10:00:00.003 UTC [101] user=app,db=shop ERROR:  relation "orders" does not exist
2026-12-01 10:00:00.003 UTC [101] user=app,db=shop STATEMENT:  DELETE FROM orders
2026-12-01 10:00:00.004 UTC [102] user=admin,db=shop LOG:  statement: SELECT a
	  FROM t
	 WHERE id = 1
2026-12-01 10:00:00.005 UTC [103] user=app,db=shop LOG:  execute <unnamed>: SELECT * FROM t WHERE id = $1
2026-12-01 10:00:00.005 UTC [103] user=app,db=shop DETAIL:  parameters: $1 = '7'
2026-12-01 10:00:00.006 UTC [103] user=app,db=shop LOG:  execute S_1: UPDATE t SET a = 1
2026-12-01 10:00:00.007 UTC [104] user=[unknown],db=[unknown] LOG:  connection received: host=127.0.0.1 port=5000
2026-12-01 10:00:00.008 UTC [105] user=app,db=shop LOG:  duration: 0.120 ms  statement: SELECT 2
2026-12-01 10:00:00.009 UTC [105] user=app,db=shop LOG:  duration: 0.120 ms
2026-12-01 10:00:00.010 UTC [106] LOG:  statement: DROP TABLE t
`

const pgLogJSON = `{"timestamp":"2026-12-01 10:00:00.001 UTC","user":"app","dbname":"shop","pid":1,"error_severity":"LOG","message":"statement: SELECT 1"}
{"timestamp":"2026-12-01 10:00:00.002 UTC","user":"app","dbname":"shop","pid":1,"error_severity":"ERROR","message":"syntax error"}
{"timestamp":"2026-12-01 10:00:00.003 UTC","user":"bob","dbname":"hr","pid":2,"error_severity":"LOG","message":"execute <unnamed>: DELETE FROM t"}
`

func TestReadPGLog(t *testing.T) {
	got, err := readPGLog(strings.NewReader(pgLogStderr))
	if err != nil {
		t.Fatal(err)
	}
	want := []logStatement{
		{"SELECT 1", "app", "shop", 1},
		{"DELETE FROM orders", "app", "shop", 2},
		{"SELECT a\n  FROM t\n WHERE id = 1", "admin", "shop", 5},
		{"SELECT * FROM t WHERE id = $1", "app", "shop", 8},
		{"UPDATE t SET a = 1", "app", "shop", 10},
		{"SELECT 2", "app", "shop", 12},
		{"DROP TABLE t", "", "", 14},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stderr log:\ngot  %+v\nwant %+v", got, want)
	}
	got, err = readPGLog(strings.NewReader(pgLogJSON))
	if err != nil {
		t.Fatal(err)
	}
	want = []logStatement{{"SELECT 1", "app", "shop", 1}, {"DELETE FROM t", "bob", "hr", 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jsonlog:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestCheckPGLog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "postgresql.log")
	os.WriteFile(log, []byte(pgLogStderr), 0o644)
	pol := filepath.Join(dir, "p.yaml")
	// a rule scoped to a user: the log's user must reach the session
	os.WriteFile(pol, []byte("rules:\n- {id: admin-no-select, action: deny, users: [admin], match: {kind: [select]}}\n- {id: no-bare-delete, action: deny, match: {kind: [delete]}}\n"), 0o644)
	empty := filepath.Join(dir, "empty.log")
	os.WriteFile(empty, []byte("2026-12-01 10:00:00 UTC [1] LOG:  database system is ready\n"), 0o644)

	var out, errb bytes.Buffer
	rc := check([]string{"--policy", pol, "--pg-log", log}, &out, &errb)
	if rc != 1 {
		t.Fatalf("rc %d, want 1 (denied statements)\n%s%s", rc, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "rule ") {
		t.Fatalf("want a header and three summary lines, got\n%s", out.String())
	}
	// denies first (equal counts by rule id); the allow line counts the other five
	for i, want := range [][]string{
		{"admin-no-select", "deny", "1", "1", "line 5", "SELECT a FROM t WHERE id = 1"},
		{"no-bare-delete", "deny", "1", "1", "line 2", "DELETE FROM orders"},
		{"-", "allow", "5", "5", "line 1", "SELECT 1"},
	} {
		f := strings.Join(strings.Fields(lines[i+1]), " ")
		if f != strings.Join(want, " ") {
			t.Errorf("summary line %d:\ngot  %q\nwant %q", i+1, f, strings.Join(want, " "))
		}
	}
	if !strings.Contains(errb.String(), "7 statements, 2 denied") {
		t.Errorf("stderr: got %q, want the count", errb.String())
	}

	out.Reset()
	errb.Reset()
	if rc := check([]string{"--policy", pol, "--pg-log", log, "--verbose"}, &out, &errb); rc != 1 || strings.Count(out.String(), "\n") != 7+1+4 {
		t.Errorf("--verbose: rc %d, want 1 and 7 statement lines, a blank line and the summary\n%s", rc, out.String())
	}
	errb.Reset()
	if rc := check([]string{"--pg-log", empty}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "no logged statements") {
		t.Errorf("a log without statements: rc %d, stderr %q; want 2 and a hint", rc, errb.String())
	}
	if rc := check([]string{"--pg-log", log, "--file", log}, &out, &errb); rc != 2 {
		t.Errorf("two inputs: rc %d, want 2", rc)
	}
}

// MariaDB 10.11's general log as the test server writes it (tabs and the
// second's time prefix as they are), and MySQL 8's first-column time form.
const myLogMariaDB = "mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\n" +
	"Tcp port: 26702  Unix socket: /tmp/mylogtest/s.sock\n" +
	"Time\t\t    Id Command\tArgument\n" +
	"261201 15:14:03\t     5 Quit\t\n" +
	"\t\t     6 Connect\troot@localhost on  using TCP/IP\n" +
	"\t\t     6 Query\tcreate database if not exists logt\n" +
	"\t\t     6 Init DB\tlogt\n" +
	"\t\t     6 Query\tselect\n" +
	"  2\n" +
	"\t\t     7 Connect\tapp@localhost on shop using Socket\n" +
	"\t\t     7 Prepare\tdelete from orders where id = ?\n" +
	"\t\t     7 Execute\tdelete from orders where id = 5\n" +
	"261201 15:14:04\t     6 Query\tdelete from t\n" +
	"\t\t     6 Quit\t\n"

const myLogMySQL8 = "2026-12-01T15:14:03.123456Z\t   12 Connect\tbob@localhost on hr using SSL/TLS\n" +
	"2026-12-01T15:14:03.124001Z\t   12 Query\tSELECT * FROM t WHERE a = 1 OR 1=1\n"

func TestReadMySQLLog(t *testing.T) {
	got, err := readMySQLLog(strings.NewReader(myLogMariaDB))
	if err != nil {
		t.Fatal(err)
	}
	want := []logStatement{
		{"create database if not exists logt", "root", "", 6},
		{"select\n  2", "root", "logt", 8},
		{"delete from orders where id = ?", "app", "shop", 11},
		{"delete from t", "root", "logt", 13},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MariaDB log:\ngot  %+v\nwant %+v", got, want)
	}
	got, err = readMySQLLog(strings.NewReader(myLogMySQL8))
	if err != nil {
		t.Fatal(err)
	}
	if want := []logStatement{{"SELECT * FROM t WHERE a = 1 OR 1=1", "bob", "hr", 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("MySQL 8 log:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestCheckMySQLLog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "general.log")
	os.WriteFile(log, []byte(myLogMariaDB), 0o644)
	var out, errb bytes.Buffer
	// --mysql-log implies the MySQL dialect and its default policy
	if rc := check([]string{"--mysql-log", log}, &out, &errb); rc != 1 {
		t.Fatalf("rc %d, want 1 (a DELETE without WHERE)\n%s%s", rc, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "no-unfiltered-writes") || !strings.Contains(errb.String(), "4 statements, 1 denied") {
		t.Errorf("summary:\n%s%s", out.String(), errb.String())
	}
	errb.Reset()
	if rc := check([]string{"--protocol", "postgres", "--mysql-log", log}, &out, &errb); rc != 2 {
		t.Errorf("--mysql-log with --protocol postgres: rc %d, want 2", rc)
	}
}
