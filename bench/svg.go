package bench

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Chart is one SVG file of a report.
type Chart struct {
	Workload string // "" for charts about several workloads
	Title    string
	File     string
	SVG      string
}

type series struct {
	name    string
	color   string
	dashed  bool
	markers bool // points only, no line
	pts     [][2]float64
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"}

// Charts draws, per workload with at least two rates, added p50 and p99
// against the offered rate for every target, and per workload with CPU
// readings, vCPU against statements/s with the fitted line.
func Charts(r *Results) []Chart {
	a := r.Analysis
	if a == nil {
		a = Analyse(r)
	}
	colors := map[string]string{}
	for i, t := range r.Targets {
		colors[t.Name] = palette[i%len(palette)]
	}
	var out []Chart
	for _, wi := range r.Workloads {
		rows := rowsOf(a, wi.Name)
		byTarget := map[string][2][][2]float64{}
		var targets []string
		rates := map[float64]bool{}
		for _, row := range rows {
			if row.Saturated || row.Pairs == 0 {
				continue
			}
			rates[row.Rate] = true
			if _, ok := byTarget[row.Target]; !ok {
				targets = append(targets, row.Target)
			}
			s := byTarget[row.Target]
			s[0] = append(s[0], [2]float64{row.Rate, row.Added["p50"].Mean})
			s[1] = append(s[1], [2]float64{row.Rate, row.Added["p99"].Mean})
			byTarget[row.Target] = s
		}
		if len(rates) < 2 {
			continue
		}
		var ss []series
		for _, t := range targets {
			ss = append(ss, series{name: t + " p50", color: colors[t], pts: byTarget[t][0]},
				series{name: t + " p99", color: colors[t], dashed: true, pts: byTarget[t][1]})
		}
		title := fmt.Sprintf("%s: added latency vs rate (mean over repetitions)", wi.Name)
		out = append(out, Chart{Workload: wi.Name, Title: title, File: "added-" + wi.Name + ".svg",
			SVG: plot(title, "offered rate (requests/s)", "added latency (µs)", ss)})
	}
	cpuBy := map[string][]CPUFitRow{}
	var cpuW []string
	for _, c := range a.CPU {
		if _, ok := cpuBy[c.Workload]; !ok {
			cpuW = append(cpuW, c.Workload)
		}
		cpuBy[c.Workload] = append(cpuBy[c.Workload], c)
	}
	for _, w := range cpuW {
		var ss []series
		for _, c := range cpuBy[w] {
			if len(c.Points) < 2 {
				continue
			}
			ss = append(ss, series{name: c.Target, color: colors[c.Target], markers: true, pts: c.Points})
			if c.Fit.N >= 2 && c.Fit.Slope != 0 {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, p := range c.Points {
					lo, hi = math.Min(lo, p[0]), math.Max(hi, p[0])
				}
				ss = append(ss, series{name: fmt.Sprintf("%s fit: %.3f vCPU per 1k/s", c.Target, c.PerKStatements), color: colors[c.Target], dashed: true,
					pts: [][2]float64{{lo, c.Fit.Intercept + c.Fit.Slope*lo}, {hi, c.Fit.Intercept + c.Fit.Slope*hi}}})
			}
		}
		if len(ss) == 0 {
			continue
		}
		title := fmt.Sprintf("%s: target CPU vs throughput", w)
		out = append(out, Chart{Title: title, File: "cpu-" + w + ".svg", SVG: plot(title, "statements/s", "vCPU", ss)})
	}
	return out
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; v <= hi+step/2 && len(out) < 50; v += step {
		out = append(out, v)
	}
	return out
}

func fmtTick(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", math.Round(v*1000)/1000)
}

// plot draws a line chart with the standard library only.
func plot(title, xl, yl string, ss []series) string {
	const W, H, L, R, T, B = 720.0, 420.0, 70.0, 20.0, 40.0, 50.0
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), 0.0, math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.pts {
			xmin, xmax = math.Min(xmin, p[0]), math.Max(xmax, p[0])
			ymin, ymax = math.Min(ymin, p[1]), math.Max(ymax, p[1])
		}
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax, ymax = 0, 1, 1
	}
	xmin = math.Min(xmin, 0)
	xt := niceTicks(xmin, xmax, 6)
	yt := niceTicks(ymin, ymax, 6)
	xmin, xmax = xt[0], xt[len(xt)-1]
	ymin, ymax = yt[0], yt[len(yt)-1]
	X := func(v float64) float64 { return L + (v-xmin)/(xmax-xmin)*(W-L-R) }
	Y := func(v float64) float64 { return H - B - (v-ymin)/(ymax-ymin)*(H-T-B) }
	b := &strings.Builder{}
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(b, `<text x="%.0f" y="20" text-anchor="middle" font-size="14">%s</text>`+"\n", W/2, html.EscapeString(title))
	for _, v := range xt {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", X(v), T, X(v), H-B, X(v), H-B+16, fmtTick(v))
	}
	for _, v := range yt {
		stroke := "#ddd"
		if v == 0 {
			stroke = "#888"
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", L, Y(v), W-R, Y(v), stroke, L-6, Y(v)+4, fmtTick(v))
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`+"\n", (L+W-R)/2, H-12, html.EscapeString(xl))
	fmt.Fprintf(b, `<text transform="translate(16 %.0f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (T+H-B)/2, html.EscapeString(yl))
	for i, s := range ss {
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		if s.markers {
			for _, p := range s.pts {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", X(p[0]), Y(p[1]), s.color)
			}
		} else {
			var pts []string
			for _, p := range s.pts {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", X(p[0]), Y(p[1])))
			}
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", s.color, dash, strings.Join(pts, " "))
			for _, p := range s.pts {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`+"\n", X(p[0]), Y(p[1]), s.color)
			}
		}
		ly := T + 14 + float64(i)*16
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="%s" stroke-width="2"%s/><text x="%.0f" y="%.1f">%s</text>`+"\n", L+10, ly-4, L+34, ly-4, s.color, dash, L+40, ly, html.EscapeString(s.name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}
