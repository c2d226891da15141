package engine

import "testing"

// A statement whose GRANT creates its grantee (StmtFacts.CreatesGrantee) is
// judged also as the dialect's account creation (GranteeCreator): always
// when GranteeCreated, and when GranteeMay only in a session whose sql_mode
// lets a GRANT create an account (LexState.AutoCreateUser, or a mode that
// may be changing), on a server that does so (not MySQL 8). The stronger
// verdict of the two decides; cached or not, the same.
func TestCreatesGrantee(t *testing.T) {
	const policy = `
rules:
  - {id: ok-g, action: allow, match: {functions: [g]}}
  - {id: no-create, action: deny, match: {functions: [create_user]}}
  - {id: log-h, action: log, match: {functions: [h]}}
`
	mariadb := LexState{MariaDB: true, ServerVersion: 101119}
	auto := mariadb
	auto.AutoCreateUser = true
	unconfirmed := mariadb
	unconfirmed.Unconfirmed = true
	mysql8 := LexState{ServerVersion: 80036, AutoCreateUser: true}
	mysql57 := LexState{ServerVersion: 50744, AutoCreateUser: true}
	unknown := LexState{AutoCreateUser: true}
	for _, tc := range []struct {
		name, sql string
		lex       LexState
		action    Action
		rule      string
	}{
		{"may, default mode", "g() creates-if-mode", mariadb, ActionAllow, "ok-g"},
		{"may, mode without NO_AUTO_CREATE_USER", "g() creates-if-mode", auto, ActionDeny, "no-create"},
		{"may, mode changing", "g() creates-if-mode", unconfirmed, ActionDeny, "no-create"},
		{"may, MySQL 8 never creates", "g() creates-if-mode", mysql8, ActionAllow, "ok-g"},
		{"may, MySQL 5.7", "g() creates-if-mode", mysql57, ActionDeny, "no-create"},
		{"may, server not known", "g() creates-if-mode", unknown, ActionDeny, "no-create"},
		{"created, default mode", "g() creates", mariadb, ActionDeny, "no-create"},
		{"created, logged statement", "h() creates", mariadb, ActionDeny, "no-create"},
		{"none", "g()", auto, ActionAllow, "ok-g"},
		{"log then nothing", "h() creates-if-mode", mariadb, ActionLog, "log-h"},
	} {
		for _, opts := range []Options{{}, {CacheBytes: -1}} {
			e := mustEngine(t, policy, opts)
			for round := 0; round < 2; round++ {
				v := e.Judge([]byte(tc.sql), &Session{Lex: tc.lex})
				if v.Action != tc.action || v.RuleID != tc.rule {
					t.Errorf("%s: %q in %+v (cache %d, round %d): got %v %s, want %v %s", tc.name, tc.sql, tc.lex, opts.CacheBytes, round, v.Action, v.RuleID, tc.action, tc.rule)
				}
			}
		}
	}
}

// Judging the account creation beside a cached GRANT costs no allocation.
func TestCreatesGranteeHitAllocs(t *testing.T) {
	e := mustEngine(t, "rules:\n  - {id: no-create, action: deny, match: {functions: [create_user]}}\n", Options{})
	sql := []byte("g() creates-if-mode")
	s := &Session{Lex: LexState{MariaDB: true, AutoCreateUser: true}}
	if v := e.Judge(sql, s); v.RuleID != "no-create" {
		t.Fatalf("got %v %s, want deny no-create", v.Action, v.RuleID)
	}
	if n := testing.AllocsPerRun(100, func() { e.Judge(sql, s) }); n != 0 {
		t.Errorf("Judge of a cached GRANT that creates its grantee: %v allocations, want 0", n)
	}
}
