package daemon

// Per-statement timing, recorded by the two relay loops of a session.
//
// toServer times every batch of client bytes that carries a statement
// message (Query, Parse, FunctionCall, or a Bind of a statement it saw
// prepared): the hold starts when the bytes that completed the batch
// reached sqlfwd's socket — the kernel's receive time of the read that
// brought them (relay.IO's stamps, TCP clients) or, where the socket gives
// none (unix-socket and TLS clients, bytes a sockmap redirected), when that
// read returned — and ends when the batch's bytes (or the poison that
// replaces a blocked statement) have been written to the server. Each
// statement message of the batch is recorded with that held time. The
// engine call is timed in wall time for every message (as before, for
// eval_mean_ns).
//
// Why from the arrival: bytes that arrive while sqlfwd cannot run (its
// cgroup throttled, its threads waiting on a run queue) wait in the socket
// until it runs again, and that wait is sqlfwd's added latency as much as a
// wait in the middle of a hold. Counted from the read, it vanished: with
// raw relay I/O a statement costs so little CPU that a throttled period
// mostly lands between statements, and TestStatsThrottling saw the
// held-time tail made of ordinary run-queue waits while the quota stalled
// every statement that arrived during the other 90 ms of each period.
//
// One batch in sampleEvery is sampled: the goroutine is locked to its thread
// for the hold, the thread's CPU clock is read at the start and end of the
// hold and around each engine call, and the cgroup's nr_throttled is read
// when the session starts to wait for the batch (HoldWait: before the read,
// so before the bytes arrived) and after the hold; a batch without a
// receive time reads it at the start of the hold instead, where its held
// time starts. CLOCK_THREAD_CPUTIME_ID is not served by the vDSO on
// x86_64 (only the wall clocks are), so each read is a system call (about
// 2 µs on the project's VMs), and a pread of cpu.stat about 3 µs: a sampled
// batch costs about 12 µs more, an average of under 1 µs per statement.
// Locking the thread makes the thread CPU clock the goroutine's own even if
// it parks during the hold. A sampled hold splits exactly into on-CPU time
// (evaluation and the rest: framing, copying, the write) and off-CPU time
// (the wait in the socket, and any wait for CPU during the hold); the
// off-CPU time is quota wait when nr_throttled moved between the two reads
// (the kernel counts a throttled period when it refills the quota, which is
// what releases a throttled thread) and run-queue wait otherwise. A refill
// while the session was idle, before its bytes arrived, counts too: then
// the bytes arrived in a period that ran, and their wait is short unless
// another refill released it, so the error stays out of the tail.
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
	"unsafe"

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

// threadCPU returns the calling thread's CPU time in ns, or -1. It is a
// raw system call (the vDSO does not serve this clock): through
// unix.ClockGettime it would enter the runtime's system-call state and wake
// sysmon as the relay's own reads no longer do (relay.IO), and it never
// blocks.
func threadCPU() int64 {
	var ts unix.Timespec
	if _, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
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
	due     bool  // HoldWait chose the next batch for sampling
	sampled bool
	cpu0    int64
	evalCPU int64
	thr0    uint64
	thrOK   bool
	evals   [16]int64
	nEval   int
	buf     [256]byte
}

// wait is called before toServer reads from the client: it chooses the
// batches to sample and reads nr_throttled before their bytes can arrive.
func (h *holdTimer) wait() {
	if h.rec == nil {
		return
	}
	h.tick++
	h.due = h.tick%sampleEvery == 0
	if h.due {
		h.thr0, h.thrOK = h.probe.Read(&h.buf)
	}
}

// maxArrivalWait bounds the wait in the socket a receive time may add: a
// larger one means the real-time clock was stepped between the kernel's
// stamp and the read.
const maxArrivalWait = int64(histMax)

// begin starts timing a batch; toServer calls it when Fill returns, with
// the receive time of the read's bytes (Unix ns, 0 when unknown).
func (h *holdTimer) begin(arrived int64) {
	if h.rec == nil {
		return
	}
	h.n, h.nEval, h.evalCPU = 0, 0, 0
	h.sampled, h.due = h.due, false
	if h.sampled {
		runtime.LockOSThread()
		if arrived == 0 {
			// the hold starts now: so does the bracket
			h.thr0, h.thrOK = h.probe.Read(&h.buf)
		}
		h.cpu0 = threadCPU()
		if h.cpu0 < 0 {
			h.sampled = false
			runtime.UnlockOSThread()
		}
	}
	now := time.Now()
	h.start = int64(now.Sub(monoBase))
	if arrived != 0 {
		if w := now.UnixNano() - arrived; w > 0 && w < maxArrivalWait {
			h.start -= w
		}
	}
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
	m.hold.rec, m.relay.rec = db.rec.shardFor(id), db.rec.relayFor(id)
	if st := d.statsState; st != nil {
		m.hold.probe = st.probe
	}
	return m
}

func (m *sessionMeter) HoldWait()                              { m.hold.wait() }
func (m *sessionMeter) HoldBegin(arrived int64)                { m.hold.begin(arrived) }
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
