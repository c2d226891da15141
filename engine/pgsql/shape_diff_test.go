package pgsql

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// The shape cache's differential test (issue 26): for every statement of
// the corpora that has a shape, texts of that shape with other literal
// values are judged through the caches (the third and later of a shape are
// shape hits when it is inert) and without any cache; the verdicts must be
// equal, reason included.

// shapeAgreement judges text and its variants in cached and plain. It
// returns how many of the judgements were shape hits (the text is inert and
// its shape was admitted before).
func shapeAgreement(t *testing.T, cached, plain *engine.Engine, s *engine.Session, text, where string) (hits int) {
	t.Helper()
	key, ok := engine.ShapeKey(Dialect.(engine.Shaper), nil, text)
	if !ok {
		return 0
	}
	_, spans, _ := shapeOf(text)
	_, inert := Dialect.(engine.Shaper).AnalyzeShape(text, prescan(text, 0))
	texts := []string{text}
	for seed := -1; seed < 6; seed++ {
		b := variant(text, spans, seed)
		if kb, ok := engine.ShapeKey(Dialect.(engine.Shaper), nil, b); utf8.ValidString(text) && utf8.ValidString(b) && (!ok || string(kb) != string(key)) {
			t.Errorf("%s: variant %q of %q has another shape %q", where, b, text, render(kb))
			return 0
		}
		texts = append(texts, b)
	}
	for i, x := range texts {
		got, want := cached.Judge([]byte(x), s), plain.Judge([]byte(x), s)
		if got != want {
			t.Errorf("%s: %q (of %q): through the caches %+v, parsed %+v", where, x, text, got, want)
		}
		if inert && i >= 2 {
			hits++
		}
	}
	return hits
}

func TestShapeHitsAgreeWithParsing(t *testing.T) {
	cached := mustEngine(t, string(defaultPolicyYAML), engine.Options{})
	plain := mustEngine(t, string(defaultPolicyYAML), engine.Options{CacheBytes: -1})
	hits, n := 0, 0
	for _, c := range readAdversarial(t) {
		s := &engine.Session{User: "app", Database: "app"}
		if err := parseSessionSpec(c.session, s); err != nil {
			t.Fatal(err)
		}
		hits += shapeAgreement(t, cached, plain, s, c.sql, c.file+":"+strconv.Itoa(c.line))
		n++
	}
	s := &engine.Session{User: "app", Database: "app"}
	for _, file := range []string{"pgbench.sql", "benign.sql"} {
		for _, sql := range readStatements(t, file) {
			hits += shapeAgreement(t, cached, plain, s, sql, file)
			n++
		}
	}
	for _, sql := range append(shapeSeeds, shapeSelectSeeds...) {
		hits += shapeAgreement(t, cached, plain, s, sql, "seed")
		n++
	}
	t.Logf("%d statements, %d shape hits judged", n, hits)
	if hits == 0 {
		t.Fatal("no shape hit: the test judges nothing through the shape cache")
	}
}

// TestShapeHitsAgreeWithParsingPGRegress is the same over PostgreSQL's
// regression-test SQL (SQLFW_PGREGRESS_SQL, by default the shared corpus's
// copy), statement by statement.
func TestShapeHitsAgreeWithParsingPGRegress(t *testing.T) {
	dir := os.Getenv("SQLFW_PGREGRESS_SQL")
	if dir == "" {
		dir = "/work/shared/corpus/pgregress"
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.sql"))
	if len(files) == 0 {
		t.Skipf("no PostgreSQL regression SQL in %s (set SQLFW_PGREGRESS_SQL)", dir)
	}
	if testing.Short() {
		t.Skip("-short")
	}
	cached := mustEngine(t, string(defaultPolicyYAML), engine.Options{})
	plain := mustEngine(t, string(defaultPolicyYAML), engine.Options{CacheBytes: -1})
	s := &engine.Session{User: "app", Database: "app"}
	hits, n := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stmts, err := pg_query.SplitWithScanner(string(b), true)
		if err != nil {
			t.Logf("%s: %v", f, err)
			continue
		}
		for _, sql := range stmts {
			if strings.HasPrefix(sql, "\\") {
				continue
			}
			hits += shapeAgreement(t, cached, plain, s, sql, filepath.Base(f))
			n++
		}
	}
	t.Logf("%d statements, %d shape hits judged", n, hits)
}

