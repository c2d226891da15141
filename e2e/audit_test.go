package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAuditTrail: verdicts and sessions go to a hash-chained file without
// statement text; fwctl audit verify accepts it, finds an edited line, and a
// restarted daemon continues the chain.
func TestAuditTrail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	daemonLog := filepath.Join(t.TempDir(), "sqlfwd.log")
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
		time.Sleep(20 * time.Millisecond) // the session's end is later than its start
		c.Close(ctx)
		if code, err := d.signal(syscall.SIGTERM, 15*time.Second); err != nil || code != 0 {
			t.Fatalf("stopping sqlfwd: exit %d, %v", code, err)
		}
		f, err := os.OpenFile(daemonLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(d.log())
		f.Close()
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
	started := map[uint64]time.Time{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var l struct {
			Event, Outcome, Rule string
			Session              uint64
			Time                 time.Time
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events[l.Event+"/"+l.Outcome+"/"+l.Rule]++
		switch l.Event {
		case "session_start":
			started[l.Session] = l.Time
		case "session_end":
			if !l.Time.After(started[l.Session]) {
				t.Errorf("session %d: session_end at %v, not after its start at %v", l.Session, l.Time, started[l.Session])
			}
		}
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
	if res := runToolPath(t, fw, "audit", "verify", "--anchors", daemonLog, path); res.Exit != 0 || !strings.Contains(res.Stdout, "anchors matched") {
		t.Fatalf("fwctl audit verify --anchors: %s", res)
	}
	// A cut tail passes the chain alone but not the anchors.
	cut := b[:bytes.LastIndexByte(bytes.TrimRight(b, "\n"), '\n')+1]
	if err := os.WriteFile(path, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runToolPath(t, fw, "audit", "verify", "--anchors", daemonLog, path); res.Exit != 1 || !strings.Contains(res.Stderr, "truncated") {
		t.Fatalf("fwctl audit verify --anchors of a cut trail: %s; want exit 1, truncated", res)
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
