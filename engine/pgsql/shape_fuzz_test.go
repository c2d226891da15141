package pgsql

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// FuzzShapeHitSelect: a point select's verdict through the shape cache
// (shapehit.go, shapeselect.go) is the verdict of parsing it. For a SELECT
// text A, B is A with each replaced literal swapped for one built from the
// fuzzer's string and number, its class kept; A and a variant of A are
// judged first, so that an inert shape is cached and B is a shape hit. B's
// verdict through the caches must equal its verdict from an engine with no
// cache, reason included; when B's shape is not A's (the fuzzer's string
// has a backslash), it is judged the ordinary way, and must agree all the
// same. Seeds: shapeSelectSeeds and testdata/fuzz/FuzzShapeHitSelect.
func FuzzShapeHitSelect(f *testing.F) {
	for _, s := range shapeSelectSeeds {
		f.Add(s, "*/ ; DROP TABLE t; -- '", uint32(7))
	}
	cached := mustEngine(f, string(defaultPolicyYAML), engine.Options{})
	plain := mustEngine(f, string(defaultPolicyYAML), engine.Options{CacheBytes: -1})
	s := &engine.Session{User: "app", Database: "app"}
	f.Fuzz(func(t *testing.T, a, lit string, n uint32) {
		lead := strings.TrimLeft(a, " \t\n")
		if len(lead) < 6 || !strings.EqualFold(lead[:6], "select") {
			return
		}
		_, spans, ok := shapeOf(a)
		if !ok {
			return
		}
		b := selectVariant(a, spans, lit, n)
		_, inert := Dialect.(engine.Shaper).AnalyzeShape(a, prescan(a, 0))
		for _, x := range []string{a, variant(a, spans, 1), b} {
			got, want := cached.Judge([]byte(x), s), plain.Judge([]byte(x), s)
			if got != want {
				t.Fatalf("%q (of %q, inert %v): through the caches %+v, parsed %+v", x, a, inert, got, want)
			}
		}
		if inert && cached.Stats().Shapes == 0 {
			t.Fatalf("%q is inert but its shape was not cached", a)
		}
	})
}

// selectVariant returns text with each span replaced by a literal of its
// class made from lit and n.
func selectVariant(text string, spans []litSpan, lit string, n uint32) string {
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(text[last:sp.Start])
		class := sp.Class
		if class >= 'A' && class <= 'Z' {
			b.WriteByte('-')
			class += negative
		}
		switch class {
		case litInt:
			b.WriteString(strconv.FormatUint(uint64(n&0x7fffffff), 10))
		case litBigInt:
			b.WriteString(strconv.FormatUint(uint64(n)+1<<31, 10))
		case litFloat:
			b.WriteString(strconv.FormatUint(uint64(n), 10) + ".5")
		default:
			b.WriteString("'" + strings.ReplaceAll(lit, "'", "''") + "'")
		}
		last = sp.End
	}
	b.WriteString(text[last:])
	return b.String()
}
