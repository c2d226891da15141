package bench

import (
	"fmt"
	"io"
	"time"
)

// progress keeps one status line up to date: cell, rate, elapsed, ETA. The
// ETA assumes each remaining cell takes warm-up + measure + half a second of
// connection setup, plus the self-check.
type progress struct {
	w                io.Writer
	start            time.Time
	total, completed int
	perCell          time.Duration
	tail             time.Duration
	closedLoops      int
	closedLoop       time.Duration
}

func newProgress(w io.Writer, p Profile, targets []*Target) *progress {
	pr := &progress{w: w, start: time.Now(), perCell: p.Warmup + p.Measure + 500*time.Millisecond, tail: p.SelfCheck, closedLoop: p.ClosedLoop + time.Second}
	for _, wp := range p.Workloads {
		n := len(wp.Rates)
		if n == 0 {
			n = len(wp.Fractions)
			pr.closedLoops++
		}
		pr.total += n * p.Reps * len(wp.Select(targets))
	}
	return pr
}

func (p *progress) eta() time.Duration {
	return time.Duration(p.total-p.completed)*p.perCell + time.Duration(p.closedLoops)*p.closedLoop + p.tail
}

func (p *progress) cell(workload, target string, rate, fraction float64, rep int, rerun bool) {
	if p.w == nil {
		return
	}
	frac := ""
	if fraction > 0 {
		frac = fmt.Sprintf(" (%.0f%% of S)", 100*fraction)
	}
	again := ""
	if rerun {
		again = " rerun"
	}
	fmt.Fprintf(p.w, "\r\033[K[cell %d/%d] %s → %s rep %d%s at %.0f/s%s  elapsed %s  ETA %s",
		p.completed+1, p.total, workload, target, rep+1, again, rate, frac,
		time.Since(p.start).Round(time.Second), p.eta().Round(time.Second))
}

func (p *progress) note(msg string) {
	if p.w != nil {
		fmt.Fprintf(p.w, "\r\033[K%s  (elapsed %s, ETA %s)\n", msg, time.Since(p.start).Round(time.Second), p.eta().Round(time.Second))
	}
}

func (p *progress) done()       { p.completed++ }
func (p *progress) closedDone() { p.closedLoops-- }
func (p *progress) skip(n int)  { p.completed += n }
func (p *progress) add(n int)   { p.total += n }

func (p *progress) finish() {
	if p.w != nil {
		fmt.Fprintf(p.w, "\r\033[Kdone: %d cells in %s\n", p.completed, time.Since(p.start).Round(time.Second))
	}
}
