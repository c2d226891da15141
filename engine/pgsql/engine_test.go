package pgsql

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

func TestParseError(t *testing.T) {
	const secret = "hunter2-secret-literal"
	tests := []struct {
		name, policy string
		sql          string
		action       engine.Action
	}{
		{"default deny", "rules: []", "SELEC '" + secret + "'", engine.ActionDeny},
		{"configured allow", "on_parse_error: allow", "SELECT FROM WHERE '" + secret + "'", engine.ActionAllow},
		{"configured log", "on_parse_error: log", "INSERT INTO t VALUES ('" + secret + "'", engine.ActionLog},
		{"second statement bad", "rules: []", "SELECT 1; SELEC '" + secret + "'", engine.ActionDeny},
		{"unterminated literal", "rules: []", "SELECT '" + secret, engine.ActionDeny},
		{"NUL hides a second statement", "rules: []", "SELECT 1\x00; SELECT '" + secret + "'", engine.ActionDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEngine(t, tt.policy, engine.Options{})
			for i := 0; i < 2; i++ { // cold, then cached
				v := e.Judge([]byte(tt.sql), nil)
				if v.Action != tt.action || !v.ParseError || v.RuleID != "parse-error" {
					t.Errorf("%q: got %+v, want action %v, ParseError, RuleID parse-error", tt.sql, v, tt.action)
				}
				if strings.Contains(v.Reason, secret) || strings.Contains(v.Reason, "'") || !strings.HasPrefix(v.Reason, parseErrorReason) {
					t.Errorf("%q: reason %q must be generic and free of literals", tt.sql, v.Reason)
				}
			}
		})
	}
}

func TestMultiStatement(t *testing.T) {
	policy := `rules:
  - {id: deny-drop, action: deny, match: {kind: [ddl]}}
  - {id: log-delete, action: log, match: {kind: [delete]}}
  - {id: allow-select, action: allow, match: {kind: [select]}}
`
	e := mustEngine(t, policy, engine.Options{})
	tests := []struct {
		sql    string
		action engine.Action
		ruleID string
		n      int
	}{
		{"SELECT 1; SELECT 2", engine.ActionAllow, "allow-select", 2},
		{"BEGIN; SELECT 1; COMMIT", engine.ActionAllow, "allow-select", 3},
		{"DELETE FROM t WHERE a = 1; DROP TABLE t", engine.ActionDeny, "deny-drop", 2},
		{"DROP TABLE t; DELETE FROM t WHERE a = 1", engine.ActionDeny, "deny-drop", 2},
		{"SELECT 1; DELETE FROM t WHERE a = 1; SELECT 2", engine.ActionLog, "log-delete", 3},
		{"BEGIN; COMMIT", engine.ActionAllow, "", 2},
		{"", engine.ActionAllow, "", 0},
		{";;", engine.ActionAllow, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			v := e.Judge([]byte(tt.sql), nil)
			if v.Action != tt.action || v.RuleID != tt.ruleID || v.Statements != tt.n {
				t.Errorf("%q\n got: %v %q %d statements\nwant: %v %q %d statements", tt.sql, v.Action, v.RuleID, v.Statements, tt.action, tt.ruleID, tt.n)
			}
		})
	}
}

func TestJudgeFastpath(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	allowed := []uint32{715, 952, 953, 954, 955, 956, 957, 958, 964, 1004, 3170, 3171, 3172}
	for _, oid := range allowed {
		if v := e.JudgeFastpath(oid, nil); v.Action != engine.ActionAllow {
			t.Errorf("JudgeFastpath(%d): got %+v, want allow", oid, v)
		}
	}
	// 764 lo_import (server file), 765 lo_export, 2624 pg_read_file, 0 and a user function.
	for _, oid := range []uint32{0, 764, 765, 2624, 16384} {
		if v := e.JudgeFastpath(oid, nil); v.Action != engine.ActionDeny || v.RuleID != "fastpath-function" {
			t.Errorf("JudgeFastpath(%d): got %+v, want deny fastpath-function", oid, v)
		}
	}
}

func TestCacheHitDoesNotAllocate(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Session{User: "app", Database: "app"}
	for _, sql := range []string{
		"SELECT abalance FROM pgbench_accounts WHERE aid = 1",
		"SELECT pg_read_file('x')",
		"UPDATE t SET a = 1",
		"SELECT * FROM public.t JOIN s.u ON true WHERE f(1) > 0",
	} {
		b := []byte(sql)
		e.Judge(b, s)
		if n := testing.AllocsPerRun(100, func() { e.Judge(b, s) }); n != 0 {
			t.Errorf("%q: %v allocations per cached verdict, want 0", sql, n)
		}
	}
}

// Run once with -race: go test -race -run TestConcurrent ./engine
func TestConcurrentJudge(t *testing.T) {
	e := mustEngine(t, `rules:
  - {id: f, action: deny, match: {functions: [pg_read_file]}}
  - {id: u, action: deny, users: [bob], match: {kind: [ddl]}}
`, engine.Options{CacheBytes: 8 << 10}) // small, so eviction runs concurrently with hits
	sessions := []*engine.Session{{User: "alice"}, {User: "bob"}}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 400; i++ {
				s := sessions[(g+i)%2]
				k := i % 50
				evil := fmt.Appendf(nil, "SELECT pg_read_file('f%d')", k)
				ddl := fmt.Appendf(nil, "CREATE TABLE t%d (a int)", k)
				if v := e.Judge(evil, s); v.Action != engine.ActionDeny || v.RuleID != "f" {
					t.Errorf("%s: got %+v, want deny f", evil, v)
					return
				}
				want := engine.ActionAllow
				if s.User == "bob" {
					want = engine.ActionDeny
				}
				if v := e.Judge(ddl, s); v.Action != want {
					t.Errorf("%s as %s: got %v, want %v", ddl, s.User, v.Action, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
