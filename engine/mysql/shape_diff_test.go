package mysql

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// The shape cache's differential test (issue 26): for every statement of
// the corpora that has a shape, texts of that shape with other literal
// values are judged through the caches (the third and later of a shape are
// shape hits when it is inert) and without any cache; the verdicts must be
// equal, reason included.

// litSpan is a literal shapeSpans replaced: text[start:end], its class.
type litSpan struct {
	start, end int
	class      byte
}

// literalSpans returns the literals Shape replaces in text (read in the
// default sql_mode), or nil.
func literalSpans(text string) []litSpan {
	_, starts, ok := shapeSpans(nil, nil, text)
	if !ok {
		return nil
	}
	out := make([]litSpan, len(starts))
	for i, s := range starts {
		c := text[s]
		if c == '\'' || c == '"' {
			out[i] = litSpan{s, quotedStr(text, s, c, true), shStr}
			continue
		}
		j := s
		for j < len(text) && text[j] >= '0' && text[j] <= '9' {
			j++
		}
		class := byte(shInt)
		if j+1 < len(text) && text[j] == '.' && text[j+1] >= '0' && text[j+1] <= '9' {
			for j++; j < len(text) && text[j] >= '0' && text[j] <= '9'; j++ {
			}
			class = shDec
		}
		out[i] = litSpan{s, j, class}
	}
	return out
}

// variant returns text with every span replaced by another literal of its
// class, chosen by seed.
func variant(text string, spans []litSpan, seed int) string {
	ints := []string{"0", "1", "7", "2147483648", "99999999999999999999", "000"}
	decs := []string{"0.0", "1.5", "98.7650", "12345678901234567890.5"}
	strs := []string{"''", "'x''y z'", `'a\'b'`, `"dq"`, "'*/ ; DROP TABLE t; /*'", "'-- x'", "'SLEEP(5)'",
		"'/*!50000 , LOAD_FILE(0x2f) */'", `'\\'`, "'é'", `"it\"s"`, "'1'"}
	var b strings.Builder
	last := 0
	for i, s := range spans {
		b.WriteString(text[last:s.start])
		k := seed + i
		switch s.class {
		case shInt:
			b.WriteString(ints[k%len(ints)])
		case shDec:
			b.WriteString(decs[k%len(decs)])
		default:
			b.WriteString(strs[k%len(strs)])
		}
		last = s.end
	}
	b.WriteString(text[last:])
	return b.String()
}

// shapeAgreement judges text and its variants in cached and plain, and
// returns how many judgements were shape hits (a default session, an
// inert text whose shape was admitted before).
func shapeAgreement(t *testing.T, cached, plain *engine.Engine, s *engine.Session, text, where string) (hits int) {
	t.Helper()
	spans := literalSpans(text)
	if spans == nil {
		return 0
	}
	key, _ := engine.ShapeKey(Dialect.(engine.Shaper), nil, text)
	_, inert := Dialect.(engine.Shaper).AnalyzeShape(text, prescan(text, 0))
	texts := []string{text}
	for seed := 0; seed < 7; seed++ {
		b := variant(text, spans, seed)
		if kb, ok := engine.ShapeKey(Dialect.(engine.Shaper), nil, b); !ok || !bytes.Equal(kb, key) {
			t.Errorf("%s: variant %q of %q has another shape %q", where, b, text, kb)
			return 0
		}
		texts = append(texts, b)
	}
	for i, x := range texts {
		got, want := cached.Judge([]byte(x), s), plain.Judge([]byte(x), s)
		if got != want {
			t.Errorf("%s: %q (of %q) session %+v: through the caches %+v, parsed %+v", where, x, text, s.Lex, got, want)
		}
		if inert && i >= 2 && s.Lex == (engine.LexState{}) {
			hits++
		}
	}
	return hits
}

func shapeEngines(t *testing.T) (cached, plain *engine.Engine) {
	t.Helper()
	cached, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err = engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	return cached, plain
}

func TestShapeVerdictsAgreeWithParsing(t *testing.T) {
	cached, plain := shapeEngines(t)
	hits, n := 0, 0
	for _, c := range readCorpus(t, "testdata/adversarial/*.tsv") {
		s := &engine.Session{User: "app", Database: "app"}
		spec, vals := bindSpec(c.session)
		if vals != nil {
			continue // judged with bound values (JudgeBound), not by text
		}
		if err := parseSessionSpec(spec, s); err != nil {
			t.Fatal(err)
		}
		hits += shapeAgreement(t, cached, plain, s, c.sql, c.file+":"+strconv.Itoa(c.line))
		n++
	}
	f, err := os.ReadFile("testdata/benign.sql")
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Session{User: "app", Database: "app"}
	for i, line := range strings.Split(string(f), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		if strings.HasPrefix(line, `"`) {
			if line, err = strconv.Unquote(line); err != nil {
				t.Fatalf("benign.sql:%d: %v", i+1, err)
			}
		}
		hits += shapeAgreement(t, cached, plain, s, line, "benign.sql:"+strconv.Itoa(i+1))
		n++
	}
	for _, sql := range shapeSelectSeeds {
		hits += shapeAgreement(t, cached, plain, s, sql, "seed")
		n++
	}
	t.Logf("%d statements, %d shape hits judged", n, hits)
	if hits == 0 {
		t.Fatal("no shape hit: the test judges nothing through the shape cache")
	}
}

