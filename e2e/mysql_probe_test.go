package e2e

// Catalog, server-information and error-based probes, disguised waits, and
// routine bodies that keep their kind (issue 21 classes 6 and 7), against
// the MariaDB scripts/test.sh starts, through sqlfwd with the embedded
// default policy in enforce mode. Proof is MariaDB's general log and what a
// direct connection sees, never only the client's error.

import (
	"bytes"
	"database/sql"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/engine/mysql"
)

// TestMySQLProbesBlocked: a sample of each probe shape gets sqlfw's ERR 1227
// and never reaches the server, while the same statements straight to
// MariaDB do what an attacker wants (an error-based one returns the account
// in its error message); the tools' own catalog queries pass and return
// what they return directly.
func TestMySQLProbesBlocked(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "pr" + randomHex(t) // in the statements sent through sqlfwd only
	table := "e2e_" + marker
	twin := "e2e_twin" + randomHex(t) // the direct proof's table
	direct := myDB(t, my, my.addr(), false)
	direct.SetMaxOpenConns(1)
	for _, tb := range []string{table, twin} {
		for _, q := range []string{
			"CREATE TABLE " + tb + " (id INT PRIMARY KEY, name VARCHAR(50), pw VARCHAR(64))",
			"INSERT INTO " + tb + " VALUES (1, 'alice', 'secret1'), (2, 'bob', 'secret2')",
		} {
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s directly: %v", q, err)
			}
		}
	}
	t.Cleanup(func() {
		direct.Exec("DROP TABLE IF EXISTS " + table)
		direct.Exec("DROP TABLE IF EXISTS " + twin)
	})
	fw := myDB(t, my, d.addr, false)
	fw.SetMaxOpenConns(1) // one connection: it keeps working after each block

	// leak: what the statement, straight to MariaDB, puts in its error
	// message ("" when its answer is not an error).
	const user = `root@`
	probes := []struct{ sql, rule, leak string }{
		// catalog reads inside an application statement
		{"SELECT name FROM {T} WHERE id = (SELECT count(*) FROM information_schema.tables WHERE table_name = '{T}')", "no-catalog-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND EXISTS (SELECT 1 FROM information_schema.columns WHERE column_name = 'pw')", "no-catalog-probe", ""},
		{"SELECT name FROM {T}, (SELECT group_concat(schema_name) s FROM information_schema.schemata) x", "no-catalog-probe", ""},
		{"WITH c AS (SELECT table_name FROM information_schema.tables) SELECT name FROM {T} JOIN c ON c.table_name = {T}.name", "no-catalog-probe", ""},
		{"SELECT name FROM {T} ORDER BY (SELECT count(*) FROM performance_schema.threads)", "no-catalog-probe", ""},
		{"INSERT INTO {T} (id, name) SELECT 100, group_concat(user) FROM mysql.db", "no-catalog-probe", ""},
		// what describes the server, in a UNION arm or tested
		{"SELECT name FROM {T} WHERE id = 1 UNION SELECT user()", "no-server-info-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 UNION SELECT @@datadir", "no-server-info-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 UNION SELECT concat_ws(0x3a, @@hostname, @@version_compile_os, version())", "no-server-info-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND ASCII(SUBSTR(user(), 1, 1)) > 64", "no-server-info-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND database() LIKE 's%'", "no-server-info-probe", ""},
		{"SELECT name, @@basedir FROM {T}", "no-server-info-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND INSTR(user(), 'root')", "no-server-info-probe", ""},
		// error-based extraction
		{"SELECT name FROM {T} WHERE id = 1 AND updatexml(1, concat(0x7e, (SELECT user())), 1)", "no-error-based-probe", user},
		{"SELECT name FROM {T} WHERE id = 1 AND extractvalue(1, concat(0x7e, current_user()))", "no-error-based-probe", user},
		{"SELECT extractvalue(1, concat(0x7e, pw)) FROM {T}", "no-error-based-probe", ""}, // MariaDB: only constant XPath
		{"SELECT name FROM {T} WHERE id = 1 AND extractvalue(1, concat(0x7e, (SELECT pw FROM {T} LIMIT 1)))", "no-error-based-probe", "secret"},
		{"SELECT name FROM {T} WHERE id = 1 AND exp(~(SELECT * FROM (SELECT user()) x))", "no-error-based-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND (SELECT 1 FROM (SELECT count(*), concat((SELECT user()), 0x3a, floor(rand(0) * 2)) x FROM {T} t1, {T} t2, {T} t3 GROUP BY x) y)", "no-error-based-probe", user},
		{"SELECT name FROM {T} WHERE id = 1 AND polygon((SELECT * FROM (SELECT * FROM (SELECT user()) a) b))", "no-error-based-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND !(SELECT * FROM (SELECT user()) x) - ~0", "no-error-based-probe", ""}, // MariaDB prints #2, MySQL the value
		// disguised waits
		{"SELECT name FROM {T} WHERE id = 1 AND master_gtid_wait('0-1-999999', 2) = 0", "no-time-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND master_pos_wait('no-such-file', 4, 2)", "no-time-probe", ""},
		{"SELECT name FROM {T} WHERE id = 1 AND GET_LOCK('" + marker + "', 2)", "no-time-probe", ""},
		{"SELECT master_gtid_wait('0-1-999999')", "no-long-sleep", ""},
		{"SELECT IF(1 = 1, (SELECT count(*) FROM information_schema.columns A, information_schema.columns B), '{T}')", "no-time-probe", ""},
	}
	for _, p := range probes {
		q := strings.ReplaceAll(p.sql, "{T}", table)
		rows, err := fw.Query(q)
		if err == nil {
			rows.Close()
		}
		wantMyBlocked(t, q, err, p.rule)
		if p.leak == "" {
			continue
		}
		// The same probe straight to MariaDB on the twin table: the
		// error carries what the probe wants, so the test is real.
		dq := strings.ReplaceAll(p.sql, "{T}", twin)
		rows, err = direct.Query(dq)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err == nil || !strings.Contains(err.Error(), p.leak) {
			t.Errorf("%s straight to MariaDB: got %v, want an error carrying %q (the probe works)", dq, err, p.leak)
		}
	}

	// The tools' and ORMs' own catalog queries, and server information
	// read alone: through sqlfwd, with the rows MariaDB returns directly.
	for _, q := range []string{
		"SELECT engine, table_type FROM INFORMATION_SCHEMA.TABLES WHERE table_schema = DATABASE() AND table_name = '{T}'",
		"select column_name, extra, generation_expression, data_type from information_schema.columns where table_schema=database() and table_name='{T}' order by ordinal_position",
		"SELECT TRIGGER_NAME FROM INFORMATION_SCHEMA.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = '{T}'",
		"select exists (select 1 from information_schema.tables where table_schema = database() and table_name = '{T}' and table_type in ('BASE TABLE', 'SYSTEM VERSIONED')) as `exists`",
		"SELECT kc.constraint_name, kc.column_name FROM information_schema.key_column_usage AS kc, information_schema.table_constraints AS c WHERE kc.table_schema = DATABASE() AND kc.table_name = '{T}' AND c.table_schema = kc.table_schema AND c.table_name = kc.table_name AND c.constraint_name = kc.constraint_name ORDER BY 1, 2",
		"SELECT DISTINCT TABLESPACE_NAME, FILE_NAME FROM INFORMATION_SCHEMA.FILES WHERE FILE_TYPE = 'DATAFILE' AND TABLESPACE_NAME IN (SELECT DISTINCT TABLESPACE_NAME FROM INFORMATION_SCHEMA.PARTITIONS WHERE TABLE_SCHEMA IN (DATABASE())) ORDER BY TABLESPACE_NAME",
		"select @@version_comment limit 1",
		"select DATABASE(), USER() limit 1",
		"SELECT @@datadir, @@hostname, version()",
		"SELECT name FROM {T} WHERE name = SUBSTRING_INDEX(USER(), '@', 1) OR id = 1",
		"SELECT GET_LOCK('" + marker + "', 1), RELEASE_LOCK('" + marker + "')",
	} {
		sameRows(t, fw, direct, strings.ReplaceAll(q, "{T}", table))
	}

	var n int
	if err := direct.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil || n != 2 {
		t.Errorf("%s holds %d rows (%v), want its 2: the INSERT ... SELECT FROM mysql.db must not have run", table, n, err)
	}
	log := generalLog(t, my)
	if !strings.Contains(log, "CREATE TABLE "+table) {
		t.Fatalf("the general log lacks the direct CREATE TABLE %s: the marker search would find nothing", table)
	}
	for _, l := range strings.Split(linesWith(log, marker), "\n") {
		if l == "" || strings.Contains(l, "CREATE TABLE "+table) || strings.Contains(l, "INSERT INTO "+table+" VALUES") ||
			strings.Contains(l, "DROP TABLE") || strings.Contains(l, "SELECT count(*) FROM "+table) {
			continue
		}
		if blockedProbe(l, probes, table) {
			t.Errorf("a denied probe reached the server: %s", l)
		}
	}
}

