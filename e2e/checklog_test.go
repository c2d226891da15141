package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fwctl check --pg-log reads the real PostgreSQL 15 log (log_statement =
// all, the prefix scripts/pg.sh sets) and judges what the server ran: a
// simple-protocol statement from psql and extended-protocol ones from pgx
// (logged as "execute <unnamed>: …"), a multi-line one among them.
func TestCheckPGLogE2E(t *testing.T) {
	needBinary(t)
	table := "checklog_" + randomHex(t)
	freshTable(t, table, 1, 2)
	direct := []string{"-X", "-h", pg.Host, "-p", fmt.Sprint(pg.Port), "-U", pg.User, "-d", pg.Database, "-c", "DELETE FROM " + table}
	if res := runTool(t, time.Minute, "", nil, "psql", direct...); res.Exit != 0 {
		t.Fatalf("psql DELETE directly: %s", res)
	}
	directExec(t, fmt.Sprintf("UPDATE %s SET id = 3", table))
	directExec(t, fmt.Sprintf("SELECT id\n  FROM %s\n WHERE id = 1", table))
	logText := serverLog(t)
	logFile := filepath.Join(t.TempDir(), "postgresql.log")
	if err := os.WriteFile(logFile, []byte(logText), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runToolPath(t, filepath.Join(binDir, "fwctl"), "check", "--pg-log", logFile, "--verbose")
	if res.Exit != 1 {
		t.Fatalf("input fwctl check --pg-log (the server's log)\ngot %s\nwant exit 1 (the log holds denied statements)", res)
	}
	verdicts := map[string]string{} // statement start → "action rule"
	for _, line := range strings.Split(res.Stdout, "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 6 && strings.Contains(f[5], table) {
			verdicts[f[5]] = f[1] + " " + f[2]
		}
	}
	for stmt, want := range map[string]string{
		"DELETE FROM " + table:                          "deny no-unfiltered-writes",
		"UPDATE " + table + " SET id = 3":               "deny no-unfiltered-writes",
		"SELECT id FROM " + table + " WHERE id = 1":     "allow -",
		"INSERT INTO " + table + " VALUES (1)":          "allow -",
		"DROP TABLE IF EXISTS " + table + "; CREATE TA": "",
	} {
		got, seen := "", false
		for s, v := range verdicts {
			if strings.HasPrefix(s, stmt) {
				got, seen = v, true
			}
		}
		if !seen {
			t.Errorf("statement %q: not judged from the log; judged:\n%v", stmt, verdicts)
			continue
		}
		if want != "" && got != want {
			t.Errorf("statement %q: got %q, want %q", stmt, got, want)
		}
	}
	if !strings.Contains(res.Stdout, "no-unfiltered-writes") || !strings.Contains(res.Stdout, "\nrule ") {
		t.Errorf("no summary by rule:\n%s", res.Stdout)
	}
}

// fwctl check --mysql-log reads the real MariaDB 10.11 general log and
// judges what the server ran: statements from the mariadb CLI, sent
// directly, with the connection's database from its Init DB.
func TestCheckMySQLLogE2E(t *testing.T) {
	needBinary(t)
	my := mariadbEnv(t)
	table := "checklog_" + randomHex(t)
	res := mariadbCLI(t, my, my.addr(), "-e", fmt.Sprintf("create table %s (id int); insert into %s values (1), (2); delete from %s; select id\n from %s where id = 1; drop table %s", table, table, table, table, table))
	if res.Exit != 0 {
		t.Fatalf("mariadb directly: %s", res)
	}
	logText := generalLog(t, my)
	logFile := filepath.Join(t.TempDir(), "general.log")
	if err := os.WriteFile(logFile, []byte(logText), 0o600); err != nil {
		t.Fatal(err)
	}
	res = runToolPath(t, filepath.Join(binDir, "fwctl"), "check", "--mysql-log", logFile, "--verbose")
	if res.Exit != 1 {
		t.Fatalf("input fwctl check --mysql-log (the server's general log)\ngot %s\nwant exit 1 (the log holds denied statements)", res)
	}
	verdicts := map[string]string{}
	for _, line := range strings.Split(res.Stdout, "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 6 && strings.Contains(f[5], table) {
			verdicts[f[5]] = f[1] + " " + f[2]
		}
	}
	for stmt, want := range map[string]string{
		"delete from " + table:                      "deny no-unfiltered-writes",
		"select id from " + table + " where id = 1": "allow -",
		"insert into " + table + " values (1), (2)": "allow -",
	} {
		if got, ok := verdicts[stmt]; !ok || got != want {
			t.Errorf("statement %q: got %q (judged: %v), want %q", stmt, got, verdicts, want)
		}
	}
}
