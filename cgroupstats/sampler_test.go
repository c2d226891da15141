package cgroupstats

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var fixtureTime = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// fixture returns a Sampler over testdata/<name>, a tree holding
// proc/self/{cgroup,mountinfo,task/*/schedstat} and the cgroup file systems
// at the mount points its mountinfo names, with a fixed clock.
func fixture(t testing.TB, name string) *Sampler {
	t.Helper()
	return fixtureAt(t, filepath.Join("testdata", name))
}

func fixtureAt(t testing.TB, dir string) *Sampler {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	s := New(filepath.Join(dir, "proc"), dir)
	s.now = func() time.Time { return fixtureTime }
	return s
}

// fixtureThreads is what every fixture's proc/self/task holds: threads 101
// and 102, and 103, which exited before its schedstat was read.
var fixtureThreads = Known([]ThreadSched{
	{TID: 101, OnCPU: time.Millisecond, RunQueueWait: 2 * time.Millisecond, Timeslices: 3},
	{TID: 102, OnCPU: 500 * time.Microsecond, RunQueueWait: 700 * time.Microsecond, Timeslices: 2},
})

func TestSampleFixtures(t *testing.T) {
	const us, ns = time.Microsecond, time.Nanosecond
	halfCPU := Known(Quota{Runtime: 50 * time.Millisecond, Period: 100 * time.Millisecond, CPUs: 0.5})
	noQuota := Known(Quota{Unlimited: true, Period: 100 * time.Millisecond})
	hostPSI := Known(PSI{Avg10: 4.65, Avg60: 19.77, Avg300: 28.50, Total: 509869375 * us})
	zeroPSI := Known(PSI{})

	tests := []struct {
		name        string
		wantVersion Version
		wantCPU     string // relative to the fixture; "" for none
		wantUnified string
		want        Stats
		wantThreads Opt[[]ThreadSched]
		wantErrs    []string // each must appear in the error; none means nil
	}{
		{
			name:        "v1-combined",
			wantVersion: V1,
			wantCPU:     "sys/fs/cgroup/cpu,cpuacct/system.slice/sqlfwd.service",
			want: Stats{
				Quota:       halfCPU,
				UsageSource: UsageCgroup,
				Usage:       Known(9 * time.Second), User: Known(6 * time.Second), System: Known(3 * time.Second),
				Periods: Known[uint64](200), ThrottledPeriods: Known[uint64](40), ThrottledTime: Known(1500 * time.Millisecond),
			},
			wantThreads: fixtureThreads,
		},
		{
			name:        "v1-separate",
			wantVersion: V1,
			wantCPU:     "sys/fs/cgroup/cpu",
			want: Stats{
				Quota:       noQuota,
				UsageSource: UsageCgroup,
				Usage:       Known(1565558963756 * ns),
				Periods:     Known[uint64](0), ThrottledPeriods: Known[uint64](0), ThrottledTime: Known(time.Duration(0)),
			},
			wantThreads: fixtureThreads,
		},
		{
			// cpu and cpuacct mounted apart, the process in a cpu child
			// only: its cpuacct group is the root (the whole machine), so
			// usage is the process's own (proc/self/stat: 150 + 50 ticks).
			name:        "v1-cpu-child",
			wantVersion: V1,
			wantCPU:     "sys/fs/cgroup/cpu/sqlfwd",
			want: Stats{
				Quota: Known(Quota{Runtime: 10 * time.Millisecond, Period: 100 * time.Millisecond, CPUs: 0.1}),
				Usage: Known(2 * time.Second), User: Known(1500 * time.Millisecond), System: Known(500 * time.Millisecond),
				UsageSource: UsageProcess,
				Periods:     Known[uint64](20), ThrottledPeriods: Known[uint64](20), ThrottledTime: Known(2262 * time.Millisecond),
			},
			wantThreads: fixtureThreads,
		},
		{
			name:        "v2-service",
			wantVersion: V2,
			wantCPU:     "sys/fs/cgroup/system.slice/sqlfwd.service",
			wantUnified: "sys/fs/cgroup/system.slice/sqlfwd.service",
			want: Stats{
				Quota:       halfCPU,
				UsageSource: UsageCgroup,
				Usage:       Known(9 * time.Second), User: Known(6 * time.Second), System: Known(3 * time.Second),
				Periods: Known[uint64](200), ThrottledPeriods: Known[uint64](40), ThrottledTime: Known(1500 * time.Millisecond),
				Bursts: Known[uint64](3), BurstTime: Known(20 * time.Millisecond),
				PressureSome: Known(PSI{Avg10: 1.5, Avg60: 0.75, Avg300: 0.25, Total: 2500 * time.Millisecond}),
				PressureFull: Known(PSI{Avg10: 0.5, Avg60: 0.25, Avg300: 0.1, Total: 800 * time.Millisecond}),
			},
			wantThreads: fixtureThreads,
		},
		{
			name:        "v2-container",
			wantVersion: V2,
			wantCPU:     "sys/fs/cgroup",
			wantUnified: "sys/fs/cgroup",
			want: Stats{
				Quota:       Known(Quota{Runtime: 200 * time.Millisecond, Period: 100 * time.Millisecond, CPUs: 2}),
				UsageSource: UsageCgroup,
				Usage:       Known(4 * time.Second), User: Known(3 * time.Second), System: Known(time.Second),
				Periods: Known[uint64](50), ThrottledPeriods: Known[uint64](0), ThrottledTime: Known(time.Duration(0)),
			},
			wantThreads: fixtureThreads,
		},
		{
			name:        "v2-root",
			wantVersion: V2,
			wantCPU:     "sys/fs/cgroup",
			wantUnified: "sys/fs/cgroup",
			want: Stats{
				Quota:       Known(Quota{Unlimited: true}),
				UsageSource: UsageCgroup,
				Usage:       Known(1551065640 * us), User: Known(1089660268 * us), System: Known(461405372 * us),
				PressureSome: hostPSI, PressureFull: zeroPSI,
			},
			wantThreads: fixtureThreads,
		},
		{
			name:        "hybrid",
			wantVersion: Hybrid,
			wantCPU:     "sys/fs/cgroup/cpu",
			wantUnified: "sys/fs/cgroup/unified",
			want: Stats{
				Quota:       noQuota,
				UsageSource: UsageCgroup,
				Usage:       Known(1565558963756 * ns), User: Known(1089660268000 * ns), System: Known(461405372000 * ns),
				Periods: Known[uint64](0), ThrottledPeriods: Known[uint64](0), ThrottledTime: Known(time.Duration(0)),
				Bursts: Known[uint64](0), BurstTime: Known(time.Duration(0)),
				PressureSome: hostPSI, PressureFull: zeroPSI,
			},
			wantThreads: fixtureThreads,
		},
		{
			name:        "v2-malformed",
			wantVersion: V2,
			wantCPU:     "sys/fs/cgroup/sqlfwd",
			wantUnified: "sys/fs/cgroup/sqlfwd",
			want:        Stats{},
			wantErrs: []string{
				`testdata/v2-malformed/sys/fs/cgroup/sqlfwd/cpu.max: line 1: period: invalid number "1OOOOO"`,
				`testdata/v2-malformed/sys/fs/cgroup/sqlfwd/cpu.stat: line 5: nr_throttled: invalid number "4x"`,
				`testdata/v2-malformed/sys/fs/cgroup/sqlfwd/cpu.pressure: line 1: some total: invalid number "-1"`,
				`testdata/v2-malformed/proc/self/task/102/schedstat: line 1: field 2: invalid number "seven"`,
			},
		},
		{
			name:        "missing",
			wantVersion: Hybrid,
			wantCPU:     "sys/fs/cgroup/cpu,cpuacct/gone",
			wantUnified: "sys/fs/cgroup/unified/nocpu",
			want:        Stats{},
			wantErrs: []string{
				"testdata/missing/sys/fs/cgroup/cpu,cpuacct/gone/cpu.cfs_quota_us: no such file",
				"testdata/missing/sys/fs/cgroup/cpu,cpuacct/gone/cpu.cfs_period_us: no such file",
				"testdata/missing/sys/fs/cgroup/cpu,cpuacct/gone/cpu.stat: no such file",
				"testdata/missing/sys/fs/cgroup/cpu,cpuacct/gone/cpuacct.usage: no such file",
				"testdata/missing/proc/self/task: no such file",
			},
		},
		{
			name:        "no-cgroupfs",
			wantVersion: VersionUnknown,
			want:        Stats{},
			wantThreads: fixtureThreads,
			wantErrs:    []string{"locating cgroup: no cgroup2 mount"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", tc.name)
			rel := func(p string) string {
				if p == "" {
					return ""
				}
				return filepath.Join(dir, p)
			}
			s := fixture(t, tc.name)
			l := s.Layout()
			if l.Version != tc.wantVersion || l.CPU != rel(tc.wantCPU) || l.Unified != rel(tc.wantUnified) {
				t.Errorf("layout: got %+v\nwant version %v, CPU %q, Unified %q", l, tc.wantVersion, rel(tc.wantCPU), rel(tc.wantUnified))
			}

			snap, err := s.Sample()
			if len(tc.wantErrs) == 0 && err != nil {
				t.Errorf("unexpected error: %v", err)
			}
			for _, want := range tc.wantErrs {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("got error:\n%v\nwant it to contain %q", err, want)
				}
			}
			if !reflect.DeepEqual(snap.Stats, tc.want) {
				t.Errorf("stats:\ngot  %+v\nwant %+v", snap.Stats, tc.want)
			}
			if !reflect.DeepEqual(snap.Threads, tc.wantThreads) {
				t.Errorf("threads:\ngot  %+v\nwant %+v", snap.Threads, tc.wantThreads)
			}
			if snap.Version != tc.wantVersion || snap.Cgroup != rel(tc.wantCPU) || !snap.At.Equal(fixtureTime) {
				t.Errorf("snapshot identity: got %v %q %v", snap.Version, snap.Cgroup, snap.At)
			}
		})
	}
}

