package pgsql

import "testing"

// scanStringRef is scanString byte by byte: the reference FuzzScanString
// holds it to.
func scanStringRef(text string, i int, escapes bool) (int, bool) {
	backslash := false
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\'':
			if j+1 < len(text) && text[j+1] == '\'' {
				j++
				continue
			}
			return j + 1, backslash
		case '\\':
			backslash = true
			if escapes {
				j++
			}
		}
	}
	return -1, backslash
}

// FuzzScanString: scanString's short-string loop and its IndexByte jumps
// find the end a byte-by-byte reading finds, and the same backslash, for
// strings shorter and longer than the short loop, with and without
// escapes (an unterminated string's backslash is not compared: it has no
// shape either way).
func FuzzScanString(f *testing.F) {
	for _, s := range []string{"'abc'", "'a''b'", `'a\'b'`, `'a\\'`, "'" + "0123456789abcdefghijklmn'' x'", "'" + "0123456789abcdefghijklm\\'x'", "'unterminated", "''"} {
		f.Add("x "+s+" y", true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, escapes bool) {
		for i := 0; i < len(text); i++ {
			if text[i] != '\'' {
				continue
			}
			end, bs := scanString(text, i, escapes)
			wantEnd, wantBs := scanStringRef(text, i, escapes)
			if end != wantEnd || (end >= 0 && bs != wantBs) {
				t.Fatalf("scanString(%q, %d, %v) = %d, %v; want %d, %v", text, i, escapes, end, bs, wantEnd, wantBs)
			}
		}
	})
}
