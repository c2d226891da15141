package pgsql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

func TestLimitMeasures(t *testing.T) {
	for _, c := range []struct {
		sql                  string
		boolTerms            int32
		seriesRows, strBytes int64
		bodyList, bodyDepth  int32
	}{
		{"SELECT 1 WHERE a = 1 AND b = 2 OR c = 3", 4, 0, 0, 0, 0},
		{"SELECT CASE WHEN a THEN 1 WHEN b THEN 2 END", 2, 0, 0, 0, 0},
		{"SELECT NOT a", 0, 0, 0, 0, 0},
		{"SELECT * FROM generate_series(1, 10)", 0, 10, 0, 0, 0},
		{"SELECT * FROM generate_series(10, 1, -2)", 0, 5, 0, 0, 0},
		{"SELECT * FROM generate_series(1, 10, 0)", 0, 0, 0, 0, 0},
		{"SELECT * FROM generate_series(1, 1e12)", 0, 1000000000000, 0, 0, 0},
		{"SELECT * FROM generate_series(1, 10^3)", 0, 1000, 0, 0, 0},
		{"SELECT * FROM generate_series(1, $1)", 0, 0, 0, 0, 0},
		{"SELECT * FROM generate_series(1, 1000) a, generate_series(1, 1000) b", 0, 1000000, 0, 0, 0},
		{"SELECT * FROM generate_series(1, 1e10) a, generate_series(1, 1e10) b", 0, 9223372036854775807, 0, 0, 0},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r", 0, engine.UnboundedRows, 0, 0, 0},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r LIMIT 3", 0, 0, 0, 0, 0},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r LIMIT 3", 0, engine.UnboundedRows, 0, 0, 0},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r ORDER BY 1 LIMIT 3", 0, engine.UnboundedRows, 0, 0, 0},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 9) SELECT * FROM r", 0, 0, 0, 0, 0},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE 2 > 1) SELECT * FROM r", 0, engine.UnboundedRows, 0, 0, 0},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT t.id FROM t JOIN r ON t.p = r.n) SELECT * FROM r", 0, 0, 0, 0, 0},
		{"WITH r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r", 0, 0, 0, 0, 0},
		{"SELECT repeat('ab', 10)", 0, 0, 20, 0, 0},
		{"SELECT repeat(x, 1e9)", 0, 0, 1000000000, 0, 0},
		{"SELECT lpad('', 50), rpad(x, 70, 'y')", 0, 0, 70, 0, 0},
		{"SELECT repeat('x', n) FROM t", 0, 0, 0, 0, 0},
		{"DO $$ BEGIN PERFORM repeat('x', 99); END $$", 0, 0, 99, 2, 1},
		{"DO 'BEGIN PERFORM (1, 2, ((3))); END'", 0, 0, 0, 3, 3},
		{"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT (1, (2))'", 0, 0, 0, 2, 2},
	} {
		t.Run(c.sql, func(t *testing.T) {
			tf := analyze(c.sql)
			if tf.ParseError {
				t.Fatalf("%s: %s", c.sql, tf.ParseReason)
			}
			f := tf.Stmts[0]
			if f.BoolTerms != c.boolTerms || f.SeriesRows != c.seriesRows || f.StringBytes != c.strBytes || f.CodeList != c.bodyList || f.CodeDepth != c.bodyDepth {
				t.Errorf("%s: bool_terms %d series_rows %d string_bytes %d body list/depth %d/%d, want %d %d %d %d/%d",
					c.sql, f.BoolTerms, f.SeriesRows, f.StringBytes, f.CodeList, f.CodeDepth, c.boolTerms, c.seriesRows, c.strBytes, c.bodyList, c.bodyDepth)
			}
		})
	}
}

func TestLimitKeys(t *testing.T) {
	for _, c := range []struct {
		name, limits, sql string
		reason            string // "" for allowed
	}{
		{"bool_terms over", "{bool_terms: 3}", "SELECT * FROM t WHERE a = 1 OR a = 2 OR a = 3 OR a = 4", "bool_terms 4 > 3"},
		{"bool_terms at", "{bool_terms: 4}", "SELECT * FROM t WHERE a = 1 OR a = 2 OR a = 3 OR a = 4", ""},
		{"case arms", "{bool_terms: 2}", "SELECT CASE WHEN a = 1 THEN 1 WHEN a = 2 THEN 2 WHEN a = 3 THEN 3 END FROM t", "bool_terms 3 > 2"},
		{"series over", "{series_rows: 1000}", "SELECT * FROM generate_series(1, 1001)", "series_rows 1001 > 1000"},
		{"series at", "{series_rows: 1000}", "SELECT * FROM generate_series(1, 1000)", ""},
		{"series 10^12", "{series_rows: 1000000000000}", "SELECT * FROM generate_series(0, 1e12)", "series_rows 1000000000001 > 1000000000000"},
		{"recursion", "{series_rows: 1000}", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r", "series_rows unbounded"},
		{"string bytes", "{string_bytes: 100}", "SELECT repeat('abc', 34)", "string_bytes 102 > 100"},
		{"string bytes lpad", "{string_bytes: 100}", "SELECT lpad('a', 100)", ""},
		{"body list", "{in_list: 3}", "DO 'BEGIN PERFORM * FROM t WHERE id IN (1, 2, 3, 4); END'", "in_list 4 > 3"},
		{"body depth", "{depth: 2}", "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS E'SELECT (((1)))'", "depth 3 > 2"},
		{"dollar body list before parsing", "{in_list: 3}", "DO $$ BEGIN PERFORM * FROM t WHERE id IN (1, 2, 3, 4); END $$", "in_list 4 > 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := mustEngine(t, "rules:\n  - {id: r, action: deny, reason: big, match: {limits: "+c.limits+"}}\n", engine.Options{})
			v := e.Judge([]byte(c.sql), nil)
			if c.reason == "" {
				if v.Action.Denies() {
					t.Errorf("%s: denied (%s), want allowed", c.sql, v.Reason)
				}
				return
			}
			if v.Action != engine.ActionDeny || v.RuleID != "r" || !strings.Contains(v.Reason, c.reason) {
				t.Errorf("%s: %v %s %q, want deny r with %q", c.sql, v.Action, v.RuleID, v.Reason, c.reason)
			}
		})
	}
}
