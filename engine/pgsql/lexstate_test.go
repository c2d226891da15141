package pgsql

import (
	"strings"
	"testing"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// backslashChar returns a two-byte character of enc whose second byte is a
// backslash, and its UTF-8 form: what a lead byte swallowing the backslash
// looks like.
func backslashChar(t testing.TB, name string) (string, string) {
	t.Helper()
	enc := clientEncodings[name]
	for lead := 0x81; lead <= 0xfe; lead++ {
		b := []byte{byte(lead), '\\'}
		if enc.char(b) != 2 {
			continue
		}
		if u, ok := enc.toUTF8(b); ok {
			return string(b), string(u)
		}
	}
	t.Fatalf("%s: no character with a backslash trail byte", name)
	return "", ""
}

func TestToUTF8(t *testing.T) {
	if sjis, sjisU := backslashChar(t, "SJIS"); sjis != "\x81\\" || sjisU != "―" {
		t.Fatalf("SJIS 0x815C: got %q -> %q, want ―", sjis, sjisU)
	}
	for _, tc := range []struct {
		name, enc, in, want string
		ok                  bool
	}{
		{"sjis kanji swallows backslash", "SJIS", "E'\x95\\'; DELETE", "E'表'; DELETE", true},
		{"sjis half-width kana is one byte", "SJIS", "'\xb1'", "'ｱ'", true},
		{"sjis 0x80 is no lead byte", "SJIS", "'\x80a'", "", false},
		{"sjis lead at end of text", "SJIS", "'x'\x95", "", false},
		{"sjis quote is no trail byte", "SJIS", "'\x95''", "", false},
		{"sjis ascii unchanged", "SJIS", "select 1 -- \\", "select 1 -- \\", true},
		{"big5 backslash trail", "BIG5", "'\xb3\\'", "'許'", true},
		{"big5 quote trail is untranslatable", "BIG5", "'\xb3''", "", false},
		{"gbk backslash trail", "GBK", "'\x81\\'", "'乗'", true},
		{"gbk euro byte is a lead byte to PostgreSQL", "GBK", "'\x80'", "", false},
		{"gb18030 four bytes", "GB18030", "'\x81\x30\x81\x30'", "'\u0080'", true},
		{"gb18030 two bytes with backslash", "GB18030", "'\x81\\'", "'乗'", true},
		{"gb18030 bad four bytes", "GB18030", "'\x81\x30\x20\x30'", "", false},
		{"uhc backslash trail", "UHC", "'\x81\\'", "", false}, // 0x815C is unassigned in CP949
		{"uhc hangul", "UHC", "'\xb0\xa1'", "'가'", true},
		{"euc_jp three bytes", "EUC_JP", "'\x8f\xb0\xa1'", "'丂'", true},
		{"euc_jp no ascii trail", "EUC_JP", "'\xb0\\'", "", false},
		{"euc_kr", "EUC_KR", "'\xb0\xa1'", "'가'", true},
		{"latin1", "LATIN1", "'caf\xe9'", "'café'", true},
		{"win1252 euro", "WIN1252", "'\x80'", "'€'", true},
		{"win1252 undefined byte", "WIN1252", "'\x81'", "", false},
		{"koi8r", "KOI8R", "'\xc1'", "'а'", true},
		{"nul byte", "LATIN1", "'\x00'", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := lookupEncoding(tc.enc)
			if enc == nil {
				t.Fatalf("encoding %s unknown", tc.enc)
			}
			got, ok := enc.toUTF8([]byte(tc.in))
			if ok != tc.ok || ok && string(got) != tc.want {
				t.Fatalf("toUTF8(%s, %q) = %q, %v; want %q, %v", tc.enc, tc.in, got, ok, tc.want, tc.ok)
			}
			if ok && !utf8.Valid(got) {
				t.Fatalf("toUTF8(%s, %q) = %q: not UTF-8", tc.enc, tc.in, got)
			}
		})
	}
}

