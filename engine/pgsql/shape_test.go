package pgsql

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// render shows a shape key with its markers as ?i, ?f and ?s.
func render(key []byte) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		if key[i] == 0 && i+1 < len(key) {
			b.WriteString("?" + string(key[i+1]))
			i++
			continue
		}
		b.WriteByte(key[i])
	}
	return b.String()
}

func TestShapeOf(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"INSERT INTO t VALUES (1, 'a', 2.5)", "INSERT INTO t VALUES (?i, ?s, ?f)"},
		{"INSERT INTO t VALUES (0, '', 'it''s')", "INSERT INTO t VALUES (?i, ?s, ?s)"},
		{"insert into t1 values (-5, 1e5, .5, 5., 1_000, 0x1F, 12abc)", "insert into t1 values (?I, 1e5, .5, 5., 1_000, 0x1F, 12abc)"},
		{"INSERT INTO t VALUES (2147483647, 2147483648, -2147483648, -1.5, 3 - 4, ( -6),-7)", "INSERT INTO t VALUES (?i, ?n, ?N, ?F, ?i - ?i, ( ?I),?I)"},
		{"INSERT INTO t VALUES (1 -2, - 3, -1e5)", "INSERT INTO t VALUES (?i -?i, - ?i, -1e5)"},
		{"INSERT INTO t VALUES (E'a\\'b', B'101', X'1F', N'x', U&'d\\0061t', 'c\\d', 'ok')", "INSERT INTO t VALUES (E'a\\'b', B'101', X'1F', N'x', U&'d\\0061t', 'c\\d', ?s)"},
		{"INSERT INTO t VALUES ('a'\n'b', 'c')", "INSERT INTO t VALUES ('a'\n'b', ?s)"},
		{"INSERT INTO t VALUES ($1, $$ 1 'x' $$, $q$ 2 $q$, '3') -- 4 '5'\n", "INSERT INTO t VALUES ($1, $$ 1 'x' $$, $q$ 2 $q$, ?s) -- 4 '5'\n"},
		{"INSERT /* 1 /* '2' */ 3 */ INTO \"t 4\"\"x\" VALUES (5)", "INSERT /* 1 /* '2' */ 3 */ INTO \"t 4\"\"x\" VALUES (?i)"},
		{"INSERT INTO a$1 VALUES (t.5, x2)", "(no shape)"},
		{"INSERT INTO t VALUES ('2024-01-01'::date, 7::bigint)", "INSERT INTO t VALUES (?s::date, ?i::bigint)"},
	}
	for _, tt := range tests {
		key, _, ok := shapeOf(tt.sql)
		got := render(key)
		if !ok {
			got = "(no shape)"
		}
		if got != tt.want {
			t.Errorf("shapeOf(%q)\n got %q\nwant %q", tt.sql, got, tt.want)
		}
	}
	for _, sql := range []string{"INSERT INTO t VALUES (x)", "INSERT INTO t VALUES ('open", "INSERT /* open", "INSERT $$ open", "INSERT 1\x00"} {
		if _, _, ok := shapeOf(sql); ok {
			t.Errorf("shapeOf(%q): want no shape", sql)
		}
	}
}

// variant returns text with every span replaced by another literal of the
// same class, chosen by seed; a negative seed makes the strings invalid
// UTF-8.
func variant(text string, spans []litSpan, seed int) string {
	ints := []string{"0", "7", "2147483647", "42", "000"}
	bigs := []string{"2147483648", "12345678901234567890", "9999999999", "00000000002147483648"}
	floats := []string{"0.0", "98.7650", "1.5", "12345678901234567890.5"}
	strs := []string{"''", "'x''y z'", "'DROP TABLE t; --'", "'é😀'", "'1'"}
	if seed < 0 { // strings that are not UTF-8
		strs, seed = []string{"'\xff'", "'\x80x'"}, 0
	}
	var b strings.Builder
	last := 0
	for i, s := range spans {
		b.WriteString(text[last:s.Start])
		k := seed + i
		class := s.Class
		if class >= 'A' && class <= 'Z' {
			b.WriteByte('-')
			class += negative
		}
		switch class {
		case litInt:
			b.WriteString(ints[k%len(ints)])
		case litBigInt:
			b.WriteString(bigs[k%len(bigs)])
		case litFloat:
			b.WriteString(floats[k%len(floats)])
		default:
			b.WriteString(strs[k%len(strs)])
		}
		last = s.End
	}
	b.WriteString(text[last:])
	return b.String()
}

