package mysql

import (
	"bytes"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

func TestShapeKeys(t *testing.T) {
	tests := []struct {
		text, key string
		ok        bool
	}{
		{"INSERT INTO t VALUES (1, 'a'), (-2.5, \"b\")", "INSERT INTO t VALUES (\x00i, \x00s), (-\x00f, \x00s)", true},
		{"REPLACE INTO t (a) VALUES ('it\\'s')", "REPLACE INTO t (a) VALUES (\x00s)", true},
		{"INSERT INTO t1 VALUES (_utf8mb4'x', X'0a', 1abc, 1e5)", "", false},
		{"SELECT 1", "SELECT \x00i", true},
		{"SELECT c FROM t WHERE id=42 AND name = 'x'", "SELECT c FROM t WHERE id=\x00i AND name = \x00s", true},
		{"UPDATE t SET a = 1", "", false},
		{"INSERT INTO t VALUES ('a", "", false},
		{"INSERT INTO t VALUES ('a\x00')", "", false},
	}
	for _, tt := range tests {
		key, ok := engine.ShapeKey(Dialect.(engine.Shaper), nil, tt.text)
		if ok != tt.ok || (ok && string(key) != tt.key) {
			t.Errorf("Shape(%q) = %q, %v; want %q, %v", tt.text, key, ok, tt.key, tt.ok)
		}
	}
}

func TestAnalyzeShapeInert(t *testing.T) {
	sh := Dialect.(engine.Shaper)
	tests := []struct {
		text  string
		inert bool
	}{
		{"INSERT INTO t (a, b) VALUES (1, 'x'), (-2, 'y''z'), (NULL, 3.5)", true},
		{"INSERT INTO t (a) VALUES (LOAD_FILE('/etc/passwd'))", false},
		{"INSERT INTO t (a) VALUES (SLEEP(10))", false},
		{"INSERT INTO t (a) VALUES ('a' 'b')", false},
		{"INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = a + 1", false},
		{"INSERT INTO t (a) SELECT 1 FROM u WHERE 1 = 1", false},
		{"INSERT INTO t (a) VALUES (1); DELETE FROM t", false},
		{"INSERT INTO t (a) VALUES (.5)", false},
	}
	for _, tt := range tests {
		if _, inert := sh.AnalyzeShape(tt.text, engine.LexStats{}); inert != tt.inert {
			t.Errorf("AnalyzeShape(%q): inert %v, want %v", tt.text, inert, tt.inert)
		}
	}
}

// TestShapeHitsAgreeWithParsing: texts of one shape, judged through the
// shape cache, get the verdict a fresh parse gives, whatever their values.
func TestShapeHitsAgreeWithParsing(t *testing.T) {
	cached, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"INSERT INTO t (a, b) VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO t (a, b) VALUES (3, 'c'), (4, 'd')",
		"INSERT INTO t (a, b) VALUES (5, 'x\\' OR 1=1 -- '), (6, '*/ ; DROP TABLE t; /*')",
		"INSERT INTO t (a, b) VALUES (7, '/*!50000 , LOAD_FILE(0x2f) */'), (8, 'SLEEP(99)')",
		"INSERT INTO t (a, b) VALUES (99999999999999999999, \"q\"), (0, '')",
	}
	for round := 0; round < 2; round++ {
		for _, text := range texts {
			got := cached.Judge([]byte(text), nil)
			want := fresh.Judge([]byte(text), nil)
			if got.Action != want.Action || got.RuleID != want.RuleID {
				t.Errorf("%q: through the shape cache %v %s, parsed %v %s", text, got.Action, got.RuleID, want.Action, want.RuleID)
			}
		}
	}
	if st := cached.Stats(); st.Shapes == 0 {
		t.Errorf("no shape cached: %+v", st)
	}
}

// TestRecognizedFactsNotShared: the facts recognized in a text TiDB does not
// parse (unparsed.go) are cached by that text only. Texts that differ from
// an earlier one in a literal, or in the statement after a bulk INSERT,
// get the verdict a fresh analysis gives, with on_parse_error: allow so
// that a fact served from another text's entry would show as an allow.
func TestRecognizedFactsNotShared(t *testing.T) {
	p, err := engine.ParsePolicy(bytes.Replace(DefaultPolicyYAML(), []byte("on_parse_error: deny"), []byte("on_parse_error: allow"), 1))
	if err != nil {
		t.Fatal(err)
	}
	cached, err := engine.New(p, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := engine.New(p, Dialect, engine.Options{CacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"EXECUTE IMMEDIATE 'SELECT 1'",
		"EXECUTE IMMEDIATE 'DELETE FROM t'",
		"EXECUTE IMMEDIATE 'INSTALL SONAME ''x'''",
		"INSERT INTO t (a) VALUES (1), (2) RETURNING a",
		"INSERT INTO t (a) VALUES ('INSTALL SONAME'), (2) RETURNING a",
		"INSERT INTO t (a) VALUES (1), (2); INSTALL SONAME 'x'",
		"INSERT INTO t (a) VALUES (3), (4); INSTALL SONAME 'x'",
		"INSERT INTO t (a) VALUES (1), (2); SELECT 1 RETURNING a",
		"CREATE DEFINER = 'app' TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
		"CREATE DEFINER = CURRENT_USER TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
	}
	denied := 0
	for round := 0; round < 3; round++ {
		for _, text := range texts {
			got := cached.Judge([]byte(text), nil)
			want := fresh.Judge([]byte(text), nil)
			if got.Action != want.Action || got.RuleID != want.RuleID {
				t.Errorf("%q (round %d): cached %v %s, fresh %v %s", text, round, got.Action, got.RuleID, want.Action, want.RuleID)
			}
			if round == 0 && want.Action.Denies() {
				denied++
			}
		}
	}
	if denied != 5 {
		t.Errorf("%d of the texts denied, want 5 (the DELETE, the three INSTALLs, the definer trigger)", denied)
	}
}
