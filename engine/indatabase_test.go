package engine

import "testing"

// The facts of a statement in the session's current database
// (StmtFacts.InDatabase) decide instead of its own when the session's
// database is theirs, compared without case; in any other database, or with
// none, its own facts decide. Cached or not, the same.
func TestInDatabase(t *testing.T) {
	const policy = `
rules:
  - {id: no-g, action: deny, match: {functions: [g]}}
  - {id: no-f, action: deny, match: {functions: [f]}}
`
	for _, tc := range []struct {
		sql, db string
		action  Action
		rule    string
	}{
		{"h() in sysdb g()", "app", ActionAllow, ""},
		{"h() in sysdb g()", "", ActionAllow, ""},
		{"h() in sysdb g()", "sysdb", ActionDeny, "no-g"},
		{"h() in sysdb g()", "SysDB", ActionDeny, "no-g"},
		{"h() in sysdb g()", "sysdb2", ActionAllow, ""},
		{"f() in sysdb g()", "app", ActionDeny, "no-f"},
		{"f() in sysdb g()", "sysdb", ActionDeny, "no-g"},
	} {
		for _, opts := range []Options{{}, {CacheBytes: -1}} {
			e := mustEngine(t, policy, opts)
			for round := 0; round < 2; round++ {
				v := e.Judge([]byte(tc.sql), &Session{Database: tc.db})
				if v.Action != tc.action || v.RuleID != tc.rule {
					t.Errorf("%q in database %q (cache %d, round %d): got %v %s, want %v %s", tc.sql, tc.db, opts.CacheBytes, round, v.Action, v.RuleID, tc.action, tc.rule)
				}
			}
		}
	}
}

// Choosing the facts of the session's database costs a cache hit no
// allocation.
func TestInDatabaseHitAllocs(t *testing.T) {
	e := mustEngine(t, "rules:\n  - {id: no-g, action: deny, match: {functions: [g]}}\n", Options{})
	sql := []byte("h() in sysdb g()")
	s := &Session{Database: "SYSDB"}
	e.Judge(sql, s)
	if n := testing.AllocsPerRun(100, func() { e.Judge(sql, s) }); n != 0 {
		t.Errorf("Judge of a cached text in database %q: %v allocations, want 0", s.Database, n)
	}
}
