package engine

// A shape hit without building, hashing or looking up its key (issue 26).
// The dialect's scan gives the spans a text's shape key replaces
// (Shaper.ShapeSpans); the key itself, the text with each span replaced by
// a NUL and the span's class, was built, hashed and looked up on every hit,
// three more passes over a 29 KB text. Now a hit first tries a hint: the
// shape entry last hit by a text of the same opening (the bytes before its
// first span) and the same length class. keyIs compares that entry's key
// with the text, span by span, byte for byte: a hint answers only when the
// text's key is the entry's key exactly, which is what the shape cache's
// own lookup would have found (and its facts hold for every text of that
// key, whether or not the cache still holds the entry: entries are never
// changed, and the engine is built anew for another policy). A hint that
// does not match costs that comparison, and the text takes the cache's
// lookup, which sets the hint.
//
// The hints hold at most len(shapeHints) entries alive beyond the shape
// cache's bound, each within its entry bound (a quarter of a shard).

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"strings"
	"sync/atomic"
	"unsafe"
)

// ShapeSpan is a literal a shape key replaces: text[Start:End], marked in
// the key by a NUL and Class.
type ShapeSpan struct {
	Start, End int
	Class      byte
}

// ShapeKey appends the shape key of text to key (Shaper.ShapeSpans).
func ShapeKey(s Shaper, key []byte, text string) ([]byte, bool) {
	spans, ok := s.ShapeSpans(nil, text)
	if !ok {
		return key, false
	}
	return AppendShapeKey(key, text, spans), true
}

// AppendShapeKey appends to key the shape key of text whose replaced
// literals are spans.
func AppendShapeKey(key []byte, text string, spans []ShapeSpan) []byte {
	if n := len(text) + 2*len(spans); cap(key)-len(key) < n {
		key = append(make([]byte, 0, len(key)+n), key...)
	}
	last := 0
	for _, s := range spans {
		key = append(key, text[last:s.Start]...)
		key = append(key, 0, s.Class)
		last = s.End
	}
	return append(key, text[last:]...)
}

// keyIs reports whether key is the shape key of text with spans: what
// AppendShapeKey would build, compared in place. A short piece of kept
// text (most of a bulk INSERT's: ", " and "), (") is compared with its
// marker in one 8-byte word.
func keyIs(key, text string, spans []ShapeSpan) bool {
	pos, last := 0, 0
	for _, s := range spans {
		n := s.Start - last
		end := pos + n
		if end+2 > len(key) {
			return false
		}
		if n <= 6 && pos+8 <= len(key) && last+8 <= len(text) {
			// text's n bytes, the NUL, the class: n+2 bytes of key.
			want := word(text, last)&(1<<(8*n)-1) | uint64(s.Class)<<(8*(n+1))
			if (word(key, pos)^want)&(1<<(8*(n+2))-1) != 0 {
				return false
			}
		} else if key[end] != 0 || key[end+1] != s.Class || key[pos:end] != text[last:s.Start] {
			return false
		}
		pos, last = end+2, s.End
	}
	return key[pos:] == text[last:]
}

// word returns the 8 bytes of s at i, the first lowest.
func word(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), len(s))[i:])
}

// ShapePiece is one marker of a shape key: Kept bytes of kept text, then
// a NUL and Class.
type ShapePiece struct {
	Kept  int
	Class byte
}

// ShapePieces returns the markers of key, in order (a key's only NUL bytes
// are its markers').
func ShapePieces(key string) []ShapePiece {
	var ps []ShapePiece
	for last := 0; ; {
		i := strings.IndexByte(key[last:], 0)
		if i < 0 || last+i+1 >= len(key) {
			return ps
		}
		ps = append(ps, ShapePiece{Kept: i, Class: key[last+i+1]})
		last += i + 2
	}
}

// shapeHints are hinted shape entries (templates with shapeKey set), in
// pairs: a text's pair is chosen by its first bytes and the bit length of
// its size, so that an INSERT of 10 rows and one of 1,000 into the same
// table keep a hint each; the pair's first is the one last set.
type shapeHints struct {
	seed  maphash.Seed
	slots [128]atomic.Pointer[TextFacts]
}

func newShapeHints() *shapeHints { return &shapeHints{seed: maphash.MakeSeed()} }

// pair returns the index of text's pair of slots.
func (h *shapeHints) pair(text string) int {
	x := maphash.String(h.seed, text[:min(len(text), 48)])
	x ^= uint64(bits.Len(uint(len(text)))) * 0x9e3779b97f4a7c15
	return int(x>>32) % (len(h.slots) / 2) * 2
}

// set makes t the first hint of text's pair, the other the one that was.
func (h *shapeHints) set(text string, t *TextFacts) {
	i := h.pair(text)
	if old := h.slots[i].Load(); old != t {
		h.slots[i+1].Store(old)
		h.slots[i].Store(t)
	}
}
