package pgsql

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// readStatements reads one statement per line from testdata, skipping blank
// lines and lines starting with "--".
func readStatements(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pgbench.sql holds the statements pgbench 15 sent (captured with
// log_statement=all) for -i, -i -I dtGvpf, and the tpcb-like, -S and -N runs
// in simple, extended and prepared modes.
func TestDefaultPolicyAllowsBenign(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Session{User: "app", Database: "app"}
	for _, file := range []string{"pgbench.sql", "benign.sql"} {
		for _, sql := range readStatements(t, file) {
			if v := e.Judge([]byte(sql), s); v.Action != engine.ActionAllow || v.ParseError {
				t.Errorf("%s: %q\n got: %v %s (%s)\nwant: allow", file, sql, v.Action, v.RuleID, v.Reason)
			}
		}
	}
}

// malicious.sql lines are "rule-id<TAB>statement".
func TestDefaultPolicyDeniesMalicious(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Session{User: "app", Database: "app"}
	for _, line := range readStatements(t, "malicious.sql") {
		id, sql, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("malicious.sql: line without tab: %q", line)
		}
		v := e.Judge([]byte(sql), s)
		if v.Action != engine.ActionDeny || v.RuleID != id {
			t.Errorf("%q\n got: %v %s\nwant: deny %s", sql, v.Action, v.RuleID, id)
		}
		if v.Reason == "" {
			t.Errorf("%q: empty reason", sql)
		}
	}
}

// TestDefaultPolicyParses holds the default policy's assertions that were
// in the core's TestParsePolicyDefaults and TestPolicyWarnings.
func TestDefaultPolicyParses(t *testing.T) {
	if DefaultPolicy() == nil || DefaultPolicy().Len() == 0 {
		t.Fatal("default policy is empty")
	}
	if w := DefaultPolicy().Warnings(); len(w) != 0 {
		t.Errorf("default policy warnings: %q", w)
	}
}

// TestProbesAccepted: PostgreSQL's dialect fills probes (probes.go), so a
// policy naming them checks.
func TestProbesAccepted(t *testing.T) {
	p, err := engine.ParsePolicy([]byte("rules:\n  - {id: p, action: deny, match: {probes: [catalog, server_info, error_based, boolean_blind, char_extraction]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(Dialect); err != nil {
		t.Errorf("Check: %v", err)
	}
}
