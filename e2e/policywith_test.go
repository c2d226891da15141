package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// policyWith writes a dialect's default policy def with rules (YAML list
// items, indented as the policy's) inserted before the rule whose id is
// before ("": first), and returns the file's path.
func policyWith(t *testing.T, def []byte, before, rules string) string {
	t.Helper()
	at := "rules:\n"
	with := at + rules
	if before != "" {
		at = "  - id: " + before + "\n"
		with = rules + at
	}
	pol := strings.Replace(string(def), at, with, 1)
	if rules != "" && pol == string(def) {
		t.Fatalf("the default policy has no %q", at)
	}
	f := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(f, []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// scopeRule is a rule that keeps user from the tables (a role scoped away
// from a table, issue 24), for policyWith.
func scopeRule(id, user, reason string, tables ...string) string {
	return fmt.Sprintf(`  - id: %s
    action: deny
    users: [%s]
    reason: %s
    match:
      tables: [%s]

`, id, user, reason, strings.Join(tables, ", "))
}

// catalogDaemon starts sqlfwd from a configuration file: one database of
// protocol (postgres, mysql) at upstream, in enforce mode, with the
// policy file and a catalog connection of dsn (refreshed only after DDL),
// and waits for its first catalog read.
func catalogDaemon(t *testing.T, protocol, upstream, policy, dsn string) *daemon {
	t.Helper()
	return catalogDaemonWith(t, protocol, upstream, policy, dsn, "", "")
}

// catalogDaemonWith is catalogDaemon with more keys under catalog: (each
// line indented by six spaces) and at the top (each line ending in \n).
func catalogDaemonWith(t *testing.T, protocol, upstream, policy, dsn, catalogKeys, topKeys string) *daemon {
	t.Helper()
	needSqlfwd(t)
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctl := filepath.Join(dir, "control.sock")
	cfg := fmt.Sprintf(`%slog_level: debug
control_socket: %s
databases:
  - name: db
    protocol: %s
    listen: %s
    upstream: %s
    mode: enforce
    policy: %s
    catalog:
      dsn: %q
      refresh: 1h
%s`, topKeys, ctl, protocol, addr, upstream, policy, dsn, catalogKeys)
	cfgPath := filepath.Join(dir, "sqlfwd.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := startConfigDaemon(addr, ctl, "--config", cfgPath, "--log-format", "json")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 40))
		}
		d.stop()
	})
	waitLog(t, d, `"catalog read"`, `"reads":1`)
	return d
}

// explainCase is a statement fwctl check --catalog judges, the rule it
// meets ("" allowed) and a step of its chain --explain prints.
type explainCase struct{ sql, rule, step string }

// explainOffline dumps d's catalog over its control socket and again
// directly with dsn (fwctl catalog dump), and checks that fwctl check
// --catalog --explain with each snapshot and the policy judges each case
// as user with its rule and prints its chain.
func explainOffline(t *testing.T, d *daemon, protocol, policy, dsn, user string, cases []explainCase) {
	t.Helper()
	fw := filepath.Join(binDir, "fwctl")
	dir := t.TempDir()
	viaSocket := runToolPath(t, fw, "catalog", "dump", "--control-socket", d.control)
	direct := runToolPath(t, fw, "catalog", "dump", "--protocol", protocol, "--dsn", dsn)
	for name, r := range map[string]psqlResult{"control socket": viaSocket, "dsn": direct} {
		if r.Exit != 0 || !strings.Contains(r.Stdout, `"queries"`) {
			t.Errorf("fwctl catalog dump (%s): %s", name, r)
			continue
		}
		snap := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(snap, []byte(r.Stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			out := runToolPath(t, fw, "check", "--protocol", protocol, "--policy", policy, "--catalog", snap, "--explain", "--user", user, c.sql)
			want := 0
			if c.rule != "" {
				want = 1
			}
			if out.Exit != want || c.rule != "" && !strings.Contains(out.Stdout, c.rule) || c.step != "" && !strings.Contains(out.Stdout, "chain: statement 1 → "+c.step) || c.step == "" && strings.Contains(out.Stdout, "chain:") {
				t.Errorf("fwctl check --catalog (%s) --explain %q: %s\nwant exit %d naming %q and the chain step %q", name, c.sql, out, want, c.rule, c.step)
			}
		}
	}
}

// pgRoles makes each PostgreSQL login role that does not exist yet.
func pgRoles(t *testing.T, names ...string) {
	t.Helper()
	for _, r := range names {
		directExec(t, fmt.Sprintf("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%s') THEN CREATE ROLE %s LOGIN; END IF; END $$", r, r))
	}
}

// pgCatalogDaemon is catalogDaemon in front of the test PostgreSQL, its
// catalog read over a connection of the role monitor.
func pgCatalogDaemon(t *testing.T, policy, monitor string) *daemon {
	t.Helper()
	return catalogDaemon(t, "postgres", net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)), policy,
		fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", pg.Host, pg.Port, monitor, pg.Database))
}

// myCatalogDaemon is catalogDaemon in front of the test MariaDB with the
// policy file, its catalog read by a monitoring account that may read every
// database's definitions (SELECT, SHOW VIEW, TRIGGER on *.*: the tests'
// databases come and go).
func myCatalogDaemon(t *testing.T, my myEnv, policy string) *daemon {
	t.Helper()
	root := myDB(t, my, my.addr(), true)
	mon := "e2e_mycat_mon"
	for _, q := range []string{
		"create user if not exists '" + mon + "'@'%'",
		"grant select, show view, trigger on *.* to '" + mon + "'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return catalogDaemon(t, "mysql", my.addr(), policy, fmt.Sprintf("%s@tcp(%s)/%s", mon, my.addr(), my.Database))
}
