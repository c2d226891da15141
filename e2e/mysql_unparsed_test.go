package e2e

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/sqlfw/sqlfw/engine/mysql"
)

// TestMySQLUnparsedDenied: statements TiDB's parser does not parse are
// denied by the rule their words name (engine/mysql unparsed.go) even when
// the policy allows parse errors, as an operator who lets MariaDB's syntax
// through has it: plugin and UDF loading, events, a WHERE-less DELETE ...
// RETURNING, the second statement of a packet. None reaches MariaDB (its
// general log), while MariaDB-only statements no rule names pass and run.
func TestMySQLUnparsedDenied(t *testing.T) {
	my := mariadbEnv(t)
	lenient := bytes.Replace(mysql.DefaultPolicyYAML(), []byte("on_parse_error: deny"), []byte("on_parse_error: allow"), 1)
	if bytes.Equal(lenient, mysql.DefaultPolicyYAML()) {
		t.Fatal("the default policy has no on_parse_error: deny to change")
	}
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, lenient, 0o644); err != nil {
		t.Fatal(err)
	}
	d := mysqlDaemon(t, my, "--policy", pol)
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = my.User, "tcp", d.addr, my.Database
	cfg.MultiStatements = true // a text with several statements is one COM_QUERY
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: it keeps working after each block

	marker := "unp" + randomHex(t) // in every denied statement only
	table := "e2e_" + marker
	allowed := "e2e_sv_" + randomHex(t)
	t.Cleanup(func() {
		mariadbCLI(t, my, my.addr(), "-e", "drop table if exists "+allowed+"; drop table if exists "+table)
	})
	if res := mariadbCLI(t, my, my.addr(), "-e", "create table "+table+" (id int)"); res.Exit != 0 {
		t.Fatalf("create table directly: %s", res)
	}
	for _, tc := range []struct{ sql, rule string }{
		{"INSTALL SONAME 'ha_" + marker + "'", "no-code-loading"},
		{"install /* c */ plugin p_" + marker + " soname 'p_" + marker + ".so'", "no-code-loading"},
		{"/*!50000 INSTALL */ PLUGIN p_" + marker + " SONAME 'x.so'", "no-code-loading"},
		{"/*M! INSTALL SONAME 'm_" + marker + "' */", "no-code-loading"},
		{"CREATE FUNCTION f_" + marker + " RETURNS INTEGER SONAME 'udf_" + marker + ".so'", "no-code-loading"},
		{"SELECT 1; INSTALL SONAME 's_" + marker + "'", "no-code-loading"},
		{"CREATE PROCEDURE p_" + marker + "() BEGIN SELECT 1; INSTALL SONAME 'x'; END", "no-code-loading"},
		{"EXECUTE IMMEDIATE 'INSTALL SONAME ''i_" + marker + "'''", "no-code-loading"},
		{"CREATE EVENT e_" + marker + " ON SCHEDULE EVERY 1 HOUR DO DELETE FROM " + table + " WHERE id < 0", "no-scheduled-sql"},
		{"DELETE FROM " + table + " RETURNING id", "no-unfiltered-writes"},
		{"SET STATEMENT max_statement_time = 10 FOR DELETE FROM " + table, "no-unfiltered-writes"},
		{"CREATE DEFINER = 'root'@'localhost' TRIGGER t_" + marker + " BEFORE INSERT ON " + table + " FOR EACH ROW SET NEW.id = 1", "no-definer-views"},
	} {
		_, err := db.Exec(tc.sql)
		wantMyBlocked(t, tc.sql, err, tc.rule)
	}
	// MariaDB-only statements that no rule names pass under
	// on_parse_error: allow, and run.
	for _, q := range []string{
		"CREATE TABLE " + allowed + " (a int) WITH SYSTEM VERSIONING",
		"INSERT INTO " + allowed + " VALUES (1), (2)",
		"SET STATEMENT max_statement_time = 10 FOR UPDATE " + allowed + " SET a = 3 WHERE a = 2",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	if err := db.QueryRow("DELETE FROM " + allowed + " WHERE a = 1 RETURNING a").Scan(&n); err != nil || n != 1 {
		t.Errorf("DELETE ... WHERE ... RETURNING through sqlfwd: %d, %v; want 1", n, err)
	}
	log := generalLog(t, my)
	if !strings.Contains(log, "create table "+table) {
		t.Fatalf("the general log lacks the direct create table %s: the marker search would find nothing", table)
	}
	for _, l := range strings.Split(linesWith(log, marker), "\n") {
		if l != "" && !strings.Contains(l, "create table "+table) && !strings.Contains(l, "drop table") {
			t.Errorf("a denied statement reached the server: %s", l)
		}
	}
	if !strings.Contains(log, "WITH SYSTEM VERSIONING") || !strings.Contains(log, "RETURNING a") {
		t.Errorf("the general log lacks the allowed MariaDB statements on %s", allowed)
	}
}

// TestMySQLInitDBScopes: the mariadb client's `use db` is a COM_INIT_DB
// (MariaDB's general log says Init DB), and the session's database it sets
// is what rules scoped by database see next.
func TestMySQLInitDBScopes(t *testing.T) {
	my := mariadbEnv(t)
	other := "e2e_initdb_" + randomHex(t)
	if res := mariadbCLI(t, my, my.addr(), "-e", "create database "+other); res.Exit != 0 {
		t.Fatalf("create database directly: %s", res)
	}
	t.Cleanup(func() { mariadbCLI(t, my, my.addr(), "-e", "drop database if exists "+other) })
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("rules:\n  - {id: not-in-"+other+", action: deny, databases: ["+other+"], match: {kind: [select]}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := mysqlDaemon(t, my, "--policy", pol)
	marker := "initdb" + randomHex(t)
	res := mariadbCLI(t, my, d.addr, "-e", "select 'before_"+marker+"'; use "+other+"; select 'after_"+marker+"'")
	if !strings.Contains(res.Stdout, "before_"+marker) || strings.Contains(res.Stdout, "after_"+marker) ||
		!strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stderr, "not-in-"+other) {
		t.Errorf("select, use %s, select through sqlfwd: %s; want the first select, then ERROR 1227 (42000) naming not-in-%s", other, res, other)
	}
	log := generalLog(t, my)
	if !strings.Contains(log, "Init DB\t"+other) {
		t.Errorf("the general log has no Init DB %s: the client did not send COM_INIT_DB\n%s", other, linesWith(log, other))
	}
	if strings.Contains(log, "after_"+marker) {
		t.Errorf("the statement denied in %s reached the server: %s", other, linesWith(log, "after_"+marker))
	}
}
