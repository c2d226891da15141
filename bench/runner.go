package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Op is one connection's worth of a workload. Do sends request seq and
// waits for its whole answer. An Op is used by one goroutine at a time.
type Op interface {
	Do(ctx context.Context, seq int64) error
	Close() error
}

// OpenFunc opens one Op (usually one database connection).
type OpenFunc func(ctx context.Context) (Op, error)

// Histogram bounds: latencies are recorded in nanoseconds, from 1 ns to 60 s,
// with 3 significant digits (a relative error of at most 0.1%).
const (
	histMin    = 1
	histMax    = int64(60 * time.Second)
	histDigits = 3
	// IntervalLength is the span of each interval histogram kept in the
	// results, counted on the intended send times.
	IntervalLength = 10 * time.Second
)

func newHist() *hdr.Histogram { return hdr.New(histMin, histMax, histDigits) }

// RunSpec describes one open-loop cell.
type RunSpec struct {
	Rate     float64       // offered requests per second
	Poisson  bool          // exponential gaps instead of constant ones
	Seed     uint64        // Poisson schedule seed
	Warmup   time.Duration // requests due before this are sent but not recorded
	Duration time.Duration // measured span after the warm-up
	Conns    int           // connections (and worker goroutines)
	// Drain bounds how long requests still outstanding at the end of the
	// schedule may take before they are cancelled and counted as errors.
	Drain time.Duration
	// KeepSamples keeps every measured request's intended offset and
	// latency (the generator self-check needs them).
	KeepSamples bool
	// During, when set, runs beside the cell with the cell's start time;
	// Run waits for it to return.
	During func(ctx context.Context, start time.Time)
}

// Sample is one measured request: when it was due (from the cell start)
// and its latency from that moment.
type Sample struct {
	Due     time.Duration
	Latency time.Duration
}

// Measure is what one cell produced.
type Measure struct {
	Offered    float64 // requests per second
	Achieved   float64 // completions per second inside the measured window
	Requests   int64   // requests due in the measured window
	Errors     int64   // of those: failed, or not finished by the drain
	Unfinished int64   // of the errors: cancelled at the drain deadline
	// ConnWaits counts requests that found every connection busy when they
	// were due; their wait is in their latency.
	ConnWaits  int64
	ErrorKinds map[string]int64
	Hist       *hdr.Histogram   // successful measured requests, ns from intended time
	Intervals  []*hdr.Histogram // one per IntervalLength of intended time
	PerSecond  []int64          // completions per second of the measured window
	Lag        *hdr.Histogram   // dispatcher lateness: actual hand-off minus due time
	GenCPU     float64          // generator CPU seconds per wall second (1 = one vCPU)
	Wall       time.Duration
	Samples    []Sample
}

// seqBlocks gives every Run and every closed-loop worker its own range of
// request numbers. Workloads derive keys and literal values from the
// number; without this, a repetition would resend the previous one's exact
// INSERT texts and sqlfwd would answer them from its verdict cache.
var seqBlocks atomic.Int64

func seqBase() int64 { return seqBlocks.Add(1) << 32 }

type job struct {
	seq int64
	due time.Time
}

type recorder struct {
	mu        sync.Mutex
	start     time.Time
	warm, dur time.Duration
	m         *Measure
	keep      bool
}

func (r *recorder) done(j job, end time.Time, err error) {
	off := j.due.Sub(r.start)
	endOff := end.Sub(r.start)
	r.mu.Lock()
	defer r.mu.Unlock()
	if endOff >= r.warm && endOff < r.warm+r.dur {
		sec := int((endOff - r.warm) / time.Second)
		if sec < len(r.m.PerSecond) {
			r.m.PerSecond[sec]++
		}
	}
	if off < r.warm {
		return
	}
	r.m.Requests++
	if err != nil {
		r.m.Errors++
		r.m.ErrorKinds[errorKind(err)]++
		return
	}
	lat := end.Sub(j.due)
	v := min(max(int64(lat), histMin), histMax)
	r.m.Hist.RecordValue(v)
	iv := int((off - r.warm) / IntervalLength)
	for len(r.m.Intervals) <= iv {
		r.m.Intervals = append(r.m.Intervals, newHist())
	}
	r.m.Intervals[iv].RecordValue(v)
	if r.keep {
		r.m.Samples = append(r.m.Samples, Sample{Due: off, Latency: lat})
	}
}

func (r *recorder) unfinished(j job) {
	if j.due.Sub(r.start) < r.warm {
		return
	}
	r.mu.Lock()
	r.m.Requests++
	r.m.Errors++
	r.m.Unfinished++
	r.mu.Unlock()
}

// errorKind names an error without its text when the server sent it: a
// server message can quote the statement's literals, which never go in
// results or logs.
func errorKind(err error) string {
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		return "SQLSTATE " + st.SQLState()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "cancelled"
	}
	s := err.Error()
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// reconnect reports whether an error leaves the connection unusable: the
// server answered with an SQLSTATE means the connection still works.
func reconnect(err error) bool {
	var st interface{ SQLState() string }
	return err != nil && !errors.As(err, &st)
}

