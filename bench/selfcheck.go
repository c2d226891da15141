package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// A Pauser stops and resumes the database server, which the harness owns.
type Pauser interface {
	Pause() error
	Resume() error
}

// ProcessPauser stops a server process and its direct children with
// SIGSTOP and resumes them with SIGCONT. PostgreSQL needs the children: each
// backend is a child of the postmaster, and stopping the postmaster alone
// stops only new connections. Proc is the procfs root ("/proc").
type ProcessPauser struct {
	Proc    string
	PID     int
	stopped []int
}

// Pause implements Pauser.
func (p *ProcessPauser) Pause() error {
	pids := append([]int{p.PID}, childPIDs(p.Proc, p.PID)...)
	p.stopped = p.stopped[:0]
	// The parent first, so it forks no child that this loop would miss.
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err == nil {
			p.stopped = append(p.stopped, pid)
		} else if pid == p.PID {
			return fmt.Errorf("stopping server pid %d: %w", pid, err)
		}
	}
	return nil
}

// Resume implements Pauser.
func (p *ProcessPauser) Resume() error {
	var first error
	for i := len(p.stopped) - 1; i >= 0; i-- {
		if err := syscall.Kill(p.stopped[i], syscall.SIGCONT); err != nil && first == nil {
			first = fmt.Errorf("resuming pid %d: %w", p.stopped[i], err)
		}
	}
	p.stopped = p.stopped[:0]
	return first
}

// childPIDs lists the processes whose parent is pid.
func childPIDs(proc string, pid int) []int {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(proc, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if st, err := ParseProcStat(bytes.NewReader(b)); err == nil && st.PPID == pid {
			out = append(out, n)
		}
	}
	return out
}

// ReadPIDFile returns the number on the first line of a pid file (also
// PostgreSQL's postmaster.pid).
func ReadPIDFile(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parsePIDFile(f)
}

func parsePIDFile(r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		return 0, fmt.Errorf("empty pid file")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(sc.Bytes())))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file: first line is not a pid")
	}
	return pid, nil
}

// SelfCheckSpec describes the generator self-check: an open-loop run at
// Rate with the server paused for PauseLen at each offset in Pauses.
type SelfCheckSpec struct {
	Rate     float64
	Conns    int
	Duration time.Duration
	Pauses   []time.Duration
	PauseLen time.Duration
	// MinShare is the fraction of the expected share the observed share
	// must reach (0.8 when zero).
	MinShare float64
}

// PauseWindow is when the server was actually stopped, from the cell start.
type PauseWindow struct {
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
}

// SelfCheckResult compares the share of requests that saw a pause with the
// share that must have: every request due while the server was stopped
// cannot complete before it resumes. A generator that measures from the
// actual send, or stops sending while its connections are stuck, hides
// most of them.
type SelfCheckResult struct {
	Rate     float64       `json:"rate"`
	Duration time.Duration `json:"duration_ns"`
	Windows  []PauseWindow `json:"windows"`
	Requests int64         `json:"requests"`
	Saw      int64         `json:"saw_pause"`
	Expected float64       `json:"expected_share"`
	Observed float64       `json:"observed_share"`
	Pass     bool          `json:"pass"`
	Note     string        `json:"note,omitempty"`
}

// EvaluatePauses scores samples against the pause windows. A request saw a
// pause when it was due before the pause ended and finished after it ended
// (so requests in flight when the pause began count too). The expected
// share is the paused time over the measured time.
func EvaluatePauses(samples []Sample, requests int64, measured time.Duration, windows []PauseWindow, minShare float64) SelfCheckResult {
	if minShare == 0 {
		minShare = 0.8
	}
	res := SelfCheckResult{Duration: measured, Windows: windows, Requests: requests}
	var paused time.Duration
	for _, w := range windows {
		paused += w.End - w.Start
	}
	for _, s := range samples {
		for _, w := range windows {
			if s.Due < w.End && s.Due+s.Latency >= w.End {
				res.Saw++
				break
			}
		}
	}
	if measured > 0 {
		res.Expected = paused.Seconds() / measured.Seconds()
	}
	if requests > 0 {
		res.Observed = float64(res.Saw) / float64(requests)
	}
	res.Pass = len(windows) > 0 && res.Observed >= minShare*res.Expected
	if len(windows) == 0 {
		res.Note = "no pause happened"
	}
	return res
}

// SelfCheck runs the generator self-check against open with p pausing the
// server. The server is always resumed before SelfCheck returns.
func SelfCheck(ctx context.Context, open OpenFunc, p Pauser, spec SelfCheckSpec) (SelfCheckResult, error) {
	var windows []PauseWindow
	var pauseErr error
	during := func(ctx context.Context, start time.Time) {
		for _, off := range spec.Pauses {
			t := time.NewTimer(time.Until(start.Add(off)))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if err := p.Pause(); err != nil {
				pauseErr = err
				return
			}
			w := PauseWindow{Start: time.Since(start)}
			select {
			case <-ctx.Done():
			case <-time.After(spec.PauseLen):
			}
			// The end is taken before SIGCONT: nothing paused can finish
			// earlier than this.
			w.End = time.Since(start)
			if err := p.Resume(); err != nil {
				pauseErr = err
				return
			}
			windows = append(windows, w)
		}
	}
	m, err := Run(ctx, open, RunSpec{
		Rate: spec.Rate, Duration: spec.Duration, Conns: spec.Conns,
		Drain: spec.PauseLen + 10*time.Second, KeepSamples: true, During: during,
	})
	if err != nil {
		return SelfCheckResult{}, fmt.Errorf("self-check run: %w", err)
	}
	if pauseErr != nil {
		return SelfCheckResult{}, fmt.Errorf("self-check pause: %w", pauseErr)
	}
	res := EvaluatePauses(m.Samples, m.Requests, spec.Duration, windows, spec.MinShare)
	res.Rate = spec.Rate
	return res, nil
}