// A problem is reported once while it lasts, and again when it comes back.
func TestSampleReportsEachProblemOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "v2-container"))); err != nil {
		t.Fatal(err)
	}
	stat := filepath.Join(dir, "sys/fs/cgroup/cpu.stat")
	content, err := os.ReadFile(stat)
	if err != nil {
		t.Fatal(err)
	}
	s := fixtureAt(t, dir)

	steps := []struct {
		name    string
		change  func() error
		wantErr bool
	}{
		{"healthy", func() error { return nil }, false},
		{"cpu.stat removed", func() error { return os.Remove(stat) }, true},
		{"still removed", func() error { return nil }, false},
		{"restored", func() error { return os.WriteFile(stat, content, 0o644) }, false},
		{"removed again", func() error { return os.Remove(stat) }, true},
	}
	for _, st := range steps {
		if err := st.change(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		snap, err := s.Sample()
		if (err != nil) != st.wantErr {
			t.Fatalf("%s: got error %v, want error: %v", st.name, err, st.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "cpu.stat") {
			t.Fatalf("%s: error %v does not name cpu.stat", st.name, err)
		}
		if _, err := os.Stat(stat); err != nil && snap.Stats.Usage.OK {
			t.Fatalf("%s: usage known without cpu.stat: %+v", st.name, snap.Stats.Usage)
		}
		if !snap.Stats.Quota.OK {
			t.Fatalf("%s: quota lost although cpu.max is readable", st.name)
		}
	}
}

// The Sampler works on this machine for its own process, root or not.
func TestSampleLiveSelf(t *testing.T) {
	s := New("/proc", "/")
	snap, err := s.Sample()
	t.Logf("layout %+v", s.Layout())
	t.Logf("stats %+v, run-queue wait %+v, error %v", snap.Stats, snap.RunQueueWait(), err)
	threads, ok := snap.Threads.Get()
	if !ok || len(threads) == 0 {
		t.Fatalf("no thread schedstats for the test process: %+v (error %v)", snap.Threads, err)
	}
	if s.Layout().Version == VersionUnknown {
		t.Skipf("no cgroup found here: %v", err)
	}
	if err != nil {
		t.Errorf("sampling this machine: %v", err)
	}
	if !snap.Stats.Usage.OK {
		t.Errorf("CPU usage unknown on this machine")
	}
}

func BenchmarkSample(b *testing.B) {
	s := New("/proc", "/")
	if _, err := s.Sample(); err != nil {
		b.Logf("first sample: %v", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sample(); err != nil {
			b.Fatal(err)
		}
	}
}