// Run executes one open-loop cell: request i is due at start + pacer offset
// i; a dispatcher hands it to a free worker, and its latency runs from the
// due time to the end of its answer. If every connection is busy the
// request waits in a queue, and that wait is part of its latency; a late
// dispatcher likewise delays requests whose clocks are already running. So
// a stall anywhere (server, proxy or generator) counts against every request
// due during it, and nothing is ever "corrected" after the fact.
func Run(ctx context.Context, open OpenFunc, spec RunSpec) (*Measure, error) {
	if spec.Rate <= 0 || spec.Conns <= 0 || spec.Duration <= 0 {
		return nil, fmt.Errorf("run: rate, connections and duration must be positive")
	}
	if spec.Drain <= 0 {
		spec.Drain = 5 * time.Second
	}
	ops := make([]Op, 0, spec.Conns)
	defer func() {
		for _, op := range ops {
			if op != nil {
				op.Close()
			}
		}
	}()
	for range spec.Conns {
		op, err := open(ctx)
		if err != nil {
			return nil, fmt.Errorf("opening connection %d of %d: %w", len(ops)+1, spec.Conns, err)
		}
		ops = append(ops, op)
	}

	m := &Measure{
		Offered:    spec.Rate,
		ErrorKinds: map[string]int64{},
		Hist:       newHist(),
		PerSecond:  make([]int64, int(math.Ceil(spec.Duration.Seconds()))),
		Lag:        newHist(),
	}
	total := spec.Warmup + spec.Duration
	capacity := min(int(spec.Rate*2)+1024, 1<<18)
	jobs := make(chan job, capacity)
	opCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A short lead lets the workers reach their receive before request 0.
	start := time.Now().Add(5 * time.Millisecond)
	rec := &recorder{start: start, warm: spec.Warmup, dur: spec.Duration, m: m, keep: spec.KeepSamples}
	var busy atomic.Int64
	var wg sync.WaitGroup
	for w := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if opCtx.Err() != nil {
					busy.Add(-1)
					rec.unfinished(j)
					continue
				}
				err := ops[w].Do(opCtx, j.seq)
				end := time.Now()
				busy.Add(-1)
				if err != nil && opCtx.Err() != nil {
					rec.unfinished(j)
					continue
				}
				rec.done(j, end, err)
				if reconnect(err) {
					ops[w].Close()
					if op, oerr := open(opCtx); oerr == nil {
						ops[w] = op
					}
				}
			}
		}()
	}
	var duringDone chan struct{}
	if spec.During != nil {
		duringDone = make(chan struct{})
		go func() {
			defer close(duringDone)
			spec.During(opCtx, start)
		}()
	}
	cpu0 := processCPU()
	pacer := NewPacer(spec.Rate, spec.Poisson, spec.Seed)
	var connWaits int64
	base := seqBase()
	for seq := base; ; seq++ {
		off := pacer.Next()
		if off >= total || ctx.Err() != nil {
			break
		}
		due := start.Add(off)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		if busy.Add(1) > int64(len(ops)) && off >= spec.Warmup {
			connWaits++
		}
		m.Lag.RecordValue(min(max(int64(time.Since(due)), histMin), histMax))
		jobs <- job{seq: seq, due: due}
	}
	close(jobs)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	deadline := time.NewTimer(time.Until(start.Add(total + spec.Drain)))
	select {
	case <-finished:
		deadline.Stop()
	case <-deadline.C:
		cancel()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			return nil, errors.New("run: workers did not stop 10 s after cancellation")
		}
	}
	if duringDone != nil {
		cancel()
		<-duringDone
	}
	m.Wall = time.Since(start)
	m.GenCPU = (processCPU() - cpu0).Seconds() / m.Wall.Seconds()
	m.ConnWaits = connWaits
	var inWindow int64
	for _, c := range m.PerSecond {
		inWindow += c
	}
	m.Achieved = float64(inWindow) / spec.Duration.Seconds()
	sort.Slice(m.Samples, func(i, j int) bool { return m.Samples[i].Due < m.Samples[j].Due })
	return m, ctx.Err()
}

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ClosedLoop measures the closed-loop maximum: conns workers each send the
// next request as soon as the previous answer arrives, for warm-up plus
// duration; the rate is the completions of the measured span per second.
func ClosedLoop(ctx context.Context, open OpenFunc, conns int, warmup, duration time.Duration) (float64, int64, error) {
	ops := make([]Op, 0, conns)
	defer func() {
		for _, op := range ops {
			op.Close()
		}
	}()
	for range conns {
		op, err := open(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("closed loop: opening a connection: %w", err)
		}
		ops = append(ops, op)
	}
	start := time.Now()
	measureFrom, end := start.Add(warmup), start.Add(warmup+duration)
	// A request stuck past the end is abandoned 5 s later, not waited for.
	ctx, cancel := context.WithDeadline(ctx, end.Add(5*time.Second))
	defer cancel()
	var done, errs atomic.Int64
	var wg sync.WaitGroup
	for _, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := seqBase(); ctx.Err() == nil; seq++ {
				err := op.Do(ctx, seq)
				now := time.Now()
				if now.After(end) {
					return
				}
				if now.After(measureFrom) {
					done.Add(1)
					if err != nil {
						errs.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	return float64(done.Load()) / duration.Seconds(), errs.Load(), nil
}
