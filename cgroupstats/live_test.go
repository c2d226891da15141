package cgroupstats

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// requireV1CPUController skips unless the test runs as root on a host whose
// cgroup v1 cpu controller is mounted, and returns this process's layout
// (found through mountinfo by the package itself).
func requireV1CPUController(t *testing.T) Layout {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: creating a cgroup needs root")
	}
	l := New("/proc", "/").Layout()
	if l.Version != V1 && l.Version != Hybrid || l.CPU == "" {
		t.Skipf("skipping: no cgroup v1 cpu controller mounted here (layout %+v)", l)
	}
	if _, err := os.Stat(filepath.Join(l.CPU, "cpu.cfs_quota_us")); err != nil {
		t.Skipf("skipping: kernel without CFS bandwidth control: %v", err)
	}
	return l
}

// childCgroup creates a child of parent for this test and removes it at the
// end; cleanups registered later (killing what runs in it) run first.
func childCgroup(t *testing.T, parent string) string {
	t.Helper()
	child := filepath.Join(parent, fmt.Sprintf("sqlfw-cgroupstats-test-%d", os.Getpid()))
	if err := os.Mkdir(child, 0o755); err != nil {
		t.Fatalf("creating child cgroup: %v", err)
	}
	t.Cleanup(func() {
		// A task that was just killed can keep the cgroup busy a moment.
		var err error
		for range 50 {
			if err = os.Remove(child); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("removing %s: %v", child, err)
	})
	return child
}

func writeCgroupFile(t *testing.T, dir, file, value string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
		t.Fatalf("writing %s to %s: %v", value, filepath.Join(dir, file), err)
	}
}

// A CPU burner in a child cgroup limited to 0.1 vCPU is throttled, and the
// Sampler sees it. Asserts counters only, never timings.
func TestLiveV1Throttling(t *testing.T) {
	self := requireV1CPUController(t)
	// Where cpuacct is mounted on its own, give the burner a cpuacct child
	// too, so that the usage read is its own and not the whole parent's.
	dirs := map[string]string{self.CPU: childCgroup(t, self.CPU)}
	if self.CPUAcct != "" && self.CPUAcct != self.CPU {
		dirs[self.CPUAcct] = childCgroup(t, self.CPUAcct)
	}
	child := dirs[self.CPU]
	writeCgroupFile(t, child, "cpu.cfs_period_us", "100000")
	writeCgroupFile(t, child, "cpu.cfs_quota_us", "10000")

	burner := exec.Command("sh", "-c", "while :; do :; done")
	if err := burner.Start(); err != nil {
		t.Fatalf("starting burner: %v", err)
	}
	pid := strconv.Itoa(burner.Process.Pid)
	t.Cleanup(func() {
		// Move it out first so the cgroups empty even if kill failed.
		for parent := range dirs {
			_ = os.WriteFile(filepath.Join(parent, "cgroup.procs"), []byte(pid), 0)
		}
		_ = burner.Process.Signal(syscall.SIGKILL)
		_ = burner.Wait()
	})
	for _, dir := range dirs {
		writeCgroupFile(t, dir, "cgroup.procs", pid)
	}

	s := NewForPID("/proc", "/", burner.Process.Pid)
	if got := s.Layout(); got.CPU != child || (self.CPUAcct != "" && got.CPUAcct != dirs[self.CPUAcct]) {
		t.Fatalf("sampler for pid %s found %+v, want CPU %q and CPUAcct %q", pid, got, child, dirs[self.CPUAcct])
	}
	before, err := s.Sample()
	if err != nil {
		t.Fatalf("sample before: %v", err)
	}
	time.Sleep(1500 * time.Millisecond)
	after, err := s.Sample()
	if err != nil {
		t.Fatalf("sample after: %v", err)
	}
	w := Delta(before, after)
	t.Logf("window: elapsed %v, quota %+v, periods %+v, throttled %+v (fraction %+v), throttled time %+v, run-queue wait %+v, CPU used %+v",
		w.Elapsed, w.Quota, w.Periods, w.ThrottledPeriods, w.ThrottledFraction, w.ThrottledTime, w.RunQueueWait, w.CPUUsed)

	if q, ok := w.Quota.Get(); !ok || q.Unlimited || math.Abs(q.CPUs-0.1) > 1e-9 || q.Period != 100*time.Millisecond {
		t.Errorf("quota: got %+v, want 0.1 vCPU per 100ms", w.Quota)
	}
	if n, ok := w.ThrottledPeriods.Get(); !ok || n == 0 {
		t.Errorf("nr_throttled did not grow: before %+v, after %+v", before.Stats.ThrottledPeriods, after.Stats.ThrottledPeriods)
	}
	if f, ok := w.ThrottledFraction.Get(); !ok || f <= 0 {
		t.Errorf("throttled fraction: got %+v, want > 0 (periods %+v, throttled %+v)", w.ThrottledFraction, w.Periods, w.ThrottledPeriods)
	}
	if !w.ThrottledTime.OK || !w.RunQueueWait.OK || !w.CPUUsed.OK {
		t.Errorf("throttled time %+v, run-queue wait %+v or CPU used %+v unknown", w.ThrottledTime, w.RunQueueWait, w.CPUUsed)
	}
}
