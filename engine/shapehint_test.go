package engine

import "testing"

// spansFrom makes spans of text from cuts: each pair of bytes an offset
// forward and a length, each span after the last, a class from the length.
func spansFrom(text string, cuts []byte) []ShapeSpan {
	var spans []ShapeSpan
	at := 0
	for i := 0; i+1 < len(cuts); i += 2 {
		start := at + int(cuts[i])%8
		end := start + int(cuts[i+1])%12
		if end > len(text) {
			break
		}
		spans = append(spans, ShapeSpan{Start: start, End: end, Class: "ifsn"[cuts[i+1]%4]})
		at = end
	}
	return spans
}

// FuzzKeyIs: keyIs(key, text, spans) holds exactly when key is the key
// AppendShapeKey builds from text and spans, for the built key, for it
// changed in one byte or cut short or made longer, and for any other key.
func FuzzKeyIs(f *testing.F) {
	f.Add("INSERT INTO t VALUES (1, 'a'), (22, 'bb')", []byte{22, 1, 2, 3, 4, 2, 3, 4}, "INSERT INTO t VALUES (\x00i, \x00s)", uint16(3))
	f.Add("abc", []byte{0, 1}, "", uint16(0))
	f.Add("a\x00ib", []byte{1, 0}, "a\x00i\x00ib", uint16(9))
	f.Fuzz(func(t *testing.T, text string, cuts []byte, other string, at uint16) {
		spans := spansFrom(text, cuts)
		key := string(AppendShapeKey(nil, text, spans))
		if !keyIs(key, text, spans) {
			t.Fatalf("keyIs(%q, %q, %v) = false for its own key", key, text, spans)
		}
		if got := keyIs(other, text, spans); got != (other == key) {
			t.Fatalf("keyIs(%q, %q, %v) = %v; key %q", other, text, spans, got, key)
		}
		variants := []string{key + "x", key + "\x00"}
		if len(key) > 0 {
			p := int(at) % len(key)
			b := []byte(key)
			b[p] ^= 1 + byte(at>>8)%255
			variants = append(variants, string(b), key[:p], key[:len(key)-1])
		}
		for _, v := range variants {
			if got := keyIs(v, text, spans); got != (v == key) {
				t.Fatalf("keyIs(%q, %q, %v) = %v; key %q", v, text, spans, got, key)
			}
		}
	})
}
