package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestConstantPacerDueTimes(t *testing.T) {
	tests := []struct {
		name string
		rate float64
		want []time.Duration
	}{
		{"1000/s", 1000, []time.Duration{0, time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}},
		{"3/s rounds, no drift", 3, []time.Duration{0, 333333333, 666666667, time.Second, 1333333333}},
		{"0.5/s", 0.5, []time.Duration{0, 2 * time.Second, 4 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewConstantPacer(tt.rate)
			for i, want := range tt.want {
				if got := p.Next(); got != want {
					t.Errorf("rate %v request %d: due %v, want %v", tt.rate, i, got, want)
				}
			}
		})
	}
	// Far into a run the offset is still exactly i/rate.
	if got, want := DueAt(3_000_000, 3), 1_000_000*time.Second; got != want {
		t.Errorf("DueAt(3e6, 3) = %v, want %v", got, want)
	}
}

func TestPoissonPacer(t *testing.T) {
	a, b := NewPoissonPacer(1000, 42), NewPoissonPacer(1000, 42)
	c := NewPoissonPacer(1000, 43)
	var last time.Duration
	differs := false
	const n = 100_000
	for i := range n {
		x, y, z := a.Next(), b.Next(), c.Next()
		if i == 0 && x != 0 {
			t.Fatalf("first request due at %v, want 0", x)
		}
		if x != y {
			t.Fatalf("request %d: same seed gave %v and %v", i, x, y)
		}
		if x < last {
			t.Fatalf("request %d: due %v before previous %v", i, x, last)
		}
		differs = differs || x != z
		last = x
	}
	if !differs {
		t.Error("seeds 42 and 43 gave the same schedule")
	}
	// Mean gap 1 ms within 2% (deterministic for this seed).
	mean := last.Seconds() / (n - 1)
	if math.Abs(mean-0.001) > 0.00002 {
		t.Errorf("mean gap %v s, want 0.001 ± 2%%", mean)
	}
}

func TestTQuantile(t *testing.T) {
	// Two-sided 95% critical values from any t table.
	table := map[int]float64{1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 10: 2.228, 20: 2.086, 30: 2.042, 60: 2.000, 120: 1.980, 100000: 1.960}
	for df, want := range table {
		t.Run(fmt.Sprint(df), func(t *testing.T) {
			if got := TQuantile(0.975, df); math.Abs(got-want) > 0.0015 {
				t.Errorf("TQuantile(0.975, %d) = %.4f, want %.3f", df, got, want)
			}
		})
	}
	if got := TQuantile(0.995, 4); math.Abs(got-4.604) > 0.0015 {
		t.Errorf("TQuantile(0.995, 4) = %.4f, want 4.604", got)
	}
	if got := TQuantile(0.025, 4); math.Abs(got+2.776) > 0.0015 {
		t.Errorf("TQuantile(0.025, 4) = %.4f, want -2.776", got)
	}
}

func TestMeanCI95(t *testing.T) {
	tests := []struct {
		name            string
		xs              []float64
		mean, lo, hi    float64
		n               int
		distinguishable bool
	}{
		{"1..5", []float64{1, 2, 3, 4, 5}, 3, 3 - 2.776*math.Sqrt(2.5)/math.Sqrt(5), 3 + 2.776*math.Sqrt(2.5)/math.Sqrt(5), 5, true},
		{"straddles zero", []float64{-2, 1, 4}, 1, 1 - 4.303*3/math.Sqrt(3), 1 + 4.303*3/math.Sqrt(3), 3, false},
		{"identical", []float64{7, 7}, 7, 7, 7, 2, true},
		{"one rep", []float64{5}, 5, 5, 5, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iv := MeanCI95(tt.xs)
			if iv.N != tt.n || math.Abs(iv.Mean-tt.mean) > 1e-9 || math.Abs(iv.Lo-tt.lo) > 2e-3 || math.Abs(iv.Hi-tt.hi) > 2e-3 {
				t.Errorf("MeanCI95(%v) = %+v, want n %d mean %v [%v, %v]", tt.xs, iv, tt.n, tt.mean, tt.lo, tt.hi)
			}
			if got := !iv.ContainsZero(); got != tt.distinguishable {
				t.Errorf("MeanCI95(%v) distinguishable = %v, want %v", tt.xs, got, tt.distinguishable)
			}
		})
	}
	if s := FormatAdded(MeanCI95([]float64{-2, 1, 4})); !strings.HasPrefix(s, "not distinguishable from direct") {
		t.Errorf("interval containing zero printed %q", s)
	}
	if s := FormatAdded(MeanCI95([]float64{10, 12, 11})); !strings.HasPrefix(s, "+11.0 µs [") {
		t.Errorf("positive interval printed %q", s)
	}
}

