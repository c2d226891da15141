package pgsql

import (
	"strings"
	"testing"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// whereOf parses "SELECT 1 FROM t WHERE cond" and returns cond.
func whereOf(t *testing.T, cond string) *pg_query.Node {
	t.Helper()
	tree, err := pg_query.Parse("SELECT 1 FROM t WHERE " + cond)
	if err != nil {
		t.Fatalf("%s: %v", cond, err)
	}
	return tree.Stmts[0].GetStmt().GetSelectStmt().WhereClause
}

func TestFoldConstants(t *testing.T) {
	// Each condition is constant: want is what PostgreSQL 15 returns for
	// SELECT <cond> ("t", "f", "null"), or "?" where the engine does not
	// fold (an error on the server, or beyond the documented coverage).
	for _, c := range []struct{ cond, want string }{
		{"1 = 1", "t"},
		{"1 = 2", "f"},
		{"'1' = 1", "t"},
		{"1/2 = 0", "t"},
		{"1.0/2 = 0.5", "t"},
		{"7 % 3 = 1", "t"},
		{"1/0 = 1", "?"},
		{"'t'::bool", "t"},
		{"'yes'::boolean", "t"},
		{"'of'::bool", "f"},
		{"'o'::bool", "?"},
		{"1::boolean", "t"},
		{"0::bool", "f"},
		{"bool('on')", "t"},
		{"1 IN (1, 2)", "t"},
		{"3 IN (1, 2)", "f"},
		{"3 IN (1, NULL)", "null"},
		{"1 IN (1, NULL)", "t"},
		{"3 NOT IN (1, 2)", "t"},
		{"3 NOT IN (1, NULL)", "null"},
		{"2 BETWEEN 1 AND 3", "t"},
		{"2 NOT BETWEEN 1 AND 3", "f"},
		{"2 BETWEEN 3 AND 1", "f"},
		{"2 BETWEEN SYMMETRIC 3 AND 1", "t"},
		{"1 = ANY(ARRAY[1, 2])", "t"},
		{"1 = ALL(ARRAY[1, 2])", "f"},
		{"1 <> ALL(ARRAY[2, 3])", "t"},
		{"'abc' LIKE 'a%'", "t"},
		{"'abc' LIKE 'a_c'", "t"},
		{"'abc' LIKE 'b%'", "f"},
		{"'abc' NOT LIKE 'b%'", "t"},
		{"'ABC' ILIKE 'a%'", "t"},
		{`'a%' LIKE 'a\%'`, "t"},
		{"'a%' LIKE 'a!%' ESCAPE '!'", "t"},
		{"'abc' SIMILAR TO '(a|x)%'", "t"},
		{"'abc' SIMILAR TO 'b%'", "f"},
		{"'abc' ~ '^a'", "t"},
		{"(1=1) IS TRUE", "t"},
		{"NULL IS NOT FALSE", "t"},
		{"NULL IS TRUE", "f"},
		{"NULL IS UNKNOWN", "t"},
		{"NULL::bool IS NOT TRUE", "t"},
		{"1 IS DISTINCT FROM 2", "t"},
		{"NULL IS DISTINCT FROM NULL", "f"},
		{"NULL IS NOT DISTINCT FROM NULL", "t"},
		{"CASE WHEN 1=1 THEN true ELSE false END", "t"},
		{"CASE 2 WHEN 1 THEN false WHEN 2 THEN true END", "t"},
		{"CASE WHEN false THEN true END", "null"},
		{"COALESCE(NULL, true)", "t"},
		{"COALESCE(NULL, NULL)::bool", "null"},
		{"NULLIF(1, 1) IS NULL", "t"},
		{"NULLIF(1, 2) = 1", "t"},
		{"GREATEST(1, 5, NULL) = 5", "t"},
		{"LEAST(3, 2) = 2", "t"},
		{"lower('A') = 'a'", "t"},
		{"upper('a') = 'A'", "t"},
		{"length('x') = 1", "t"},
		{"char_length('héllo') = 5", "t"},
		{"octet_length('é') = 2", "t"},
		{"abs(-1) = 1", "t"},
		{"trim(' a ') = 'a'", "t"},
		{"concat('a', NULL, 'b') = 'ab'", "t"},
		{"md5('a') = '0cc175b9c0f1b6a831c399e269772661'", "t"},
		{"substr('abcdef', 2, 3) = 'bcd'", "t"},
		{"substring('abcdef' from 0 for 2) = 'a'", "t"},
		{"position('b' in 'abc') = 2", "t"},
		{"left('abc', -1) = 'ab'", "t"},
		{"replace('aXa', 'X', 'b') = 'aba'", "t"},
		{"repeat('ab', 2) = 'abab'", "t"},
		{"chr(65) = 'A'", "t"},
		{"round(2.5) = 3", "t"},
		{"pg_catalog.lower('A') = 'a'", "t"},
		{"myschema.lower('A') = 'a'", "?"},
		{"lower(NULL) IS NULL", "t"},
		{"EXISTS (SELECT 1)", "t"},
		{"EXISTS (SELECT 1 WHERE false)", "f"},
		{"NOT EXISTS (SELECT 1 WHERE 1 = 2)", "t"},
		{"(SELECT 1) = 1", "t"},
		{"1 IN (SELECT 1)", "t"},
		{"1 OPERATOR(pg_catalog.=) 1", "t"},
		{"1 OPERATOR(myschema.=) 1", "?"},
		{"B'1' = B'1'", "t"},
		{"B'1' = B'0'", "f"},
		{"X'F' = B'1111'", "t"},
		{"B'10' || B'1' = B'101'", "t"},
		{"NOT NOT true", "t"},
		{"NOT (NOT (1 = 1))", "t"},
		{"NULL = NULL", "null"},
		{"NULL AND false", "f"},
		{"NULL OR true", "t"},
		{"NULL OR false", "null"},
		{"-(-1) = 1", "t"},
		{"'2' > '10'", "t"},
		{"1::text = '1'", "t"},
		{"'abc'::varchar(1) = 'a'", "?"},
		{"'a' = 'a' COLLATE \"C\"", "t"},
		{"1 = ANY('{1,2}'::int[])", "t"},
		{"3 = ANY('{1,2}'::int[])", "f"},
		{"3 = ANY('{1,NULL}'::int[])", "null"},
		{"'b' <> ALL('{a,c}'::text[])", "t"},
		{"(SELECT 1 LIMIT 1) = 1", "t"},
		{"(SELECT 1 LIMIT 0) = 1", "?"},
		{"'abc' ^@ 'ab'", "t"},
		{"1 = 1::int8", "t"},
		{"int4eq(1, 1)", "t"},
		{"pg_catalog.texteq('a', 'b')", "f"},
		{"boolne(true, false)", "t"},
	} {
		t.Run(c.cond, func(t *testing.T) {
			var fo folder
			v := asBool(fo.fold(whereOf(t, c.cond), 0))
			got := "?"
			switch v.kind {
			case cvBool:
				got = map[bool]string{true: "t", false: "f"}[v.b]
			case cvNull:
				got = "null"
			}
			if got != c.want {
				t.Errorf("fold(%s) = %s, want %s", c.cond, got, c.want)
			}
		})
	}
}

func TestAlwaysTrue(t *testing.T) {
	for _, c := range []struct {
		cond string
		want bool
	}{
		{"true", true},
		{"id = id", true},
		{"t.id >= t.id", true},
		{"id::text = id::text", true},
		{"id = id::int", true},
		{"lower(name) = lower(name)", true},
		{"random() = random()", false},
		{"id > id", false},
		{"id IS NULL OR id IS NOT NULL", true},
		{"(a = 1 OR id IS NULL) OR id IS NOT NULL", true},
		{"id IS NOT DISTINCT FROM id", true},
		{"a IS DISTINCT FROM b OR a IS NOT DISTINCT FROM b", true},
		{"flag IS TRUE OR flag IS NOT TRUE", true},
		{"NOT (x IS NULL) OR x IS NULL", true},
		{"id IN (1, id)", true},
		{"name LIKE '%'", true},
		{"name NOT LIKE '%'", false},
		{"CASE WHEN a = 1 THEN true ELSE true END", true},
		{"CASE WHEN a = 1 THEN true END", false},
		{"COALESCE(a = 1, true)", false},
		{"COALESCE(true, a = 1)", true},
		{"(a = 1 OR 1 = 1) IS TRUE", true},
		{"(a = 1) IS NOT FALSE", false},
		{"a = 1 AND 1 = 1", false},
		{"id = id AND 1 = 1", true},
		{"a = 1", false},
		{"a = $1 OR $1 IS NULL", false},
		{"NULL = NULL", true}, // with transform_null_equals on
		{"a = NULL", false},
		{"a = NULL OR NULL IS NULL", true},
		{"NOT (a <> a)", false}, // NULL where a is NULL; x <> x is not modelled as false-only
		{"a = 5 OR 5 IS NULL", false},
		{"id = 5 OR id <> 5", true},
		{"id < 5 OR id >= 5", true},
		{"id < 5 OR 5 <= id", true},
		{"id < 5 OR id > 5", false},
		{"a = 1 OR NOT a = 1", true},
		{"ARRAY[1] = ARRAY[1]", true},
		{"(a, b) = (a, b)", true},
		{"current_user = current_user", true},
	} {
		t.Run(c.cond, func(t *testing.T) {
			if got := alwaysTrue(whereOf(t, c.cond), 0); got != c.want {
				t.Errorf("alwaysTrue(%s) = %v, want %v", c.cond, got, c.want)
			}
		})
	}
}

func TestOrTautology(t *testing.T) {
	for _, c := range []struct {
		cond string
		want bool
	}{
		{"a = 1 OR 1 = 1", true},
		{"a = 1 OR 'yes'::bool", true},
		{"a = 1 OR 1 IN (1, 2)", true},
		{"a = 1 OR 2 BETWEEN 1 AND 3", true},
		{"a = 1 OR 1 = ANY(ARRAY[1])", true},
		{"a = 1 OR 'a' LIKE 'a%'", true},
		{"a = 1 OR (1 = 1) IS TRUE", true},
		{"a = 1 OR CASE WHEN true THEN true END", true},
		{"a = 1 OR COALESCE(NULL, true)", true},
		{"a = 1 OR lower('A') = 'a'", true},
		{"a = 1 OR EXISTS (SELECT 1)", true},
		{"a = 1 OR (SELECT 1) = 1", true},
		{"a = 1 OR b IS NULL OR b IS NOT NULL", true},
		{"a = 1 OR 1 OPERATOR(pg_catalog.=) 1", true},
		{"a = 1 OR B'1' = B'1'", true},
		{"a = 1 OR NOT NOT true", true},
		{"a = 1 OR b = b", true},
		{"a = 1 OR NULL = NULL", true}, // transform_null_equals
		{"a = 1 OR NULL IS NULL", true},
		{"(a = 1 OR 1 = 1) IS TRUE", true},
		{"CASE WHEN (a = 1 OR 1 = 1) THEN true END", true},
		{"b = 2 AND (a = 1 OR 1 = 1)", true},
		{"NOT (a = 1 OR 1 = 1)", true},
		// Not tautologies.
		{"1 = 1", false},
		{"1 = 1 AND a = 1", false},
		{"a = 1 OR 1 = 2", false},
		{"a = 1 OR b = 2", false},
		{"a = $1 OR $1 IS NULL", false},
		{"a = NULL OR NULL IS NULL", false}, // the inlined optional filter
		{"(a = NULL OR NULL IS NULL) AND (b = 5 OR 5 IS NULL)", false},
		{"NULL IS NULL OR a = NULL", false},
		{"a LIKE '%' || NULL || '%' OR NULL IS NULL", false},
		{"a = 'x' OR 'x' IS NULL", false},
		{"a = 1 OR NULL::int IS NULL", true}, // V differs from the other arm's constant
		{"a = 1 OR a IS NULL", false},
	} {
		t.Run(c.cond, func(t *testing.T) {
			if got := orTautology(whereOf(t, c.cond), 0); got != c.want {
				t.Errorf("orTautology(%s) = %v, want %v", c.cond, got, c.want)
			}
		})
	}
}

func TestUnfilteredWrites(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want engine.KindSet
	}{
		{"DELETE FROM t WHERE id = 1", 0},
		{"DELETE FROM t WHERE 'yes'::bool", 1 << engine.KindDelete},
		{"DELETE FROM t WHERE EXISTS (SELECT 1)", 1 << engine.KindDelete},
		{"DELETE FROM t WHERE id IS NULL OR id IS NOT NULL", 1 << engine.KindDelete},
		{"DELETE FROM t USING u WHERE u.id = 5", 1 << engine.KindDelete},
		{"DELETE FROM t USING u WHERE t.id = u.id", 0},
		{"DELETE FROM t AS x USING u WHERE x.id = u.id", 0},
		{"DELETE FROM s.t USING u WHERE s.t.id = u.id", 0},
		{"DELETE FROM t WHERE CURRENT OF c", 0},
		{"DELETE FROM t WHERE id IN (SELECT id FROM u)", 0},
		{"UPDATE t SET a = 1 FROM u WHERE u.name = 'bob'", 1 << engine.KindUpdate},
		{"UPDATE t SET a = 1 FROM u WHERE t.uid = u.id", 0},
		{"UPDATE t SET a = 1 WHERE id = id::int", 1 << engine.KindUpdate},
		{"UPDATE t SET a = 1 WHERE 1 IN (1)", 1 << engine.KindUpdate},
		{"UPDATE t SET a = 1 WHERE (SELECT 1) = 1", 1 << engine.KindUpdate},
		{"UPDATE t SET a = 1 WHERE a = NULL OR NULL IS NULL", 1 << engine.KindUpdate},
		{"MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE", 1 << engine.KindDelete},
		{"MERGE INTO t USING s ON s.x = 1 WHEN MATCHED THEN UPDATE SET a = 1", 1 << engine.KindUpdate},
		{"MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", 0},
		{"MERGE INTO t USING s ON true WHEN MATCHED AND t.a > 5 THEN DELETE", 0},
		{"MERGE INTO t USING s ON true WHEN NOT MATCHED THEN INSERT VALUES (1)", 0},
		{"DELETE FROM t WHERE id = 5 OR int4eq(1, 1)", 1 << engine.KindDelete},
		{"DELETE FROM t WHERE id = 5 OR current_user = 'admin'", 1 << engine.KindDelete},
		{"DELETE FROM t WHERE id = 5 OR 1 = 2", 0},
		{"DELETE FROM t WHERE id = 5 OR NULL", 0},
		{"DELETE FROM t WHERE (id = $1 OR $1 IS NULL)", 0},
		{"DELETE FROM t WHERE (a = 1 OR u.x = 2) AND id = 3", 0},
		{"DELETE FROM t USING u WHERE (t.a = 1 OR u.x = 2)", 1 << engine.KindDelete},
		{"UPDATE t SET a = 1 WHERE NOT (id = 5)", 0},
		{"DELETE FROM t WHERE id IN (SELECT id FROM t)", 1 << engine.KindDelete},
		{"DELETE FROM t WHERE id = ANY(SELECT id FROM public.t)", 1 << engine.KindDelete},
		{"DELETE FROM t WHERE EXISTS (SELECT 1 FROM t t2 WHERE t2.id = t.id)", 1 << engine.KindDelete},
		{"DELETE FROM t x WHERE EXISTS (SELECT 1 FROM t WHERE x.id = t.id)", 1 << engine.KindDelete},
		{"DELETE FROM t WHERE id IN (SELECT id FROM t WHERE a > 5)", 0},
		{"DELETE FROM t WHERE id IN (SELECT tid FROM u)", 0},
		{"DELETE FROM t WHERE id IN (SELECT id FROM t LIMIT 5)", 0},
		{"DELETE FROM t WHERE EXISTS (SELECT 1 FROM t t2 WHERE t2.parent = t.id)", 0},
		// Liquibase's reset of its one-row lock table (lockTableReset), and
		// what is not that reset.
		{"DELETE FROM databasechangeloglock", 0},
		{`DELETE FROM "app"."DATABASECHANGELOGLOCK" RETURNING id`, 0},
		{"DELETE FROM databasechangeloglock WHERE true", 1 << engine.KindDelete},
		{"DELETE FROM databasechangeloglock USING u", 1 << engine.KindDelete},
		{"DELETE FROM databasechangelog", 1 << engine.KindDelete},
		{"UPDATE databasechangeloglock SET locked = false", 1 << engine.KindUpdate},
		{"WITH d AS (DELETE FROM u RETURNING id) DELETE FROM databasechangeloglock", 1 << engine.KindDelete},
	} {
		t.Run(c.sql, func(t *testing.T) {
			tf := analyze(c.sql)
			if tf.ParseError {
				t.Fatalf("%s: %s", c.sql, tf.ParseReason)
			}
			if got := tf.Stmts[0].Unfiltered; got != c.want {
				t.Errorf("%s: unfiltered = %s, want %s", c.sql, kindList(got), kindList(c.want))
			}
		})
	}
}

