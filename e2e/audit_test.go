package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAuditTrail: verdicts and sessions go to a hash-chained file without
// statement text; fwctl audit verify accepts it, finds an edited line, and a
// restarted daemon continues the chain.
func TestAuditTrail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	run := func() {
		d := ownDaemon(t, "--audit-log", path, "--audit-allowed")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
		if _, err := c.Exec(ctx, "select 'audit-literal-allowed'"); err != nil {
			t.Fatal(err)
		}
		_, err := c.Exec(ctx, "delete from audit_secret_table")
		checkDenied(t, "delete from audit_secret_table", err)
		c.Close(ctx)
		if err := d.stop(); err != nil {
			t.Fatal(err)
		}
	}
	run()
	run() // appends, continuing the chain

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("audit-literal-allowed")) || bytes.Contains(b, []byte("audit_secret_table")) {
		t.Fatalf("the audit trail carries statement text:\n%s", b)
	}
	events := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var l struct{ Event, Outcome, Rule string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events[l.Event+"/"+l.Outcome+"/"+l.Rule]++
	}
	for _, want := range []string{"start//", "session_start//", "verdict/allowed/", "verdict/blocked/no-unfiltered-writes", "session_end//", "stop//"} {
		if events[want] < 2 {
			t.Errorf("event %s seen %d times in two runs, want ≥ 2 (all: %v)", want, events[want], events)
		}
	}
	fw := filepath.Join(binDir, "fwctl")
	if res := runToolPath(t, fw, "audit", "verify", path); res.Exit != 0 || !strings.Contains(res.Stdout, "chain intact") {
		t.Fatalf("fwctl audit verify: %s", res)
	}
	// tamper: change the rule of the blocked verdict
	tampered := bytes.Replace(b, []byte(`"rule":"no-unfiltered-writes"`), []byte(`"rule":"something-else"`), 1)
	if err := os.WriteFile(path, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runToolPath(t, fw, "audit", "verify", path); res.Exit != 1 || !strings.Contains(res.Stderr, "chain broken") {
		t.Fatalf("fwctl audit verify of an edited trail: %s; want exit 1, chain broken", res)
	}
}
