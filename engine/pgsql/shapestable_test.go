package pgsql

import "testing"

// FuzzPrescanStable checks the claim PrescanStable makes: when it holds for
// a text A, every text B of A's shape (A's literals swapped for others of
// their classes, from the fuzzer's string and number) measures as A but
// for Bytes, so that a shape hit may skip B's prescan.
func FuzzPrescanStable(f *testing.F) {
	for _, s := range append(append([]string{}, shapeSeeds...), shapeSelectSeeds...) {
		f.Add(s, "*/ ; DROP TABLE t; -- ' ( ,", uint32(7))
	}
	f.Fuzz(func(t *testing.T, a, lit string, n uint32) {
		keyA, spans, ok := shapeOf(a)
		if !ok || !(pgDialect{}).PrescanStable(a) {
			return
		}
		b := selectVariant(a, spans, lit, n)
		if keyB, _, ok := shapeOf(b); !ok || string(keyB) != string(keyA) {
			return // another shape: no hit
		}
		la, lb := prescan(a, 0), prescan(b, 0)
		la.Bytes = lb.Bytes
		if la != lb {
			t.Fatalf("%q measures %+v, its variant %q %+v", a, la, b, lb)
		}
	})
}

// TestPrescanStableSeeds: the benchmarks' texts and the common point
// selects skip the prescan on a hit; a literal the prescan reads otherwise
// (inside what it takes for a comment or a continued string) does not.
func TestPrescanStableSeeds(t *testing.T) {
	for text, want := range map[string]bool{
		string(bulkInsert(3, 0)):                                  true,
		"SELECT abalance FROM pgbench_accounts WHERE aid = 48213": true,
		"SELECT a FROM t WHERE id = -5 AND n = 'x''y' /* 'z' */":  true,
		"INSERT INTO t VALUES (1, 'x') -- 'y'":                    true,
		"INSERT INTO t VALUES (-1, 2.5, 2147483648)":              true,
		"SELECT a FROM t WHERE name = 'a'\n'b'":                   false, // no span: one continued literal
	} {
		if got := (pgDialect{}).PrescanStable(text); got != want {
			t.Errorf("%q: PrescanStable %v, want %v", text, got, want)
		}
	}
}
