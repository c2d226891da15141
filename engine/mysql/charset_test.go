package mysql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestMultibyteToUTF8: the conversion keeps the server's character
// boundaries (a trail byte 0x5C, 0x60 or 0x7C is part of its character)
// and refuses what no UTF-8 text stands for.
func TestMultibyteToUTF8(t *testing.T) {
	for _, tc := range []struct {
		name, charset, in, want string
		ok                      bool
	}{
		{"gbk Chinese", "gbk", "'\xd6\xd0\xce\xc4'", "'中文'", true},
		{"gbk trail backslash", "gbk", "'\xbf\x5c' OR 1", "'縗' OR 1", true},
		{"gbk trail backquote", "gbk", "`\x81\x60`", "`乣`", true},
		{"gbk lone lead before a quote", "gbk", "'\xbf' OR 1", "", false},
		{"gbk lead at the end", "gbk", "'x\xbf", "", false},
		{"gbk 0x80", "gbk", "'\x80'", "", false},
		{"gbk 0xff lead", "gbk", "'\xff\x5c'", "", false},
		{"gb2312 trail must be high", "gb2312", "'\xd6\x5c'", "", false},
		{"gb2312 Chinese", "gb2312", "'\xd6\xd0'", "'中'", true},
		{"gb18030 four bytes", "gb18030", "'\x81\x30\x81\x30'", "'\u0080'", true},
		{"big5 trail backslash", "big5", "'\xa4\x5c'", "'么'", true},
		{"big5 lead above 0xf9", "big5", "'\xfa\x5c'", "", false},
		{"sjis trail backslash", "sjis", "'\x95\x5c'", "'表'", true},
		{"sjis half-width katakana", "sjis", "'\xb1'", "'ｱ'", true},
		{"sjis 0x815f is a backslash to the server", "sjis", "'\x81\x5f'", "", false},
		{"cp932 0x815f", "cp932", "'\x81\x5f'", "'＼'", true},
		{"euckr", "euckr", "'\xc7\xd1'", "'한'", true},
		{"euckr trail 0x5c", "euckr", "'\xc7\x5c'", "", false},
		{"ujis SS2 katakana", "ujis", "'\x8e\xb1'", "'ｱ'", true},
		{"ujis SS3", "ujis", "'\x8f\xb0\xa1'", "'丂'", true},
		{"ujis 0xa1c0 is a backslash to the server", "ujis", "'\xa1\xc0'", "", false},
		{"eucjpms", "eucjpms", "'\xc6\xfc'", "'日'", true},
		{"upper-case name", "GBK", "'\xd6\xd0'", "'中'", true},
		{"ASCII kept, NUL too", "gbk", "a\x00b", "a\x00b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := lookupMultibyte(tc.charset)
			if cs == nil {
				t.Fatalf("no converter for %s", tc.charset)
			}
			got, ok := cs.toUTF8([]byte(tc.in))
			if ok != tc.ok || string(got) != tc.want {
				t.Errorf("toUTF8(%q) in %s = %q, %v; want %q, %v", tc.in, tc.charset, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestReadMultibyte: Read converts a multibyte session's text and then
// reads it as any other (sql_mode applies to the converted text), and
// leaves ASCII text and UTF-8 sessions as they were.
func TestReadMultibyte(t *testing.T) {
	for _, tc := range []struct {
		name, sql, charset, mode, want, rule string
	}{
		{"ASCII in gbk is kept", "SELECT 'a'", "gbk", "", "SELECT 'a'", ""},
		{"gbk converted", "SELECT '\xd6\xd0'", "gbk", "", "SELECT '中'", ""},
		{"gbk under NO_BACKSLASH_ESCAPES", "SELECT '\xbf\x5c\\'", "gbk", "NO_BACKSLASH_ESCAPES", "SELECT '縗\\\\'", ""},
		{"gbk invalid", "SELECT '\xbf'", "gbk", "", "", lexCharsetInvalidRuleID},
		{"utf16 unsupported", "SELECT '\xbf'", "utf16", "", "", lexCharsetRuleID},
		{"unknown (relay/mysql: set from a variable) unsupported", "SELECT '\xc3\xa9'", "unknown", "", "", lexCharsetRuleID},
		{"latin1 byte for byte", "SELECT '\xe9'", "latin1", "", "SELECT '\xe9'", ""},
		{"utf8mb4 byte for byte", "SELECT '\xc3\xa9'", "utf8mb4", "", "SELECT '\xc3\xa9'", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, rule, _, ok := lexRead([]byte(tc.sql), &engine.LexState{ClientEncoding: tc.charset, SQLMode: tc.mode})
			if rule != tc.rule || ok != (tc.rule == "") || string(got) != tc.want {
				t.Errorf("Read(%q) in %s/%s = %q, %q, %v; want %q, %q", tc.sql, tc.charset, tc.mode, got, rule, ok, tc.want, tc.rule)
			}
		})
	}
}
