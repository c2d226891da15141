package cgroupstats

import (
	"reflect"
	"testing"
	"time"
)

func TestDelta(t *testing.T) {
	t0 := fixtureTime
	const cg = "/sys/fs/cgroup/cpu/sqlfwd"
	quota := Known(Quota{Runtime: 10 * time.Millisecond, Period: 100 * time.Millisecond, CPUs: 0.1})
	snap := func(at time.Duration, usage time.Duration, periods, throttled uint64, thrTime time.Duration, some, full time.Duration, threads ...ThreadSched) Snapshot {
		return Snapshot{
			At: t0.Add(at), Version: V2, Cgroup: cg,
			Stats: Stats{
				Quota: quota, Usage: Known(usage),
				Periods: Known(periods), ThrottledPeriods: Known(throttled), ThrottledTime: Known(thrTime),
				PressureSome: Known(PSI{Total: some}), PressureFull: Known(PSI{Total: full}),
			},
			Threads: Known(threads),
		}
	}
	th := func(tid int, on, wait time.Duration) ThreadSched {
		return ThreadSched{TID: tid, OnCPU: on, RunQueueWait: wait}
	}
	ms := time.Millisecond

	tests := []struct {
		name      string
		prev, cur Snapshot
		want      Window
	}{
		{
			name: "throttled window",
			prev: snap(0, 1000*ms, 100, 10, 500*ms, 40*ms, 10*ms, th(1, 5*ms, 1*ms), th(2, 5*ms, 2*ms)),
			cur:  snap(2*time.Second, 1200*ms, 120, 25, 1700*ms, 90*ms, 30*ms, th(1, 105*ms, 400*ms), th(2, 105*ms, 802*ms)),
			want: Window{
				Elapsed: 2 * time.Second, CPUUsed: Known(0.1), Quota: quota,
				Periods: Known[uint64](20), ThrottledPeriods: Known[uint64](15), ThrottledFraction: Known(0.75),
				ThrottledTime: Known(1200 * ms), RunQueueWait: Known(1199 * ms), ThreadCPU: Known(200 * ms),
				PressureSome: Known(50 * ms), PressureFull: Known(20 * ms),
			},
		},
		{
			name: "no quota: no periods, fraction 0",
			prev: snap(0, 0, 0, 0, 0, 0, 0),
			cur:  snap(time.Second, 500*ms, 0, 0, 0, 0, 0),
			want: Window{
				Elapsed: time.Second, CPUUsed: Known(0.5), Quota: quota,
				Periods: Known[uint64](0), ThrottledPeriods: Known[uint64](0), ThrottledFraction: Known(0.0),
				ThrottledTime: Known(time.Duration(0)), RunQueueWait: Known(time.Duration(0)), ThreadCPU: Known(time.Duration(0)),
				PressureSome: Known(time.Duration(0)), PressureFull: Known(time.Duration(0)),
			},
		},
		{
			name: "thread started, thread exited, TID reused",
			prev: snap(0, 0, 0, 0, 0, 0, 0, th(1, 10*ms, 10*ms), th(2, 10*ms, 10*ms), th(3, 50*ms, 50*ms)),
			// 1 grew by 1 ms each; 2 exited; 3 is a new thread with the old TID; 4 is new.
			cur: snap(time.Second, 0, 0, 0, 0, 0, 0, th(1, 11*ms, 11*ms), th(3, 2*ms, 3*ms), th(4, 4*ms, 5*ms)),
			want: Window{
				Elapsed: time.Second, CPUUsed: Known(0.0), Quota: quota,
				Periods: Known[uint64](0), ThrottledPeriods: Known[uint64](0), ThrottledFraction: Known(0.0),
				ThrottledTime: Known(time.Duration(0)), RunQueueWait: Known(9 * ms), ThreadCPU: Known(7 * ms),
				PressureSome: Known(time.Duration(0)), PressureFull: Known(time.Duration(0)),
			},
		},
		{
			name: "counters went backwards: unknown, not negative",
			prev: snap(0, 900*ms, 100, 50, 900*ms, 90*ms, 0),
			cur:  snap(time.Second, 100*ms, 10, 5, 100*ms, 10*ms, 0),
			want: Window{
				Elapsed: time.Second, Quota: quota,
				RunQueueWait: Known(time.Duration(0)), ThreadCPU: Known(time.Duration(0)),
				PressureFull: Known(time.Duration(0)),
			},
		},
		{
			name: "different cgroups: only thread figures",
			prev: snap(0, 0, 0, 0, 0, 0, 0, th(1, 0, 0)),
			cur: func() Snapshot {
				s := snap(time.Second, 100*ms, 10, 5, 100*ms, 10*ms, 0, th(1, ms, 2*ms))
				s.Cgroup = "/sys/fs/cgroup/cpu/elsewhere"
				return s
			}(),
			want: Window{Elapsed: time.Second, RunQueueWait: Known(2 * ms), ThreadCPU: Known(ms)},
		},
		{
			name: "unknown in the earlier snapshot stays unknown",
			prev: Snapshot{At: t0, Version: V2, Cgroup: cg},
			cur:  snap(time.Second, 100*ms, 10, 5, 100*ms, 10*ms, 0),
			want: Window{Elapsed: time.Second, Quota: quota},
		},
		{
			name: "zero-length window: no CPU rate",
			prev: snap(0, 0, 0, 0, 0, 0, 0),
			cur:  snap(0, 0, 0, 0, 0, 0, 0),
			want: Window{
				Quota:   quota,
				Periods: Known[uint64](0), ThrottledPeriods: Known[uint64](0), ThrottledFraction: Known(0.0),
				ThrottledTime: Known(time.Duration(0)), RunQueueWait: Known(time.Duration(0)), ThreadCPU: Known(time.Duration(0)),
				PressureSome: Known(time.Duration(0)), PressureFull: Known(time.Duration(0)),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Delta(tc.prev, tc.cur)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("prev %+v\ncur  %+v\ngot  %+v\nwant %+v", tc.prev, tc.cur, got, tc.want)
			}
		})
	}
}

func TestSnapshotRunQueueWait(t *testing.T) {
	s := Snapshot{Threads: fixtureThreads}
	if got, want := s.RunQueueWait(), Known(2700*time.Microsecond); got != want {
		t.Errorf("threads %+v: got %+v, want %+v", s.Threads, got, want)
	}
	if got := (Snapshot{}).RunQueueWait(); got.OK {
		t.Errorf("no threads: got %+v, want unknown", got)
	}
}

func TestOptJSON(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"unknown", Opt[time.Duration]{}, "null"},
		{"known zero", Known(time.Duration(0)), "0"},
		{"known float", Known(0.25), "0.25"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.(interface{ MarshalJSON() ([]byte, error) }).MarshalJSON()
			if err != nil || string(got) != tc.want {
				t.Errorf("input %+v: got %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
}
