package mysql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// The learner works in this dialect: statements that differ in literals
// share a fingerprint, the export names them normalized without literals,
// and the exported fragment, as a policy, allows them again.
func TestLearnerRoundTrip(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := engine.NewLearner(Dialect, 0)
	e.SetLearner(l)
	s := &engine.Session{User: "app", Database: "shop"}
	for _, sql := range []string{
		"SELECT * FROM users WHERE email = 'secret@example.com'",
		"SELECT * FROM users WHERE email = 'other@example.com'",
		"UPDATE users SET name = 'Bob' WHERE id = 7",
	} {
		e.Judge([]byte(sql), s)
	}
	if n, _ := l.Len(); n != 2 {
		t.Fatalf("learned %d fingerprints, want 2", n)
	}
	out := string(l.Export())
	if strings.Contains(out, "secret@example.com") || strings.Contains(out, "Bob") || !strings.Contains(out, "mysql dialect") {
		t.Errorf("export has literals or no dialect name:\n%s", out)
	}
	p, err := engine.ParsePolicy([]byte(out + "  - {id: not-learned, action: deny, match: {}}\n"))
	if err != nil {
		t.Fatalf("export does not parse as a policy: %v\n%s", err, out)
	}
	allow, err := engine.New(p, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := allow.Judge([]byte("SELECT * FROM users WHERE email = 'third@example.com'"), s); v.Action != engine.ActionAllow {
		t.Errorf("a learned shape with new literals: got %v %s, want allow", v.Action, v.RuleID)
	}
	if v := allow.Judge([]byte("SELECT * FROM orders"), s); v.Action != engine.ActionDeny {
		t.Errorf("an unlearned statement: got %v %s, want deny", v.Action, v.RuleID)
	}
}
