package mysql

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// FuzzRead: reading, measuring and analysing any text never panics, a text
// read is never longer than twice the original plus the rewrites it
// reports, and a text with nothing to rewrite comes back as is.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "SELECT 1 /*!40101 , 2 */", "SELECT 1 /*M!100100 , 2 */", "SELECT 'a\\'b' -- x",
		"SELECT \"a\"\"b\"", "SELECT 1 --\x01 x\n, 2", "/*!99999 ' */ ; DROP TABLE t; -- ' */",
		"SET NAMES gbk; SELECT 1", "SELECT `a``b` # c\n", "SELECT /*+ BKA(t) */ 1", "SELECT 1 /*T![x] 2 */",
		// unparsed.go
		"SELECT 1; INSTALL /*!80000 PLUGIN */ x SONAME 'y'",
		"CREATE DEFINER=`a`@`b` TRIGGER t BEFORE INSERT ON mysql.user FOR EACH ROW BEGIN NOT ATOMIC DELETE FROM t; END",
		"EXECUTE IMMEDIATE 'EXECUTE IMMEDIATE ''INSTALL SONAME ''''x'''''''",
		"CREATE FUNCTION f RETURNS INT SONAME 'x'; DROP EVENT IF EXISTS mysql.e",
		// mariadb.go, body.go
		"EXPLAIN EXTENDED SELECT CAST(a AS INT) FROM t WHERE b SOUNDS LIKE 'x' INTO @v",
		"SET STATEMENT max_statement_time=1 FOR DELETE FROM t WHERE id = 1 RETURNING (SELECT 1)",
		"SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) AS jt; CHECK TABLE t EXTENDED",
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR (a INT) FOR SELECT a; l: LOOP FETCH c INTO x; IF x THEN LEAVE l; END IF; END LOOP l; END",
		"CREATE FUNCTION f(a INT) RETURNS INT BEGIN FOR i IN 1..a DO SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'x'; END FOR; RETURN CASE a WHEN 1 THEN 2 END; END",
		"BEGIN NOT ATOMIC CASE WHEN 1 THEN REPEAT SELECT 1; UNTIL 1 END REPEAT; END CASE; END",
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, flags uint8) {
		l := engine.LexState{}
		switch flags % 4 {
		case 1:
			l.SQLMode = "NO_BACKSLASH_ESCAPES"
		case 2:
			l.SQLMode = "ANSI_QUOTES"
		case 3:
			l.SQLMode = "ANSI_QUOTES,NO_BACKSLASH_ESCAPES"
		}
		text, _, reason, ok := Dialect.Read([]byte(s), &l)
		if !ok {
			if reason == "" {
				t.Fatalf("%q: refused without a reason", s)
			}
			return
		}
		if len(text) > 2*len(s)+2 {
			t.Fatalf("%q: read as %d bytes", s, len(text))
		}
		lex := Dialect.Prescan(string(text), 0)
		tf := Dialect.Analyze(string(text), lex)
		for _, st := range tf.Stmts {
			if st.Loc < 0 || st.Length < 0 || int(st.Loc)+int(st.Length) > len(text) {
				t.Fatalf("%q: a statement at %d+%d of %d bytes", s, st.Loc, st.Length, len(text))
			}
		}
	})
}

// FuzzShapeSound: a text whose shape AnalyzeShape calls inert, with its
// literals swapped for others of the same class, parses to the same facts
// (what a shape-cache hit serves it).
func FuzzShapeSound(f *testing.F) {
	for _, s := range []string{
		"INSERT INTO t (a, b) VALUES (1, 'x'), (-2, 'y''z'), (NULL, 3.5)",
		"REPLACE INTO t VALUES (1, \"a\\\"b\")",
		"INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = VALUES(a)",
		"INSERT INTO t VALUES (NOW(), 'x', -0.5, +7)",
	} {
		f.Add(s, "*/ ; DROP TABLE t; -- ' \\", uint32(7))
	}
	f.Fuzz(func(t *testing.T, a, r string, n uint32) {
		keyA, starts, ok := shapeSpans(nil, nil, a)
		if !ok {
			return
		}
		factsA, inert := Dialect.(engine.Shaper).AnalyzeShape(a, engine.LexStats{})
		if !inert {
			return
		}
		// B: each literal swapped for one of its class.
		var b strings.Builder
		done := 0
		for k, s := range starts {
			b.WriteString(a[done:s])
			class := keyClass(keyA, k)
			end := literalEnd(a, s, class)
			switch class {
			case shStr:
				b.WriteString("'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`).Replace(r) + "'")
			case shInt:
				b.WriteString(strconv.FormatUint(uint64(n), 10))
			default:
				b.WriteString(strconv.FormatUint(uint64(n), 10) + ".5")
			}
			done = end
		}
		b.WriteString(a[done:])
		text := b.String()
		keyB, _, ok := shapeSpans(nil, nil, text)
		if !ok || string(keyB) != string(keyA) {
			return // not the same shape: the cache would not serve it
		}
		factsB := analyze(text, engine.LexStats{})
		if factsB.ParseError != factsA.ParseError || len(factsB.Stmts) != len(factsA.Stmts) {
			t.Fatalf("%q and %q share a shape; parse error %v/%v, %d/%d statements", a, text, factsA.ParseError, factsB.ParseError, len(factsA.Stmts), len(factsB.Stmts))
		}
		for i := range factsA.Stmts {
			x, y := factsA.Stmts[i], factsB.Stmts[i]
			x.Loc, x.Length, y.Loc, y.Length = 0, 0, 0, 0
			if !reflect.DeepEqual(x, y) {
				t.Fatalf("%q and %q share a shape but not their facts:\n%+v\n%+v", a, text, x, y)
			}
		}
	})
}

// keyClass returns the class byte of the k-th marker in key.
func keyClass(key []byte, k int) byte {
	for i := 0; i+1 < len(key); i++ {
		if key[i] == 0 {
			if k == 0 {
				return key[i+1]
			}
			k--
			i++
		}
	}
	return 0
}

// literalEnd returns the end of the literal of class c starting at s.
func literalEnd(text string, s int, c byte) int {
	if c == shStr {
		return quotedStr(text, s, text[s], true)
	}
	j := s
	for j < len(text) && (text[j] >= '0' && text[j] <= '9' || text[j] == '.') {
		j++
	}
	return j
}