// FuzzFold: folding any condition the parser accepts terminates without a
// panic, and a condition that folds to a constant agrees with alwaysTrue.
func FuzzFold(f *testing.F) {
	for _, s := range []string{
		"1 = 1", "'t'::bool", "1 IN (1, NULL)", "2 BETWEEN SYMMETRIC 3 AND 1", "'abc' SIMILAR TO '(a|b)%'",
		"'a%' LIKE 'a!%' ESCAPE '!'", "substr('abcdef', -5, 3) = 'a'", "left('abc', -9) = ''", "repeat('x', 1e300) = 'x'",
		"chr(1114111) = 'x'", "CASE 1 WHEN 1 THEN true END", "COALESCE(NULL, x = 1)", "x IS NULL OR x IS NOT NULL",
		"id = 5 OR id <> 5", "1 = ANY('{1,NULL}'::int[])", "(SELECT 1 LIMIT 1) = 1", "B'1' || X'F' = B'11111'",
		"10 ^ 400 > 1", "GREATEST(1, 'a') = 1", "a = NULL OR NULL IS NULL",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cond string) {
		if strings.IndexByte(cond, 0) >= 0 || !utf8.ValidString(cond) {
			return
		}
		tree, err := pg_query.Parse("SELECT 1 FROM t WHERE " + cond)
		if err != nil || len(tree.Stmts) != 1 {
			return
		}
		sel := tree.Stmts[0].GetStmt().GetSelectStmt()
		if sel == nil || sel.WhereClause == nil {
			return
		}
		w := sel.WhereClause
		var fo folder
		v := asBool(fo.fold(w, 0))
		at := alwaysTrue(w, 0)
		if v.kind == cvBool && v.b && !at {
			t.Fatalf("%s folds to true but is not always true", cond)
		}
		if v.kind == cvBool && !v.b && at && !fo.sawNullEq {
			t.Fatalf("%s folds to false but is always true", cond)
		}
		orTautology(w, 0)
		unfilteredWhere(w, &pg_query.RangeVar{Relname: "t"})
	})
}