func TestSubtractPercentiles(t *testing.T) {
	tests := []struct {
		name           string
		target, direct []float64
		want           []float64
	}{
		{"p50..p99.9", []float64{120, 180, 400, 1500}, []float64{100, 150, 300, 900}, []float64{20, 30, 100, 600}},
		{"proxy faster at one percentile", []float64{95, 150}, []float64{100, 140}, []float64{-5, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Subtract(tt.target, tt.direct)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Subtract(%v, %v) = %v, %v; want %v", tt.target, tt.direct, got, err, tt.want)
			}
		})
	}
	if _, err := Subtract([]float64{1}, []float64{1, 2}); err == nil {
		t.Error("Subtract of different lengths: no error")
	}
}

func TestAnalyseAddedLatency(t *testing.T) {
	cell := func(target string, rep int, p50, p99 float64, sat bool) Cell {
		return Cell{Workload: "w", Target: target, Rep: rep, Rate: 100, Achieved: 100, Valid: true, Saturated: sat,
			Latency: map[string]float64{"p50": p50, "p90": p50, "p99": p99, "p99.9": p99}}
	}
	r := &Results{Profile: Profile{Reps: 3}, Cells: []Cell{
		cell("direct", 0, 100, 300, false), cell("proxy", 0, 130, 420, false),
		cell("direct", 1, 110, 310, false), cell("proxy", 1, 135, 400, false),
		cell("direct", 2, 90, 290, false), cell("proxy", 2, 125, 410, false),
	}}
	a := Analyse(r)
	if len(a.Added) != 1 {
		t.Fatalf("got %d rows, want 1", len(a.Added))
	}
	row := a.Added[0]
	// Per-rep differences: p50 30, 25, 35 → mean 30; p99 120, 90, 120 → 110.
	if row.Pairs != 3 || math.Abs(row.Added["p50"].Mean-30) > 1e-9 || math.Abs(row.Added["p99"].Mean-110) > 1e-9 {
		t.Errorf("added = %+v, want pairs 3, p50 30, p99 110", row)
	}
	// Mean of differences, not difference of pooled distributions: the
	// interval uses the per-rep spread (sd 5 for p50).
	if want := 4.303 * 5 / math.Sqrt(3); math.Abs(row.Added["p50"].Hi-30-want) > 0.01 {
		t.Errorf("p50 half-width %v, want %v", row.Added["p50"].Hi-30, want)
	}
}

func TestSaturation(t *testing.T) {
	tests := []struct {
		name     string
		offered  float64
		achieved float64
		want     bool
	}{
		{"keeps up", 1000, 1000, false},
		{"99.5% keeps up", 1000, 995, false},
		{"exactly 99%", 1000, 990, false},
		{"98.9% saturated", 1000, 989, true},
		{"far behind", 5000, 3100, true},
		{"24/s, one request finishing after the window", 24, 23.75, false},
		{"24/s, three requests missing", 24, 23.25, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Cell{Rate: tt.offered, Achieved: tt.achieved, Requests: 10, PerSecond: make([]int64, 4)}
			for i := range c.PerSecond {
				c.PerSecond[i] = int64(tt.offered)
			}
			judgeCell(&c)
			if c.Saturated != tt.want {
				t.Errorf("offered %v achieved %v: saturated %v, want %v", tt.offered, tt.achieved, c.Saturated, tt.want)
			}
		})
	}
	// A saturated cell ends the curve: its row quotes no latency.
	lat := map[string]float64{"p50": 1, "p90": 1, "p99": 1, "p99.9": 1}
	r := &Results{Profile: Profile{Reps: 1}, Cells: []Cell{
		{Workload: "w", Target: "direct", Rate: 100, Valid: true, Latency: lat},
		{Workload: "w", Target: "proxy", Rate: 100, Saturated: true, Latency: lat},
	}}
	row := Analyse(r).Added[0]
	if !row.Saturated || row.Added != nil {
		t.Errorf("saturated row = %+v, want saturated with no latency", row)
	}
}

