package mysql

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// Benchmarks of statements whose text is new on every call (issue 26): the
// literals change, the shape does not. Nothing here asserts a timing.

// distinct overwrites the 10-digit number at text[at:at+10] with 1e9+i, so
// that no two calls judge the same text.
func distinct(text []byte, at, i int) {
	strconv.AppendInt(text[at:at], 1_000_000_000+int64(i%1_000_000_000), 10)
}

func benchDistinct(b *testing.B, text []byte, at int, want engine.Action) {
	e := benchEngine(b, 0)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	i := 0
	for b.Loop() {
		distinct(text, at, i)
		if v := e.Judge(text, benchSession); v.Action != want {
			b.Fatal(v)
		}
		i++
	}
}

// BenchmarkInsert1000Distinct judges 1,000-row INSERTs (sysbench's row
// shape) that differ in their first row's id.
func BenchmarkInsert1000Distinct(b *testing.B) {
	text := []byte(benchBulkInsert(1000))
	at := len("INSERT INTO sbtest1 (id, k, c, pad) VALUES (")
	text = append(text[:at:at], append([]byte("1000000000"), text[at+1:]...)...)
	benchDistinct(b, text, at, engine.ActionAllow)
}

// BenchmarkPointSelectDistinct judges unprepared point selects with a new
// key each time.
func BenchmarkPointSelectDistinct(b *testing.B) {
	text := []byte("SELECT c FROM sbtest1 WHERE id=1000000000")
	benchDistinct(b, text, len(text)-10, engine.ActionAllow)
}

// TestShapeHitAllocatesNothing: a text of a cached shape is judged without
// a parse and without allocating (a parse allocates), for a bulk INSERT and
// a point select whose literals change on every call.
func TestShapeHitAllocatesNothing(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string][]byte{
		"insert": []byte("INSERT INTO t (id, name) VALUES (1000000000, 'x'), (2, 'y')"),
		"select": []byte("SELECT c FROM t WHERE id = 1000000000 AND name = 'z'"),
	} {
		at := strings.Index(string(text), "1000000000")
		i := 0
		judge := func() {
			distinct(text, at, i)
			i++
			if v := e.Judge(text, benchSession); v.Action != engine.ActionAllow {
				t.Fatalf("%s: %q: %+v", name, text, v)
			}
		}
		judge()
		judge() // the second sighting admits the shape
		if n := testing.AllocsPerRun(100, judge); n != 0 {
			t.Errorf("%s: %v allocations per shape hit, want 0", name, n)
		}
	}
}
