package pgsql

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

func TestPrescan(t *testing.T) {
	for _, c := range []struct {
		name, sql    string
		list, depth  int
		commentTrick bool
	}{
		{"plain", "SELECT * FROM t WHERE id IN (1, 2, (3)) --x", 3, 2, false},
		{"glued line comment", "SELECT * FROM users WHERE name = 'admin'--' AND pw = 'x'", 0, 0, true},
		{"glued block comment", "SELECT/**/password FROM users", 0, 0, true},
		{"mysql comment", "SELECT /*! 1 */ 2", 0, 0, true},
		{"comma comment", "CREATE TABLE t (\n a int,-- the key\n b int\n)", 2, 1, false},
		{"paren comment", "CREATE TABLE t (-- columns\n a int\n)", 1, 1, false},
		{"semicolon comment in a script", "CREATE TABLE a (x int);-- first\nCREATE TABLE b (y int);", 1, 1, false},
		{"semicolon comment cutting the end", "SELECT * FROM docs WHERE id = 1;-- AND owner = 5", 0, 0, true},
		// A spaced comment that cuts off the end (cutsOffTail).
		{"spaced comment cutting a quote", "SELECT id FROM users WHERE name = 'a' -- ' AND pw = 'x'", 0, 0, true},
		{"spaced empty comment at the end", "SELECT id FROM users WHERE id = 1 -- ", 0, 0, true},
		{"spaced comment cutting a condition", "SELECT id FROM users WHERE id = 1 -- AND owner = 5", 0, 0, true},
		{"spaced random word before a quote", "SELECT id FROM users WHERE name = 'a' -- XyZq'", 0, 0, true},
		{"spaced note at the end", "SELECT id FROM users WHERE id = $1 -- trailing note", 0, 0, false},
		{"comment on its own last line", "SELECT id FROM users\n-- AND owner = 5", 0, 0, false},
		{"spaced comment after a semicolon", "SELECT 1; -- '", 0, 0, false},
		{"spaced comment with more lines after", "SELECT id -- '\nFROM users", 0, 0, false},
		{"line comment ends at CR", "SELECT 1 --x\r, (1, 2, 3)", 3, 1, false},
		{"line comment ends at LF", "SELECT 1 --x, (1, 2, 3)\n", 0, 0, false},
		{"nested block comment", "SELECT /* a /* b */ (1, 2) */ 1", 0, 0, false},
		{"nested block comment then code", "SELECT /* a /* b */ c */ (1, 2)", 2, 1, false},
		{"escape string", `SELECT E'\\' , (1, 2)`, 2, 1, false},
		{"escape string quote", `SELECT E'\' (1, 2, 3) '`, 0, 0, false},
		{"plain string backslash", `SELECT '\' , (1, 2)`, 2, 1, false},
		{"identifier ending in e", `SELECT xe'\' , (1, 2)`, 2, 1, false},
		{"unicode string", `SELECT U&'\0041' UESCAPE '!', (1, 2)`, 2, 1, false},
		{"unicode identifier", `SELECT U&"a""(1,2,3)"`, 0, 0, false},
		{"quoted identifier", `SELECT "a""(1,2,3)" FROM t`, 0, 0, false},
		{"dollar tags differ", "SELECT $a$ $a1$ $a$, (1, 2, 3)", 3, 1, false},
		{"parameter then dollar", "SELECT $1, $2 FROM t WHERE a IN ($3, $4, $5)", 3, 1, false},
		{"dollar inside identifier", "SELECT a$b$ FROM t WHERE x IN (1, 2)", 2, 1, false},
		{"number then dollar quote", "SELECT 1$q$ (1,2,3) $q$", 3, 1, false},
		{"numbers", "SELECT 1e5, .5, 1.5e-3, 0x1F FROM t WHERE a IN (1e5, .5)", 2, 1, false},
		{"form feed", "SELECT\f1\f--x\f(1,2)\n", 0, 0, false},
		{"dollar body list", "DO $$ BEGIN PERFORM * FROM t WHERE id IN (1, 2, 3, 4); END $$", 4, 1, false},
		{"dollar body depth", "DO $x$ BEGIN PERFORM ((((1)))); END $x$", 1, 4, false},
		{"nested dollar body", "DO $a$ BEGIN EXECUTE $b$ SELECT (1, 2, 3, 4, 5) $b$; END $a$", 5, 1, false},
		{"body comments do not count", "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT/**/1 $$", 0, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := prescan(c.sql, 0)
			if st.MaxList != c.list || st.MaxDepth != c.depth || st.CommentTrick != c.commentTrick {
				t.Errorf("prescan(%q) = list %d depth %d trick %v, want %d %d %v", c.sql, st.MaxList, st.MaxDepth, st.CommentTrick, c.list, c.depth, c.commentTrick)
			}
		})
	}
}

