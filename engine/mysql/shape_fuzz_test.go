package mysql

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
// cache, reason included. Seeds: shapeSelectSeeds and
// testdata/fuzz/FuzzShapeHitSelect.
func FuzzShapeHitSelect(f *testing.F) {
	for _, s := range shapeSelectSeeds {
		f.Add(s, "*/ ; DROP TABLE t; -- ' \\", uint32(7))
	}
	cached, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		f.Fatal(err)
	}
	plain, err := engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: -1})
	if err != nil {
		f.Fatal(err)
	}
	s := &engine.Session{User: "app", Database: "app"}
	f.Fuzz(func(t *testing.T, a, lit string, n uint32) {
		lead := strings.TrimLeft(a, " \t\n")
		if len(lead) < 6 || !strings.EqualFold(lead[:6], "select") {
			return
		}
		spans := literalSpans(a)
		if spans == nil {
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
		b.WriteString(text[last:sp.start])
		switch sp.class {
		case shInt:
			b.WriteString(strconv.FormatUint(uint64(n), 10))
		case shDec:
			b.WriteString(strconv.FormatUint(uint64(n), 10) + ".5")
		default:
			b.WriteString("'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`).Replace(lit) + "'")
		}
		last = sp.end
	}
	b.WriteString(text[last:])
	return b.String()
}
