package pgsql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

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

// FuzzMatchShape: MatchShape(key of A, its pieces, B) holds exactly when
// ShapeSpans gives B a shape whose key is A's, for B made from A by
// swapping its literals for others of their classes (from the fuzzer's
// string and number, which may well change the shape), by overwriting one
// of its bytes, or by cutting it short.
func FuzzMatchShape(f *testing.F) {
	for _, s := range append(append([]string{string(bulkInsert(3, 0))}, shapeSeeds...), shapeSelectSeeds...) {
		f.Add(s, "x' || 'y", uint32(7), uint16(0), byte('\''))
		f.Add(s, "", uint32(1<<31), uint16(9), byte('-'))
	}
	f.Add("INSERT INTO t VALUES ($a$ 1, 'x $a$, 5, 'y')", "$a$", uint32(3), uint16(20), byte('.'))
	f.Add("INSERT INTO t VALUES (1, 'x')\n-- 'y'\n, (2, 'z')", "\n", uint32(3), uint16(5), byte('e'))
	f.Fuzz(func(t *testing.T, a, lit string, n uint32, at uint16, c byte) {
		keyA, spans, ok := shapeOf(a)
		if !ok {
			return
		}
		key := string(keyA)
		pieces := engine.ShapePieces(key)
		b := selectVariant(a, spans, lit, n)
		variants := []string{a, b, b[:int(at)%len(b)]}
		if len(b) > 0 {
			m := []byte(b)
			m[int(at)%len(m)] = c
			variants = append(variants, string(m))
		}
		for _, v := range variants {
			kv, ok := engine.ShapeKey(Dialect.(engine.Shaper), nil, v)
			want := ok && string(kv) == key
			if got := (pgDialect{}).MatchShape(key, pieces, v); got != want {
				t.Fatalf("MatchShape(key of %q, %q) = %v; its key %q (ok %v), A's %q", a, v, got, render(kv), ok, render(keyA))
			}
		}
	})
}
