package daemon

// Per-statement timing, recorded by the two relay loops of a session.
//
// toServer times every batch of client bytes that carries a statement
// message (Query, Parse, FunctionCall, or a Bind of a statement it saw
// prepared): the hold starts when Fill returns the read that completed the
// batch and ends when the batch's bytes (or the poison that replaces a
// blocked statement) have been written to the server. Each statement
// message of the batch is recorded with that held time. The engine call is
// timed in wall time for every message (as before, for eval_mean_ns).
//
// One batch in sampleEvery is sampled: the goroutine is locked to its thread
// for the hold, the thread's CPU clock is read at the start and end of the
// hold and around each engine call, and the cgroup's nr_throttled is read
// before and after. CLOCK_THREAD_CPUTIME_ID is not served by the vDSO on
// x86_64 (only the wall clocks are), so each read is a system call (about
// 2 µs on the project's VMs), and a pread of cpu.stat about 3 µs: a sampled
// batch costs about 12 µs more, an average of under 1 µs per statement.
// Locking the thread makes the thread CPU clock the goroutine's own even if
// it parks during the hold. A sampled hold splits exactly into on-CPU time
// (evaluation and the rest: framing, copying, the write) and off-CPU time;
// the off-CPU time is quota wait when nr_throttled moved during the hold
// (the kernel counts a throttled period when it refills the quota, which is
// what releases a throttled thread) and run-queue wait otherwise.
//
// toClient times responses: from the Fill that brings the first bytes after
// the previous ReadyForQuery to the write that forwards the next one.
//
// Nothing here allocates; the clock for wall times is Go's monotonic clock
// through the vDSO (about 100 ns per read here).

import (
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/cgroupstats"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
)

// sampleEvery is how often toServer samples a batch for CPU and throttling.
const sampleEvery = 16

var monoBase = time.Now()

// nanotime is monotonic nanoseconds since the process started.
func nanotime() int64 { return int64(time.Since(monoBase)) }

// threadCPU returns the calling thread's CPU time in ns, or -1.
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}

// holdTimer is toServer's timing state for the current batch.
type holdTimer struct {
	rec   *shard
	probe *cgroupstats.ThrottleProbe
	tick  uint32

	start   int64
	n       int64 // statement messages in the batch
	sampled bool
	cpu0    int64
	evalCPU int64
	thr0    uint64
	thrOK   bool
	evals   [16]int64
	nEval   int
	buf     [256]byte
}

// begin starts timing a batch; toServer calls it when Fill returns.
func (h *holdTimer) begin() {
	if h.rec == nil {
		return
	}
	h.n, h.nEval, h.evalCPU = 0, 0, 0
	h.tick++
	h.sampled = h.tick%sampleEvery == 0
	if h.sampled {
		runtime.LockOSThread()
		h.thr0, h.thrOK = h.probe.Read(&h.buf)
		h.cpu0 = threadCPU()
		if h.cpu0 < 0 {
			h.sampled = false
			runtime.UnlockOSThread()
		}
	}
	h.start = nanotime()
}

// statement counts one statement message in the batch.
func (h *holdTimer) statement() { h.n++ }

// evalStart is called before an engine call: the thread CPU clock of a
// sampled batch, else 0.
func (h *holdTimer) evalStart() int64 {
	if !h.sampled {
		return 0
	}
	return threadCPU()
}

// evalEnd records an engine call's wall time (and CPU time when sampled).
func (h *holdTimer) evalEnd(cpu0 int64, wall time.Duration) {
	if h.rec == nil {
		return
	}
	if h.sampled && cpu0 > 0 {
		if c := threadCPU(); c >= cpu0 {
			h.evalCPU += c - cpu0
		}
	}
	if h.nEval == len(h.evals) {
		h.rec.recordEvals(h.evals[:])
		h.nEval = 0
	}
	h.evals[h.nEval] = int64(wall)
	h.nEval++
}

