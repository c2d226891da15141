package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestParseError(t *testing.T) {
	const secret = "hunter2-secret-literal"
	tests := []struct {
		name, policy string
		sql          string
		action       Action
	}{
		{"default deny", "rules: []", "SELEC '" + secret + "'", ActionDeny},
		{"configured allow", "on_parse_error: allow", "SELECT FROM WHERE '" + secret + "'", ActionAllow},
		{"configured log", "on_parse_error: log", "INSERT INTO t VALUES ('" + secret + "'", ActionLog},
		{"second statement bad", "rules: []", "SELECT 1; SELEC '" + secret + "'", ActionDeny},
		{"unterminated literal", "rules: []", "SELECT '" + secret, ActionDeny},
		{"NUL hides a second statement", "rules: []", "SELECT 1\x00; SELECT '" + secret + "'", ActionDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEngine(t, tt.policy, Options{})
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
	e := mustEngine(t, policy, Options{})
	tests := []struct {
		sql    string
		action Action
		ruleID string
		n      int
	}{
		{"SELECT 1; SELECT 2", ActionAllow, "allow-select", 2},
		{"BEGIN; SELECT 1; COMMIT", ActionAllow, "allow-select", 3},
		{"DELETE FROM t WHERE a = 1; DROP TABLE t", ActionDeny, "deny-drop", 2},
		{"DROP TABLE t; DELETE FROM t WHERE a = 1", ActionDeny, "deny-drop", 2},
		{"SELECT 1; DELETE FROM t WHERE a = 1; SELECT 2", ActionLog, "log-delete", 3},
		{"BEGIN; COMMIT", ActionAllow, "", 2},
		{"", ActionAllow, "", 0},
		{";;", ActionAllow, "", 0},
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
	e, err := New(DefaultPolicy(), PostgreSQL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	allowed := []uint32{715, 952, 953, 954, 955, 956, 957, 958, 964, 1004, 3170, 3171, 3172}
	for _, oid := range allowed {
		if v := e.JudgeFastpath(oid, nil); v.Action != ActionAllow {
			t.Errorf("JudgeFastpath(%d): got %+v, want allow", oid, v)
		}
	}
	// 764 lo_import (server file), 765 lo_export, 2624 pg_read_file, 0 and a user function.
	for _, oid := range []uint32{0, 764, 765, 2624, 16384} {
		if v := e.JudgeFastpath(oid, nil); v.Action != ActionDeny || v.RuleID != "fastpath-function" {
			t.Errorf("JudgeFastpath(%d): got %+v, want deny fastpath-function", oid, v)
		}
	}
}

// Two texts with the same hash must each get their own facts: the cache
// compares the full text on every hit.
func TestCacheCollision(t *testing.T) {
	e := mustEngine(t, "rules: [{id: r, action: deny, match: {functions: [pg_read_file]}}]", Options{})
	e.cache.hash = func([]byte) uint64 { return 7 }
	benign := []byte("SELECT 1")
	evil := []byte("SELECT pg_read_file('/etc/passwd')")
	for round := 0; round < 3; round++ {
		if v := e.Judge(benign, nil); v.Action != ActionAllow {
			t.Fatalf("round %d: benign got %+v, want allow", round, v)
		}
		if v := e.Judge(evil, nil); v.Action != ActionDeny {
			t.Fatalf("round %d: evil with colliding hash got %+v, want deny", round, v)
		}
	}
	if n, _ := e.cache.len(); n != 1 {
		t.Errorf("colliding texts: %d entries, want 1 (the newer replaces the older)", n)
	}
}

func TestCacheBounded(t *testing.T) {
	const limit = 64 << 10
	e := mustEngine(t, "rules: []", Options{CacheBytes: limit})
	for i := 0; i < 5000; i++ {
		e.Judge(fmt.Appendf(nil, "SELECT a, b, c FROM t%d WHERE id = %d", i, i), nil)
	}
	n, bytes := e.cache.len()
	if bytes > limit || n == 0 {
		t.Errorf("after 5000 texts: %d entries, %d bytes; want some entries and at most %d bytes", n, bytes, limit)
	}
	// Hot entries survive: touch one, flood, it must still be cached.
	hot := []byte("SELECT hot FROM t WHERE id = 1")
	e.Judge(hot, nil)
	for i := 0; i < 20; i++ {
		e.Judge(hot, nil)
		e.Judge(fmt.Appendf(nil, "SELECT x FROM flood%d", i), nil)
	}
	if _, _, ok := e.cache.get(hot); !ok {
		t.Error("a text hit between every insert was evicted")
	}
}

func TestCacheDisabled(t *testing.T) {
	e := mustEngine(t, "rules: []", Options{CacheBytes: -1})
	if e.cache != nil {
		t.Fatal("CacheBytes < 0 must disable the cache")
	}
	if v := e.Judge([]byte("SELECT 1"), nil); v.Action != ActionAllow || v.Statements != 1 {
		t.Errorf("got %+v", v)
	}
}

func TestCacheHitDoesNotAllocate(t *testing.T) {
	e, err := New(DefaultPolicy(), PostgreSQL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{User: "app", Database: "app"}
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
`, Options{CacheBytes: 8 << 10}) // small, so eviction runs concurrently with hits
	sessions := []*Session{{User: "alice"}, {User: "bob"}}
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
				if v := e.Judge(evil, s); v.Action != ActionDeny || v.RuleID != "f" {
					t.Errorf("%s: got %+v, want deny f", evil, v)
					return
				}
				want := ActionAllow
				if s.User == "bob" {
					want = ActionDeny
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

func TestNewNilPolicy(t *testing.T) {
	if _, err := New(nil, PostgreSQL, Options{}); err == nil {
		t.Error("New(nil): got no error")
	}
}
