package daemon

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestTailIndexMonotonic(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 100, 1000, 1e6, 1e9, 60e9, math.MaxInt64} {
		i := tailIndex(v)
		if i < prev || i >= nTail {
			t.Fatalf("tailIndex(%d) = %d after %d: want monotonic, < %d", v, i, prev, nTail)
		}
		if lo := tailLower(i); lo > v {
			t.Fatalf("tailLower(tailIndex(%d)) = %d, want <= %d", v, lo, v)
		}
		prev = i
	}
}

// window builds the timings of a window from constructed statements: n
// fast ones (held fast, none sampled) and tail statements, every one
// sampled with the given components.
type stmt struct {
	held, cpu, eval  time.Duration
	throttled, probe bool
	n                int64
}

func buildTimings(stmts ...stmt) *timings {
	r := newRecorder()
	sh := r.shardFor(0)
	for _, s := range stmts {
		h := holdSample{held: int64(s.held), n: s.n, cpu: -1}
		if s.cpu > 0 {
			h.cpu, h.evalCPU, h.evalCalls = int64(s.cpu), int64(s.eval), 1
			h.throttleKnown, h.throttled = s.probe, s.throttled
		}
		sh.recordHold(&h, nil)
	}
	w := newTimings()
	r.collect(w)
	return w
}

func near(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 0.01 }

func TestAttribute(t *testing.T) {
	fast := stmt{held: 50 * time.Microsecond, n: 1000}
	tests := []struct {
		name     string
		stmts    []stmt
		noQuota  bool
		dominant string
		want     map[string]float64 // share name → value; absent: unknown
	}{
		{
			name:  "throttled tail",
			stmts: []stmt{fast, {held: 80 * time.Millisecond, cpu: 4 * time.Millisecond, eval: 2 * time.Millisecond, probe: true, throttled: true, n: 20}},
			// 80 ms held: 2 ms evaluation, 2 ms other CPU, 76 ms off CPU in a throttled hold
			dominant: "quota_wait",
			want:     map[string]float64{"evaluation": 0.025, "relay": 0.025, "quota_wait": 0.95, "run_queue_wait": 0},
		},
		{
			name:     "run-queue tail",
			stmts:    []stmt{fast, {held: 10 * time.Millisecond, cpu: 1 * time.Millisecond, eval: 500 * time.Microsecond, probe: true, n: 20}},
			dominant: "run_queue_wait",
			want:     map[string]float64{"evaluation": 0.05, "relay": 0.05, "quota_wait": 0, "run_queue_wait": 0.9},
		},
		{
			name:     "evaluation tail",
			stmts:    []stmt{fast, {held: 4 * time.Millisecond, cpu: 4 * time.Millisecond, eval: 3 * time.Millisecond, probe: true, n: 20}},
			dominant: "evaluation",
			want:     map[string]float64{"evaluation": 0.75, "relay": 0.25, "quota_wait": 0, "run_queue_wait": 0},
		},
		{
			name: "half throttled",
			stmts: []stmt{fast,
				{held: 10 * time.Millisecond, cpu: 1 * time.Millisecond, eval: 1 * time.Millisecond, probe: true, throttled: true, n: 10},
				{held: 10 * time.Millisecond, cpu: 1 * time.Millisecond, eval: 1 * time.Millisecond, probe: true, n: 10}},
			dominant: "quota_wait", // a tie goes to the first named
			want:     map[string]float64{"evaluation": 0.1, "relay": 0, "quota_wait": 0.45, "run_queue_wait": 0.45},
		},
		{
			name:     "no probe, no quota: wait is run-queue wait",
			stmts:    []stmt{fast, {held: 10 * time.Millisecond, cpu: 1 * time.Millisecond, eval: 1 * time.Millisecond, n: 20}},
			noQuota:  true,
			dominant: "run_queue_wait",
			want:     map[string]float64{"evaluation": 0.1, "relay": 0, "quota_wait": 0, "run_queue_wait": 0.9},
		},
		{
			name:     "no probe, quota unknown: split unknown",
			stmts:    []stmt{fast, {held: 10 * time.Millisecond, cpu: 1 * time.Millisecond, eval: 1 * time.Millisecond, n: 20}},
			dominant: "off_cpu",
			want:     map[string]float64{"evaluation": 0.1, "relay": 0, "off_cpu": 0.9},
		},
		{
			name:  "no samples",
			stmts: []stmt{fast, {held: 10 * time.Millisecond, n: 20}},
			want:  map[string]float64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := buildTimings(tt.stmts...)
			a := attribute(w.held, &w.tail, tt.noQuota)
			for _, name := range []string{"evaluation", "quota_wait", "run_queue_wait", "relay", "off_cpu"} {
				want, known := tt.want[name]
				got := a.Share(name)
				switch {
				case known && math.Abs(got-want) > 0.01:
					t.Errorf("%s: got %.3f, want %.3f (attribution %+v)", name, got, want, a)
				case !known && name != "off_cpu" && got != -1:
					t.Errorf("%s: got %.3f, want unknown", name, got)
				}
			}
			if a.Dominant != tt.dominant {
				t.Errorf("dominant: got %q, want %q", a.Dominant, tt.dominant)
			}
			if a.Statements < 20 {
				t.Errorf("tail statements: got %d, want the 20 slow ones", a.Statements)
			}
		})
	}
}

