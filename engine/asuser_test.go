package engine

import "testing"

// The facts of a statement for the session's user (StmtFacts.AsUser)
// decide instead of its own when the session's user is theirs, compared
// exactly; for any other user its own facts decide. Cached or not, the same,
// and a cache hit allocates nothing.
func TestAsUser(t *testing.T) {
	const policy = "rules:\n  - {id: no-f, action: deny, match: {functions: [f]}}\n"
	for _, tc := range []struct {
		sql, user string
		action    Action
	}{
		{"f() unless alice", "alice", ActionAllow},
		{"f() unless alice", "Alice", ActionDeny},
		{"f() unless alice", "bob", ActionDeny},
		{"f() unless alice", "", ActionDeny},
		{"f()", "alice", ActionDeny},
	} {
		for _, opts := range []Options{{}, {CacheBytes: -1}} {
			e := mustEngine(t, policy, opts)
			for round := 0; round < 2; round++ {
				if v := e.Judge([]byte(tc.sql), &Session{User: tc.user}); v.Action != tc.action {
					t.Errorf("%q as %q (cache %d, round %d): got %v %s, want %v", tc.sql, tc.user, opts.CacheBytes, round, v.Action, v.RuleID, tc.action)
				}
			}
		}
	}
	e := mustEngine(t, policy, Options{})
	sql, s := []byte("f() unless alice"), &Session{User: "alice"}
	e.Judge(sql, s)
	if n := testing.AllocsPerRun(100, func() { e.Judge(sql, s) }); n != 0 {
		t.Errorf("Judge of a cached text as its user: %v allocations, want 0", n)
	}
}