// end finishes the batch once its bytes are forwarded.
func (h *holdTimer) end() {
	if h.rec == nil {
		return
	}
	if h.n == 0 && h.nEval == 0 {
		h.abort()
		return
	}
	held := nanotime() - h.start
	s := holdSample{held: held, n: h.n, cpu: -1}
	if h.sampled {
		if c := threadCPU(); c >= h.cpu0 {
			s.cpu = c - h.cpu0
			s.evalCPU = h.evalCPU
			s.evalCalls = int64(h.nEval)
		}
		if h.thrOK {
			thr1, ok := h.probe.Read(&h.buf)
			s.throttleKnown = ok
			s.throttled = ok && thr1 != h.thr0
		}
		h.sampled = false
		runtime.UnlockOSThread()
	}
	h.rec.recordHold(&s, h.evals[:h.nEval])
	h.n, h.nEval = 0, 0
}

// abort releases the thread of a sampled batch that will not end (the
// session stops, or the batch held no statement).
func (h *holdTimer) abort() {
	if h.sampled {
		h.sampled = false
		runtime.UnlockOSThread()
	}
}

// holdSample is one batch's figures.
type holdSample struct {
	held, n int64
	// cpu is the thread CPU time of the hold, -1 when not sampled.
	cpu, evalCPU, evalCalls  int64
	throttleKnown, throttled bool
}

// relayTimer is toClient's timing state.
type relayTimer struct {
	rec     *shard
	first   int64
	ready   int64
	startup bool // the startup phase's ReadyForQuery has been seen
	skip    bool // the batch ended the startup phase: record nothing
}

// arrived notes the time of the first bytes of a response.
func (r *relayTimer) arrived() {
	if r.rec != nil && r.first == 0 {
		r.first = nanotime()
	}
}

// readyForQuery counts a ReadyForQuery in the current batch.
func (r *relayTimer) readyForQuery() {
	if !r.startup {
		// the startup phase's answer waits for the client's authentication
		r.startup, r.skip = true, true
		return
	}
	r.ready++
}

// forwarded records the responses whose ReadyForQuery was just written; a
// batch without one leaves the response in progress.
func (r *relayTimer) forwarded() {
	if r.rec == nil {
		return
	}
	if r.ready > 0 {
		r.rec.recordRelay(nanotime()-r.first, r.ready)
	}
	if r.ready > 0 || r.skip {
		r.first, r.ready, r.skip = 0, 0, false
	}
}

// sessionMeter is one session's relay.Meter: its hold and response timers,
// recording into its shard of the database's recorder.
type sessionMeter struct {
	hold  holdTimer
	relay relayTimer
}

// newMeter is relay.Env's Meter for db.
func (d *Daemon) newMeter(db *database, id uint64) relay.Meter {
	m := &sessionMeter{}
	if db.rec == nil {
		return m
	}
	sh := db.rec.shardFor(id)
	m.hold.rec, m.relay.rec = sh, sh
	if st := d.statsState; st != nil {
		m.hold.probe = st.probe
	}
	return m
}

func (m *sessionMeter) HoldBegin()                             { m.hold.begin() }
func (m *sessionMeter) HoldStatement()                         { m.hold.statement() }
func (m *sessionMeter) EvalStart() int64                       { return m.hold.evalStart() }
func (m *sessionMeter) EvalEnd(cpu0 int64, wall time.Duration) { m.hold.evalEnd(cpu0, wall) }
func (m *sessionMeter) HoldEnd()                               { m.hold.end() }
func (m *sessionMeter) HoldAbort()                             { m.hold.abort() }
func (m *sessionMeter) ResponseArrived()                       { m.relay.arrived() }
func (m *sessionMeter) ResponseReady()                         { m.relay.readyForQuery() }
func (m *sessionMeter) ResponseForwarded()                     { m.relay.forwarded() }

// sessionTally is one connection's counters for /v1/connections, written by
// toServer and read by the control socket.
type sessionTally struct {
	since                                          time.Time
	statements, allowed, denied, wouldDeny, logged atomic.Uint64
}

// count adds a verdict, under the mode it was applied in.
func (t *sessionTally) count(v *engine.Verdict, mode Mode) {
	t.statements.Add(uint64(v.Statements))
	switch {
	case v.Action == engine.ActionAllow:
		t.allowed.Add(1)
	case v.Action == engine.ActionLog:
		t.logged.Add(1)
	case v.Action.Denies() && mode == ModeEnforce:
		t.denied.Add(1)
	case v.Action.Denies():
		t.wouldDeny.Add(1)
	}
}
