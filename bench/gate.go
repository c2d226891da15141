package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"
)

// The CI regression gate. Machines differ by more than any regression worth
// catching, so absolute latencies are useless across runs: each p50 is
// divided by the p50 of a calibration workload measured in the same run
// (by default a prepared point select straight to PostgreSQL), and only
// that ratio is compared with the committed baseline. The threshold is
// large (2.5×) so that noise passes and an algorithmic regression (a parse
// per message that used to be cached, a copy per row) does not.

// GateBaseline is the committed baseline file.
type GateBaseline struct {
	Version     int                `json:"version"`
	Calibration string             `json:"calibration"` // "workload@target"
	Threshold   float64            `json:"threshold"`
	Ratios      map[string]float64 `json:"ratios"` // "workload@target" → p50 / calibration p50
	// Runs is how many runs the baseline was built from; Ratios keeps the
	// highest ratio each entry reached, and MinRatios the lowest.
	Runs      int                `json:"runs"`
	MinRatios map[string]float64 `json:"min_ratios,omitempty"`
	// Where it came from, for whoever updates it.
	Host           string    `json:"host"`
	Commit         string    `json:"commit"`
	Created        time.Time `json:"created"`
	CalibrationP50 float64   `json:"calibration_p50_us"`
}

// GateRow is one workload@target of a gate check.
type GateRow struct {
	Key      string  `json:"key"`
	P50      float64 `json:"p50_us"`
	Current  float64 `json:"current_ratio"`
	Baseline float64 `json:"baseline_ratio"`
	Change   float64 `json:"change"` // Current / Baseline
	Fail     bool    `json:"fail"`
	Why      string  `json:"why,omitempty"`
}

// maxGateErrors is the error share above which a gate cell fails outright:
// a regression that breaks requests must not pass because it is fast.
const maxGateErrors = 0.01

type gateCell struct {
	p50, errShare float64
	saturated     bool
	n             int
}

func gateCells(r *Results) map[string]*gateCell {
	out := map[string]*gateCell{}
	for _, c := range finalCells(r.Cells) {
		if c.RateIndex != 0 {
			continue
		}
		k := c.Workload + "@" + c.Target
		g := out[k]
		if g == nil {
			g = &gateCell{}
			out[k] = g
		}
		g.n++
		g.p50 += c.Latency["p50"]
		if c.Requests > 0 {
			g.errShare = max(g.errShare, float64(c.Errors)/float64(c.Requests))
		}
		g.saturated = g.saturated || c.Saturated
	}
	for _, g := range out {
		g.p50 /= float64(g.n)
	}
	return out
}

// NewBaseline builds a baseline from one or more runs of the ci profile.
// Each entry keeps the highest ratio it reached: load compresses ratios
// toward 1, so the highest is the quietest run's, and a quiet CI machine
// must not fail against a busy day's baseline.
func NewBaseline(runs []*Results, threshold float64) (*GateBaseline, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("no results")
	}
	first := runs[0]
	cal := first.Profile.Calibration
	if cal == "" {
		return nil, fmt.Errorf("profile %s has no calibration workload", first.Profile.Name)
	}
	b := &GateBaseline{Version: 1, Calibration: cal, Threshold: threshold, Ratios: map[string]float64{},
		MinRatios: map[string]float64{}, Runs: len(runs), Host: first.Meta.Host, Commit: first.Meta.Commit, Created: first.Meta.Start}
	for i, r := range runs {
		if r.Profile.Calibration != cal {
			return nil, fmt.Errorf("run %d has calibration %q, not %q", i+1, r.Profile.Calibration, cal)
		}
		cells := gateCells(r)
		c, ok := cells[cal]
		if !ok || c.p50 <= 0 {
			return nil, fmt.Errorf("run %d: calibration %s has no latency", i+1, cal)
		}
		b.CalibrationP50 += c.p50 / float64(len(runs))
		for k, g := range cells {
			if k == cal {
				continue
			}
			if g.saturated || g.p50 <= 0 || g.errShare > maxGateErrors {
				return nil, fmt.Errorf("run %d: %s is saturated or failing: not a baseline", i+1, k)
			}
			ratio := g.p50 / c.p50
			if old, ok := b.Ratios[k]; !ok || ratio > old {
				b.Ratios[k] = ratio
			}
			if old, ok := b.MinRatios[k]; !ok || ratio < old {
				b.MinRatios[k] = ratio
			}
		}
	}
	return b, nil
}

// ReadBaseline reads a baseline file.
func ReadBaseline(path string) (*GateBaseline, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b GateBaseline
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("reading baseline %s: %w", path, err)
	}
	return &b, nil
}

// Gate compares r with the baseline. It passes when every baseline entry is
// present, unsaturated, nearly error-free and within Threshold× of its
// baseline ratio.
func Gate(r *Results, b *GateBaseline) ([]GateRow, bool) {
	cells := gateCells(r)
	pass := true
	cal, ok := cells[b.Calibration]
	var rows []GateRow
	if !ok || cal.p50 <= 0 {
		return []GateRow{{Key: b.Calibration, Fail: true, Why: "calibration missing"}}, false
	}
	keys := make([]string, 0, len(b.Ratios))
	for k := range b.Ratios {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row := GateRow{Key: k, Baseline: b.Ratios[k]}
		g, ok := cells[k]
		switch {
		case !ok:
			row.Fail, row.Why = true, "not measured"
		case g.saturated:
			row.Fail, row.Why = true, "saturated at the gate's rate"
		case g.errShare > maxGateErrors:
			row.Fail, row.Why = true, fmt.Sprintf("errors %.1f%%", 100*g.errShare)
		case g.p50 <= 0:
			row.Fail, row.Why = true, "no latency"
		default:
			row.P50 = g.p50
			row.Current = g.p50 / cal.p50
			row.Change = row.Current / row.Baseline
			if row.Change > b.Threshold {
				row.Fail, row.Why = true, fmt.Sprintf("%.2f× the baseline ratio (limit %.1f×)", row.Change, b.Threshold)
			}
		}
		pass = pass && !row.Fail
		rows = append(rows, row)
	}
	return rows, pass
}

// WriteGate prints a gate check as a table.
func WriteGate(w io.Writer, r *Results, b *GateBaseline, rows []GateRow, pass bool) {
	cells := gateCells(r)
	fmt.Fprintf(w, "calibration %s: p50 %s here, %s in the baseline (%s, %s)\n", b.Calibration,
		fmtUS(cells[b.Calibration].p50OrZero()), fmtUS(b.CalibrationP50), b.Host, b.Created.Format("2006-01-02"))
	if c := cells[b.Calibration].p50OrZero(); c > 0 && b.CalibrationP50 > 0 && (c > 3*b.CalibrationP50 || 3*c < b.CalibrationP50) {
		fmt.Fprintf(w, "warning: the calibration p50 differs more than 3× from the baseline's: the machines or their load differ a lot, and load compresses ratios toward 1\n")
	}
	fmt.Fprintf(w, "%-32s %10s %10s %10s %8s  %s\n", "workload@target", "p50", "ratio", "baseline", "change", "")
	for _, row := range rows {
		status := "ok"
		if row.Fail {
			status = "FAIL " + row.Why
		}
		fmt.Fprintf(w, "%-32s %10s %10.2f %10.2f %7.2f×  %s\n", row.Key, fmtUS(row.P50), row.Current, row.Baseline, row.Change, status)
	}
	verdict := "PASS"
	if !pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s (limit %.1f× the baseline ratio)\n", verdict, b.Threshold)
}

func (g *gateCell) p50OrZero() float64 {
	if g == nil {
		return 0
	}
	return g.p50
}
