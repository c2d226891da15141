package cgroupstats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNrThrottled(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"nr_periods 26\nnr_throttled 19\nthrottled_time 1094655810\n", 19, true},
		{"usage_usec 1\nnr_periods 3\nnr_throttled 0\nthrottled_usec 0\n", 0, true},
		{"nr_throttled 7", 7, true},
		{"nr_periods 1\n", 0, false},
		{"nr_throttled 4x\n", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := NrThrottled([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("input %q: got %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// The probe runs on sampled batches of the relay: it must not allocate.
func TestThrottleProbeDoesNotAllocate(t *testing.T) {
	dir := t.TempDir()
	// a v2 cpu.stat longer than the probe's buffer: the line cut by the
	// buffer's end is left out, nr_throttled before it is read
	stat := "usage_usec 123456789012\nuser_usec 98765432109\nsystem_usec 24691356903\n" +
		"core_sched.force_idle_usec 0\nnr_periods 1234567\nnr_throttled 4242\nthrottled_usec 987654321\n" +
		"nr_bursts 0\nburst_usec 0\n" + strings.Repeat("future_key_of_a_later_kernel 12345\n", 4)
	if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte(stat), 0o600); err != nil {
		t.Fatal(err)
	}
	p := OpenThrottleProbe(Layout{Version: V2, CPU: dir})
	if p == nil {
		t.Fatal("no probe for a directory with a cpu.stat")
	}
	defer p.Close()
	var buf [256]byte
	if v, ok := p.Read(&buf); !ok || v != 4242 {
		t.Fatalf("Read: %d, %v; want 4242, true", v, ok)
	}
	if allocs := testing.AllocsPerRun(100, func() { p.Read(&buf) }); allocs != 0 {
		t.Errorf("Read: %v allocations, want 0", allocs)
	}
	b := []byte(stat)
	if allocs := testing.AllocsPerRun(100, func() { NrThrottled(b) }); allocs != 0 {
		t.Errorf("NrThrottled: %v allocations, want 0", allocs)
	}
	if OpenThrottleProbe(Layout{Version: V2}) != nil || OpenThrottleProbe(Layout{Version: V2, CPU: filepath.Join(dir, "none")}) != nil {
		t.Error("a probe without a cpu.stat")
	}
	var none *ThrottleProbe
	if _, ok := none.Read(&buf); ok {
		t.Error("a nil probe read something")
	}
	none.Close()
}

// BenchmarkNrThrottled is the daemon's throttle probe without the pread,
// on a v2 cpu.stat as the kernel writes it.
func BenchmarkNrThrottled(b *testing.B) {
	stat := []byte("usage_usec 123456789012\nuser_usec 98765432109\nsystem_usec 24691356903\n" +
		"core_sched.force_idle_usec 0\nnr_periods 1234567\nnr_throttled 4242\nthrottled_usec 987654321\n" +
		"nr_bursts 0\nburst_usec 0\n")
	b.ReportAllocs()
	for b.Loop() {
		NrThrottled(stat)
	}
}
