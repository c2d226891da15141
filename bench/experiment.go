package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// Validity thresholds, fixed before any run (no outlier removal after it).
const (
	MaxErrorShare   = 0.001 // errors above 0.1% of requests
	MaxGeneratorCPU = 0.70  // generator above 70% of one vCPU
	MaxSteal        = 0.01  // more than 1% of CPU time stolen by the hypervisor
	SaturationShare = 0.99  // achieved below 99% of offered: saturated
	// SaturationSlack is how many completions a cell may miss before the
	// 1% rule applies: requests due in the last moment of the window finish
	// just after it, and at 24/s over 4 s one of them is already 1%.
	SaturationSlack = 2
)

// Experiment is a whole run: a profile, its targets, and where to log.
type Experiment struct {
	Profile Profile
	Targets []*Target
	// STarget is the target whose closed-loop maximum is S (sqlfwd).
	STarget  string
	DB       DBConfig
	Proc     string    // procfs root
	Progress io.Writer // one updating line; nil for none
	Log      io.Writer // target start/stop output and notes
}

// db is how the workloads log in through target t: its sslmode (and CA),
// if it names one.
func (e *Experiment) db(t *Target) DBConfig {
	c := e.DB
	if t.SSLMode != "" {
		c.SSLMode, c.SSLRootCert = t.SSLMode, t.SSLRootCert
	}
	return c
}

type cellKey struct {
	workload string
	rate     int
}

