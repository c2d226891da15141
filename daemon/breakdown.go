package daemon

// The per-window breakdown: where the held time of statements went.
//
// Sessions record into a database's recorder (timing.go); once per stats
// window the stats loop swaps every shard's figures out, merges them, reads
// the cgroup's counters (cgroupstats), and computes a StatsWindow: rates,
// percentiles, CPU against quota, throttling, and the attribution of the
// held-time tail (docs/stats.md says how, and what is exact).

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"golang.org/x/sys/cpu"

	"github.com/sqlfw/sqlfw/cgroupstats"
	"github.com/sqlfw/sqlfw/engine"
)

const (
	// nShards spreads a database's sessions over independently locked
	// recorders; a shard's lock is held for a few histogram increments.
	nShards = 4
	// histMax is the largest time a histogram records (larger values are
	// clamped), with 3 significant digits from 1 ns.
	histMax = int64(60 * time.Second)
	// nTail is the number of held-time buckets of tail sums: four per
	// power of two (a bucket spans at most 25% of its lower bound).
	nTail = 65 * 4
	// minTailSamples widens the tail below p99 (never below p90) until it
	// holds this many sampled statements.
	minTailSamples = 10
	// minShareSamples is the fewest samples an attribution is given from.
	minShareSamples = 3
)

// tailIndex is the bucket of a held time; monotonic in v.
func tailIndex(v int64) int {
	if v < 1 {
		return 0
	}
	b := bits.Len64(uint64(v))
	if b < 3 {
		return b * 4
	}
	return b*4 + int((uint64(v)>>(b-3))&3)
}

// tailLower is the smallest value of bucket i.
func tailLower(i int) int64 {
	b, sub := i/4, i%4
	if b < 3 {
		if b == 0 {
			return 0
		}
		return 1 << (b - 1)
	}
	return int64(4+sub) << (b - 3)
}

// tailBucket sums the statements whose held time falls in one bucket; the
// time sums are over sampled statements only.
type tailBucket struct {
	n, samples                      uint64
	held, eval, cpu                 int64
	quotaWait, runQueueWait, unkown int64
}

func (b *tailBucket) add(o *tailBucket) {
	b.n += o.n
	b.samples += o.samples
	b.held += o.held
	b.eval += o.eval
	b.cpu += o.cpu
	b.quotaWait += o.quotaWait
	b.runQueueWait += o.runQueueWait
	b.unkown += o.unkown
}

// timings are the figures of one shard, or of one window.
type timings struct {
	held, evalWall, evalCPU, relay *hdrhistogram.Histogram
	tail                           [nTail]tailBucket
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMax, 3) }

func newTimings() *timings {
	return &timings{held: newHist(), evalWall: newHist(), evalCPU: newHist(), relay: newHist()}
}

func (t *timings) reset() {
	t.relay.Reset()
	t.tail = [nTail]tailBucket{}
	if t.held == nil {
		return // a relay shard's
	}
	t.held.Reset()
	t.evalWall.Reset()
	t.evalCPU.Reset()
}

func (t *timings) merge(o *timings) {
	t.relay.Merge(o.relay)
	if o.held == nil {
		return // a relay shard's: nothing else
	}
	t.held.Merge(o.held)
	t.evalWall.Merge(o.evalWall)
	t.evalCPU.Merge(o.evalCPU)
	for i := range t.tail {
		t.tail[i].add(&o.tail[i])
	}
}

func clampHist(v int64) int64 {
	if v < 1 {
		return 1
	}
	if v > histMax {
		return histMax
	}
	return v
}

// shard is what a few sessions record into. The stats loop swaps cur for
// spare under the lock, so merging never holds up a session.
//
// A session's toServer records into a shard of the recorder's holds and its
// toClient into one of its relays: the two goroutines run on different
// threads, and a shared lock made each record move the lock's cache line
// between the cores; each shard has a cache line of its own for the same
// reason (issue 15).
type shard struct {
	_          cpu.CacheLinePad
	mu         sync.Mutex
	cur, spare *timings
}

