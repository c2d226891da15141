package engine

import (
	"fmt"
	"strings"
	"testing"
)

// storeDialect is testDialect where "CALLS store CALLS2 [as USER]" is a
// statement that calls CALLS and stores code that calls CALLS2, run as
// USER: enough to test how stored code is judged (body.go).
type storeDialect struct{ testDialect }

func (d storeDialect) Analyze(text string, lex LexStats) *TextFacts {
	own, stored, ok := strings.Cut(text, "store ")
	if !ok {
		return d.testDialect.Analyze(text, lex)
	}
	tf := d.testDialect.Analyze(own, lex)
	b, _ := d.ReadBody("test", stored)
	tf.Stmts[0].Bodies = []Body{b}
	return tf
}

func (d storeDialect) ReadBody(_, text string) (Body, bool) {
	calls, user, _ := strings.Cut(text, " as ")
	f := d.testDialect.Analyze(calls, LexStats{}).Stmts[0]
	return Body{Of: "stored code", RunsAs: user, Facts: f}, true
}

func TestStoredCodeJudged(t *testing.T) {
	p, err := ParsePolicy([]byte(`version: 1
rules:
  - id: no-evil
    action: deny
    reason: evil
    match:
      functions: [evil]
  - id: bob-no-secret
    action: deny
    users: [bob]
    reason: secret
    match:
      functions: [secret]
  - id: log-noted
    action: log
    reason: noted
    match:
      functions: [noted]
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(p, storeDialect{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql, user, rule, reason string // rule "": allowed
	}{
		{"ok() store ok()", "alice", "", ""},
		{"ok() store evil()", "alice", "no-evil", "evil (stored code)"},
		// The same rule in the statement and the code: the code's reason.
		{"evil() store evil()", "alice", "no-evil", "evil (stored code)"},
		// Another rule the statement meets first keeps its own reason.
		{"evil() store secret()", "bob", "no-evil", "evil"},
		// Scopes: the session's user, or the user the code runs as.
		{"ok() store secret()", "alice", "", ""},
		{"ok() store secret()", "bob", "bob-no-secret", "secret (stored code)"},
		{"ok() store secret() as bob", "alice", "bob-no-secret", "secret (stored code)"},
		{"ok() store secret() as alice", "bob", "", ""},
		{"ok() store noted()", "alice", "log-noted", "noted (stored code)"},
	} {
		for round := 0; round < 2; round++ { // the second from the cache
			v := e.Judge([]byte(tc.sql), &Session{User: tc.user})
			got := ""
			if v.Action != ActionAllow {
				got = v.RuleID
			}
			if got != tc.rule || tc.rule != "" && v.Reason != tc.reason || v.Statements != 1 {
				t.Errorf("%q as %s (round %d): got %s %s (%s), %d statements; want %q (%s)", tc.sql, tc.user, round, v.Action, v.RuleID, v.Reason, v.Statements, tc.rule, tc.reason)
			}
		}
	}
	// Code read on its own: Engine.Body, JudgeBody, with the caller's Of.
	b := e.Body("test", "secret() as bob", "the body of a function called here")
	if v := e.JudgeBody(b, &Session{User: "alice"}); v.RuleID != "bob-no-secret" || v.Reason != "secret (the body of a function called here)" {
		t.Errorf("JudgeBody: got %s %s (%s)", v.Action, v.RuleID, v.Reason)
	}
	if v := e.JudgeBody(e.Body("test", "ok()", ""), nil); v.Action.Denies() {
		t.Errorf("JudgeBody of harmless code: got %s %s", v.Action, v.RuleID)
	}
	// A dialect that cannot read stored code gives unparsed code.
	e2, err := New(p, testDialect{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b := e2.Body("sql", "x", ""); b.Facts.Unparsed == "" {
		t.Error("a dialect without BodyReader: the code is not unparsed")
	}

	// A learned policy's rules judge what an application sends, not the
	// code it stores: its drift rule and fingerprints do not meet a body.
	lp, err := ParsePolicy([]byte(`version: 1
rules:
  - id: no-evil
    action: deny
    reason: evil
    match:
      functions: [evil]
  - id: learned-app
    action: allow
    users: [alice]
    match:
      fingerprints: ["` + fmt.Sprintf("%016x", testDialect{}.Fingerprint("ok() store ok()")) + `", "` + fmt.Sprintf("%016x", testDialect{}.Fingerprint("ok() store evil()")) + `"]
  - id: learned-drift
    action: deny
    reason: drift
    match: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	le, err := New(lp, storeDialect{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := le.Judge([]byte("ok() store ok()"), &Session{User: "alice"}); v.Action.Denies() {
		t.Errorf("a learned statement storing harmless code: got %s %s (%s)", v.Action, v.RuleID, v.Reason)
	}
	if v := le.Judge([]byte("ok() store evil()"), &Session{User: "alice"}); v.RuleID != "no-evil" {
		t.Errorf("a statement storing evil code under a learned policy: got %s %s", v.Action, v.RuleID)
	}
}