var shapeSeeds = []string{
	"INSERT INTO t VALUES (1, 'a', 2.5)",
	"INSERT INTO t (a, b, c) VALUES (1, 'x', 3.25), (2, 'y', 4.5), (3, '', 0.0) RETURNING a",
	"INSERT INTO public.t VALUES (1, '2024-01-01'::date, 'x'::text), (2, DEFAULT, NULL);",
	"INSERT INTO t VALUES (1, now(), 'a') ON CONFLICT (a) DO NOTHING",
	"INSERT INTO t VALUES (1) ON CONFLICT (a) DO UPDATE SET b = 5",
	"INSERT INTO t VALUES (-1, 2)",
	"INSERT INTO t VALUES (1, pg_sleep(5))",
	"INSERT INTO t SELECT 1 WHERE 1 = 1",
	"INSERT INTO t VALUES ((SELECT 1 WHERE 1 = 1))",
	"WITH x AS (SELECT 1) INSERT INTO t VALUES (2)",
	"INSERT INTO t VALUES ('a'\n'b')",
	"INSERT INTO t VALUES ('a' 'b')",
	"INSERT INTO t VALUES (1); DELETE FROM t",
	"INSERT INTO t VALUES (1) -- c\n; SELECT 2",
	"INSERT INTO t VALUES ('1'::text::int, 2::numeric(10, 2))",
	"INSERT INTO t VALUES (1.5e3, 2)",
	"INSERT INTO t VALUES (ARRAY[1, 2], '{3}')",
	"INSERT INTO t VALUES (1 + 2, 3)",
	"INSERT INTO t VALUES (interval '1 day', 4)",
	"INSERT INTO t VALUES (5) LIMIT 1",
	"INSERT INTO t(a) OVERRIDING SYSTEM VALUE VALUES (1)",
	"insert into pgbench_history (tid, bid, aid, delta, mtime) values (3, 1, 58, -2456, CURRENT_TIMESTAMP)",
	"INSERT INTO t VALUES ($1, 2)",
	"INSERT INTO t VALUES (1, 'x') /* 'y' */",
	"INSERT INTO t VALUES (true, 1)",
	"INSERT INTO t VALUES (2147483648, -2147483648, -0, -1.5, ( -3 ))",
	"INSERT INTO t VALUES (-5^2, -5::int, -5 COLLATE \"C\", -'5', - 5)",
	"INSERT INTO t VALUES (1 -2, 3)",
}

// FuzzShapeSound checks the claim shape.go rests on: when a text's
// literals are inert, every text of the same shape parses to the same
// statement with other constants, and its facts are the same.
func FuzzShapeSound(f *testing.F) {
	for _, s := range shapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		key, spans, ok := shapeOf(text)
		if !ok {
			return
		}
		tree, err := pg_query.Parse(text)
		if err != nil || !inertLiterals(tree, text, spans) {
			return
		}
		want := template(treeFacts(tree, prescan(text, 0)))
		fpA, errA := pg_query.FingerprintToUInt64(text)
		for seed := 0; seed < 5; seed++ {
			b := variant(text, spans, seed)
			if !utf8.ValidString(b) {
				continue // never served from a shape (analyzeShaped)
			}
			keyB, spansB, okB := shapeOf(b)
			if !okB || string(keyB) != string(key) {
				t.Fatalf("variant %q of %q: shape %q, want %q", b, text, render(keyB), render(key))
			}
			treeB, err := pg_query.Parse(b)
			if err != nil {
				t.Fatalf("variant %q of %q does not parse: %v", b, text, err)
			}
			if !inertLiterals(treeB, b, spansB) {
				t.Fatalf("variant %q of %q: literals not inert", b, text)
			}
			got := template(treeFacts(treeB, prescan(b, 0)))
			if !reflect.DeepEqual(got.Stmts, want.Stmts) {
				t.Fatalf("variant %q of %q: facts\n%+v\nwant\n%+v", b, text, got.Stmts, want.Stmts)
			}
			if fpB, errB := pg_query.FingerprintToUInt64(b); errA == nil && (errB != nil || fpB != fpA) {
				t.Fatalf("variant %q of %q: fingerprint %x, want %x", b, text, fpB, fpA)
			}
		}
	})
}