func (s *shard) recordEvals(evals []int64) {
	s.mu.Lock()
	for _, e := range evals {
		_ = s.cur.evalWall.RecordValue(clampHist(e))
	}
	s.mu.Unlock()
}

func (s *shard) recordHold(h *holdSample, evals []int64) {
	s.mu.Lock()
	t := s.cur
	if h.n > 0 {
		_ = t.held.RecordValues(clampHist(h.held), h.n)
	}
	for _, e := range evals {
		_ = t.evalWall.RecordValue(clampHist(e))
	}
	if h.cpu >= 0 && h.evalCalls > 0 {
		_ = t.evalCPU.RecordValues(clampHist(h.evalCPU/h.evalCalls), h.evalCalls)
	}
	if h.n > 0 {
		b := &t.tail[tailIndex(h.held)]
		b.n += uint64(h.n)
		if h.cpu >= 0 {
			cpu := min(h.cpu, h.held) // the CPU reads bracket the hold
			ev := min(h.evalCPU, cpu)
			wait := h.held - cpu
			b.samples += uint64(h.n)
			b.held += h.n * h.held
			b.eval += h.n * ev
			b.cpu += h.n * cpu
			switch {
			case h.throttled:
				b.quotaWait += h.n * wait
			case h.throttleKnown:
				b.runQueueWait += h.n * wait
			default:
				b.unkown += h.n * wait
			}
		}
	}
	s.mu.Unlock()
}

func (s *shard) recordRelay(d, n int64) {
	s.mu.Lock()
	_ = s.cur.relay.RecordValues(clampHist(d), n)
	s.mu.Unlock()
}

// recorder is one database's timing figures for the current window.
type recorder struct {
	shards [nShards]shard
	// relays hold the relay histograms only (the others are nil)
	relays [nShards]shard
	_      cpu.CacheLinePad
}

func newRecorder() *recorder {
	r := &recorder{}
	for i := range r.shards {
		r.shards[i].cur, r.shards[i].spare = newTimings(), newTimings()
		r.relays[i].cur, r.relays[i].spare = &timings{relay: newHist()}, &timings{relay: newHist()}
	}
	return r
}

// shardFor is where session id's toServer records (recordHold,
// recordEvals); relayFor where its toClient records (recordRelay).
func (r *recorder) shardFor(id uint64) *shard { return &r.shards[id%nShards] }
func (r *recorder) relayFor(id uint64) *shard { return &r.relays[id%nShards] }

// collect moves every shard's figures into w (reset first). Only the stats
// loop (or a test) calls it.
func (r *recorder) collect(w *timings) {
	w.reset()
	for i := range 2 * nShards {
		s := &r.shards[i%nShards]
		if i >= nShards {
			s = &r.relays[i%nShards]
		}
		s.mu.Lock()
		old := s.cur
		s.cur, s.spare = s.spare, nil
		s.mu.Unlock()
		w.merge(old)
		old.reset()
		s.mu.Lock()
		s.spare = old
		s.mu.Unlock()
	}
}

// ruleCounts counts verdicts per rule without a lock: the map is replaced
// whole when a rule is seen for the first time.
type ruleCounts struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]*atomic.Uint64]
}