// shapeSelectSeeds are point selects and their near misses (shapeselect.go).
var shapeSelectSeeds = []string{
	"SELECT abalance FROM pgbench_accounts WHERE aid = 48213",
	"SELECT a, t.b FROM t WHERE id = 1 AND name = 'x' ORDER BY a",
	"SELECT * FROM t WHERE id <> -5 FOR UPDATE",
	"SELECT a FROM t WHERE 7 = id",
	"SELECT a FROM t AS x WHERE x.id >= 2.5 AND x.n < 'q'",
	"SELECT a FROM pg_shadow WHERE usename = 'postgres'",
	"SELECT a FROM t WHERE id = 1 LIMIT 10",
	"SELECT a FROM t WHERE id = 1 OFFSET 5",
	"SELECT a FROM t WHERE id = 1 OR id <> 1",
	"SELECT a FROM t WHERE id = 1 OR id = 2",
	"SELECT set_config(name, 'x', false) FROM pg_settings WHERE name = 'search_path'",
	"SELECT name FROM pg_settings WHERE name = 'search_path'",
	"SELECT a FROM t WHERE id = '1'::regclass",
	"SELECT a FROM t WHERE oid = 'pg_authid'::regclass::oid",
	"SELECT a FROM t WHERE id IN (1, 2)",
	"SELECT a FROM t WHERE name LIKE 'a%'",
	"SELECT a FROM t WHERE id = 1 ORDER BY 1",
	"SELECT pg_sleep(5) FROM t WHERE id = 1",
	"SELECT a FROM t WHERE id = 1 AND pg_sleep(5) IS NOT NULL",
	"SELECT a FROM t WHERE id = 1 UNION SELECT b FROM u WHERE id = 2",
	"SELECT a FROM t WHERE 1 = 1",
	"SELECT a FROM t WHERE id = 1 AND 1 = 1",
	"SELECT a FROM t WHERE id = 1; DELETE FROM t",
	"SELECT a FROM t WHERE id = 1 AND a = b",
	"SELECT a FROM t WHERE id = 1 AND name = E'x\\'y'",
	"SELECT a FROM t WHERE name = 'a' 'b'",
	"SELECT a FROM t WHERE name = 'a'\n'b'",
	"SELECT a FROM t WHERE id = $1 AND b = 2",
	"SELECT a FROM t WHERE id = 2147483648",
	"SELECT a FROM t WHERE id = 1 AND b = 'x' /* 'y' */",
	"SELECT a FROM t WHERE id = 1 -- note",
	"SELECT a FROM t WHERE id = 1 AND b = 'x'--",
	"SELECT a FROM (SELECT * FROM t) s WHERE id = 1",
	"SELECT a FROM t, u WHERE t.id = 1 AND u.id = 2",
	"SELECT a FROM t WHERE id = (1)",
	"SELECT a FROM t WHERE NOT id = 1",
	"SELECT current_setting('is_superuser') FROM t WHERE id = 1",
	"SELECT a INTO s FROM t WHERE id = 1",
	"WITH x AS (SELECT 1) SELECT a FROM t WHERE id = 2",
	"SELECT DISTINCT ON (a) a FROM t WHERE id = 1",
	"SELECT a FROM t WHERE id = 1 GROUP BY a HAVING count(*) > 1",
}

// TestShapeSelectInert: which point selects get a shape entry.
func TestShapeSelectInert(t *testing.T) {
	inert := map[string]bool{}
	for _, i := range []int{0, 1, 3, 4, 5, 11, 24, 28, 29, 30, 31, 33, 34} {
		inert[shapeSelectSeeds[i]] = true
	}
	for _, s := range shapeSelectSeeds {
		_, got := Dialect.(engine.Shaper).AnalyzeShape(s, prescan(s, 0))
		if got != inert[s] {
			t.Errorf("%q: inert %v, want %v", s, got, inert[s])
		}
	}
}
