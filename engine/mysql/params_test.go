package mysql

import (
	"fmt"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

func TestBareParams(t *testing.T) {
	for _, tc := range []struct {
		sql, want string // want: BareParams as index/arm[!], BareWhere kinds, BareOr
	}{
		{"DELETE FROM t WHERE ?", "[0/0] where=delete or=false"},
		{"UPDATE t SET a = ? WHERE ?", "[1/0] where=update or=false"},
		{"DELETE FROM t WHERE (NOT (?))", "[0/0!] where=delete or=false"},
		{"DELETE FROM t WHERE ! ?", "[0/0!] where=delete or=false"},
		{"DELETE FROM t WHERE ? IS TRUE", "[0/0] where=delete or=false"},
		{"DELETE FROM t WHERE ? IS FALSE", "[0/0!] where=delete or=false"},
		{"DELETE FROM t WHERE ? AND ?", "[0/0 1/0] where=delete or=false"},
		{"DELETE FROM t WHERE id = ? OR ?", "[1/0] where= or=true"},
		{"SELECT * FROM t WHERE a = ? OR (? AND ?)", "[1/0 2/0] where= or=true"},
		{"SELECT * FROM t WHERE a = 1 OR ? OR NOT ?", "[0/0 1/1!] where= or=true"},
		{"SELECT * FROM t JOIN u ON t.id = u.id OR ? WHERE t.a = ?", "[0/0] where= or=true"},
		{"SELECT * FROM t GROUP BY a HAVING COUNT(*) > ? OR ?", "[1/0] where= or=true"},
		{"DELETE FROM t WHERE id IN (SELECT id FROM u WHERE ? OR u.b = 1)", "[0/0] where= or=true"},
		{"PREPARE s FROM 'DELETE FROM t WHERE ?'", "[0/0] where=delete or=false"},
		// not bare: the value is compared, or the arm has a column
		{"DELETE FROM t WHERE id = ?", "[] where= or=false"},
		{"DELETE FROM t WHERE ? = 1", "[] where= or=false"},
		{"DELETE FROM t WHERE ? AND id = 1", "[] where= or=false"},
		{"SELECT * FROM t WHERE ?", "[] where= or=false"},
		{"DELETE FROM t WHERE ? IS NOT TRUE", "[] where= or=false"},
		{"EXPLAIN DELETE FROM t WHERE ?", "[] where= or=false"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			tf := analyze(tc.sql, engine.LexStats{})
			if tf.ParseError || len(tf.Stmts) != 1 {
				t.Fatalf("%q: parse error %v, %d statements", tc.sql, tf.ParseError, len(tf.Stmts))
			}
			st := &tf.Stmts[0]
			var ps []string
			for _, p := range st.BareParams {
				s := fmt.Sprintf("%d/%d", p.Index, p.Arm)
				if p.Negated {
					s += "!"
				}
				ps = append(ps, s)
			}
			var where string
			for _, k := range []engine.StmtKind{engine.KindUpdate, engine.KindDelete} {
				if st.BareWhere.Has(k) {
					where += k.String()
				}
			}
			got := fmt.Sprintf("%v where=%s or=%v", ps, where, st.BareOr)
			if got != tc.want {
				t.Errorf("%q\n got: %s\nwant: %s", tc.sql, got, tc.want)
			}
		})
	}
}

// TestJudgeBound: an execution whose values make a bare condition true is
// judged as the WHERE-less write or the always-true OR arm.
func TestJudgeBound(t *testing.T) {
	e := mustEngine(t, string(DefaultPolicyYAML()), engine.Options{})
	val := func(vs ...int) engine.ParamTruth { // 1 true, 0 false, -1 NULL, 2 unknown
		return func(i int) (bool, bool) {
			if i >= len(vs) {
				return true, true
			}
			switch vs[i] {
			case 1:
				return true, false
			case 0:
				return false, true
			case -1:
				return false, false
			}
			return true, true
		}
	}
	for _, tc := range []struct {
		sql   string
		truth engine.ParamTruth
		rule  string // "" allowed
	}{
		{"DELETE FROM users WHERE ?", val(1), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE ?", val(0), ""},
		{"DELETE FROM users WHERE ?", val(-1), ""},
		{"DELETE FROM users WHERE ?", engine.UnknownParams, "no-unfiltered-writes"},
		{"DELETE FROM users WHERE NOT ?", val(0), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE NOT ?", val(1), ""},
		{"DELETE FROM users WHERE NOT ?", val(-1), ""},
		{"UPDATE users SET admin = 1 WHERE ? AND ?", val(1, 1), "no-unfiltered-writes"},
		{"UPDATE users SET admin = 1 WHERE ? AND ?", val(1, 0), ""},
		{"SELECT * FROM users WHERE id = ? OR ?", val(5, 1), "no-tautology"},
		{"SELECT * FROM users WHERE id = ? OR ?", val(5, 0), ""},
		{"DELETE FROM users WHERE id = ?", val(1), ""},
		{"PREPARE s FROM 'DELETE FROM users WHERE ?'", engine.UnknownParams, "no-unfiltered-writes"},
	} {
		for round := 0; round < 2; round++ { // cold, then cached
			v := e.JudgeBound([]byte(tc.sql), nil, tc.truth)
			got := ""
			if v.Action.Denies() {
				got = v.RuleID
			}
			if got != tc.rule {
				t.Errorf("%q round %d: got %q (%v), want %q", tc.sql, round, got, v.Action, tc.rule)
			}
		}
	}
}
