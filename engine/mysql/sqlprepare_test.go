package mysql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// opString renders ops as "prepare s [PREPARE s FROM '...']; execute s".
func opString(text string, ops []engine.SQLOp) string {
	var out []string
	for _, o := range ops {
		var k string
		switch o.Kind {
		case engine.SQLPrepare:
			k = "prepare"
		case engine.SQLExecute:
			k = "execute"
		case engine.SQLDeallocate:
			k = "deallocate"
		case engine.SQLCallRoutine:
			k = "call"
		default:
			k = fmt.Sprint(o.Kind)
		}
		s := fmt.Sprintf("%s %s@%d", k, o.Name, o.Stmt)
		if o.Kind == engine.SQLPrepare {
			if o.InnerHi > o.InnerLo {
				s += " [" + text[o.InnerLo:o.InnerHi] + "]"
			} else {
				s += " [whole]"
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func TestSQLOps(t *testing.T) {
	for _, tc := range []struct{ name, sql, want string }{
		{"prepare from a literal", "PREPARE s FROM 'DELETE FROM t'", "prepare s@0 [PREPARE s FROM 'DELETE FROM t']"},
		{"names fold to lower case", "PREPARE `Del` FROM 'SELECT 1'; EXECUTE DEL; DEALLOCATE PREPARE dEl",
			"prepare del@0 [PREPARE `Del` FROM 'SELECT 1';]; execute del@1; deallocate del@2"},
		{"prepare from a variable", "PREPARE s FROM @q", "prepare s@0 [PREPARE s FROM @q]"},
		{"execute using", "EXECUTE s USING @a, @b", "execute s@0"},
		{"drop prepare", "DROP PREPARE s", "deallocate s@0"},
		{"stacked after a select", "SELECT 1; PREPARE s FROM 'SELECT 2'", "prepare s@1 [ PREPARE s FROM 'SELECT 2']"},
		{"call", "CALL p()", "call @0"},
		{"a prepared call calls when executed", "PREPARE s FROM 'CALL p()'", "prepare s@0 [PREPARE s FROM 'CALL p()']; call @0"},
		{"execute immediate names nothing", "EXECUTE IMMEDIATE 'SELECT 1'", ""},
		{"select names nothing", "SELECT execute FROM prepare", ""},
		{"set statement for execute", "SET STATEMENT max_statement_time=1 FOR EXECUTE s", "execute s@0"},
		{"execute behind a text TiDB rejects", "SELECT 1 RETURNING x; EXECUTE `S`", "execute s@1"},
		{"prepare in a text TiDB rejects", "PREPARE s FROM CONCAT('DELETE', ' FROM t')", "prepare s@0 [whole]"},
		{"a compound statement runs its EXECUTE now", "BEGIN NOT ATOMIC EXECUTE s; END", "execute s@1"},
		{"after THEN, ELSE and a label", "IF 1 THEN EXECUTE a; ELSE EXECUTE b; END IF; l: LOOP EXECUTE c; END LOOP", "execute a@0; execute b@1; execute c@3"},
		{"a CALL inside a compound statement", "BEGIN NOT ATOMIC SELECT 1; CALL p(); END", "call @2"},
		{"a column named execute is no statement", "SELECT execute FROM t RETURNING x", ""},
		{"columns named prepare and call", "SELECT prepare, `call` FROM t WHERE execute = 1 RETURNING x", ""},
		{"a handler's statement", "BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION EXECUTE h; SELECT 1; END", "execute h@1"},
		{"a handler's prepare", "BEGIN NOT ATOMIC DECLARE EXIT HANDLER FOR NOT FOUND PREPARE h FROM 'SELECT 1'; END", "prepare h@1 [whole]"},
		{"trailing spaces are part of the name", "PREPARE `s  ` FROM 'SELECT 1'", "prepare s  @0 [PREPARE `s  ` FROM 'SELECT 1']"},
		{"execute immediate of a call calls", "EXECUTE IMMEDIATE 'CALL p()'", "call @0"},
		{"drop prepare in a text TiDB rejects", "SELEC 1; DROP PREPARE s; deallocate prepare t", "deallocate s@1; deallocate t@2"},
		{"only ASCII letters fold: KELVIN SIGN is not k", "PREPARE \u212a FROM 'SELECT 1'; EXECUTE \u212A",
			"prepare \u212a@0 [PREPARE \u212a FROM 'SELECT 1';]; execute \u212a@1"},
		{"nor DOTTED CAPITAL I i", "EXECUTE \u0130", "execute \u0130@0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tf := analyze(tc.sql, engine.LexStats{})
			if got := opString(tc.sql, tf.SQLOps); got != tc.want {
				t.Errorf("%q\n got: %s\nwant: %s", tc.sql, got, tc.want)
			}
		})
	}
}

// TestPreparedNestedOps: a PREPARE or EXECUTE IMMEDIATE text that itself
// prepares, executes or deallocates is refused by the server; were it run,
// it would act on a name the relay does not follow: unparsed_body.
func TestPreparedNestedOps(t *testing.T) {
	e := mustEngine(t, string(DefaultPolicyYAML()), engine.Options{})
	for _, sql := range []string{
		"PREPARE a FROM 'EXECUTE b'",
		"PREPARE a FROM 'DEALLOCATE PREPARE b'",
		"PREPARE a FROM 'PREPARE b FROM ''SELECT 1'''",
		"EXECUTE IMMEDIATE 'EXECUTE b'",
		"EXECUTE IMMEDIATE 'DROP PREPARE b'",
	} {
		if v := e.Judge([]byte(sql), nil); v.Action != engine.ActionDeny || v.RuleID != "no-unparsed-prepare" {
			t.Errorf("%q: got %v %s, want deny no-unparsed-prepare", sql, v.Action, v.RuleID)
		}
	}
	if v := e.Judge([]byte("PREPARE a FROM 'SELECT 1'"), nil); v.Action.Denies() {
		t.Errorf("PREPARE a FROM 'SELECT 1': %v %s", v.Action, v.RuleID)
	}
}
