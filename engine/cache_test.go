package engine

import (
	"fmt"
	"testing"
	"time"
)

// These tests are of the core alone: they judge through testDialect
// (dialect_test.go), whose facts are enough for their rules.

// Two texts with the same hash must each get their own facts: the cache
// compares the full text on every hit.
func TestCacheCollision(t *testing.T) {
	e := mustEngine(t, "rules: [{id: r, action: deny, match: {functions: [pg_read_file]}}]", Options{})
	e.cache.hash = func([]byte) uint64 { return 7 }
	benign := []byte("SELECT 1")
	evil := []byte("SELECT pg_read_file('/etc/passwd')")
	for round := 0; round < 3; round++ {
		if v := e.Judge(benign, nil); v.Action != ActionAllow {
			t.Fatalf("round %d: benign got %+v, want allow", round, v)
		}
		if v := e.Judge(evil, nil); v.Action != ActionDeny {
			t.Fatalf("round %d: evil with colliding hash got %+v, want deny", round, v)
		}
	}
	if n, _ := e.cache.len(); n != 1 {
		t.Errorf("colliding texts: %d entries, want 1 (the newer replaces the older)", n)
	}
}

func TestCacheBounded(t *testing.T) {
	const limit = 64 << 10
	e := mustEngine(t, "rules: []", Options{CacheBytes: limit})
	for i := 0; i < 5000; i++ {
		e.Judge(fmt.Appendf(nil, "SELECT a, b, c FROM t%d WHERE id = %d", i, i), nil)
	}
	n, bytes := e.cache.len()
	if bytes > limit || n == 0 {
		t.Errorf("after 5000 texts: %d entries, %d bytes; want some entries and at most %d bytes", n, bytes, limit)
	}
	// Hot entries survive: touch one, flood, it must still be cached.
	hot := []byte("SELECT hot FROM t WHERE id = 1")
	e.Judge(hot, nil)
	for i := 0; i < 20; i++ {
		e.Judge(hot, nil)
		e.Judge(fmt.Appendf(nil, "SELECT x FROM flood%d", i), nil)
	}
	if _, _, ok := e.cache.get(hot); !ok {
		t.Error("a text hit between every insert was evicted")
	}
}

func TestCacheDisabled(t *testing.T) {
	e := mustEngine(t, "rules: []", Options{CacheBytes: -1})
	if e.cache != nil {
		t.Fatal("CacheBytes < 0 must disable the cache")
	}
	if v := e.Judge([]byte("SELECT 1"), nil); v.Action != ActionAllow || v.Statements != 1 {
		t.Errorf("got %+v", v)
	}
}

func TestNewNilPolicy(t *testing.T) {
	if _, err := New(nil, testDialect{}, Options{}); err == nil {
		t.Error("New(nil): got no error")
	}
}

func TestRateBounded(t *testing.T) {
	p, err := ParsePolicy([]byte(`rules: [{id: r, action: deny, match: {rate: {per_second: 1, per: [user]}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	e, _ := New(p, testDialect{}, Options{RateKeys: 100})
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 1000; i++ {
		e.Judge([]byte("SELECT 1"), &Session{User: fmt.Sprint("u", i), At: at})
	}
	if n := e.rates.len(); n > 100 {
		t.Errorf("rate table holds %d keys, limit 100", n)
	}
}
