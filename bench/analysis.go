package bench

// Analysis is what the results say, computed from the cells alone.
type Analysis struct {
	Added []AddedRow  `json:"added"`
	CPU   []CPUFitRow `json:"cpu"`
	Cells int         `json:"cells"`
	// InvalidCells counts cells with a validity flag (kept in Cells).
	InvalidCells int `json:"invalid_cells"`
}

// AddedRow is one target at one rate: its added latency over direct,
// percentile by percentile, as a mean over repetitions with a 95% t
// interval (µs).
type AddedRow struct {
	Workload  string  `json:"workload"`
	Target    string  `json:"target"`
	RateIndex int     `json:"rate_index"`
	Fraction  float64 `json:"fraction,omitempty"`
	Rate      float64 `json:"rate"`
	// Pairs is the number of repetitions used; Total the number run.
	Pairs int `json:"pairs"`
	Total int `json:"reps_run"`
	// IncludesInvalid is set when no repetition was valid and the row was
	// computed from flagged ones: read it as a hint, not a result.
	IncludesInvalid bool `json:"includes_invalid"`
	// Saturated: the target (or direct) fell below 99% of the offered rate
	// in a repetition at this rate; no latency is quoted.
	Saturated bool                `json:"saturated"`
	Added     map[string]Interval `json:"added_us,omitempty"`
	TargetLat map[string]Interval `json:"target_us,omitempty"`
	DirectLat map[string]Interval `json:"direct_us,omitempty"`
	// Achieved is the target's mean achieved rate over the pairs.
	Achieved float64 `json:"achieved"`
}

// CPUFitRow is vCPU against statements/s for one target and workload, fitted
// over the cells below 80% of S.
type CPUFitRow struct {
	Workload string `json:"workload"`
	Target   string `json:"target"`
	Fit      Fit    `json:"fit"`
	// PerKStatements is the slope as vCPU per 1,000 statements/s.
	PerKStatements float64 `json:"vcpu_per_1000_statements"`
	// Throttled is the share of CFS periods throttled over all this
	// target's cells of the workload, and ThrottledAt100 at the top rate.
	Throttled      float64      `json:"throttled_share"`
	ThrottledAt100 float64      `json:"throttled_share_top"`
	Points         [][2]float64 `json:"points"` // [statements/s, vCPU] of every unsaturated cell
}

// FitBelow is the share of S under which cells enter the CPU fit: above it
// queueing and throttling bend the line.
const FitBelow = 0.80

// finalCells returns the cells that count: a repetition that was rerun is
// represented by its rerun.
func finalCells(cells []Cell) []Cell {
	var out []Cell
	for _, c := range cells {
		if !c.Rerun {
			out = append(out, c)
		}
	}
	return out
}

type repKey struct {
	workload string
	rate     int
	rep      int
	target   string
}