func TestCanonicalEncoding(t *testing.T) {
	for in, want := range map[string]string{"sjis": "SJIS", "Shift_JIS": "SJIS", "latin-1": "LATIN1", "utf-8": "UTF8", "ISO_8859_5": "ISO_8859_5", "win1252": "WIN1252", "Big5": "BIG5"} {
		if got, ok := CanonicalEncoding(in); !ok || got != want {
			t.Errorf("CanonicalEncoding(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := CanonicalEncoding("klingon"); ok {
		t.Error("CanonicalEncoding(klingon) is known")
	}
}

func TestEscapeStrings(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain literal", `SELECT 'a\'; DELETE FROM t; --'`, `SELECT E'a\'; DELETE FROM t; --'`},
		{"escape literal kept", `SELECT E'a\'b'`, `SELECT E'a\'b'`},
		{"doubled quote", `SELECT 'it''s\\', 'x'`, `SELECT E'it''s\\', E'x'`},
		{"backslash before doubled quote", `SELECT 'a\''b'`, `SELECT E'a\''b'`},
		{"type name glued", `SELECT date'2020-01-01', x'1f', b'01'`, `SELECT date E'2020-01-01', x'1f', b'01'`},
		{"bit literal takes no doubled quote", `SELECT b'01''\'`, `SELECT b'01'E'\'`},
		{"nchar", `SELECT N'a\'b', n'c'`, `SELECT NCHAR E'a\'b', NCHAR E'c'`},
		{"identifier ending in e", `SELECT typee'x\'`, `SELECT typee E'x\'`},
		{"line comment", "SELECT 1 -- 'x\\\nSELECT 'y\\'", "SELECT 1 -- 'x\\\nSELECT E'y\\'"},
		{"line comment ends at CR", "SELECT 1 -- 'x\r'\\'", "SELECT 1 -- 'x\rE'\\'"},
		{"nested block comment", `SELECT /* a /* 'b */ 'c */ '\'`, `SELECT /* a /* 'b */ 'c */ E'\'`},
		{"quoted identifier", `SELECT "a'""b", '\'`, `SELECT "a'""b", E'\'`},
		{"dollar quote", `SELECT $f$ '\' $f$, $$'$$, '\'`, `SELECT $f$ '\' $f$, $$'$$, E'\'`},
		{"dollar in identifier", `SELECT a$$b, 'c\'`, `SELECT a$$b, E'c\'`},
		{"number then dollar quote", `SELECT 1e5$$'\'$$`, `SELECT 1e5$$'\'$$`},
		{"parameter then dollar quote", `SELECT $1$$'$$ , '\'`, `SELECT $1$$'$$ , E'\'`},
		{"continuation keeps its state", "SELECT 'a'\n'b\\'", "SELECT E'a'\n'b\\'"},
		{"continuation after a comment", "SELECT 'a' -- c\n 'b\\'", "SELECT E'a' -- c\n 'b\\'"},
		{"no continuation without newline", "SELECT 'a' '\\'", "SELECT E'a' E'\\'"},
		{"escape continuation", "SELECT E'a'\n'\\''", "SELECT E'a'\n'\\''"},
		{"unicode identifier", `SELECT U&"a\0061", '\'`, `SELECT U&"a\0061", E'\'`},
		{"unicode literal untouched", `SELECT U&'\0061''', '\'`, `SELECT U&'\0061''', E'\'`},
		{"unicode after identifier", `SELECT xu&'\'`, `SELECT xu&E'\'`},
		{"non-ascii identifier glued", `SELECT é'\'`, `SELECT é E'\'`},
		{"unterminated", `SELECT '\`, `SELECT E'\`},
		{"backslash at end of escape literal", `SELECT '\\`, `SELECT E'\\`},
		{"number then literal", `SELECT 1'\'`, `SELECT 1 E'\'`},
		{"hex number then literal", `SELECT 0x1f'\'`, `SELECT 0x1f E'\'`},
		{"parameter then literal", `SELECT $1'\'`, `SELECT $1 E'\'`},
		{"fraction then literal", `SELECT .5'\'`, `SELECT .5 E'\'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := escapeStrings([]byte(tc.in))
			if !ok || string(got) != tc.want {
				t.Fatalf("escapeStrings(%q)\n got %q, %v\nwant %q", tc.in, got, ok, tc.want)
			}
		})
	}
	for _, in := range []string{`SELECT 1e'\'`, `SELECT 1x'\'`, `SELECT 0x1fz'\'`, `SELECT $1a'\'`, `SELECT .5e'\'`} {
		if got, ok := escapeStrings([]byte(in)); ok {
			t.Errorf("escapeStrings(%q) = %q: want refused (quote glued to a number)", in, got)
		}
	}
}

// checkEscapedAgainstScanner is the differential check: on the rewritten
// text, PostgreSQL's own scanner (pg_query, which reads with
// standard_conforming_strings on) must find no plain string literal left,
// and every rewritten literal must start a string token exactly where the
// rewrite put its E. Together this means the scanner reads the rewritten
// text as the server reads the original with the setting off.
func checkEscapedAgainstScanner(t *testing.T, in string) {
	t.Helper()
	var marks []int
	out, ok := escapeStringsMarks([]byte(in), &marks)
	if !ok {
		return
	}
	res, err := pg_query.Scan(string(out))
	if err != nil {
		return // the engine cannot parse it either: denied as a parse error
	}
	starts := map[int]bool{}
	var prev pg_query.Token
	for _, tok := range res.Tokens {
		if tok.Token == pg_query.Token_SQL_COMMENT {
			// libpg_query's scanner, unlike the server's, ends a literal
			// at a -- comment before its continuation; the engine's parser
			// then rejects the two adjacent literals (checked below).
			if isLiteralToken(prev) {
				continue
			}
		}
		afterComment := isLiteralToken(prev) && tok.Token == pg_query.Token_SCONST
		prev = tok.Token
		if tok.Token != pg_query.Token_SCONST {
			continue
		}
		s := int(tok.Start)
		starts[s] = true
		if c := out[s]; c != 'E' && c != 'e' && c != '$' {
			if _, err := pg_query.Parse(string(out)); afterComment && err != nil {
				continue
			}
			t.Fatalf("escapeStrings(%q) = %q: the scanner finds a plain literal at %d", in, out, s)
		}
	}
	for _, m := range marks {
		if !starts[m-1] {
			t.Fatalf("escapeStrings(%q) = %q: rewrote a quote at %d that the scanner does not read as a literal start", in, out, m)
		}
	}
}

func isLiteralToken(t pg_query.Token) bool {
	return t == pg_query.Token_SCONST || t == pg_query.Token_BCONST || t == pg_query.Token_XCONST || t == pg_query.Token_USCONST
}

// escapeCorpus combines the fragments the scanner distinguishes, so that
// each pair meets at least once.
func escapeCorpus() []string {
	frags := []string{
		"'a\\'b'", "'a''b'", "'\\\\'", "E'x\\''", "e'\\\\'", "B'01'", "X'1F'", "N'n\\'", "U&'u'", "U&\"i\"",
		"\"q'\"\"\"", "$$'\\$$", "$t$ '\\' $t$", "$1", "1e5", "1.5", ".5", "0x1F", "a$b", "date", "x", "E", "N", "u",
		"-- c '\\\n", "-- c\r", "/* '\\ /* */ ' */", "\n", " ", "\t", "\f", "\v", ";", "(", ")", "::", "||", "-", "/", "*",
		"é", "表", "'", "\\", "$", "&", "SELECT", "--", "/*",
	}
	var out []string
	for _, a := range frags {
		for _, b := range frags {
			out = append(out, a+b, "SELECT "+a+b+" '\\'", a+"\n"+b)
			for _, c := range []string{"'z\\'", "\n'w'"} {
				out = append(out, a+b+c)
			}
		}
	}
	return out
}

func TestEscapeStringsAgreesWithScanner(t *testing.T) {
	for _, in := range escapeCorpus() {
		checkEscapedAgainstScanner(t, in)
	}
}

func FuzzEscapeStrings(f *testing.F) {
	for _, in := range escapeCorpus() {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !utf8.ValidString(in) || strings.IndexByte(in, 0) >= 0 {
			return
		}
		checkEscapedAgainstScanner(t, in)
	})
}

// TestJudgeUnderLexState judges the class's attacks and their benign faces
// through the engine, with and without the cache.
func TestJudgeUnderLexState(t *testing.T) {
	sjis, _ := backslashChar(t, "SJIS")
	big5, _ := backslashChar(t, "BIG5")
	gbk, _ := backslashChar(t, "GBK")
	off := engine.LexState{NonStandardStrings: true}
	for _, tc := range []struct {
		name string
		lex  engine.LexState
		sql  string
		want string // rule id, or "allow"
	}{
		{"scs off hides a delete", off, `SELECT 'x\''; DELETE FROM t; --'`, "no-unfiltered-writes"},
		{"scs on reads one string", engine.LexState{}, `SELECT 'x\''; DELETE FROM t; --'`, "allow"},
		{"scs off reads one string", off, `SELECT 'a\'; DELETE FROM t; --'`, "allow"},
		{"scs on hides nothing here", engine.LexState{}, `SELECT 'a\'; DELETE FROM t; --'`, "no-unfiltered-writes"},
		{"scs off, escape literal the same", off, `SELECT E'a\'; DELETE FROM t; --'`, "allow"},
		{"scs off, legacy backslash text", off, `INSERT INTO t (p) VALUES ('C:\\temp\\x')`, "allow"},
		{"scs off, no backslash", off, `SELECT 'a'`, "allow"},
		{"sjis swallows the escape", engine.LexState{ClientEncoding: "SJIS"}, "SELECT E'" + sjis + "'; DELETE FROM t; --'", "no-unfiltered-writes"},
		{"big5 swallows the escape", engine.LexState{ClientEncoding: "BIG5"}, "SELECT E'" + big5 + "'; DELETE FROM t; --'", "no-unfiltered-writes"},
		{"gbk and scs off", engine.LexState{ClientEncoding: "GBK", NonStandardStrings: true}, "SELECT '" + gbk + "'; DELETE FROM t; --'", "no-unfiltered-writes"},
		{"latin1 reads the same text as one string", engine.LexState{ClientEncoding: "LATIN1"}, "SELECT E'" + sjis + "'; DELETE FROM t; --'", "allow"},
		{"utf8 rejects the same bytes", engine.LexState{}, "SELECT E'" + sjis + "'; DELETE FROM t; --'", "parse-error"},
		{"sjis benign", engine.LexState{ClientEncoding: "SJIS"}, "SELECT '\x93\xfa\x96\x7b'", "allow"},
		{"latin1 benign", engine.LexState{ClientEncoding: "LATIN1"}, "SELECT 'caf\xe9'", "allow"},
		{"latin1 text is a parse error as UTF-8", engine.LexState{}, "SELECT 'caf\xe9'", "parse-error"},
		{"sjis invalid", engine.LexState{ClientEncoding: "SJIS"}, "SELECT '\x80'", LexInvalidRuleID},
		{"johab unsupported", engine.LexState{ClientEncoding: "JOHAB"}, "SELECT '\x88\x61'", LexUnsupportedRuleID},
		{"johab ascii fine", engine.LexState{ClientEncoding: "JOHAB"}, "SELECT 'a'", "allow"},
		{"unconfirmed backslash", engine.LexState{Unconfirmed: true}, `SELECT 'a\'`, LexUnconfirmedRuleID},
		{"unconfirmed non-ascii", engine.LexState{Unconfirmed: true}, "SELECT 'é'", LexUnconfirmedRuleID},
		{"unconfirmed ascii", engine.LexState{Unconfirmed: true}, "SELECT 'a'", "allow"},
		{"scs off junk-glued number", off, `SELECT 1e'\'`, LexAmbiguousRuleID},
		{"scs off dollar body", off, `SELECT $$'\'; DELETE FROM t; --'$$`, "allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, opts := range []engine.Options{{}, {CacheBytes: -1}} {
				e, err := engine.New(DefaultPolicy(), Dialect, opts)
				if err != nil {
					t.Fatal(err)
				}
				s := &engine.Session{User: "app", Database: "app", Lex: tc.lex}
				for round := 0; round < 2; round++ {
					v := e.Judge([]byte(tc.sql), s)
					got := "allow"
					if v.Action.Denies() {
						got = v.RuleID
					}
					if got != tc.want {
						t.Fatalf("%q under %+v (cache %d, round %d): got %s (%s), want %s", tc.sql, tc.lex, opts.CacheBytes, round, got, v.Reason, tc.want)
					}
					if v.Action.Denies() && (v.Reason == "" || strings.Contains(v.Reason, "FROM t")) {
						t.Fatalf("%q: bad reason %q", tc.sql, v.Reason)
					}
				}
			}
		})
	}
}