// Run runs the experiment. Targets the harness owns are started first and
// always stopped. A failing cell is recorded with its error kinds; only an
// error that leaves no results (no baseline, schema setup) ends the run.
func (e *Experiment) Run(ctx context.Context) (*Results, error) {
	p := e.Profile
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if e.Proc == "" {
		e.Proc = "/proc"
	}
	if e.Log == nil {
		e.Log = io.Discard
	}
	var direct, sTarget *Target
	for _, t := range e.Targets {
		switch t.Name {
		case Baseline:
			direct = t
		case e.STarget:
			sTarget = t
		}
	}
	if direct == nil {
		return nil, fmt.Errorf("no %q target", Baseline)
	}
	if sTarget == nil {
		sTarget = direct
		if e.STarget != "" && e.STarget != Baseline {
			return nil, fmt.Errorf("S target %q is not among the targets", e.STarget)
		}
	}
	res := &Results{Version: ResultsVersion, Profile: p, Meta: hostMeta(e.Proc), S: map[string]float64{}, STarget: sTarget.Name}
	for _, t := range e.Targets {
		defer t.Down(e.Log)
	}
	for _, t := range e.Targets {
		if err := t.Up(ctx, e.Log, 20*time.Second); err != nil {
			return nil, err
		}
	}
	meters := map[string]CPUMeter{}
	for _, t := range e.Targets {
		m, src, err := t.Meter(e.Proc)
		if err != nil {
			return nil, err
		}
		if m != nil {
			meters[t.Name] = m
		}
		res.Targets = append(res.Targets, TargetInfo{Name: t.Name, Addr: t.Addr, Version: t.Version, Owned: t.Owned(), CPUSource: src})
	}
	protocol := ""
	for _, wp := range p.Workloads {
		w, _ := LookupWorkload(wp.Workload)
		if protocol != "" && w.Protocol != protocol {
			return nil, fmt.Errorf("profile %s mixes %s and %s workloads; targets speak one protocol", p.Name, protocol, w.Protocol)
		}
		protocol = w.Protocol
	}
	res.Protocol = protocol
	if v, err := ServerVersion(ctx, protocol, e.db(direct), direct.Addr); err == nil {
		res.Meta.ServerVersion = v
	} else {
		return nil, fmt.Errorf("direct target: %w", err)
	}
	setups := map[string]bool{}
	for _, wp := range p.Workloads {
		w, _ := LookupWorkload(wp.Workload)
		// Workloads share schemas; set each up once.
		if w.Setup != nil && !setups[w.Schema] {
			setups[w.Schema] = true
			if err := w.Setup(ctx, e.db(direct), direct.Addr); err != nil {
				return nil, err
			}
		}
	}

	res.Meta.Start = time.Now()
	res.Meta.LoadStart = readLoadavg(e.Proc)
	bootCPU := readCPUTimes(e.Proc)
	if bootCPU.Total > 0 {
		res.Meta.StealBoot = float64(bootCPU.Steal) / float64(bootCPU.Total)
	}
	time.Sleep(time.Second)
	runCPU := readCPUTimes(e.Proc)
	res.Meta.StealStart = StealShare(bootCPU, runCPU)

	workloads := map[string]Workload{}
	for _, wp := range p.Workloads {
		w, _ := LookupWorkload(wp.Workload)
		workloads[wp.Workload] = w
		res.Workloads = append(res.Workloads, WorkloadInfo{Name: w.Name, Doc: w.Doc, Statements: w.Statements})
	}

	prog := newProgress(e.Progress, p, e.Targets)
	for _, wp := range p.Workloads {
		w := workloads[wp.Workload]
		targets := wp.Select(e.Targets)
		square := LatinSquare(len(targets), p.Seed)
		rates := slices.Clone(wp.Rates)
		fractions := make([]float64, len(rates))
		if len(rates) == 0 {
			prog.note(fmt.Sprintf("%s: closed-loop maximum on %s", w.Name, sTarget.Name))
			if w.BeforeCell != nil {
				if err := w.BeforeCell(ctx, e.db(direct), direct.Addr); err != nil {
					return nil, err
				}
			}
			s, errs, err := ClosedLoop(ctx, w.Open(e.db(sTarget), sTarget.Addr), p.ClosedConns, time.Second, p.ClosedLoop)
			prog.closedDone()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", w.Name, err)
			}
			if s <= 0 || float64(errs) > MaxErrorShare*s*p.ClosedLoop.Seconds() {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: closed loop on %s completed %.0f/s with %d errors; workload skipped", w.Name, sTarget.Name, s, errs))
				prog.skip(len(wp.Fractions) * p.Reps * len(targets))
				continue
			}
			res.S[w.Name] = s
			fractions = wp.Fractions
			for _, f := range fractions {
				rates = append(rates, math.Round(f*s))
			}
		}
		alive := map[string]bool{}
		for _, t := range targets {
			alive[t.Name] = true
		}
		for ri, rate := range rates {
			if !alive[Baseline] {
				prog.skip((len(rates) - ri) * p.Reps * len(targets))
				break
			}
			saturated := map[string]bool{}
			for rep := 0; rep < p.Reps; rep++ {
				order := square[rep%len(square)]
				for attempt := 0; attempt <= p.MaxRerun; attempt++ {
					var group []int
					for pos, ti := range order {
						t := targets[ti]
						if !alive[t.Name] {
							if attempt == 0 { // a rerun adds only the cells it runs
								prog.skip(1)
							}
							continue
						}
						spec := RunSpec{Rate: rate, Poisson: p.Poisson, Seed: p.Seed + uint64(rep), Warmup: p.Warmup, Duration: p.Measure, Conns: p.Conns}
						prog.cell(w.Name, t.Name, rate, fractions[ri], rep, attempt > 0)
						c, err := e.runCell(ctx, w, t, direct, meters[t.Name], spec)
						if err != nil {
							return res, err
						}
						c.Workload, c.Target, c.RateIndex, c.Fraction, c.Rep, c.Position = w.Name, t.Name, ri, fractions[ri], rep, pos
						c.Replaces = attempt > 0
						res.Cells = append(res.Cells, c)
						group = append(group, len(res.Cells)-1)
						if c.Saturated {
							saturated[t.Name] = true
						}
						prog.done()
					}
					invalid := false
					for _, i := range group {
						invalid = invalid || !res.Cells[i].Valid
					}
					if !invalid || attempt == p.MaxRerun {
						break
					}
					for _, i := range group {
						res.Cells[i].Rerun = true
					}
					prog.add(len(group))
				}
			}
			// A saturated target's curve ends at this rate.
			for name := range saturated {
				alive[name] = false
			}
		}
	}

	if p.SelfCheck > 0 && len(p.Workloads) > 0 {
		res.SelfCheck = e.selfCheck(ctx, res, direct, workloads[p.Workloads[0].Workload], prog)
	}
	prog.finish()

	endCPU := readCPUTimes(e.Proc)
	res.Meta.StealRun = StealShare(runCPU, endCPU)
	time.Sleep(time.Second)
	res.Meta.StealEnd = StealShare(endCPU, readCPUTimes(e.Proc))
	res.Meta.LoadEnd = readLoadavg(e.Proc)
	res.Meta.End = time.Now()
	res.Analysis = Analyse(res)
	return res, nil
}

func (e *Experiment) selfCheck(ctx context.Context, res *Results, direct *Target, w Workload, prog *progress) *SelfCheckResult {
	p := e.Profile
	pauser, err := direct.Pauser(e.Proc)
	if err != nil || pauser == nil {
		note := "generator self-check not run: the direct target has no pause_pidfile"
		if err != nil {
			note = "generator self-check not run: " + err.Error()
		}
		res.Notes = append(res.Notes, note)
		return nil
	}
	rate := 1000.0
	if s := res.S[w.Name]; s > 0 {
		rate = math.Round(s / 2)
	}
	prog.note(fmt.Sprintf("self-check: %s on %s at %.0f/s, server paused %v at %v", w.Name, direct.Name, rate, p.PauseLen, p.Pauses))
	sc, err := SelfCheck(ctx, w.Open(e.db(direct), direct.Addr), pauser, SelfCheckSpec{
		Rate: rate, Conns: p.Conns, Duration: p.SelfCheck, Pauses: p.Pauses, PauseLen: p.PauseLen,
	})
	if err != nil {
		res.Notes = append(res.Notes, "generator self-check failed to run: "+err.Error())
		return &SelfCheckResult{Rate: rate, Note: err.Error()}
	}
	return &sc
}