// TestShapeVerdictsAgreeWithParsingSuite is the same over MariaDB's own
// test suite (the statements TestMariaDBTestSuite reads); about 300,000
// statements, so it runs only when SQLFW_SHAPE_SUITE is set.
func TestShapeVerdictsAgreeWithParsingSuite(t *testing.T) {
	if os.Getenv("SQLFW_SHAPE_SUITE") == "" {
		t.Skip("set SQLFW_SHAPE_SUITE=1 to judge MariaDB's test suite through the shape cache (a few minutes)")
	}
	root := os.Getenv("SQLFW_MARIADB_SUITE")
	if root == "" {
		root = mariadbSuite
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".test") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Skipf("%s: %v", root, err)
	}
	cached, plain := shapeEngines(t)
	s := &engine.Session{User: "app", Database: "app"}
	hits, n := 0, 0
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range suiteStatements(string(b)) {
			hits += shapeAgreement(t, cached, plain, s, st.sql, filepath.Base(path))
			n++
		}
	}
	t.Logf("%d statements, %d shape hits judged", n, hits)
}

// shapeSelectSeeds are point selects and their near misses (shapeselect.go).
var shapeSelectSeeds = []string{
	"SELECT c FROM sbtest1 WHERE id=4990",
	"SELECT a, t.b FROM t WHERE id = 1 AND name = 'x' ORDER BY a",
	"SELECT * FROM t WHERE id <> -5 FOR UPDATE",
	"SELECT a FROM t WHERE 7 = id",
	"SELECT a FROM t AS x WHERE x.id >= 2.5 AND x.n < \"q\"",
	"SELECT user FROM mysql.user WHERE user = 'root'",
	"SELECT a FROM t WHERE id = 1 LIMIT 10",
	"SELECT a FROM t WHERE id = 1 LIMIT 1, 10",
	"SELECT a FROM t WHERE id = 1 OR id <> 1",
	"SELECT a FROM t WHERE id = 1 OR id = 2",
	"SELECT a FROM t WHERE id = 1 XOR id = 2",
	"SELECT a FROM t WHERE id IN (1, 2)",
	"SELECT a FROM t WHERE name LIKE 'a%'",
	"SELECT a FROM t WHERE id = 1 ORDER BY 1",
	"SELECT SLEEP(5) FROM t WHERE id = 1",
	"SELECT a FROM t WHERE id = 1 AND SLEEP(5)",
	"SELECT a FROM t WHERE id = 1 AND BENCHMARK(1000000, MD5('x'))",
	"SELECT a FROM t WHERE id = 1 UNION SELECT b FROM u WHERE id = 2",
	"SELECT a FROM t WHERE 1 = 1",
	"SELECT a FROM t WHERE id = 1 AND 1 = 1",
	"SELECT a FROM t WHERE id = 1; DELETE FROM t",
	"SELECT a FROM t WHERE id = 1 AND a = b",
	"SELECT a FROM t WHERE name = 'a' 'b'",
	"SELECT a FROM t WHERE name = _utf8mb4'x'",
	"SELECT a FROM t WHERE name = X'41'",
	"SELECT a FROM t WHERE id = 0x41",
	"SELECT a FROM t WHERE id = 1e5",
	"SELECT a FROM t WHERE id = .5",
	"SELECT a FROM t WHERE id = ?",
	"SELECT a FROM t WHERE id = 1 AND b = 'x' /* 'y' */",
	"SELECT a FROM t WHERE id = 1 /*!50000 AND SLEEP(5) */",
	"SELECT a FROM t WHERE id = 1 -- note",
	"SELECT a FROM t WHERE id = 1 # note",
	"SELECT a FROM t WHERE name = 'x'-- ",
	"SELECT a FROM (SELECT * FROM t) s WHERE id = 1",
	"SELECT a FROM t, u WHERE t.id = 1 AND u.id = 2",
	"SELECT a FROM t JOIN u ON t.id = u.id WHERE t.id = 1",
	"SELECT a FROM t WHERE id = (1)",
	"SELECT a FROM t WHERE NOT id = 1",
	"SELECT a FROM t WHERE (name = 'A') = 'B'",
	"SELECT a FROM t WHERE name = 'A' NOT RLIKE 'B'",
	"SELECT a FROM t WHERE id = 1 - 1",
	"SELECT a FROM t WHERE id = 1 INTO OUTFILE '/tmp/x'",
	"SELECT a FROM t WHERE id = 1 INTO @v",
	"SELECT a FROM t WHERE id <=> 1",
	"SELECT a FROM t WHERE id = @x AND b = 1",
	"SELECT DISTINCT a FROM t WHERE id = 1",
	"SELECT a FROM t WHERE id = 1 GROUP BY a HAVING COUNT(*) > 1",
	"SELECT a FROM t WHERE id = 'x\\' OR 1=1 -- '",
	"SELECT LOAD_FILE('/etc/passwd') FROM t WHERE id = 1",
	"SELECT a FROM information_schema.tables WHERE table_schema = 'mysql'",
	"INSERT INTO t (a) VALUES (1); CREATE DEFINER=root@localhost PROCEDURE p() DELETE FROM users",
	"INSERT INTO t (a) VALUES (1); CREATE PROCEDURE p() BEGIN DELETE FROM users; END",
}

// TestShapeSelectInert: which point selects get a shape entry.
func TestShapeSelectInert(t *testing.T) {
	inert := map[string]bool{}
	for _, i := range []int{0, 1, 2, 3, 4, 5, 29, 31, 32, 33, 35, 46, 48, 50} {
		inert[shapeSelectSeeds[i]] = true
	}
	for _, s := range shapeSelectSeeds {
		_, got := Dialect.(engine.Shaper).AnalyzeShape(s, prescan(s, 0))
		if got != inert[s] {
			t.Errorf("%q: inert %v, want %v", s, got, inert[s])
		}
	}
}