// The tail widens below p99 (never below p90) to find enough samples.
func TestAttributeWidensTail(t *testing.T) {
	w := buildTimings(
		stmt{held: 50 * time.Microsecond, n: 900},
		stmt{held: 1 * time.Millisecond, cpu: time.Millisecond, eval: time.Millisecond, probe: true, n: 80},
		stmt{held: 20 * time.Millisecond, n: 20}, // the p99 tail, unsampled
	)
	a := attribute(w.held, &w.tail, false)
	if a.Samples != 80 || a.FromQuantile < 0.9 || a.FromQuantile > 0.95 || !near(a.Evaluation, 1) {
		t.Fatalf("got %+v, want the tail widened to the 1 ms statements (from quantile 0.90)", a)
	}
}

func TestAdvice(t *testing.T) {
	f := ptr(0.41)
	tests := []struct {
		name string
		cpu  CPUWindow
		tail Attribution
		want string // substring; "" means no advice
	}{
		{"quota wait dominates", CPUWindow{Used: ptr(0.098), Quota: ptr(0.1), QuotaUse: ptr(0.98), ThrottledFraction: f},
			Attribution{Samples: 10, QuotaWait: ptr(0.8), Evaluation: ptr(0.1), RunQueueWait: ptr(0.05), Relay: ptr(0.05), Dominant: "quota_wait"},
			"p99 is dominated by CPU-quota wait: 41% of periods throttled; raise CPUQuota or add an instance"},
		{"run queue dominates", CPUWindow{QuotaUnlimited: true, Used: ptr(1.2)},
			Attribution{Samples: 10, QuotaWait: ptr(0.0), Evaluation: ptr(0.1), RunQueueWait: ptr(0.85), Relay: ptr(0.05), Dominant: "run_queue_wait"},
			"run-queue wait without throttling"},
		{"run queue dominates the sampled tail, but the quota throttled", CPUWindow{Used: ptr(0.1), Quota: ptr(0.1), QuotaUse: ptr(1.0), ThrottledFraction: ptr(1.0)},
			Attribution{Samples: 58, QuotaWait: ptr(0.0), Evaluation: ptr(0.1), RunQueueWait: ptr(0.85), Relay: ptr(0.05), Dominant: "run_queue_wait"},
			"and 100% of periods were throttled: raise CPUQuota"},
		{"evaluation dominates", CPUWindow{QuotaUnlimited: true},
			Attribution{Samples: 10, QuotaWait: ptr(0.0), Evaluation: ptr(0.7), RunQueueWait: ptr(0.2), Relay: ptr(0.1), Dominant: "evaluation"},
			"rule evaluation"},
		{"no dominant share, quota nearly used", CPUWindow{Used: ptr(0.08), Quota: ptr(0.1), QuotaUse: ptr(0.8)},
			Attribution{Samples: 10, QuotaWait: ptr(0.3), Evaluation: ptr(0.3), RunQueueWait: ptr(0.2), Relay: ptr(0.2), Dominant: "quota_wait"},
			"used 80% of its CPU quota"},
		{"near 50% and no dominant wait", CPUWindow{Used: ptr(0.05), Quota: ptr(0.1), QuotaUse: ptr(0.5)},
			Attribution{Samples: 10, QuotaWait: ptr(0.0), Evaluation: ptr(0.4), RunQueueWait: ptr(0.3), Relay: ptr(0.3), Dominant: "evaluation"},
			""},
		{"too few samples", CPUWindow{QuotaUnlimited: true},
			Attribution{Samples: 1, RunQueueWait: ptr(0.9), Dominant: "run_queue_wait"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := advise(tt.cpu, DBWindow{Held: Dist{Count: 1000}, Tail: tt.tail})
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("cpu %+v, tail %+v\ngot  %q\nwant %q", tt.cpu, tt.tail, got, tt.want)
			}
		})
	}
	if got := advise(CPUWindow{QuotaUse: ptr(0.99), Used: ptr(0.1), Quota: ptr(0.1)}, DBWindow{Held: Dist{Count: 10}}); got != "" {
		t.Errorf("10 statements: got advice %q, want none", got)
	}
}

