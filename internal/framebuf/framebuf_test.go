package framebuf

import "testing"

func TestSizes(t *testing.T) {
	for size, want := range map[int]bool{32 << 10: false, 64 << 10: true, 96 << 10: false, 128 << 10: true, 1 << 20: true, 2 << 20: false, 0: false} {
		if got := Pooled(size); got != want {
			t.Errorf("Pooled(%d) = %v, want %v", size, got, want)
		}
		if b := Get(size); len(b) != size || cap(b) != size {
			t.Errorf("Get(%d): len %d cap %d", size, len(b), cap(b))
		}
	}
}

// TestGetPutAllocatesNothing: a kept size comes back without allocating
// once it was given back (sync.Pool keeps it for this P).
func TestGetPutAllocatesNothing(t *testing.T) {
	Put(Get(128 << 10))
	if n := testing.AllocsPerRun(100, func() { Put(Get(128 << 10)) }); n != 0 {
		t.Errorf("%v allocations per Get and Put of a kept size, want 0", n)
	}
}
