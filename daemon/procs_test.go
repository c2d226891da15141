package daemon

import "testing"

// TestProcsTuner: one P until an interval uses more than procsRaiseAt
// vCPUs, the default at once then, one P again only after procsLowerAfter
// intervals in a row under procsLowerAt.
func TestProcsTuner(t *testing.T) {
	tu := &procsTuner{max: 4, cur: 1}
	steps := []struct {
		used float64
		want int
	}{
		{0.1, 1}, {0.59, 1}, {0.61, 4}, // raised at once
		{0.2, 4}, {0.2, 4}, {0.2, 4}, {0.2, 4}, // four low intervals
		{0.5, 4},                                          // not low: the count starts again
		{0.2, 4}, {0.2, 4}, {0.2, 4}, {0.2, 4}, {0.29, 1}, // the fifth in a row
		{0.5, 1}, {2.0, 4},
	}
	for i, s := range steps {
		if got := tu.next(s.used); got != s.want {
			t.Fatalf("step %d: used %.2f vCPUs: GOMAXPROCS %d, want %d", i, s.used, got, s.want)
		}
	}
}

// TestProcessCPU: the raw getrusage moves with the process's own work.
func TestProcessCPU(t *testing.T) {
	c0, ok := processCPU()
	if !ok {
		t.Fatal("getrusage failed")
	}
	x := 0
	for i := range 50_000_000 {
		x += i & 3
	}
	c1, ok := processCPU()
	if !ok || c1 <= c0 || x == 0 {
		t.Fatalf("process CPU %v then %v after a busy loop", c0, c1)
	}
}
