package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fwctl learn offline on MariaDB 10.11's real general log fingerprints
// with MySQL's dialect (statements in MySQL's own syntax: backquotes,
// LIMIT, ON DUPLICATE KEY UPDATE, REPLACE); the fragment is a policy
// fwctl policy validate --protocol mysql accepts, fwctl check allows each
// learned statement by a learned rule, and as a database's policy with a
// closing deny rule sqlfwd lets the learned shapes through to MariaDB (with
// other literals, rows changed) and blocks one it did not learn, which
// never reaches the server.
func TestLearnMySQLLogE2E(t *testing.T) {
	needBinary(t)
	my := mariadbEnv(t)
	table := "learnlog_" + randomHex(t)[:8]
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + table + " (id int primary key, name varchar(20))"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Exec("drop table if exists " + table) })
	app := func(id int, name string) []string {
		return []string{
			fmt.Sprintf("insert into `%s` (id, name) values (%d, '%s') on duplicate key update name = values(name)", table, id, name),
			fmt.Sprintf("replace into %s values (%d, '%s')", table, id+100, name),
			fmt.Sprintf("select `id`, name from %s where id = %d limit 1", table, id),
			fmt.Sprintf("update %s set name = '%s' where id = %d", table, name+"!", id),
		}
	}
	if res := mariadbCLI(t, my, my.addr(), "-e", strings.Join(app(1, "a"), "; ")); res.Exit != 0 {
		t.Fatalf("mariadb directly: %s", res)
	}
	dir := t.TempDir()
	logFile := filepath.Join(dir, "general.log")
	if err := os.WriteFile(logFile, []byte(generalLog(t, my)), 0o600); err != nil {
		t.Fatal(err)
	}
	fwctl := filepath.Join(binDir, "fwctl")
	res := runToolPath(t, fwctl, "learn", "offline", "--mysql-log", logFile)
	if res.Exit != 0 || !strings.Contains(res.Stderr, "(mysql)") || !strings.Contains(res.Stdout, "of the mysql dialect") {
		t.Fatalf("fwctl learn offline --mysql-log: %s", res)
	}
	frag := filepath.Join(dir, "learned.yaml")
	if err := os.WriteFile(frag, []byte(res.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runToolPath(t, fwctl, "policy", "validate", "--protocol", "mysql", frag); res.Exit != 0 || !strings.Contains(res.Stdout, "valid for mysql") {
		t.Fatalf("fwctl policy validate --protocol mysql of the learned fragment: %s", res)
	}
	// fwctl check with the fragment: every statement of the app's, from
	// the log with its user and database, allowed by a learned rule
	res = runToolPath(t, fwctl, "check", "--policy", frag, "--mysql-log", logFile, "--json")
	judged := 0
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		var v struct{ Action, Rule, SQL string }
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("fwctl check --json line %q: %v", line, err)
		}
		if !strings.Contains(v.SQL, table) {
			continue
		}
		judged++
		if v.Action != "allow" || !strings.HasPrefix(v.Rule, "learned-") {
			t.Errorf("learned statement %q: %s by %q, want an allow by a learned rule", v.SQL, v.Action, v.Rule)
		}
	}
	if judged != len(app(1, "a"))+1 { // and the create table
		t.Errorf("judged %d of the app's statements from the log, want %d:\n%s", judged, len(app(1, "a"))+1, res)
	}
	// the fragment and a closing rule as the database's policy in sqlfwd
	pol := filepath.Join(dir, "policy.yaml")
	closing := "  - {id: not-learned, action: deny, reason: not a learned statement, match: {}}\n"
	if err := os.WriteFile(pol, []byte(fileText(t, frag)+closing), 0o600); err != nil {
		t.Fatal(err)
	}
	d := mysqlDaemon(t, my, "--policy", pol)
	if res := mariadbCLI(t, my, d.addr, "-e", strings.Join(app(2, "b"), "; ")); res.Exit != 0 {
		t.Fatalf("the learned shapes with other literals through sqlfwd: %s", res)
	}
	var n int
	if err := direct.QueryRow("select count(*) from " + table + " where (id = 2 and name = 'b!') or (id = 102 and name = 'b')").Scan(&n); err != nil || n != 2 {
		t.Errorf("rows the learned statements wrote through sqlfwd: %d, %v; want 2", n, err)
	}
	unlearned := "delete from " + table + " where id = 1 or name = 'zz" + randomHex(t)[:6] + "'"
	res = mariadbCLI(t, my, d.addr, "-e", unlearned)
	if res.Exit == 0 || !strings.Contains(res.Stdout+res.Stderr, "not-learned") {
		t.Errorf("an unlearned statement through sqlfwd: %s; want it blocked by not-learned", res)
	}
	if strings.Contains(generalLog(t, my), unlearned) {
		t.Errorf("the blocked statement reached MariaDB's general log: %q", unlearned)
	}
	if err := direct.QueryRow("select count(*) from " + table + " where id = 1").Scan(&n); err != nil || n != 1 {
		t.Errorf("row 1 after the blocked delete: %d, %v; want it kept", n, err)
	}
}

// fileText is a file's text.
func fileText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
