package engine

import (
	"hash/fnv"
	"regexp"
	"strings"
	"testing"
)

// testDialect reads every text as one SELECT that calls the functions
// named before a "(": enough facts for the core's tests, which are of
// caches, rates and policies, not of SQL. A text that starts with "!" is a
// parse error of which those calls are all the dialect is sure of.
type testDialect struct{}

var testCall = regexp.MustCompile(`([A-Za-z_][A-Za-z_0-9]*)\(`)

func (testDialect) Name() string { return "test" }

func (testDialect) Read(sql []byte, _ *LexState) ([]byte, string, string, bool) {
	return sql, "", "", true
}

func (testDialect) Prescan(text string, _ int) LexStats { return LexStats{Bytes: len(text)} }

func (testDialect) Analyze(text string, lex LexStats) *TextFacts {
	st := StmtFacts{Kind: KindSelect, Kinds: 1 << KindSelect}
	for _, m := range testCall.FindAllStringSubmatch(text, -1) {
		st.Funcs = append(st.Funcs, FuncRef{Name: strings.ToLower(m[1])})
	}
	if calls, u, ok := strings.Cut(text, " unless "); ok {
		// "f() unless alice": user alice's session calls nothing.
		st.Funcs = nil
		for _, m := range testCall.FindAllStringSubmatch(calls, -1) {
			st.Funcs = append(st.Funcs, FuncRef{Name: strings.ToLower(m[1])})
		}
		uf := UserFacts{User: u, Facts: st}
		uf.Facts.Funcs = nil
		st.AsUser = []UserFacts{uf}
	}
	if _, in, ok := strings.Cut(text, " in "); ok {
		// "f() in sysdb g()": in database sysdb, g is called too.
		db, calls, _ := strings.Cut(in, " ")
		d := DatabaseFacts{Database: db, Facts: st}
		d.Facts.Funcs = nil
		for _, m := range testCall.FindAllStringSubmatch(calls, -1) {
			d.Facts.Funcs = append(d.Facts.Funcs, FuncRef{Name: strings.ToLower(m[1])})
		}
		st.Funcs = nil
		for _, m := range testCall.FindAllStringSubmatch(text[:len(text)-len(in)], -1) {
			st.Funcs = append(st.Funcs, FuncRef{Name: strings.ToLower(m[1])})
		}
		d.Facts.Funcs = append(d.Facts.Funcs, st.Funcs...)
		st.InDatabase = []DatabaseFacts{d}
	}
	switch {
	case strings.Contains(text, " creates-if-mode"):
		// a GRANT that creates its grantee when the session's mode lets it
		st.CreatesGrantee = GranteeMay
	case strings.Contains(text, " creates"):
		st.CreatesGrantee = GranteeCreated
	}
	tf := &TextFacts{Stmts: []StmtFacts{st}, Lex: lex}
	if strings.HasPrefix(text, "!") {
		tf.ParseError, tf.ParseReason = true, "test parse error"
		if len(st.Funcs) == 0 {
			tf.Stmts = nil
		}
	}
	return tf
}

// GranteeCreation: the account a GRANT creates is a call of create_user.
func (testDialect) GranteeCreation() StmtFacts {
	return StmtFacts{Kind: KindDCL, Kinds: 1 << KindDCL, Funcs: []FuncRef{{Name: "create_user"}}}
}

func (testDialect) Fingerprint(stmt string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(stmt))
	return h.Sum64()
}

func (testDialect) Normalize(stmt string) (string, error) { return stmt, nil }

func (testDialect) Objects() []string { return []string{"function", "table"} }

func (testDialect) Fills(string) bool { return true }

func mustEngine(t testing.TB, policyYAML string, opts Options) *Engine {
	t.Helper()
	p, err := ParsePolicy([]byte(policyYAML))
	if err != nil {
		t.Fatalf("ParsePolicy:\n%s\nerror: %v", policyYAML, err)
	}
	e, err := New(p, testDialect{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A dialect that cannot fill a key the policy uses is refused, with the
// rule's line.
type partialDialect struct{ testDialect }

func (partialDialect) Fills(key string) bool { return key != "dynamic_sql" }

func TestCheckKeysTheDialectFills(t *testing.T) {
	p, err := ParsePolicy([]byte("rules:\n  - {id: a, action: deny, match: {kind: [select]}}\n  - {id: b, action: deny, match: {dynamic_sql: true}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(p, partialDialect{}, Options{})
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "dynamic_sql") {
		t.Errorf("New with a dialect that cannot fill dynamic_sql: got %v, want an error naming line 3 and dynamic_sql", err)
	}
	if _, err := New(p, testDialect{}, Options{}); err != nil {
		t.Errorf("New with a dialect that fills every key: %v", err)
	}
}

// A parse error whose facts a deny rule matches is denied by that rule when
// it is at least as strong as on_parse_error; an allow or log rule, or a
// weaker deny, leaves it to on_parse_error.
func TestParseErrorFacts(t *testing.T) {
	const rules = `
rules:
  - {id: ok-f, action: allow, users: [admin], match: {functions: [f]}}
  - {id: no-f, action: deny, match: {functions: [f]}}
  - {id: watch-g, action: deny, mode: monitor, match: {functions: [g]}}
  - {id: log-h, action: log, match: {functions: [h]}}
`
	for _, tc := range []struct {
		onParseError, sql, user string
		action                  Action
		rule                    string
	}{
		{"allow", "!f()", "app", ActionDeny, "no-f"},
		{"allow", "!x(); f()", "app", ActionDeny, "no-f"},
		{"allow", "!f()", "admin", ActionAllow, "parse-error"},
		{"allow", "!h()", "app", ActionAllow, "parse-error"},
		{"allow", "!g()", "app", ActionDeny, "watch-g"},
		{"allow", "!", "app", ActionAllow, "parse-error"},
		{"deny", "!f()", "app", ActionDeny, "no-f"},
		{"deny", "!g()", "app", ActionDeny, "parse-error"},
		{"deny", "!h()", "app", ActionDeny, "parse-error"},
		{"log", "!h()", "app", ActionLog, "parse-error"},
	} {
		for _, opts := range []Options{{}, {CacheBytes: -1}} {
			e := mustEngine(t, "on_parse_error: "+tc.onParseError+"\n"+rules, opts)
			for round := 0; round < 2; round++ {
				v := e.Judge([]byte(tc.sql), &Session{User: tc.user})
				if v.Action != tc.action || v.RuleID != tc.rule || !v.ParseError {
					t.Errorf("on_parse_error %s, %q as %s (round %d): got %v %s parse error %v, want %v %s", tc.onParseError, tc.sql, tc.user, round, v.Action, v.RuleID, v.ParseError, tc.action, tc.rule)
				}
			}
		}
	}
}