// Collecting a window empties the shards; what sessions record afterwards
// goes to the next window.
func TestWindowRotation(t *testing.T) {
	r := newRecorder()
	for id := uint64(0); id < 8; id++ {
		r.shardFor(id).recordHold(&holdSample{held: int64(time.Millisecond), n: 2, cpu: -1}, []int64{1000})
		r.shardFor(id).recordRelay(int64(time.Millisecond), 1)
	}
	w := newTimings()
	r.collect(w)
	if w.held.TotalCount() != 16 || w.evalWall.TotalCount() != 8 || w.relay.TotalCount() != 8 {
		t.Fatalf("first window: held %d, eval %d, relay %d; want 16, 8, 8", w.held.TotalCount(), w.evalWall.TotalCount(), w.relay.TotalCount())
	}
	r.collect(w)
	if w.held.TotalCount() != 0 || w.tail[tailIndex(int64(time.Millisecond))].n != 0 {
		t.Fatalf("second window: held %d, want 0 (the shards were emptied)", w.held.TotalCount())
	}
	r.shardFor(3).recordHold(&holdSample{held: 5000, n: 1, cpu: -1}, nil)
	r.collect(w)
	if w.held.TotalCount() != 1 || w.held.Max() < 4990 {
		t.Fatalf("third window: held count %d max %d, want 1 value of 5000", w.held.TotalCount(), w.held.Max())
	}
}

func TestRecordingDoesNotAllocate(t *testing.T) {
	r := newRecorder()
	var h holdTimer
	h.rec = r.shardFor(1)
	var rt relayTimer
	rt.rec = h.rec
	rt.startup = true
	allocs := testing.AllocsPerRun(1000, func() {
		h.wait()
		h.begin(time.Now().UnixNano() - 1000)
		c := h.evalStart()
		h.evalEnd(c, 3*time.Microsecond)
		h.statement()
		h.end()
		rt.arrived()
		rt.readyForQuery()
		rt.forwarded()
	})
	if allocs != 0 {
		t.Fatalf("recording a statement: %v allocations, want 0", allocs)
	}
}

// BenchmarkClocks measures the clocks timing.go uses: the monotonic wall
// clock (vDSO) on every batch, the thread CPU clock (a system call) and the
// cpu.stat pread on sampled ones.
func BenchmarkClocks(b *testing.B) {
	b.Run("nanotime", func(b *testing.B) {
		for b.Loop() {
			nanotime()
		}
	})
	b.Run("threadCPU", func(b *testing.B) {
		for b.Loop() {
			threadCPU()
		}
	})
}

// BenchmarkRecording measures what timing.go and breakdown.go add to one
// statement: the hold's clocks and the HdrHistogram records (held, eval,
// relay) under the shard's lock, one batch in sampleEvery sampled (there
// without a cgroup probe: the thread CPU clock only).
func BenchmarkRecording(b *testing.B) {
	r := newRecorder()
	var h holdTimer
	h.rec = r.shardFor(1)
	var rt relayTimer
	rt.rec = h.rec
	rt.startup = true
	b.ReportAllocs()
	for b.Loop() {
		h.wait()
		h.begin(time.Now().UnixNano() - 20000)
		c := h.evalStart()
		h.evalEnd(c, 3*time.Microsecond)
		h.statement()
		h.end()
		rt.arrived()
		rt.readyForQuery()
		rt.forwarded()
	}
}