// blockedProbe reports whether a general-log line is one of the probes
// sqlfwd should have refused (the allowed catalog queries name the table
// too).
func blockedProbe(line string, probes []struct{ sql, rule, leak string }, table string) bool {
	for _, p := range probes {
		if strings.Contains(line, strings.ReplaceAll(p.sql, "{T}", table)) {
			return true
		}
	}
	return false
}

// sameRows checks that q passes through sqlfwd (fw) and returns the rows it
// returns on a direct connection.
func sameRows(t *testing.T, fw, direct *sql.DB, q string) {
	t.Helper()
	got, err := queryAll(fw, q)
	if err != nil {
		t.Errorf("%s through sqlfwd: %v", q, err)
		return
	}
	want, err := queryAll(direct, q)
	if err != nil {
		t.Fatalf("%s directly: %v", q, err)
	}
	if got != want {
		t.Errorf("%s: through sqlfwd %q, directly %q", q, got, want)
	}
}

// queryAll returns a query's rows as text, one line a row.
func queryAll(db *sql.DB, q string) (string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(v.String)
		}
		b.WriteByte('\n')
	}
	return b.String(), rows.Err()
}

// TestMySQLRoutineBodyKeepsItsKind: a procedure whose body is one TRUNCATE,
// without BEGIN ... END, is refused by a rule on truncate like the
// BEGIN ... END form, and does not exist afterwards; the default policy's
// rules hold for bodies of procedures, functions and triggers in every form;
// an ordinary procedure is created and runs.
func TestMySQLRoutineBodyKeepsItsKind(t *testing.T) {
	my := mariadbEnv(t)
	// The default policy with an operator's rule before it.
	pol := bytes.Replace(mysql.DefaultPolicyYAML(), []byte("\nrules:\n"), []byte(`
rules:
  - id: no-truncate
    action: deny
    reason: TRUNCATE empties a table without a trace of its rows
    match:
      kind: [truncate]
`), 1)
	if bytes.Equal(pol, mysql.DefaultPolicyYAML()) {
		t.Fatal("the default policy has no rules: line to add to")
	}
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, pol, 0o644); err != nil {
		t.Fatal(err)
	}
	d := mysqlDaemon(t, my, "--policy", path)
	marker := "rt" + randomHex(t)
	table := "e2e_" + marker
	direct := myDB(t, my, my.addr(), false)
	for _, q := range []string{
		"CREATE TABLE " + table + " (id INT PRIMARY KEY, v INT)",
		"INSERT INTO " + table + " VALUES (1, 1), (2, 2), (3, 3)",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s directly: %v", q, err)
		}
	}
	t.Cleanup(func() {
		direct.Exec("DROP PROCEDURE IF EXISTS ok_" + marker)
		direct.Exec("DROP TABLE IF EXISTS " + table)
	})
	fw := myDB(t, my, d.addr, false)
	fw.SetMaxOpenConns(1)

	for _, tc := range []struct{ sql, rule string }{
		{"CREATE PROCEDURE p1_{M}() TRUNCATE {T}", "no-truncate"},
		{"CREATE PROCEDURE p2_{M}() BEGIN TRUNCATE {T}; END", "no-truncate"},
		{"CREATE PROCEDURE p3_{M}() MODIFIES SQL DATA SQL SECURITY INVOKER TRUNCATE {T}", "no-truncate"},
		{"CREATE PROCEDURE p4_{M}() BEGIN NOT ATOMIC IF 1 THEN TRUNCATE {T}; END IF; END", "no-truncate"},
		{"CREATE PROCEDURE p5_{M}() DELETE FROM {T}", "no-unfiltered-writes"},
		{"CREATE PROCEDURE p6_{M}() l: BEGIN UPDATE {T} SET v = 0; END l", "no-unfiltered-writes"},
		{"CREATE PROCEDURE p7_{M}() SELECT authentication_string FROM mysql.global_priv", "no-credential-tables"},
		{"CREATE PROCEDURE p8_{M}() SELECT 'x' INTO OUTFILE '/tmp/{M}.txt'", "no-server-files"},
		{"CREATE FUNCTION f1_{M}() RETURNS TEXT RETURN (SELECT authentication_string FROM mysql.global_priv LIMIT 1)", "no-credential-tables"},
		{"CREATE FUNCTION f2_{M}() RETURNS INT BEGIN DELETE FROM {T}; RETURN 1; END", "no-unfiltered-writes"},
		{"CREATE TRIGGER t1_{M} BEFORE INSERT ON {T} FOR EACH ROW DELETE FROM {T}", "no-unfiltered-writes"},
		{"CREATE TRIGGER t2_{M} BEFORE INSERT ON {T} FOR EACH ROW FOLLOWS nothing UPDATE {T} SET v = 0", "no-unfiltered-writes"},
	} {
		q := strings.ReplaceAll(strings.ReplaceAll(tc.sql, "{M}", marker), "{T}", table)
		_, err := fw.Exec(q)
		wantMyBlocked(t, q, err, tc.rule)
	}
	// None exists, on a direct connection.
	var n int
	if err := direct.QueryRow("SELECT count(*) FROM information_schema.routines WHERE routine_name LIKE ?", "%"+marker).Scan(&n); err != nil || n != 0 {
		t.Errorf("information_schema.routines holds %d routines named *%s (%v), want none", n, marker, err)
	}
	if err := direct.QueryRow("SELECT count(*) FROM information_schema.triggers WHERE trigger_name LIKE ?", "%"+marker).Scan(&n); err != nil || n != 0 {
		t.Errorf("information_schema.triggers holds %d triggers named *%s (%v), want none", n, marker, err)
	}
	// An application's procedure: created through sqlfwd, and CALL runs it.
	ok := "CREATE PROCEDURE ok_" + marker + "(IN x INT) UPDATE " + table + " SET v = v + 1 WHERE id = x"
	if _, err := fw.Exec(ok); err != nil {
		t.Fatalf("%s through sqlfwd: %v", ok, err)
	}
	if _, err := fw.Exec("CALL ok_"+marker+"(?)", 2); err != nil {
		t.Fatalf("CALL ok_%s through sqlfwd: %v", marker, err)
	}
	got, err := queryAll(direct, "SELECT id, v FROM "+table+" ORDER BY id")
	if err != nil || got != "1|1\n2|3\n3|3\n" {
		t.Errorf("%s on a direct connection: %q (%v), want its 3 rows with row 2 updated once", table, got, err)
	}
	log := generalLog(t, my)
	if !strings.Contains(log, "CREATE TABLE "+table) || !strings.Contains(log, "CREATE PROCEDURE ok_"+marker) {
		t.Fatalf("the general log lacks the direct CREATE TABLE %s or the allowed CREATE PROCEDURE: the marker search would find nothing", table)
	}
	refused := regexp.MustCompile(`(?i)create (procedure|function|trigger) [a-z0-9]+_` + marker)
	for _, l := range strings.Split(linesWith(log, marker), "\n") {
		if refused.MatchString(l) && !strings.Contains(l, "ok_"+marker) {
			t.Errorf("a refused routine reached the server: %s", l)
		}
	}
}