func (rc *ruleCounts) count(v *engine.Verdict) {
	if v.RuleID == "" {
		return
	}
	if m := rc.m.Load(); m != nil {
		if c := (*m)[v.RuleID]; c != nil {
			c.Add(1)
			return
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	old := rc.m.Load()
	next := map[string]*atomic.Uint64{}
	if old != nil {
		if c := (*old)[v.RuleID]; c != nil {
			c.Add(1)
			return
		}
		for k, c := range *old {
			next[k] = c
		}
	}
	c := new(atomic.Uint64)
	c.Add(1)
	next[v.RuleID] = c
	rc.m.Store(&next)
}

func (rc *ruleCounts) snapshot() map[string]uint64 {
	out := map[string]uint64{}
	if m := rc.m.Load(); m != nil {
		for k, c := range *m {
			out[k] = c.Load()
		}
	}
	return out
}

func distOf(h *hdrhistogram.Histogram) Dist {
	if h.TotalCount() == 0 {
		return Dist{}
	}
	us := func(v int64) float64 { return float64(v) / 1e3 }
	return Dist{Count: h.TotalCount(), P50: us(h.ValueAtQuantile(50)), P99: us(h.ValueAtQuantile(99)), Max: us(h.Max())}
}

func ptr[T any](v T) *T { return &v }

// attribute computes the tail attribution from a window's held histogram
// and tail sums. noQuota says the cgroup has no quota (or no cpu controller
// can throttle it), so an off-CPU wait of unknown cause is run-queue wait.
func attribute(held *hdrhistogram.Histogram, tail *[nTail]tailBucket, noQuota bool) Attribution {
	var a Attribution
	total := held.TotalCount()
	if total == 0 {
		return a
	}
	from := tailIndex(held.ValueAtQuantile(99))
	floor := tailIndex(held.ValueAtQuantile(90))
	var sum tailBucket
	for i := from; i < nTail; i++ {
		sum.add(&tail[i])
	}
	for sum.samples < minTailSamples && from > floor {
		from--
		sum.add(&tail[from])
	}
	a.FromUs = float64(tailLower(from)) / 1e3
	a.Statements, a.Samples = sum.n, sum.samples
	a.FromQuantile = math.Round((1-float64(sum.n)/float64(total))*1000) / 1000
	if sum.samples < minShareSamples || sum.held <= 0 {
		return a
	}
	a.MeanHeldUs = float64(sum.held) / float64(sum.samples) / 1e3
	h := float64(sum.held)
	a.Evaluation = ptr(float64(sum.eval) / h)
	a.Relay = ptr(float64(sum.cpu-sum.eval) / h)
	a.OffCPU = ptr(float64(sum.quotaWait+sum.runQueueWait+sum.unkown) / h)
	switch {
	case sum.unkown == 0:
		a.QuotaWait = ptr(float64(sum.quotaWait) / h)
		a.RunQueueWait = ptr(float64(sum.runQueueWait) / h)
	case noQuota:
		a.QuotaWait = ptr(float64(sum.quotaWait) / h)
		a.RunQueueWait = ptr(float64(sum.runQueueWait+sum.unkown) / h)
	}
	names := []string{"evaluation", "quota_wait", "run_queue_wait", "relay"}
	if a.QuotaWait == nil {
		names = append(names, "off_cpu") // waited, cause unknown
	}
	best := -1.0
	for _, name := range names { // a tie goes to the first
		if s := a.Share(name); s > best {
			best, a.Dominant = s, name
		}
	}
	return a
}

func cpuWindow(w cgroupstats.Window, cgroup string) CPUWindow {
	c := CPUWindow{Cgroup: cgroup}
	if v, ok := w.CPUUsed.Get(); ok {
		c.Used, c.UsageSource = ptr(v), w.UsageSource
	}
	if q, ok := w.Quota.Get(); ok {
		c.QuotaUnlimited = q.Unlimited
		if !q.Unlimited {
			c.Quota = ptr(q.CPUs)
			c.PeriodUs = ptr(float64(q.Period) / 1e3)
			if c.Used != nil && q.CPUs > 0 {
				c.QuotaUse = ptr(*c.Used / q.CPUs)
			}
		}
	}
	if v, ok := w.Periods.Get(); ok {
		c.Periods = ptr(v)
	}
	if v, ok := w.ThrottledPeriods.Get(); ok {
		c.ThrottledPeriods = ptr(v)
	}
	if v, ok := w.ThrottledFraction.Get(); ok {
		c.ThrottledFraction = ptr(v)
	}
	if v, ok := w.ThrottledTime.Get(); ok {
		c.ThrottledSeconds = ptr(v.Seconds())
	}
	if v, ok := w.RunQueueWait.Get(); ok {
		c.RunQueueWaitSeconds = ptr(v.Seconds())
	}
	return c
}

// advise returns one sentence of advice, or "" when none applies. The rule
// users know: keep the task near 50% of its CPU quota, so that bursts fit.
func advise(c CPUWindow, t DBWindow) string {
	if t.Held.Count < 100 {
		return ""
	}
	a := t.Tail
	usage := ""
	if c.Quota != nil && c.Used != nil {
		usage = fmt.Sprintf(" (sqlfwd used %.2f of its %.2f vCPU; keep it near 50%%)", *c.Used, *c.Quota)
	}
	if a.Samples >= minShareSamples && a.Share(a.Dominant) >= 0.5 {
		switch a.Dominant {
		case "quota_wait":
			frac := 0.0
			if c.ThrottledFraction != nil {
				frac = *c.ThrottledFraction
			}
			return fmt.Sprintf("p99 is dominated by CPU-quota wait: %.0f%% of periods throttled; raise CPUQuota or add an instance%s.", frac*100, usage)
		case "run_queue_wait":
			if c.ThrottledFraction != nil && *c.ThrottledFraction > 0 {
				// The sampled tail missed the throttled holds (one batch
				// in sampleEvery is sampled), but the quota did throttle:
				// "without throttling" would be false.
				return fmt.Sprintf("p99's sampled statements waited on the run queue, and %.0f%% of periods were throttled: raise CPUQuota or add an instance%s, or move other work off this host.",
					*c.ThrottledFraction*100, usage)
			}
			return "p99 is dominated by run-queue wait without throttling: the CPUs are busy; give sqlfwd more CPU or move other work off this host."
		case "evaluation":
			return fmt.Sprintf("p99 is dominated by rule evaluation (evaluation p99 %s): review the policy's costliest rules; more CPU quota will not help much.",
				time.Duration(t.EvalWall.P99*1e3).Round(time.Microsecond))
		}
	}
	if c.QuotaUse != nil && *c.QuotaUse > 0.75 {
		return fmt.Sprintf("sqlfwd used %.0f%% of its CPU quota (%.2f of %.2f vCPU); keep it near 50%%: raise CPUQuota or add an instance.",
			*c.QuotaUse*100, *c.Used, *c.Quota)
	}
	return ""
}

// dbWindow computes one database's window from its merged timings.
func dbWindow(t *timings, statements uint64, elapsed time.Duration, noQuota bool) DBWindow {
	w := DBWindow{
		Statements: statements,
		Held:       distOf(t.held),
		EvalWall:   distOf(t.evalWall),
		EvalCPU:    distOf(t.evalCPU),
		Relay:      distOf(t.relay),
		Tail:       attribute(t.held, &t.tail, noQuota),
	}
	if elapsed > 0 {
		w.StatementsPerSec = math.Round(float64(statements)/elapsed.Seconds()*10) / 10
	}
	return w
}

// statsState is the stats loop's: the sampler, the latest window, and the
// window figures it reuses.
type statsState struct {
	window  time.Duration
	sampler *cgroupstats.Sampler
	probe   *cgroupstats.ThrottleProbe
	stop    chan struct{}
	done    chan struct{}

	// loop-owned
	prev cgroupstats.Snapshot
	// per database, keyed by the entry (the list changes when discovery
	// adds or drops one)
	prevStmts map[*database]uint64
	perDB     map[*database]*timings
	total     *timings

	mu     sync.Mutex
	last   *StatsWindow
	lastDB map[*database]DBWindow
	// snap is the latest cgroup snapshot, for Prometheus counters.
	snap cgroupstats.Snapshot
	// hists holds every window merged since start (or since discovery
	// added the database), for Prometheus.
	hists map[*database]*timings
}

// startStats starts the stats loop: a cgroupstats Sampler for the daemon's
// own cgroup, read once per window.
func (d *Daemon) startStats(procRoot, fsRoot string) {
	win := d.cfg.StatsWindow
	if win <= 0 {
		win = DefaultStatsWindow
	}
	st := &statsState{
		window:  win,
		sampler: cgroupstats.New(procRoot, fsRoot),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		total:   newTimings(),

		prevStmts: map[*database]uint64{},
		perDB:     map[*database]*timings{},
		hists:     map[*database]*timings{},
	}
	st.probe = cgroupstats.OpenThrottleProbe(st.sampler.Layout())
	snap, err := st.sampler.Sample()
	if err != nil {
		d.log.Warn("cgroup figures partly unknown", "err", err)
	}
	st.prev, st.snap = snap, snap
	d.statsState = st
	go d.statsLoop(st)
}

func (d *Daemon) stopStats() {
	st := d.statsState
	if st == nil {
		return
	}
	close(st.stop)
	<-st.done
	st.probe.Close()
}

func (d *Daemon) statsLoop(st *statsState) {
	defer close(st.done)
	tick := time.NewTicker(st.window)
	defer tick.Stop()
	for {
		select {
		case <-st.stop:
			return
		case <-tick.C:
			d.rotateWindow(st)
		}
	}
}

// rotateWindow closes the current window: it collects every database's
// timings, samples the cgroup and publishes the result.
func (d *Daemon) rotateWindow(st *statsState) {
	snap, err := st.sampler.Sample()
	if err != nil {
		// Sample reports each failing file once.
		d.log.Warn("cgroup figures partly unknown", "err", err)
	}
	cw := cgroupstats.Delta(st.prev, snap)
	start := st.prev.At
	st.prev = snap
	cpu := cpuWindow(cw, st.sampler.Layout().CPU)
	noQuota := cpu.QuotaUnlimited || st.probe == nil && cpu.Quota == nil

	st.total.reset()
	var totalStmts uint64
	dbs := d.databases()
	dbws := make(map[*database]DBWindow, len(dbs))
	for _, db := range dbs {
		t := st.perDB[db]
		if t == nil {
			t = newTimings()
			st.perDB[db] = t
		}
		db.rec.collect(t)
		n := db.stats.statements.Load()
		stmts := n - st.prevStmts[db]
		st.prevStmts[db] = n
		totalStmts += stmts
		dbws[db] = dbWindow(t, stmts, cw.Elapsed, noQuota)
		st.total.merge(t)
	}
	for db := range st.perDB {
		if _, ok := dbws[db]; !ok { // dropped from the list
			delete(st.perDB, db)
			delete(st.prevStmts, db)
		}
	}
	w := &StatsWindow{Start: start, Seconds: math.Round(cw.Elapsed.Seconds()*1000) / 1000, SampleEvery: sampleEvery, CPU: cpu,
		Total: dbWindow(st.total, totalStmts, cw.Elapsed, noQuota)}
	w.Advice = advise(cpu, w.Total)

	st.mu.Lock()
	st.last, st.lastDB, st.snap = w, dbws, snap
	for db, t := range st.perDB {
		h := st.hists[db]
		if h == nil {
			h = newTimings()
			st.hists[db] = h
		}
		h.merge(t)
	}
	for db := range st.hists {
		if st.perDB[db] == nil {
			delete(st.hists, db)
		}
	}
	st.mu.Unlock()
	if w.Advice != "" {
		d.log.Info("stats window", "statements_per_sec", w.Total.StatementsPerSec, "held_p99_us", w.Total.Held.P99, "advice", w.Advice)
	}
}

// addWindows puts the latest window into a Stats snapshot whose Databases
// are dbs, in order.
func (d *Daemon) addWindows(s *Stats, dbs []*database) {
	st := d.statsState
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.last == nil {
		return
	}
	w := *st.last
	s.Window = &w
	for i := range s.Databases {
		if dw, ok := st.lastDB[dbs[i]]; ok {
			s.Databases[i].Window = &dw
		}
	}
}