func TestShapeCacheableSeeds(t *testing.T) {
	// Which seeds get a shape entry: only lone INSERTs whose every plain
	// literal is a whole VALUES item.
	want := map[string]bool{}
	for _, i := range []int{0, 1, 2, 3, 5, 15, 18, 20, 21, 22, 23, 24, 25} {
		want[shapeSeeds[i]] = true
	}
	for _, s := range shapeSeeds {
		e := mustEngine(t, "rules: []", engine.Options{})
		e.Judge([]byte(s), nil)
		if n := e.Stats().Shapes; n != 0 {
			t.Errorf("%q: cached on first sight", s)
		}
		// The doorkeeper admits a shape the second time it is seen.
		if _, spans, ok := shapeOf(s); ok {
			e.Judge([]byte(variant(s, spans, 1)), nil)
		}
		n := e.Stats().Shapes
		if got := n == 1; got != want[s] {
			t.Errorf("%q: shape cached %v, want %v", s, got, want[s])
		}
	}
}

func TestShapeCacheHit(t *testing.T) {
	e := mustEngine(t, `rules:
  - {id: big, action: deny, match: {limits: {bytes: 200}}}
  - {id: secret, action: deny, match: {tables: [secret], kind: [insert]}}
  - {id: fp, action: log, match: {fingerprints: ["0000000000000001"]}}
`, engine.Options{})
	rows := func(n int, s string) string {
		var b strings.Builder
		b.WriteString("INSERT INTO t (id, name) VALUES ")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "(%d, '%s%d')", i, s, i)
		}
		return b.String()
	}
	a := rows(3, "x")
	for _, s := range []string{a, rows(3, "w")} { // the second sighting admits the shape
		if v := e.Judge([]byte(s), nil); v.Action != engine.ActionAllow {
			t.Fatalf("%q: %+v, want allow", s, v)
		}
	}
	if n := e.Stats().Shapes; n != 1 {
		t.Fatalf("shape entries %d, want 1", n)
	}
	// Same shape, other values: a hit, judged alike.
	b := rows(3, "y")
	if v := e.Judge([]byte(b), nil); v.Action != engine.ActionAllow {
		t.Fatalf("%q: %+v, want allow", b, v)
	}
	if n := e.Stats().Shapes; n != 1 {
		t.Errorf("after a same-shape text: %d shape entries, want 1", n)
	}
	// shaped texts are not cached by their exact text.
	if n := e.Stats().Texts; n != 0 {
		t.Errorf("exact cache holds %d texts, want 0 (shaped texts stay out)", n)
	}
	// A shaped text that repeats exactly is then answered by the exact cache.
	for i := 0; i < 2; i++ {
		e.Judge([]byte(b), nil)
	}
	if !e.Cached([]byte(b)) {
		t.Error("a shaped text seen three times is not in the exact cache")
	}
	// Same shape, but over the byte limit: the limit is measured on this
	// text, not taken from the entry.
	long := rows(3, strings.Repeat("z", 100))
	k1, _, _ := shapeOf(a)
	k2, _, _ := shapeOf(long)
	if string(k1) != string(k2) {
		t.Fatal("test texts must share a shape")
	}
	if v := e.Judge([]byte(long), nil); v.Action != engine.ActionDeny || v.RuleID != "big" {
		t.Errorf("long text of a cached shape: %+v, want deny by big", v)
	}
	// Table rules hold on hits.
	s1 := "INSERT INTO secret VALUES (1, 'a')"
	s2 := "INSERT INTO secret VALUES (2, 'b')"
	// A value that is not UTF-8 fails pg_query's parse: a cached shape
	// must not turn that parse error into an allow.
	if v := e.Judge([]byte(rows(3, "\xff")), nil); v.Action != engine.ActionDeny || !v.ParseError {
		t.Errorf("invalid UTF-8 in a cached shape: %+v, want the parse-error deny", v)
	}
	for _, s := range []string{s1, s2} {
		if v := e.Judge([]byte(s), nil); v.Action != engine.ActionDeny || v.RuleID != "secret" {
			t.Errorf("%q: %+v, want deny by secret", s, v)
		}
	}
	// A literal outside VALUES: no entry, and the value is judged.
	e2 := mustEngine(t, "rules: []", engine.Options{})
	for _, s := range []string{
		"INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = 5 WHERE t.v = 5",
		"INSERT INTO t VALUES (2) ON CONFLICT (id) DO UPDATE SET v = 6 WHERE t.v = 7",
		"INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = 5 WHERE 1 = 1 OR t.v = 6",
	} {
		e2.Judge([]byte(s), nil)
	}
	if n := e2.Stats().Shapes; n != 0 {
		t.Errorf("literals in ON CONFLICT: %d shape entries, want 0", n)
	}
}