// runCell runs one cell and fills in everything but its coordinates.
func (e *Experiment) runCell(ctx context.Context, w Workload, t, direct *Target, meter CPUMeter, spec RunSpec) (Cell, error) {
	if w.BeforeCell != nil {
		if err := w.BeforeCell(ctx, e.db(direct), direct.Addr); err != nil {
			return Cell{}, err
		}
	}
	c := Cell{Rate: spec.Rate, Start: time.Now()}
	cpu0 := readCPUTimes(e.Proc)
	var tc0 CPUSample
	var meterErr error
	if meter != nil {
		tc0, meterErr = meter.ReadCPU()
	}
	m, err := Run(ctx, w.Open(e.db(t), t.Addr), spec)
	if err != nil {
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		// A cell that cannot even open its connections is a failed cell,
		// not a failed run.
		c.Flags = append(c.Flags, "failed: "+errorKind(err))
		c.Saturated = true
		c.ErrorKinds = map[string]int64{errorKind(err): 1}
		return c, nil
	}
	cpu1 := readCPUTimes(e.Proc)
	if meter != nil && meterErr == nil {
		if tc1, err := meter.ReadCPU(); err == nil {
			v := (tc1.Usage - tc0.Usage).Seconds() / m.Wall.Seconds()
			c.TargetCPU = &v
			c.Periods, c.Throttled = tc1.Periods-tc0.Periods, tc1.Throttled-tc0.Throttled
			c.ThrottledTime = float64(tc1.ThrottledTime-tc0.ThrottledTime) / 1e6
		}
	}
	fillCell(&c, m)
	c.Steal = StealShare(cpu0, cpu1)
	judgeCell(&c)
	return c, nil
}

func fillCell(c *Cell, m *Measure) {
	c.Achieved = m.Achieved
	c.Requests, c.Errors, c.Unfinished, c.ConnWaits = m.Requests, m.Errors, m.Unfinished, m.ConnWaits
	if len(m.ErrorKinds) > 0 {
		c.ErrorKinds = m.ErrorKinds
	}
	c.Latency = latencyMap(m.Hist)
	c.Hist = EncodeHist(m.Hist)
	for i, h := range m.Intervals {
		c.Intervals = append(c.Intervals, IntervalSummary{Start: time.Duration(i) * IntervalLength, Count: h.TotalCount(), Latency: latencyMap(h), Hist: EncodeHist(h)})
	}
	c.PerSecond = m.PerSecond
	c.LagP99 = float64(m.Lag.ValueAtPercentile(99)) / 1e3
	c.LagMax = float64(m.Lag.Max()) / 1e3
	c.GenCPU = m.GenCPU
}

// judgeCell applies the validity rules registered above.
func judgeCell(c *Cell) {
	secs := float64(len(c.PerSecond))
	c.Saturated = c.Achieved < SaturationShare*c.Rate && (c.Rate-c.Achieved)*secs > SaturationSlack
	if c.Requests > 0 && float64(c.Errors)/float64(c.Requests) > MaxErrorShare {
		c.Flags = append(c.Flags, fmt.Sprintf("errors %.2f%%", 100*float64(c.Errors)/float64(c.Requests)))
	}
	if c.GenCPU > MaxGeneratorCPU {
		c.Flags = append(c.Flags, fmt.Sprintf("generator cpu %.0f%%", 100*c.GenCPU))
	}
	if c.Steal > MaxSteal {
		c.Flags = append(c.Flags, fmt.Sprintf("steal %.1f%%", 100*c.Steal))
	}
	c.NonSteady = nonSteady(c.PerSecond, c.Rate)
	if c.NonSteady && !c.Saturated {
		c.Flags = append(c.Flags, "non-steady")
	}
	c.Valid = len(c.Flags) == 0
}

// nonSteady reports whether completions per second strayed from the
// offered rate by more than 10% or four Poisson standard deviations,
// whichever is larger, in any whole second of the measured window.
func nonSteady(perSecond []int64, rate float64) bool {
	tol := math.Max(0.10*rate, 4*math.Sqrt(rate))
	for _, n := range perSecond {
		if math.Abs(float64(n)-rate) > tol {
			return true
		}
	}
	return false
}
