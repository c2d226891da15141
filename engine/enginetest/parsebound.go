// Package enginetest holds tests every dialect runs against the engine, in
// the manner of testing/fstest: a dialect's test calls one with its
// Dialect, so a property of the parser-free core is checked once, on each
// real parser.
package enginetest

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// BigTexts are texts of at least n bytes in the shapes whose parse is
// costliest or whose reading is longest: one bulk INSERT ... VALUES, an IN
// list, nested parentheses, a string literal, a comment.
func BigTexts(n int) map[string]string {
	var b strings.Builder
	b.WriteString("INSERT INTO t (a, b) VALUES ")
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(123456, 'abcdefgh')")
	}
	ins := b.String()
	b.Reset()
	b.WriteString("SELECT a FROM t WHERE a IN (")
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("1234567")
	}
	b.WriteString(")")
	d := n / 2
	return map[string]string{
		"insert":  ins,
		"in-list": b.String(),
		"nested":  "SELECT " + strings.Repeat("(", d) + "1" + strings.Repeat(")", d),
		"string":  "SELECT '" + strings.Repeat("x", n) + "'",
		"comment": "SELECT 1 /* " + strings.Repeat("y", n) + " */",
	}
}

// ParseBound: a text beyond the parse bound is denied unparsed by the
// bound whatever the policy (no limits rule, one scoped to another user,
// on_parse_error: allow), a policy's own limits rule decides first, and a
// shape entry made from a small text does not serve a text of its shape
// beyond the bound.
func ParseBound(t *testing.T, d engine.Dialect, s *engine.Session) {
	mustEngine := func(t *testing.T, policyYAML string, opts engine.Options) *engine.Engine {
		t.Helper()
		p, err := engine.ParsePolicy([]byte(policyYAML))
		if err != nil {
			t.Fatalf("ParsePolicy:\n%s\nerror: %v", policyYAML, err)
		}
		e, err := engine.New(p, d, opts)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	policies := map[string]string{
		"no rules":             "rules: []",
		"parse errors allowed": "on_parse_error: allow\nrules: []",
		"limits of another user": `rules:
  - {id: lim, action: deny, users: [other], match: {limits: {bytes: 1000, depth: 10}}}`,
	}
	for pname, py := range policies {
		e := mustEngine(t, py, engine.Options{})
		for name, text := range BigTexts(10 << 20) {
			v := e.Judge([]byte(text), s)
			if v.Action != engine.ActionDeny || v.RuleID != engine.ParseBoundRule || !strings.Contains(v.Reason, "bytes 1048") {
				t.Errorf("%s: 10 MB %s: %+v, want the parse bound's deny", pname, name, v)
			}
		}
	}
	// Smaller bounds, so that the texts below them parse quickly.
	opts := engine.Options{MaxParseBytes: 64 << 10, MaxParseDepth: 50}
	e := mustEngine(t, "rules: []", opts)
	for name, text := range BigTexts(60 << 10) {
		v := e.Judge([]byte(text), s)
		want := engine.ActionAllow
		if name == "nested" {
			want = engine.ActionDeny // depth 30,720 > 50
		}
		if v.Action != want || (want == engine.ActionDeny) != (v.RuleID == engine.ParseBoundRule) {
			t.Errorf("60 KiB %s: %+v, want %v", name, v, want)
		}
	}
	if v := e.Judge([]byte("SELECT "+strings.Repeat("(", 50)+"1"+strings.Repeat(")", 50)), s); v.Action != engine.ActionAllow {
		t.Errorf("depth 50: %+v, want allow", v)
	}
	// The policy's limits rule decides first, with its own reason.
	lim := mustEngine(t, `rules:
  - {id: lim, action: deny, match: {limits: {bytes: 1000}}}`, opts)
	for name, text := range BigTexts(100 << 10) {
		if v := lim.Judge([]byte(text), s); v.RuleID != "lim" {
			t.Errorf("100 KiB %s: %+v, want the limits rule", name, v)
		}
	}
	// A text of a cached shape beyond the bound is not served the shape's
	// facts.
	for i := 0; i < 3; i++ {
		if v := e.Judge([]byte("INSERT INTO t (a, b) VALUES (1, 'x"+strings.Repeat("y", i)+"')"), s); v.Action != engine.ActionAllow {
			t.Fatalf("small insert: %+v", v)
		}
	}
	if e.Stats().Shapes == 0 {
		t.Fatal("the INSERT's shape was not cached")
	}
	big := "INSERT INTO t (a, b) VALUES (1, '" + strings.Repeat("z", 70<<10) + "')"
	if v := e.Judge([]byte(big), s); v.RuleID != engine.ParseBoundRule {
		t.Errorf("70 KiB INSERT of a cached shape: %+v, want the parse bound's deny", v)
	}
}