// TestShapeVerdictsMatchUncached judges variants of the seeds with the
// default policy through the caches and without them.
func TestShapeVerdictsMatchUncached(t *testing.T) {
	cached := mustEngine(t, string(defaultPolicyYAML), engine.Options{})
	plain := mustEngine(t, string(defaultPolicyYAML), engine.Options{CacheBytes: -1})
	s := &engine.Session{User: "app", Database: "app"}
	for _, text := range shapeSeeds {
		_, spans, ok := shapeOf(text)
		texts := []string{text}
		if ok {
			for seed := -1; seed < 5; seed++ {
				texts = append(texts, variant(text, spans, seed))
			}
		}
		for _, x := range texts {
			got, want := cached.Judge([]byte(x), s), plain.Judge([]byte(x), s)
			if got != want {
				t.Errorf("%q: cached %+v, uncached %+v", x, got, want)
			}
		}
	}
}

func TestShapedLead(t *testing.T) {
	for s, want := range map[string]bool{
		"INSERT INTO t VALUES (1)": true, "  \n insert into t values (1)": true, "SELECT 1": true, "select\tx": true,
		"INSERTED": false, "SELECTED": false, "insert": false, "/* c */ INSERT INTO t VALUES (1)": false, "UPDATE t SET a = 1": false,
	} {
		if got := shapedLead(s); got != want {
			t.Errorf("shapedLead(%q) = %v, want %v", s, got, want)
		}
	}
}

// template is what the engine's shape cache keeps of tf (engine
// shapes.go): the statement facts without their place in the text.
func template(tf *engine.TextFacts) *engine.TextFacts {
	t := &engine.TextFacts{Stmts: slices.Clone(tf.Stmts)}
	for i := range t.Stmts {
		t.Stmts[i].Loc, t.Stmts[i].Length = 0, 0
	}
	return t
}

// TestShapeHintsKeepShapesApart: two shapes with the same opening and
// length class share a hint slot (engine/shapehint.go); judged in turn,
// each text gets its own shape's verdict, never the hinted other's.
func TestShapeHintsKeepShapesApart(t *testing.T) {
	cached := mustEngine(t, string(defaultPolicyYAML), engine.Options{})
	plain := mustEngine(t, string(defaultPolicyYAML), engine.Options{CacheBytes: -1})
	s := &engine.Session{User: "app", Database: "app"}
	shapes := []string{
		"INSERT INTO t (a, b) VALUES (%d, 'x') RETURNING a, b, a AS c, b AS d, a AS e",
		"INSERT INTO t (a, b) VALUES (%d, 'x') RETURNING (SELECT rolpassword FROM pg_authid)",
		"INSERT INTO t (a, b) VALUES (%d, 'x') RETURNING (SELECT rolpassword FROM app_secret)",
	}
	denied := 0
	for i := range 30 {
		for _, f := range shapes {
			text := fmt.Sprintf(f, i)
			got, want := cached.Judge([]byte(text), s), plain.Judge([]byte(text), s)
			if got != want {
				t.Fatalf("%q: through the caches %+v, parsed %+v", text, got, want)
			}
			if got.Action.Denies() {
				denied++
			}
		}
	}
	if denied != 30 {
		t.Fatalf("%d denied, want 30 (the pg_authid shape): the test judges nothing apart", denied)
	}
}
