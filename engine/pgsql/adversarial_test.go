package pgsql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/internal/corpus"
)

// The adversarial corpus: testdata/adversarial/*.tsv, one file per bypass
// class (docs/policy.md, "What the engine guarantees"). Each line is
//
//	expect<TAB>statement[<TAB>session]
//
// expect is a rule id of the default policy (the statement must be denied by
// that rule), "deny" (denied by any rule, parse errors included) or "allow"
// (must pass: the benign face of the class). statement is taken as written,
// or, when it starts with a double quote, as a Go string literal, for
// control characters and bytes that are not UTF-8. session, when present,
// is a comma-separated list of key=value settings of the session the
// statement is judged in (parseSessionSpec). Blank lines and lines starting
// with "#" are skipped.

type adversarialCase struct {
	file    string
	line    int
	expect  string
	sql     string
	session string
}

func readAdversarial(t testing.TB) []adversarialCase {
	t.Helper()
	cs, err := corpus.Read("testdata/adversarial/*.tsv")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]adversarialCase, len(cs))
	for i, c := range cs {
		out[i] = adversarialCase{file: c.File, line: c.Line, expect: c.Expect, sql: c.SQL, session: c.Session}
	}
	return out
}

// TestAdversarialCorpus judges every corpus line with the default policy,
// through the caches (twice, so that the second judgement is a cache hit)
// and without them.
func TestAdversarialCorpus(t *testing.T) {
	cached, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	uncached, err := engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range readAdversarial(t) {
		s := &engine.Session{User: "app", Database: "app"}
		if err := parseSessionSpec(c.session, s); err != nil {
			t.Fatalf("%s:%d: session %q: %v", c.file, c.line, c.session, err)
		}
		for round, e := range []*engine.Engine{cached, cached, uncached} {
			v := e.Judge([]byte(c.sql), s)
			ok := false
			switch c.expect {
			case "allow":
				ok = !v.Action.Denies()
			case "deny":
				ok = v.Action.Denies()
			default:
				ok = v.Action.Denies() && v.RuleID == c.expect
			}
			if !ok {
				t.Errorf("%s:%d (round %d): %q session %q\n got: %v %s (%s)\nwant: %s", c.file, c.line, round, c.sql, c.session, v.Action, v.RuleID, v.Reason, c.expect)
				break
			}
			if v.Action.Denies() && v.Reason == "" {
				t.Errorf("%s:%d: %q: deny without a reason", c.file, c.line, c.sql)
			}
		}
	}
}