// Analyse computes added latency, t intervals and CPU fits.
func Analyse(r *Results) *Analysis {
	a := &Analysis{Cells: len(r.Cells)}
	for _, c := range r.Cells {
		if !c.Valid {
			a.InvalidCells++
		}
	}
	cells := finalCells(r.Cells)
	byKey := map[repKey]Cell{}
	type rowKey struct {
		workload, target string
		rate             int
	}
	var order []rowKey
	seen := map[rowKey]bool{}
	for _, c := range cells {
		byKey[repKey{c.Workload, c.RateIndex, c.Rep, c.Target}] = c
		k := rowKey{c.Workload, c.Target, c.RateIndex}
		if c.Target != Baseline && !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	for _, k := range order {
		row := AddedRow{Workload: k.workload, Target: k.target, RateIndex: k.rate}
		type pair struct{ t, d Cell }
		var valid, all []pair
		for rep := 0; rep < r.Profile.Reps; rep++ {
			t, ok1 := byKey[repKey{k.workload, k.rate, rep, k.target}]
			d, ok2 := byKey[repKey{k.workload, k.rate, rep, Baseline}]
			if !ok1 || !ok2 {
				continue
			}
			row.Rate, row.Fraction = t.Rate, t.Fraction
			row.Total++
			if t.Saturated || d.Saturated {
				row.Saturated = true
				continue
			}
			all = append(all, pair{t, d})
			if t.Valid && d.Valid {
				valid = append(valid, pair{t, d})
			}
		}
		use := valid
		if len(valid) == 0 && len(all) > 0 {
			use, row.IncludesInvalid = all, true
		}
		row.Pairs = len(use)
		if !row.Saturated && len(use) > 0 {
			row.Added, row.TargetLat, row.DirectLat = map[string]Interval{}, map[string]Interval{}, map[string]Interval{}
			for _, name := range PercentileNames {
				var diffs, ts, ds []float64
				for _, p := range use {
					tv, dv := p.t.Latency[name], p.d.Latency[name]
					d, _ := Subtract([]float64{tv}, []float64{dv})
					diffs = append(diffs, d[0])
					ts = append(ts, tv)
					ds = append(ds, dv)
				}
				row.Added[name], row.TargetLat[name], row.DirectLat[name] = MeanCI95(diffs), MeanCI95(ts), MeanCI95(ds)
			}
			for _, p := range use {
				row.Achieved += p.t.Achieved / float64(len(use))
			}
		}
		a.Added = append(a.Added, row)
	}
	a.CPU = cpuFits(r, cells)
	return a
}

func cpuFits(r *Results, cells []Cell) []CPUFitRow {
	stmts := map[string]float64{}
	for _, w := range r.Workloads {
		stmts[w.Name] = w.Statements
	}
	type key struct{ w, t string }
	rows := map[key]*CPUFitRow{}
	var order []key
	type acc struct{ periods, throttled, topP, topT int64 }
	accs := map[key]*acc{}
	xs, ys := map[key][]float64{}, map[key][]float64{}
	rates := map[key]map[float64]bool{}
	topRate := map[string]float64{}
	for _, c := range cells {
		topRate[c.Workload] = max(topRate[c.Workload], c.Rate)
	}
	for _, c := range cells {
		if c.TargetCPU == nil {
			continue
		}
		k := key{c.Workload, c.Target}
		if rows[k] == nil {
			rows[k] = &CPUFitRow{Workload: c.Workload, Target: c.Target}
			accs[k] = &acc{}
			rates[k] = map[float64]bool{}
			order = append(order, k)
		}
		// Throttling counts in every cell, saturated ones above all: that
		// is where it explains the tail.
		accs[k].periods += c.Periods
		accs[k].throttled += c.Throttled
		if c.Rate == topRate[c.Workload] {
			accs[k].topP += c.Periods
			accs[k].topT += c.Throttled
		}
		if c.Saturated {
			continue
		}
		s := stmts[c.Workload]
		if s == 0 {
			s = 1
		}
		x := c.Achieved * s
		rows[k].Points = append(rows[k].Points, [2]float64{x, *c.TargetCPU})
		if c.Fraction == 0 || c.Fraction < FitBelow {
			xs[k] = append(xs[k], x)
			ys[k] = append(ys[k], *c.TargetCPU)
			rates[k][c.Rate] = true
		}
	}
	var out []CPUFitRow
	for _, k := range order {
		row := rows[k]
		// Repetitions at one rate scatter around one point: a line through
		// them is noise, so a fit needs two offered rates.
		if f, err := LinearFit(xs[k], ys[k]); err == nil && len(rates[k]) >= 2 {
			row.Fit = f
			row.PerKStatements = f.Slope * 1000
		} else {
			// JSON has no NaN: N < 2 (or all rates equal) means no fit.
			row.Fit = Fit{N: len(xs[k])}
		}
		if a := accs[k]; a.periods > 0 {
			row.Throttled = float64(a.throttled) / float64(a.periods)
			if a.topP > 0 {
				row.ThrottledAt100 = float64(a.topT) / float64(a.topP)
			}
		}
		out = append(out, *row)
	}
	return out
}
