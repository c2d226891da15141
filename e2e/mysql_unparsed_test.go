package e2e

import (
	"bytes"
	"database/sql"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
		{"EXECUTE IMMEDIATE 'DELETE FROM ' '" + table + "'", "no-dynamic-sql"}, // one string to MariaDB
		{"PREPARE s_" + marker + " FROM CONCAT('DELETE FROM ', '" + table + "')", "no-dynamic-sql"},
		{"DELETE FROM " + table + " RETURNING id", "no-unfiltered-writes"},
		{"SET STATEMENT max_statement_time = 10 FOR DELETE FROM " + table, "no-unfiltered-writes"},
		{"DELETE FROM " + table + " FOR PORTION OF p FROM '2000-01-01' TO '2100-01-01'", "no-unfiltered-writes"},
		{"UPDATE " + table + " FOR PORTION OF p FROM '2000-01-01' TO '2100-01-01' SET id = 1", "no-unfiltered-writes"},
		{"CREATE DEFINER = 'other_" + marker + "'@'localhost' TRIGGER t_" + marker + " BEFORE INSERT ON " + table + " FOR EACH ROW SET NEW.id = 1", "no-definer-views"},
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

// TestMySQLReplicationCommands: a replica's commands are refused by default
// (mariadb-binlog --read-from-remote-server gets sqlfw's error and its
// COM_BINLOG_DUMP never reaches the server) and relayed with
// --allow-commands, a dump's events followed to its end: mariadb-binlog
// reads a MariaDB's binary log through sqlfwd (a server of this test's own,
// the shared one runs without a binary log).
func TestMySQLReplicationCommands(t *testing.T) {
	mariadbEnv(t) // skips without MariaDB
	if _, err := exec.LookPath("mariadbd"); err != nil {
		t.Skip("mariadbd not installed")
	}
	if _, err := exec.LookPath("mariadb-binlog"); err != nil {
		t.Skip("mariadb-binlog not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--user=root", "--datadir="+dir+"/data",
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command("mariadbd", "--no-defaults", "--user=root", "--datadir="+dir+"/data", "--port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--socket="+dir+"/s.sock", "--pid-file="+dir+"/pid", "--log-error="+dir+"/err.log",
		"--log-bin="+dir+"/bin", "--server-id=1", "--general-log=1", "--general-log-file="+dir+"/general.log")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	my := myEnv{Host: "127.0.0.1", Port: strconv.Itoa(port), User: "root", Database: "mysql"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res := mariadbCLI(t, my, my.addr(), "-e", "select 1"); res.Exit == 0 {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(dir + "/err.log")
			t.Fatalf("mariadbd with a binary log did not start:\n%s", tail(string(b), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	marker := "repl_" + randomHex(t)
	if res := mariadbCLI(t, my, my.addr(), "-e", "create database "+marker+"; create table "+marker+".t (a int); insert into "+marker+".t values (42)"); res.Exit != 0 {
		t.Fatalf("writing the binary log: %s", res)
	}
	binlog := func(addr string) psqlResult {
		host, p, _ := net.SplitHostPort(addr)
		return runTool(t, time.Minute, "", nil, "mariadb-binlog", "--no-defaults", "--read-from-remote-server",
			"-h", host, "-P", p, "-u", "root", "bin.000001")
	}
	if res := binlog(my.addr()); res.Exit != 0 || !strings.Contains(res.Stdout, "insert into "+marker+".t values (42)") {
		t.Fatalf("mariadb-binlog directly: %s", res)
	}

	d := mysqlDaemon(t, my, "--upstream", my.addr())
	if res := binlog(d.addr); res.Exit == 0 || !strings.Contains(res.Stdout+res.Stderr, "COM_BINLOG_DUMP is not relayed") ||
		strings.Contains(res.Stdout, "values (42)") {
		t.Errorf("mariadb-binlog through sqlfwd by default: %s; want sqlfw's refusal of COM_BINLOG_DUMP", res)
	}
	allowed := mysqlDaemon(t, my, "--upstream", my.addr(), "--allow-commands", "COM_BINLOG_DUMP,COM_REGISTER_SLAVE")
	if res := binlog(allowed.addr); res.Exit != 0 || !strings.Contains(res.Stdout, "insert into "+marker+".t values (42)") {
		t.Errorf("mariadb-binlog through sqlfwd with --allow-commands: %s; want the binary log's statements", res)
	}
	// The session goes on after the dump's EOF: a statement after it.
	if res := mariadbCLI(t, my, allowed.addr, "-e", "select 'after_"+marker+"'"); res.Exit != 0 || !strings.Contains(res.Stdout, "after_"+marker) {
		t.Errorf("a query through the allowing sqlfwd: %s", res)
	}
	b, err := os.ReadFile(dir + "/general.log")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "Binlog Dump"); n != 2 {
		t.Errorf("the server's general log has %d Binlog Dump commands, want 2 (direct and the allowed one):\n%s", n, linesWith(string(b), "Binlog"))
	}
}

// TestMySQLSetStatement: MariaDB's SET STATEMENT ... FOR a query
// (Connector/J's query timeout) runs through sqlfwd under the default
// policy, judged as its query: a WHERE-less DELETE under it is blocked and
// never reaches the server.
func TestMySQLSetStatement(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "setstmt_" + randomHex(t)
	table := "e2e_" + marker
	if res := mariadbCLI(t, my, my.addr(), "-e", "create table "+table+" (id int); insert into "+table+" values (1), (2)"); res.Exit != 0 {
		t.Fatalf("create table directly: %s", res)
	}
	t.Cleanup(func() { mariadbCLI(t, my, my.addr(), "-e", "drop table if exists "+table) })
	db := myDB(t, my, d.addr, false)
	var n int
	if err := db.QueryRow("SET STATEMENT max_statement_time=10 FOR SELECT COUNT(*) FROM " + table + " WHERE id > 0").Scan(&n); err != nil || n != 2 {
		t.Errorf("SET STATEMENT ... FOR SELECT through sqlfwd: %d, %v; want 2", n, err)
	}
	_, err := db.Exec("SET STATEMENT max_statement_time=10 FOR DELETE FROM " + table)
	wantMyBlocked(t, "SET STATEMENT ... FOR DELETE without WHERE", err, "no-unfiltered-writes")
	log := generalLog(t, my)
	if !strings.Contains(log, "FOR SELECT COUNT(*) FROM "+table) {
		t.Errorf("the general log lacks the allowed SET STATEMENT on %s", table)
	}
	if strings.Contains(log, "FOR DELETE FROM "+table) {
		t.Errorf("the blocked statement reached the server: %s", linesWith(log, "FOR DELETE FROM "+table))
	}
}
