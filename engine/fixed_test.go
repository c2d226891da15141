package engine

import (
	"net/netip"
	"testing"
	"time"
)

// A fixed verdict (fixed.go) is the verdict judge finds in every session:
// for each policy, text and session, Judge (which takes the fixed verdict
// where there is one) equals judge on the same facts, and texts whose
// verdict depends on the session are not fixed.
func TestFixedVerdictIsTheJudgedOne(t *testing.T) {
	policies := map[string]string{
		"plain": "rules:\n  - {id: no-f, action: deny, match: {functions: [f]}}\n  - {id: log-g, action: log, match: {functions: [g]}}\n",
		"scoped-first": "rules:\n  - {id: ok-f-alice, action: allow, users: [alice], match: {functions: [f]}}\n" +
			"  - {id: no-f, action: deny, match: {functions: [f]}}\n",
		"scoped-later": "rules:\n  - {id: no-f, action: deny, match: {functions: [f]}}\n" +
			"  - {id: ok-f-alice, action: allow, users: [alice], match: {functions: [f]}}\n",
		"net":    "rules:\n  - {id: no-f-net, action: deny, client_addrs: [10.0.0.0/8], match: {functions: [f]}}\n",
		"rate":   "rules:\n  - {id: f-rate, action: deny, match: {functions: [f], rate: {per_second: 1, per: [user]}}}\n",
		"window": "rules:\n  - {id: f-night, action: deny, time: {hours: ['00:00-06:00']}, match: {functions: [f]}}\n",
		"monitor": "mode: monitor\nrules:\n  - {id: no-f, action: deny, mode: enforce, match: {functions: [f]}}\n" +
			"  - {id: no-g, action: deny_and_close, match: {functions: [g]}}\n",
		"creation": "rules:\n  - {id: no-create, action: deny, match: {functions: [create_user]}}\n",
	}
	texts := []string{"f()", "g()", "f() g()", "h()", "", "f() unless alice", "h() in sysdb f()",
		"grant creates", "grant creates-if-mode", "!f()", "!x"}
	sessions := []*Session{
		nil,
		{User: "alice"},
		{User: "bob", Database: "sysdb"},
		{User: "carol", ClientAddr: netip.MustParseAddr("10.1.2.3")},
		{User: "dave", At: time.Date(2026, 12, 2, 3, 0, 0, 0, time.Local)},
		{User: "erin", At: time.Date(2026, 12, 2, 13, 0, 0, 0, time.Local), Lex: LexState{AutoCreateUser: true}},
	}
	fixed := map[string]bool{}
	for name, policy := range policies {
		for _, opts := range []Options{{}, {CacheBytes: -1}} {
			// Two engines fed alike, so that rate state evolves alike.
			e, je := mustEngine(t, policy, opts), mustEngine(t, policy, opts)
			for _, text := range texts {
				for round := 0; round < 2; round++ {
					for _, s := range sessions {
						got := e.Judge([]byte(text), s)
						js := s
						if js == nil {
							js = &noSession
						}
						tf := je.facts([]byte(text))
						want := je.judge(tf, js)
						textMarks(tf).into(&want)
						if got != want {
							t.Errorf("%s, %q, session %+v: Judge %+v, judged %+v", name, text, s, got, want)
						}
						fixed[name+" "+text] = tf.fixed
					}
				}
			}
		}
	}
	for key, want := range map[string]bool{
		"plain f()": true, "plain f() g()": true, "plain h()": true, "monitor f() g()": true,
		"scoped-first f()": false, "scoped-later f()": true, "scoped-first h()": true,
		"net f()": false, "rate f()": false, "window f()": false,
		"plain f() unless alice": false, "plain h() in sysdb f()": false,
		"creation grant creates": false, "creation grant creates-if-mode": false,
		"plain !f()": false,
	} {
		if fixed[key] != want {
			t.Errorf("%s: fixed %v, want %v", key, fixed[key], want)
		}
	}
}