// scannerSpans returns the comments, literals and semicolons of pg_query's
// scanner, in prescan's terms (a literal starts at its quote, after any
// E/B/X/N/U& prefix); end is -1 where the scanner does not report it.
func scannerSpans(text string) ([]lexSpan, bool) {
	res, err := pg_query.Scan(text)
	if err != nil {
		return nil, false
	}
	var out []lexSpan
	for _, tk := range res.Tokens {
		start, end := int(tk.Start), int(tk.End)
		var kind byte
		switch tk.Token {
		case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
			kind = spanComment
		case pg_query.Token_SCONST, pg_query.Token_USCONST, pg_query.Token_BCONST, pg_query.Token_XCONST:
			kind = spanLiteral
		case pg_query.Token_IDENT, pg_query.Token_UIDENT:
			if t := text[start:]; strings.HasPrefix(t, `"`) || strings.HasPrefix(t, `U&"`) || strings.HasPrefix(t, `u&"`) {
				kind = spanLiteral
			}
		case pg_query.Token_ASCII_59:
			kind = spanSemi
		}
		if kind == 0 {
			continue
		}
		if kind == spanLiteral {
			for start < len(text) && text[start] != '\'' && text[start] != '"' && text[start] != '$' {
				start++
			}
			if end <= start {
				end = -1
			}
		}
		out = append(out, lexSpan{start, end, kind})
	}
	return out, true
}

// lexDisagreement compares prescan's reading of text with the scanner's.
func lexDisagreement(text string) string {
	want, ok := scannerSpans(text)
	if !ok {
		return ""
	}
	var got []lexSpan
	var st engine.LexStats
	scanLex(text, &st, 0, &got)
	got = slices.DeleteFunc(got, func(s lexSpan) bool { return s.kind == spanNumber })
	if len(got) != len(want) {
		return fmt.Sprintf("prescan %v, scanner %v", got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.kind != w.kind || g.start != w.start || (w.end >= 0 && g.end != w.end) {
			return fmt.Sprintf("span %d: prescan %v, scanner %v", i, g, w)
		}
	}
	return ""
}

func TestPrescanAgreesWithScanner(t *testing.T) {
	for _, s := range lexSeeds(t) {
		if d := lexDisagreement(s); d != "" {
			t.Errorf("%q: %s", s, d)
		}
	}
}

func lexSeeds(t testing.TB) []string {
	seeds := []string{
		"SELECT 'a' -- x\r 1 /* c */ $a$ b $a$ E'\\'' U&'x' \"q\"\"\" $1 1e5 .5 ;",
		"SELECT 1 --x\r, (1, 2, 3)",
		"SELECT /* a /* b */ c */ 1; SELECT 2",
		`SELECT E'\\' , 1; SELECT e'\'';`,
		`SELECT xe'\' , 1`,
		`SELECT U&'\0041' UESCAPE '!'; SELECT U&"a""b"`,
		"SELECT $a$ $a1$ ; $a$; SELECT 1$q$;$q$",
		"SELECT a$b$, $1 FROM t; SELECT $_$;$_$",
		"SELECT 1e5, .5, 1.5e-3, 1.e3; SELECT 'x'",
		"SELECT\f1\f--x\f;\n;",
		"CREATE TABLE a (x int);-- first\nCREATE TABLE b (y int,-- note\n z int);",
		"SELECT B'101', X'1F', N'x'; SELECT 'it''s'",
		"DO $$ BEGIN EXECUTE 'SELECT 1; SELECT 2'; END $$;",
		"SELECT '--not a comment', \"/*nor this*/\"; -- but this\n/* and this */",
		"SELECT 2*/*c*/3; SELECT 1-- x\n;",
		"SELECT 'a'\n'b'; SELECT 'a' 'b'; SELECT 'a' \n -- c\n 'b', E'\\''\r'\\'', 'a'\v\n'b', 'a'\n\v'b', 'a'\t\n\f'b'",
	}
	for _, file := range []string{"benign.sql", "pgbench.sql", "malicious.sql"} {
		seeds = append(seeds, readStatements(t, file)...)
	}
	for _, c := range readAdversarial(t) {
		seeds = append(seeds, c.sql)
	}
	return seeds
}

// FuzzPrescanAgreesWithScanner: wherever pg_query's scanner reads the text,
// prescan must find the same comments, literals (strings, dollar quotes,
// quoted identifiers) and semicolons, at the same places.
func FuzzPrescanAgreesWithScanner(f *testing.F) {
	for _, s := range lexSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return
		}
		if d := lexDisagreement(s); d != "" {
			t.Fatalf("%q: %s", s, d)
		}
	})
}

