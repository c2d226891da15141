package cgroupstats

import "time"

// Window holds the figures of the interval between two snapshots.
type Window struct {
	// Elapsed is the wall-clock length of the window (monotonic).
	Elapsed time.Duration
	// CPUUsed is the cgroup's average CPU use over the window, in vCPUs.
	CPUUsed Opt[float64]
	// UsageSource is Stats.UsageSource of the later snapshot.
	UsageSource string
	// Quota is the limit at the end of the window.
	Quota Opt[Quota]
	// Periods and ThrottledPeriods count enforcement periods in the window;
	// ThrottledFraction is their ratio (0 when no period elapsed, e.g.
	// without a quota).
	Periods, ThrottledPeriods Opt[uint64]
	ThrottledFraction         Opt[float64]
	// ThrottledTime is the time the cgroup's run queues sat throttled,
	// summed over CPUs.
	ThrottledTime Opt[time.Duration]
	Bursts        Opt[uint64]
	BurstTime     Opt[time.Duration]
	// RunQueueWait and ThreadCPU sum the process's threads' run-queue wait
	// and on-CPU time in the window. A thread that exited during the window
	// is missing from the later snapshot, so its share is lost: both are
	// lower bounds.
	RunQueueWait, ThreadCPU Opt[time.Duration]
	// PressureSome and PressureFull are the growth of the PSI totals: the
	// wall time in which some (all) of the cgroup's runnable tasks waited.
	PressureSome, PressureFull Opt[time.Duration]
}

// Delta returns the figures of the window from prev to cur. A figure is
// unknown when it is unknown in either snapshot, when it went backwards
// (a counter reset), or, for cgroup figures, when the two snapshots come
// from different cgroups.
func Delta(prev, cur Snapshot) Window {
	w := Window{Elapsed: cur.At.Sub(prev.At)}
	w.RunQueueWait, w.ThreadCPU = threadDelta(prev.Threads, cur.Threads)
	if prev.Version != cur.Version || prev.Cgroup != cur.Cgroup {
		return w
	}
	p, c := prev.Stats, cur.Stats

	w.Quota = c.Quota
	if u := subDuration(p.Usage, c.Usage); u.OK && w.Elapsed > 0 && p.UsageSource == c.UsageSource {
		w.UsageSource = c.UsageSource
		w.CPUUsed = Known(u.V.Seconds() / w.Elapsed.Seconds())
	}
	w.Periods = subCount(p.Periods, c.Periods)
	w.ThrottledPeriods = subCount(p.ThrottledPeriods, c.ThrottledPeriods)
	if w.Periods.OK && w.ThrottledPeriods.OK {
		switch {
		case w.Periods.V == 0:
			w.ThrottledFraction = Known(0.0)
		case w.ThrottledPeriods.V <= w.Periods.V:
			w.ThrottledFraction = Known(float64(w.ThrottledPeriods.V) / float64(w.Periods.V))
		}
	}
	w.ThrottledTime = subDuration(p.ThrottledTime, c.ThrottledTime)
	w.Bursts = subCount(p.Bursts, c.Bursts)
	w.BurstTime = subDuration(p.BurstTime, c.BurstTime)
	if p.PressureSome.OK && c.PressureSome.OK {
		w.PressureSome = subDuration(Known(p.PressureSome.V.Total), Known(c.PressureSome.V.Total))
	}
	if p.PressureFull.OK && c.PressureFull.OK {
		w.PressureFull = subDuration(Known(p.PressureFull.V.Total), Known(c.PressureFull.V.Total))
	}
	return w
}

// threadDelta subtracts per thread, matching TIDs (both lists are sorted).
// A thread only in cur started during the window and counts whole; a thread
// whose counters went backwards is a reused TID and counts whole too.
func threadDelta(prev, cur Opt[[]ThreadSched]) (wait, onCPU Opt[time.Duration]) {
	if !prev.OK || !cur.OK {
		return wait, onCPU
	}
	var w, on time.Duration
	ps := prev.V
	i := 0
	for _, t := range cur.V {
		for i < len(ps) && ps[i].TID < t.TID {
			i++
		}
		dw, don := t.RunQueueWait, t.OnCPU
		if i < len(ps) && ps[i].TID == t.TID && t.RunQueueWait >= ps[i].RunQueueWait && t.OnCPU >= ps[i].OnCPU {
			dw -= ps[i].RunQueueWait
			don -= ps[i].OnCPU
		}
		w += dw
		on += don
	}
	return Known(w), Known(on)
}

func subCount(prev, cur Opt[uint64]) Opt[uint64] {
	if !prev.OK || !cur.OK || cur.V < prev.V {
		return Opt[uint64]{}
	}
	return Known(cur.V - prev.V)
}

func subDuration(prev, cur Opt[time.Duration]) Opt[time.Duration] {
	if !prev.OK || !cur.OK || cur.V < prev.V {
		return Opt[time.Duration]{}
	}
	return Known(cur.V - prev.V)
}
