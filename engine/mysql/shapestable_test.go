package mysql

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzPrescanStable checks the claim PrescanStable makes: when it holds for
// a text A, every text B of A's shape (A's literals swapped for others of
// their classes, from the fuzzer's string and number, each string quoted
// with ' escaped, with " as it comes, or with ' as it comes) measures as A
// but for Bytes, so that a shape hit may skip B's prescan.
func FuzzPrescanStable(f *testing.F) {
	for _, s := range append([]string{
		benchBulkInsert(3),
		"INSERT INTO t (a, b) VALUES (1, 'x'), (-2, 'y''z'), (NULL, 3.5)",
		"INSERT INTO t VALUES (1, 'a') -- 'b'",
		"INSERT INTO t VALUES (1, 'a') # x\n, (2, \"b\")",
		"INSERT INTO t VALUES (a */* ' */ b, 5, 'x')",
		"INSERT INTO t VALUES (1,/**/2, 'x'--\n)",
	}, shapeSelectSeeds...) {
		f.Add(s, "*/ ; DROP TABLE t; -- ' \\ \" (", uint32(7), uint8(0))
	}
	// The prescan, past a */ outside a comment, reads the shape's literals
	// inside a string of its own: B's literal ends that string elsewhere.
	f.Add("INSERT INTO t VALUES (a */* ' */ b, 5, 'x'), (1, 2)", "a')", uint32(7), uint8(0))
	f.Fuzz(func(t *testing.T, a, lit string, n uint32, quote uint8) {
		keyA, _, ok := shapeSpans(nil, nil, a)
		if !ok || !(myDialect{}).PrescanStable(a) {
			return
		}
		var b strings.Builder
		last := 0
		for _, sp := range literalSpans(a) {
			b.WriteString(a[last:sp.start])
			switch sp.class {
			case shInt:
				b.WriteString(strconv.FormatUint(uint64(n), 10))
			case shDec:
				b.WriteString(strconv.FormatUint(uint64(n), 10) + "." + strconv.Itoa(int(quote)))
			default:
				switch quote % 3 {
				case 0:
					b.WriteString("'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`).Replace(lit) + "'")
				case 1:
					b.WriteString(`"` + lit + `"`)
				default:
					b.WriteString("'" + lit + "'")
				}
			}
			last = sp.end
		}
		b.WriteString(a[last:])
		text := b.String()
		if keyB, _, ok := shapeSpans(nil, nil, text); !ok || string(keyB) != string(keyA) {
			return // another shape: no hit
		}
		la, lb := prescan(a, 0), prescan(text, 0)
		la.Bytes = lb.Bytes
		if la != lb {
			t.Fatalf("%q measures %+v, its variant %q %+v", a, la, text, lb)
		}
	})
}

// TestPrescanStableSeeds: the benchmarks' texts and the common point
// selects skip the prescan on a hit; a literal the prescan reads otherwise
// (inside what it takes for a string, after a */ outside a comment) does
// not.
func TestPrescanStableSeeds(t *testing.T) {
	for text, want := range map[string]bool{
		benchBulkInsert(3):                                 true,
		"SELECT c FROM sbtest1 WHERE id=48213":             true,
		"INSERT INTO t VALUES (1, 2.5, 'x''y', \"z\\\"\")": true,
		"INSERT INTO t VALUES (1, 'x') -- 'y'":             true,
		"INSERT INTO t VALUES (1, 'x') /* 'y' */":          true,
		"INSERT INTO t VALUES (a */* ' */ b, 5, 'x')":      false,
		"INSERT INTO t VALUES (1) /*! , (2) */":            false, // no shape
	} {
		if got := (myDialect{}).PrescanStable(text); got != want {
			t.Errorf("%q: PrescanStable %v, want %v", text, got, want)
		}
	}
}