// The repeated statement in a session whose settings differ from the
// server default: the text is scanned for backslashes and non-ASCII bytes
// before the cache lookup (pure ASCII: judged as is).
func BenchmarkVerdictRepeatedPointSelectLexState(b *testing.B) {
	e := benchEngine(b, 0)
	s := *benchSession
	s.Lex = engine.LexState{NonStandardStrings: true, ClientEncoding: "SJIS"}
	sql := []byte(benchPointSelect)
	e.Judge(sql, &s)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Judge(sql, &s); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}

// A repeated non-ASCII statement in an SJIS session: converted on every
// judgement, then found in the cache by its converted text.
func BenchmarkVerdictRepeatedSJIS(b *testing.B) {
	e := benchEngine(b, 0)
	s := *benchSession
	s.Lex = engine.LexState{ClientEncoding: "SJIS"}
	sql := []byte("SELECT abalance FROM pgbench_accounts WHERE aid = 48213 AND filler = '\x93\xfa\x96\x7b\x8c\xea'")
	e.Judge(sql, &s)
	b.ReportAllocs()
	for b.Loop() {
		if v := e.Judge(sql, &s); v.Action != engine.ActionAllow {
			b.Fatal(v)
		}
	}
}

// FuzzJudgeLexState judges arbitrary bytes under each lexing state: no
// panic, a deny always has a reason, and the cached verdict is the first.
func FuzzJudgeLexState(f *testing.F) {
	f.Add([]byte("SELECT 'x\\''; DELETE FROM t; --'"), uint8(1))
	f.Add([]byte("SELECT E'\x95\\'; DELETE FROM t; --'"), uint8(2))
	f.Add([]byte("DO $$ BEGIN PERFORM 'x\\''; DELETE FROM t; PERFORM 1 --'\n; END $$"), uint8(0))
	f.Add([]byte("SELECT 'caf\xe9'"), uint8(3))
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	states := []engine.LexState{{}, {NonStandardStrings: true}, {ClientEncoding: "SJIS"}, {ClientEncoding: "LATIN1"},
		{ClientEncoding: "GB18030", NonStandardStrings: true}, {ClientEncoding: "BIG5"}, {Unconfirmed: true}, {ClientEncoding: "JOHAB"}}
	f.Fuzz(func(t *testing.T, sql []byte, st uint8) {
		s := &engine.Session{User: "fuzz", Lex: states[int(st)%len(states)]}
		v := e.Judge(sql, s)
		if v.Action.Denies() && v.Reason == "" {
			t.Fatalf("%q under %+v: deny %s without a reason", sql, s.Lex, v.RuleID)
		}
		if again := e.Judge(sql, s); again != v {
			t.Fatalf("%q under %+v: cached verdict %+v differs from first %+v", sql, s.Lex, again, v)
		}
	})
}