func TestValidityFlags(t *testing.T) {
	tests := []struct {
		name string
		c    Cell
		flag string
	}{
		{"errors", Cell{Rate: 10, Achieved: 10, Requests: 1000, Errors: 2, PerSecond: []int64{10}}, "errors"},
		{"generator", Cell{Rate: 10, Achieved: 10, Requests: 10, GenCPU: 0.8, PerSecond: []int64{10}}, "generator cpu"},
		{"steal", Cell{Rate: 10, Achieved: 10, Requests: 10, Steal: 0.02, PerSecond: []int64{10}}, "steal"},
		{"non-steady", Cell{Rate: 1000, Achieved: 1000, Requests: 10, PerSecond: []int64{1000, 700, 1300}}, "non-steady"},
		{"clean", Cell{Rate: 1000, Achieved: 1000, Requests: 1000, Errors: 1, PerSecond: []int64{1000, 990, 1010}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			judgeCell(&tt.c)
			got := strings.Join(tt.c.Flags, ";")
			if (tt.flag == "") != tt.c.Valid || !strings.Contains(got, tt.flag) {
				t.Errorf("flags %q valid %v, want flag %q", got, tt.c.Valid, tt.flag)
			}
		})
	}
}

func TestLatinSquareBalance(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for seed := uint64(0); seed < 3; seed++ {
			t.Run(fmt.Sprintf("n%d/seed%d", n, seed), func(t *testing.T) {
				sq := LatinSquare(n, seed)
				wantRows := n
				if n%2 == 1 && n > 1 {
					wantRows = 2 * n
				}
				if n == 1 {
					wantRows = 2
				}
				if len(sq) != wantRows {
					t.Fatalf("%d rows, want %d", len(sq), wantRows)
				}
				pos := map[[2]int]int{}
				follow := map[[2]int]int{}
				for _, row := range sq {
					seen := map[int]bool{}
					for j, v := range row {
						if v < 0 || v >= n || seen[v] {
							t.Fatalf("row %v is not a permutation of 0..%d", row, n-1)
						}
						seen[v] = true
						pos[[2]int{v, j}]++
						if j > 0 {
							follow[[2]int{row[j-1], v}]++
						}
					}
				}
				per := len(sq) / n
				for v := range n {
					for j := range n {
						if pos[[2]int{v, j}] != per {
							t.Errorf("treatment %d in position %d %d times, want %d", v, j, pos[[2]int{v, j}], per)
						}
					}
				}
				for a := range n {
					for b := range n {
						if a != b && follow[[2]int{a, b}] != per {
							t.Errorf("%d followed by %d %d times, want %d", a, b, follow[[2]int{a, b}], per)
						}
					}
				}
			})
		}
	}
	if fmt.Sprint(LatinSquare(4, 9)) != fmt.Sprint(LatinSquare(4, 9)) {
		t.Error("same seed, different squares")
	}
}

func TestLinearFit(t *testing.T) {
	f, err := LinearFit([]float64{1000, 2000, 3000, 4000}, []float64{0.07, 0.12, 0.17, 0.22})
	if err != nil || math.Abs(f.Slope-0.00005) > 1e-12 || math.Abs(f.Intercept-0.02) > 1e-9 || math.Abs(f.R2-1) > 1e-9 {
		t.Errorf("fit = %+v, %v; want slope 5e-5, intercept 0.02, r² 1", f, err)
	}
	if _, err := LinearFit([]float64{1, 1}, []float64{1, 2}); err == nil {
		t.Error("fit over equal x values: no error")
	}
}