// TestMySQLDumpThroughSqlfwd: mariadb-dump (its catalog queries: views,
// triggers, routines, tablespaces) and the mariadb client through sqlfwd
// with the default policy: each dump completes and is the dump taken
// straight from MariaDB, and none of what they send meets a probe rule.
func TestMySQLDumpThroughSqlfwd(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	db := "e2e_dump_" + randomHex(t)
	direct := myDB(t, my, my.addr(), false)
	t.Cleanup(func() { direct.Exec("DROP DATABASE IF EXISTS " + db) })
	for _, q := range []string{
		"CREATE DATABASE " + db,
		"CREATE TABLE " + db + ".users (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(50) NOT NULL, KEY (name))",
		"CREATE TABLE " + db + ".orders (id INT PRIMARY KEY, user_id INT, total DECIMAL(10,2), FOREIGN KEY (user_id) REFERENCES " + db + ".users (id))",
		"INSERT INTO " + db + ".users (name) VALUES ('a'), ('b')",
		"INSERT INTO " + db + ".orders VALUES (1, 1, 9.5)",
		"CREATE VIEW " + db + ".v_users AS SELECT id, name FROM " + db + ".users",
		"CREATE PROCEDURE " + db + ".p1() SELECT count(*) FROM " + db + ".users",
		"CREATE FUNCTION " + db + ".f1(x INT) RETURNS INT DETERMINISTIC RETURN x + 1",
		"CREATE TRIGGER " + db + ".tr BEFORE INSERT ON " + db + ".orders FOR EACH ROW SET NEW.total = IFNULL(NEW.total, 0)",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s directly: %v", q, err)
		}
	}
	args := func(addr string) []string {
		host, port, _ := net.SplitHostPort(addr)
		return []string{"--no-defaults", "-h", host, "-P", port, "-u", my.User, "--skip-ssl"}
	}
	completed := regexp.MustCompile(`(?m)^-- Dump completed on .*$`)
	for _, flags := range [][]string{
		{db},
		{"--no-data", "--skip-triggers", db, "users"},
		{"--single-transaction", "--routines", "--triggers", "--databases", db},
	} {
		want := runTool(t, 2*time.Minute, "", nil, "mariadb-dump", append(args(my.addr()), flags...)...)
		got := runTool(t, 2*time.Minute, "", nil, "mariadb-dump", append(args(d.addr), flags...)...)
		if want.Exit != 0 {
			t.Fatalf("mariadb-dump %v straight to MariaDB failed (the test's setup is wrong): %s", flags, want)
		}
		if got.Exit != 0 {
			t.Errorf("mariadb-dump %v through sqlfwd: %s", flags, got)
			continue
		}
		if completed.ReplaceAllString(got.Stdout, "") != completed.ReplaceAllString(want.Stdout, "") {
			t.Errorf("mariadb-dump %v: the dump through sqlfwd differs from the one straight to MariaDB\n--- through sqlfwd:\n%s\n--- straight:\n%s", flags, got.Stdout, want.Stdout)
		}
	}
	for _, cmd := range []string{"status", "show tables", "show create table users", "show full columns from users", "show table status", "select * from v_users"} {
		r := runTool(t, time.Minute, "", nil, "mariadb", append(args(d.addr), "-e", cmd, db)...)
		if r.Exit != 0 {
			t.Errorf("mariadb -e %q through sqlfwd: %s", cmd, r)
		}
	}
	probeRules := regexp.MustCompile(`"rule":"(no-catalog-probe|no-server-info-probe|no-error-based-probe|no-time-probe|no-long-sleep|no-catalog-union)"`)
	for _, l := range strings.Split(d.log(), "\n") {
		if strings.Contains(l, "statement blocked") && probeRules.MatchString(l) {
			t.Errorf("sqlfwd blocked a statement of mariadb-dump or the mariadb client as a probe: %s", l)
		}
	}
	if !strings.Contains(d.log(), "listening") {
		t.Fatal("sqlfwd's log is empty: the rule search would find nothing")
	}
}
