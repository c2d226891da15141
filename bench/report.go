package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// fmtUS prints a latency given in µs.
func fmtUS(us float64) string {
	switch a := abs(us); {
	case a >= 10000:
		return fmt.Sprintf("%.1f ms", us/1000)
	case a >= 1000:
		return fmt.Sprintf("%.2f ms", us/1000)
	case a >= 100:
		return fmt.Sprintf("%.0f µs", us)
	default:
		return fmt.Sprintf("%.1f µs", us)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func signed(us float64) string {
	if us >= 0 {
		return "+" + fmtUS(us)
	}
	return "−" + fmtUS(-us)
}

// FormatAdded prints an added-latency interval the one way the project
// quotes it: an interval that contains zero is "not distinguishable from
// direct", never zero.
func FormatAdded(iv Interval) string {
	switch {
	case iv.N == 0:
		return "–"
	case iv.N == 1:
		return signed(iv.Mean) + " (1 rep, no interval)"
	case iv.ContainsZero():
		return fmt.Sprintf("not distinguishable from direct [%s, %s]", signed(iv.Lo), signed(iv.Hi))
	}
	return fmt.Sprintf("%s [%s, %s]", signed(iv.Mean), signed(iv.Lo), signed(iv.Hi))
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// Report writes the Markdown report of r. charts maps a chart's title to
// its file name, for links.
func Report(w io.Writer, r *Results, charts []Chart) error {
	a := r.Analysis
	if a == nil {
		a = Analyse(r)
	}
	b := &strings.Builder{}
	m := r.Meta
	fmt.Fprintf(b, "# sqlfw open-loop benchmark: profile %s\n\n", r.Profile.Name)
	fmt.Fprintf(b, "Written by fwctl bench from results.json (`fwctl bench report DIR` rewrites it). Latency is measured from each request's intended send time (open loop, no coordinated omission); added latency is target minus direct at the same rate in the same repetition, percentile by percentile, mean over repetitions with a Student t 95%% interval.\n\n")
	b.WriteString("## Conditions\n\n")
	fmt.Fprintf(b, "| | |\n|---|---|\n")
	fmt.Fprintf(b, "| host | %s, %d CPUs, %s |\n| kernel | %s |\n| Go | %s |\n| database server | %s |\n| commit | %s |\n",
		m.Host, m.NumCPU, m.CPUModel, m.Kernel, m.GoVersion, m.ServerVersion, m.Commit)
	fmt.Fprintf(b, "| run | %s → %s (%s) |\n", m.Start.UTC().Format(time.RFC3339), m.End.UTC().Format(time.RFC3339), m.End.Sub(m.Start).Round(time.Second))
	fmt.Fprintf(b, "| load average | start %.2f %.2f %.2f, end %.2f %.2f %.2f |\n", m.LoadStart[0], m.LoadStart[1], m.LoadStart[2], m.LoadEnd[0], m.LoadEnd[1], m.LoadEnd[2])
	fmt.Fprintf(b, "| steal | since boot %s, second before %s, whole run %s, second after %s |\n", pct(m.StealBoot), pct(m.StealStart), pct(m.StealRun), pct(m.StealEnd))
	p := r.Profile
	fmt.Fprintf(b, "| profile | %d repetitions, warm-up %v (discarded), %v measured per cell, %d connections, %s schedule, seed %d |\n\n",
		p.Reps, p.Warmup, p.Measure, p.Conns, map[bool]string{true: "Poisson", false: "constant-rate"}[p.Poisson], p.Seed)
	b.WriteString("| target | address | version | CPU measured from |\n|---|---|---|---|\n")
	for _, t := range r.Targets {
		owned := ""
		if t.Owned {
			owned = " (started by the harness)"
		}
		fmt.Fprintf(b, "| %s%s | %s | %s | %s |\n", t.Name, owned, t.Addr, t.Version, t.CPUSource)
	}
	b.WriteString("\n")

	b.WriteString("## Generator self-check\n\n")
	if sc := r.SelfCheck; sc != nil {
		verdict := "PASS"
		if !sc.Pass {
			verdict = "FAIL: the generator hides stalls; no latency in this file can be trusted"
		}
		fmt.Fprintf(b, "The database was stopped (SIGSTOP of the server and its backends) %d time(s) for about %v during a %v run at %.0f/s on direct. Requests that saw a pause: **%s** of %d; expected at least the paused share of the time, **%s**. %s.\n\n",
			len(sc.Windows), r.Profile.PauseLen, sc.Duration, sc.Rate, pct(sc.Observed), sc.Requests, pct(sc.Expected), verdict)
	} else {
		b.WriteString("Not run (see notes).\n\n")
	}

	if len(r.S) > 0 {
		fmt.Fprintf(b, "## S: closed-loop maximum on %s\n\n| workload | S (requests/s) |\n|---|---|\n", r.STarget)
		for _, wi := range r.Workloads {
			if s, ok := r.S[wi.Name]; ok {
				fmt.Fprintf(b, "| %s | %.0f |\n", wi.Name, s)
			}
		}
		b.WriteString("\n")
	}

	writeHeadline(b, r, a)

	chartFor := map[string][]Chart{}
	for _, c := range charts {
		chartFor[c.Workload] = append(chartFor[c.Workload], c)
	}
	for _, wi := range r.Workloads {
		rows := rowsOf(a, wi.Name)
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(b, "## %s\n\n%s.\n\n", wi.Name, wi.Doc)
		b.WriteString("| rate | target | achieved | added p50 | added p90 | added p99 | added p99.9 | direct p50 / p99 | reps |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, row := range rows {
			rate := fmt.Sprintf("%.0f/s", row.Rate)
			if row.Fraction > 0 {
				rate += fmt.Sprintf(" (%.0f%% S)", 100*row.Fraction)
			}
			if row.Saturated {
				fmt.Fprintf(b, "| %s | %s | saturated: curve ends | | | | | | %d |\n", rate, row.Target, row.Total)
				continue
			}
			if row.Pairs == 0 {
				fmt.Fprintf(b, "| %s | %s | no pair with direct | | | | | | %d |\n", rate, row.Target, row.Total)
				continue
			}
			reps := fmt.Sprintf("%d/%d", row.Pairs, row.Total)
			if row.IncludesInvalid {
				reps += " (all flagged invalid)"
			}
			fmt.Fprintf(b, "| %s | %s | %.0f/s | %s | %s | %s | %s | %s / %s | %s |\n", rate, row.Target, row.Achieved,
				FormatAdded(row.Added["p50"]), FormatAdded(row.Added["p90"]), FormatAdded(row.Added["p99"]), FormatAdded(row.Added["p99.9"]),
				fmtUS(row.DirectLat["p50"].Mean), fmtUS(row.DirectLat["p99"].Mean), reps)
		}
		b.WriteString("\n")
		for _, c := range chartFor[wi.Name] {
			fmt.Fprintf(b, "![%s](%s)\n\n", c.Title, c.File)
		}
	}

	if sweep := sweepRows(a); len(sweep) > 0 {
		b.WriteString("## Statement-size sweep\n\nTarget CPU per statement: the target's CPU time over the cell divided by the statements it completed, mean over repetitions.\n\n")
		b.WriteString("| statement | target | rate | added p50 | added p99 | target CPU per statement |\n|---|---|---|---|---|---|\n")
		for _, row := range sweep {
			cpu := cpuPerStatement(r, row)
			if row.Saturated || row.Pairs == 0 {
				fmt.Fprintf(b, "| %s | %s | %.0f/s | saturated or no pair | | %s |\n", row.Workload, row.Target, row.Rate, cpu)
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %.0f/s | %s | %s | %s |\n", row.Workload, row.Target, row.Rate, FormatAdded(row.Added["p50"]), FormatAdded(row.Added["p99"]), cpu)
		}
		b.WriteString("\n")
	}

	if len(a.CPU) > 0 {
		fmt.Fprintf(b, "## CPU\n\nLinear fit of the target's vCPU (CPU seconds per second) against statements/s over cells below %.0f%% of S. Throttled: share of CFS periods in which the quota ran out (all cells / top rate); it is what bends the tail when a quota is set.\n\n", 100*FitBelow)
		b.WriteString("| workload | target | vCPU per 1,000 statements/s | intercept | r² | cells | throttled (all / top) |\n|---|---|---|---|---|---|---|\n")
		for _, c := range a.CPU {
			if c.Fit.N < 2 || c.Fit.Slope == 0 && c.Fit.Intercept == 0 {
				fmt.Fprintf(b, "| %s | %s | no fit (needs two rates below %.0f%% of S) | | | %d | %s / %s |\n", c.Workload, c.Target, 100*FitBelow, c.Fit.N, pct(c.Throttled), pct(c.ThrottledAt100))
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %.3f | %.3f | %.2f | %d | %s / %s |\n", c.Workload, c.Target, c.PerKStatements, c.Fit.Intercept, c.Fit.R2, c.Fit.N, pct(c.Throttled), pct(c.ThrottledAt100))
		}
		b.WriteString("\n")
		for _, c := range chartFor[""] {
			fmt.Fprintf(b, "![%s](%s)\n\n", c.Title, c.File)
		}
	}

	b.WriteString("## Validity\n\n")
	fmt.Fprintf(b, "Rules fixed before the run: errors > %s, generator CPU > %.0f%% of a vCPU, steal > %s, or a non-steady cell (a whole second's completions off the offered rate by more than 10%% or 4√rate) make a repetition invalid; it is kept here and run once more. A cell below %.0f%% of its offered rate is saturated and ends its target's curve.\n\n",
		pct(MaxErrorShare), 100*MaxGeneratorCPU, pct(MaxSteal), 100*SaturationShare)
	fmt.Fprintf(b, "%d cells, %d flagged.\n\n", a.Cells, a.InvalidCells)
	flagged := 0
	for _, c := range r.Cells {
		if len(c.Flags) == 0 {
			continue
		}
		if flagged == 0 {
			b.WriteString("| workload | target | rate | rep | flags | rerun |\n|---|---|---|---|---|---|\n")
		}
		flagged++
		if flagged > 60 {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %.0f/s | %d | %s | %v |\n", c.Workload, c.Target, c.Rate, c.Rep+1, strings.Join(c.Flags, "; "), c.Rerun)
	}
	if flagged > 60 {
		fmt.Fprintf(b, "\n… and %d more in results.json.\n", flagged-60)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(b, "- %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func rowsOf(a *Analysis, workload string) []AddedRow {
	var out []AddedRow
	for _, r := range a.Added {
		if r.Workload == workload {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].RateIndex != out[j].RateIndex {
			return out[i].RateIndex < out[j].RateIndex
		}
		return out[i].Target < out[j].Target
	})
	return out
}

func sweepRows(a *Analysis) []AddedRow {
	var out []AddedRow
	for _, r := range a.Added {
		if strings.HasPrefix(r.Workload, "insert-") {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		var ni, nj int
		fmt.Sscanf(out[i].Workload, "insert-%d", &ni)
		fmt.Sscanf(out[j].Workload, "insert-%d", &nj)
		if ni != nj {
			return ni < nj
		}
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return out[i].RateIndex < out[j].RateIndex
	})
	return out
}

// WriteDir writes results.json, report.md and the SVG charts into dir.
func WriteDir(dir string, r *Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "results.json"))
	if err != nil {
		return err
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		return fmt.Errorf("writing results.json: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return WriteReport(dir, r)
}

// WriteReport writes report.md and the charts of r into dir.
func WriteReport(dir string, r *Results) error {
	if r.Analysis == nil {
		r.Analysis = Analyse(r)
	}
	charts := Charts(r)
	for _, c := range charts {
		if err := os.WriteFile(filepath.Join(dir, c.File), []byte(c.SVG), 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "report.md"))
	if err != nil {
		return err
	}
	if err := Report(f, r, charts); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeHeadline puts the first workload's added p50 and p99 per rate side
// by side for every target: the comparison the run exists for (sqlfwd next
// to a bare TCP hop).
func writeHeadline(b *strings.Builder, r *Results, a *Analysis) {
	if len(r.Workloads) == 0 {
		return
	}
	w := r.Workloads[0].Name
	rows := rowsOf(a, w)
	var targets []string
	seen := map[string]bool{}
	for _, row := range rows {
		if !seen[row.Target] {
			seen[row.Target] = true
			targets = append(targets, row.Target)
		}
	}
	if len(targets) == 0 {
		return
	}
	fmt.Fprintf(b, "## Headline: %s, added latency over direct\n\n| rate |", w)
	for _, t := range targets {
		fmt.Fprintf(b, " %s added p50 | %s added p99 |", t, t)
	}
	b.WriteString("\n|---|")
	for range targets {
		b.WriteString("---|---|")
	}
	b.WriteString("\n")
	byRate := map[int]map[string]AddedRow{}
	var idx []int
	for _, row := range rows {
		if byRate[row.RateIndex] == nil {
			byRate[row.RateIndex] = map[string]AddedRow{}
			idx = append(idx, row.RateIndex)
		}
		byRate[row.RateIndex][row.Target] = row
	}
	flagged := false
	for _, i := range idx {
		var rate string
		for _, row := range byRate[i] {
			rate = fmt.Sprintf("%.0f/s", row.Rate)
			if row.Fraction > 0 {
				rate += fmt.Sprintf(" (%.0f%% S)", 100*row.Fraction)
			}
		}
		fmt.Fprintf(b, "| %s |", rate)
		for _, t := range targets {
			row, ok := byRate[i][t]
			switch {
			case !ok:
				b.WriteString(" – | – |")
			case row.Saturated:
				b.WriteString(" saturated | |")
			case row.Pairs == 0:
				b.WriteString(" no pair | |")
			default:
				mark := ""
				if row.IncludesInvalid {
					mark = " ⚑"
					flagged = true
				}
				fmt.Fprintf(b, " %s%s | %s%s |", FormatAdded(row.Added["p50"]), mark, FormatAdded(row.Added["p99"]), mark)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if flagged {
		b.WriteString("⚑: every repetition of the pair carried a validity flag (see Validity); read as a hint.\n\n")
	}
}

// cpuPerStatement is the target's CPU time per completed statement at the
// row's rate, mean over the repetitions that measured it.
func cpuPerStatement(r *Results, row AddedRow) string {
	stmts := 1.0
	for _, w := range r.Workloads {
		if w.Name == row.Workload && w.Statements > 0 {
			stmts = w.Statements
		}
	}
	var sum float64
	n := 0
	for _, c := range finalCells(r.Cells) {
		if c.Workload == row.Workload && c.Target == row.Target && c.RateIndex == row.RateIndex && c.TargetCPU != nil && c.Achieved > 0 {
			sum += *c.TargetCPU / (c.Achieved * stmts) * 1e6 // µs
			n++
		}
	}
	if n == 0 {
		return "–"
	}
	return fmtUS(sum / float64(n))
}