func TestRunCountsQueueWait(t *testing.T) {
	// One connection to a server that takes 20 ms per answer, offered 100/s:
	// requests queue for the connection, and that wait must be in their
	// latency, so p50 is far above the 20 ms service time.
	s := newFakeServer(t, 20*time.Millisecond)
	m, err := Run(context.Background(), s.open, RunSpec{Rate: 100, Duration: 500 * time.Millisecond, Conns: 1, Drain: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 50 {
		t.Errorf("requests due in 0.5 s at 100/s = %d, want 50", m.Requests)
	}
	if m.ConnWaits == 0 {
		t.Error("no request waited for the only connection")
	}
	if p50 := time.Duration(m.Hist.ValueAtPercentile(50)); p50 < 100*time.Millisecond {
		t.Errorf("p50 %v: the queue wait was not counted (service time alone is 20 ms)", p50)
	}
}

func TestSelfCheckSeesPause(t *testing.T) {
	s := newFakeServer(t, 0)
	res, err := SelfCheck(context.Background(), s.open, s, SelfCheckSpec{
		Rate: 500, Conns: 4, Duration: 2 * time.Second, Pauses: []time.Duration{500 * time.Millisecond}, PauseLen: 400 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Windows) != 1 || !res.Pass {
		t.Errorf("self-check = %+v, want one pause and a pass", res)
	}
}

func TestEvaluatePausesCatchesHidingGenerator(t *testing.T) {
	win := []PauseWindow{{Start: time.Second, End: 2 * time.Second}}
	var honest, hiding []Sample
	// 1000/s for 4 s, 100 µs service time. The honest generator measures
	// from the due time, so a request due in the pause finishes after it;
	// the hiding one measures from when it got a connection after the pause.
	for i := range 4000 {
		due := time.Duration(i) * time.Millisecond
		lat := 100 * time.Microsecond
		if due >= win[0].Start && due < win[0].End {
			honest = append(honest, Sample{Due: due, Latency: win[0].End - due + lat})
			hiding = append(hiding, Sample{Due: due, Latency: lat})
			continue
		}
		honest = append(honest, Sample{Due: due, Latency: lat})
		hiding = append(hiding, Sample{Due: due, Latency: lat})
	}
	h := EvaluatePauses(honest, 4000, 4*time.Second, win, 0)
	if !h.Pass || math.Abs(h.Expected-0.25) > 1e-9 || h.Observed < 0.249 {
		t.Errorf("honest generator: %+v, want pass, expected 25%%, observed ≈ 25%%", h)
	}
	if c := EvaluatePauses(hiding, 4000, 4*time.Second, win, 0); c.Pass {
		t.Errorf("hiding generator passed: %+v", c)
	}
	if c := EvaluatePauses(honest, 4000, 4*time.Second, nil, 0); c.Pass {
		t.Error("a check with no pause passed")
	}
}

type sqlStateErr struct{ code, msg string }

func (e sqlStateErr) Error() string    { return e.msg }
func (e sqlStateErr) SQLState() string { return e.code }

func TestErrorKindKeepsLiteralsOut(t *testing.T) {
	err := fmt.Errorf("query: %w", sqlStateErr{"23505", `duplicate key value violates unique constraint: Key (aid)=(4711) secret`})
	if got := errorKind(err); got != "SQLSTATE 23505" {
		t.Errorf("errorKind = %q, want only the SQLSTATE", got)
	}
	if reconnect(err) {
		t.Error("a server error should keep the connection")
	}
	if !reconnect(errors.New("read: connection reset")) {
		t.Error("a network error should reconnect")
	}
}

func TestParsers(t *testing.T) {
	st, err := ParseProcStat(strings.NewReader("1234 (post gres) (x)) S 77 1234 1234 0 -1 4194560 1571 0 0 0 12 7 0 0 20 0 1 0 5"))
	if err != nil || st.PID != 1234 || st.PPID != 77 || st.UTime != 12 || st.STime != 7 {
		t.Errorf("ParseProcStat = %+v, %v", st, err)
	}
	v1, err := ParseCPUStat(strings.NewReader("nr_periods 120\nnr_throttled 7\nthrottled_time 81234567\nnr_bursts 0\nwait_sum 5\n"))
	if err != nil || v1.Periods != 120 || v1.Throttled != 7 || v1.ThrottledTime != 81234567 {
		t.Errorf("v1 cpu.stat = %+v, %v", v1, err)
	}
	v2, err := ParseCPUStat(strings.NewReader("usage_usec 5000\nuser_usec 1\nnr_periods 3\nnr_throttled 1\nthrottled_usec 250\n"))
	if err != nil || v2.Usage != 5*time.Millisecond || v2.ThrottledTime != 250*time.Microsecond || v2.Throttled != 1 {
		t.Errorf("v2 cpu.stat = %+v, %v", v2, err)
	}
	a, _ := ParseProcStatCPU(strings.NewReader("cpu  100 0 50 800 10 0 20 20 5 0\ncpu0 1 2 3\n"))
	b, _ := ParseProcStatCPU(strings.NewReader("cpu  200 0 100 1600 20 0 40 40 10 0\n"))
	if a.Total != 1000 || a.Steal != 20 || math.Abs(StealShare(a, b)-0.02) > 1e-12 {
		t.Errorf("proc stat cpu = %+v → %+v, steal %v", a, b, StealShare(a, b))
	}
	if pid, err := parsePIDFile(strings.NewReader("4242\n/var/lib/pg\n")); err != nil || pid != 4242 {
		t.Errorf("parsePIDFile = %d, %v", pid, err)
	}
}

func TestParseTargets(t *testing.T) {
	in := `# comment
direct 127.0.0.1:5432 version="PostgreSQL 15.18" pause_pidfile=/tmp/pg/data/postmaster.pid
sqlfwd 127.0.0.1:6432 start="exec bin/sqlfwd --listen 127.0.0.1:6432" cpu_cgroup=/sys/fs/cgroup/cpu/b
`
	ts, err := ParseTargets(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Version != "PostgreSQL 15.18" || ts[1].Start != "exec bin/sqlfwd --listen 127.0.0.1:6432" || !ts[1].Owned() || ts[0].Owned() {
		t.Errorf("targets = %+v %+v", *ts[0], *ts[1])
	}
	// sslmode reaches the connection string of that target only
	ts, err = ParseTargets(strings.NewReader("direct 127.0.0.1:5432\nsqlfwd 127.0.0.1:6432 sslmode=verify-full sslrootcert=/tmp/ca.pem\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := &Experiment{DB: DBConfig{User: "u", Database: "d"}}
	if got := e.db(ts[0]).connString(ts[0].Addr); got != "postgres://u@127.0.0.1:5432/d?sslmode=disable" {
		t.Errorf("direct: %s", got)
	}
	if got := e.db(ts[1]).connString(ts[1].Addr); got != "postgres://u@127.0.0.1:6432/d?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem" {
		t.Errorf("sqlfwd with sslmode: %s", got)
	}
	bad := map[string]string{
		"no direct":   "sqlfwd 127.0.0.1:1\n",
		"bad address": "direct nowhere\n",
		"unknown key": "direct 127.0.0.1:1 colour=red\n",
		"duplicate":   "direct 127.0.0.1:1\ndirect 127.0.0.1:2\n",
		"bad sslmode": "direct 127.0.0.1:1 sslmode=always\n",
	}
	for name, in := range bad {
		if _, err := ParseTargets(strings.NewReader(in)); err == nil {
			t.Errorf("%s: %q parsed without error", name, in)
		}
	}
}

func TestGate(t *testing.T) {
	mk := func(direct, proxy float64) *Results {
		lat := func(v float64) map[string]float64 { return map[string]float64{"p50": v} }
		return &Results{Profile: Profile{Reps: 1, Calibration: "a@direct"}, Cells: []Cell{
			{Workload: "a", Target: "direct", Requests: 100, Latency: lat(direct)},
			{Workload: "a", Target: "sqlfwd", Requests: 100, Latency: lat(proxy)},
		}}
	}
	base, err := NewBaseline([]*Results{mk(100, 120), mk(100, 150)}, 2.5)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		direct, proxy float64
		pass          bool
	}{
		{"same", 100, 150, true},
		{"slower machine, same ratio", 300, 450, true},
		{"noise 2x", 100, 300, true},
		{"regression 3x", 100, 450, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, pass := Gate(mk(tt.direct, tt.proxy), base)
			if pass != tt.pass {
				t.Errorf("direct %v proxy %v: pass %v, want %v (%+v)", tt.direct, tt.proxy, pass, tt.pass, rows)
			}
		})
	}
	if base.Ratios["a@sqlfwd"] != 1.5 || base.MinRatios["a@sqlfwd"] != 1.2 || base.Runs != 2 {
		t.Errorf("baseline keeps %v (min %v) of 2 runs, want the highest 1.5 (min 1.2)", base.Ratios, base.MinRatios)
	}
	var out bytes.Buffer
	rows, pass := Gate(mk(100, 450), base)
	WriteGate(&out, mk(100, 450), base, rows, pass)
	if !strings.Contains(out.String(), "FAIL") {
		t.Errorf("gate output lacks FAIL:\n%s", out.String())
	}
}

func TestReportAndCharts(t *testing.T) {
	lat := func(v float64) map[string]float64 {
		return map[string]float64{"p50": v, "p90": v, "p99": 2 * v, "p99.9": 3 * v}
	}
	cpu := 0.1
	r := &Results{Version: ResultsVersion, Profile: Profile{Name: "t", Reps: 2},
		Targets:   []TargetInfo{{Name: "direct"}, {Name: "sqlfwd"}},
		Workloads: []WorkloadInfo{{Name: "w", Doc: "a workload", Statements: 1}}}
	for ri, rate := range []float64{100, 200} {
		for rep := range 2 {
			r.Cells = append(r.Cells,
				Cell{Workload: "w", Target: "direct", RateIndex: ri, Rate: rate, Rep: rep, Achieved: rate, Valid: true, Latency: lat(100)},
				Cell{Workload: "w", Target: "sqlfwd", RateIndex: ri, Rate: rate, Fraction: 0.1 * float64(ri+1), Rep: rep, Achieved: rate, Valid: true, Latency: lat(100 + float64(rep*4-2)), TargetCPU: &cpu})
		}
	}
	charts := Charts(r)
	if len(charts) != 2 || !strings.HasPrefix(charts[0].SVG, "<svg") {
		t.Fatalf("charts: got %d", len(charts))
	}
	var out bytes.Buffer
	if err := Report(&out, r, charts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "not distinguishable from direct") {
		t.Errorf("report lacks the zero-interval wording:\n%s", out.String())
	}
}

type seqOp struct {
	mu   *sync.Mutex
	seen map[int64]int
}

func (o seqOp) Do(_ context.Context, seq int64) error {
	o.mu.Lock()
	o.seen[seq]++
	o.mu.Unlock()
	return nil
}
func (seqOp) Close() error { return nil }

func TestRequestNumbersNeverRepeat(t *testing.T) {
	// Workloads build literal values from the request number; a repeated
	// number between cells would let sqlfwd answer from its verdict cache.
	var mu sync.Mutex
	seen := map[int64]int{}
	open := func(context.Context) (Op, error) { return seqOp{&mu, seen}, nil }
	for range 2 {
		if _, err := Run(context.Background(), open, RunSpec{Rate: 200, Duration: 100 * time.Millisecond, Conns: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := ClosedLoop(context.Background(), open, 2, 0, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for seq, n := range seen {
		if n > 1 {
			t.Fatalf("request number %d sent %d times", seq, n)
		}
	}
	if len(seen) < 40 {
		t.Errorf("only %d requests recorded", len(seen))
	}
}

func TestHistEncodingRoundTrip(t *testing.T) {
	h := newHist()
	for _, v := range []int64{1500, 52_000, 52_010, 3_000_000, 60_000_000_000} {
		h.RecordValue(v)
	}
	got, err := DecodeHist(EncodeHist(h))
	if err != nil {
		t.Fatal(err)
	}
	if got.TotalCount() != 5 || got.ValueAtPercentile(50) != h.ValueAtPercentile(50) || got.Max() != h.Max() {
		t.Errorf("round trip: count %d p50 %d max %d, want 5 %d %d", got.TotalCount(), got.ValueAtPercentile(50), got.Max(), h.ValueAtPercentile(50), h.Max())
	}
}

func TestPlanSelectsTargets(t *testing.T) {
	ts, err := ParseTargets(strings.NewReader("sqlfwd 127.0.0.1:2\ndirect 127.0.0.1:1\nhaproxy 127.0.0.1:3\npgbouncer 127.0.0.1:4\n"))
	if err != nil {
		t.Fatal(err)
	}
	names := func(ts []*Target) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Name)
		}
		return strings.Join(s, ",")
	}
	if got := names(WorkloadPlan{}.Select(ts)); got != "sqlfwd,direct,haproxy,pgbouncer" {
		t.Errorf("no target list: %s, want every target", got)
	}
	// direct always runs; a name the file lacks is ignored; file order kept.
	wp := WorkloadPlan{Targets: []string{"haproxy", "sqlfwd", "sqlfwd-x2"}}
	if got := names(wp.Select(ts)); got != "sqlfwd,direct,haproxy" {
		t.Errorf("select: %s, want sqlfwd,direct,haproxy", got)
	}
	// The progress line counts only the cells a workload runs.
	p := Profile{Reps: 3, Workloads: []WorkloadPlan{
		{Workload: "a", Rates: []float64{1, 2}},
		{Workload: "b", Fractions: []float64{0.5}, Targets: []string{"sqlfwd"}},
	}}
	if got, want := newProgress(nil, p, ts).total, 2*3*4+1*3*2; got != want {
		t.Errorf("progress total %d, want %d", got, want)
	}
	full := Profiles()["full"]
	if err := full.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(full.Workloads[0].Targets) != 0 || len(full.Workloads[0].Fractions) != len(DefaultFractions) {
		t.Errorf("full profile: the headline workload must run on every target at every fraction: %+v", full.Workloads[0])
	}
}