// shapeDisagreement checks shape.go's lexer against pg_query's scanner:
// every literal it would replace must be one scanner token of its class
// (a negative number: the '-' token, then the number).
func shapeDisagreement(text string) string {
	_, spans, ok := shapeOf(text)
	if !ok {
		return ""
	}
	res, err := pg_query.Scan(text)
	if err != nil {
		return ""
	}
	at := map[int]*pg_query.ScanToken{}
	for _, tk := range res.Tokens {
		at[int(tk.Start)] = tk
	}
	for _, s := range spans {
		start := s.Start
		if s.Class >= 'A' && s.Class <= 'Z' { // negative: '-' first
			if tk := at[start]; tk == nil || tk.End != int32(start+1) || text[start] != '-' {
				return fmt.Sprintf("span %v: no '-' token at %d", s, start)
			}
			start++
			for start < s.End && isBlank(text[start]) {
				start++
			}
		}
		tk := at[start]
		if tk == nil || int(tk.End) != s.End {
			return fmt.Sprintf("span %v (%q): no scanner token there", s, text[s.Start:s.End])
		}
		want := map[byte]pg_query.Token{litInt: pg_query.Token_ICONST, litBigInt: pg_query.Token_FCONST, litFloat: pg_query.Token_FCONST, litStr: pg_query.Token_SCONST}[s.Class|0x20]
		if tk.Token != want {
			return fmt.Sprintf("span %v (%q): scanner reads %v", s, text[s.Start:s.End], tk.Token)
		}
	}
	return ""
}

func TestShapeLexerAgreesWithScanner(t *testing.T) {
	for _, s := range lexSeeds(t) {
		if d := shapeDisagreement(s); d != "" {
			t.Errorf("%q: %s", s, d)
		}
	}
}

// FuzzShapeLexerAgreesWithScanner: the literals the shape cache would
// replace are the scanner's tokens. (A misread would only cost a shape:
// inertLiterals checks the spans against the parse tree.)
func FuzzShapeLexerAgreesWithScanner(f *testing.F) {
	for _, s := range lexSeeds(f) {
		f.Add(s)
	}
	f.Add("INSERT INTO t VALUES (1, -2, 3.5, 'x', 1$a$ 5 $a$, B'''' '7')")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return
		}
		if d := shapeDisagreement(s); d != "" {
			t.Fatalf("%q: %s", s, d)
		}
	})
}
