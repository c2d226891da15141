package mysql

import (
	"fmt"
	"strconv"
	"strings"
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
	val := func(vs ...int) engine.ParamValues { // 1 true, 0 false, -1 NULL, 2 unknown, else the number
		var out testValues
		for _, v := range vs {
			switch v {
			case -1:
				out = append(out, "NULL")
			case 2:
				out = append(out, "")
			default:
				out = append(out, strconv.Itoa(v))
			}
		}
		return out
	}
	for _, tc := range []struct {
		sql   string
		truth engine.ParamValues
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
		// conditions of parameters and constants: folded with the values
		{"DELETE FROM users WHERE ? = 1", val(1), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE ? = 1", val(2), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE ? = 1", engine.UnknownParams, "no-unfiltered-writes"},
		{"DELETE FROM users WHERE ? = 1", val(0), ""},
		{"DELETE FROM users WHERE ? = 1", val(-1), ""},
		{"DELETE FROM users WHERE ? > 0", val(7), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE ? > 0", val(0), ""},
		{"DELETE FROM users WHERE ? IS NOT NULL", val(0), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE ? IS NOT NULL", val(-1), ""},
		{"DELETE FROM users WHERE IF(?, 1, 0)", val(3), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE IF(?, 1, 0)", val(0), ""},
		{"DELETE FROM users WHERE ? LIKE ?", testValues{"'a'", "'a'"}, "no-unfiltered-writes"},
		{"DELETE FROM users WHERE ? LIKE ?", testValues{"'a'", "'b'"}, ""},
		{"DELETE FROM users WHERE ? OR id = 5", val(1, 0), "no-tautology"}, // the bare arm, decided first
		{"DELETE FROM users WHERE id = 5 OR ? = 1", val(1), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE id = 5 OR ? = 1", val(2), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE id = 5 OR ? = 1", val(0), ""},
		{"DELETE FROM users WHERE (? + 0) = 1", val(1), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE COALESCE(?, 1)", val(-1), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE COALESCE(?, 1)", val(0), ""},
		{"DELETE FROM users WHERE ? IN (1, 2)", val(2), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE ? IN (1, 2)", val(3), ""},
		{"DELETE FROM users WHERE ? <> ?", val(2, 2), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE ? <> ?", val(1, 1), ""},
		{"DELETE FROM users WHERE ? <> ?", val(1, 2), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE name LIKE ?", testValues{"'%'"}, "no-unfiltered-writes"},
		{"DELETE FROM users WHERE name LIKE ?", testValues{"'bob%'"}, ""},
		{"DELETE FROM users WHERE name LIKE ?", engine.UnknownParams, ""},
		{"UPDATE users SET admin = 1 WHERE ? IS NULL OR id = ?", val(-1, 5), "no-unfiltered-writes"},
		{"UPDATE users SET admin = 1 WHERE ? IS NULL OR id = ?", val(5, 5), ""},
		{"UPDATE users SET admin = 1 WHERE ? IS NULL OR id = ?", engine.UnknownParams, "no-unfiltered-writes"},
		{"UPDATE users SET name = ? WHERE id = ? AND ? = 1", val(0, 5, 1), ""},
		{"DELETE FROM users WHERE EXISTS (SELECT 1 FROM orders WHERE orders.total = ?)", val(5), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE (SELECT COUNT(*) FROM orders) > ?", val(0), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE id = id + ?", val(0), "no-unfiltered-writes"},
		{"DELETE FROM users WHERE id = id + ?", val(1), ""},
		{"PREPARE s FROM 'DELETE FROM users WHERE ? = 1'", val(1), "no-unfiltered-writes"},
		{"PREPARE s FROM 'DELETE FROM users WHERE ? = 1'", val(0), ""},
		{"PREPARE s FROM 'DELETE FROM users WHERE ? = 1'", testValues{"@x"}, "no-unfiltered-writes"},
		{"PREPARE s FROM 'DELETE FROM users WHERE ? = 1'", engine.UnknownParams, "no-unfiltered-writes"},
		{"PREPARE s FROM 'DELETE FROM users WHERE ? = 1'", testValues{"1", "2"}, "no-unfiltered-writes"}, // counts differ: the server refuses
		{"DELETE FROM users WHERE ? = 1 LIMIT ?", val(1, 5), ""},
		{"DELETE FROM users WHERE ? = 1 LIMIT ?", val(1, 50), "no-unfiltered-writes"},
		{"REPLACE INTO users SELECT * FROM users WHERE ? = 1", val(1), "no-unfiltered-writes"},
		// filters by the row: no folding, nothing per execution
		{"DELETE FROM users WHERE id = ?", val(-1), ""},
		{"DELETE FROM users WHERE id IN (?, ?)", val(1, 2), ""},
		{"DELETE FROM users WHERE id > ?", val(-1), ""},
		{"UPDATE users SET name = ? WHERE id = ?", engine.UnknownParams, ""},
		// a SELECT's optional filter is the application's
		{"SELECT * FROM users WHERE ? IS NULL OR name = ?", val(-1, -1), ""},
		{"SELECT * FROM users WHERE (? IS NULL OR name = ?) AND (? IS NULL OR id = ?)", engine.UnknownParams, ""},
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

// testValues are bound values as SQL text ("" not known), for
// JudgeBound.
type testValues []string

func (v testValues) Truth(i int) (bool, bool) {
	if i >= len(v) || v[i] == "" {
		return true, true
	}
	if strings.EqualFold(v[i], "NULL") {
		return false, false
	}
	s := strings.Trim(v[i], "'")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return true, true
	}
	return f != 0, f == 0
}

func (v testValues) AppendSQL(dst []byte, i int) ([]byte, bool) {
	if i >= len(v) || v[i] == "" {
		return dst, false
	}
	return append(dst, v[i]...), true
}

func (v testValues) Count() int { return len(v) }
