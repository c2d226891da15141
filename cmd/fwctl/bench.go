package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/sqlfw/sqlfw/bench"
)

const benchUsage = `usage: fwctl bench COMMAND [flags]

commands:
  run       run a profile against targets and write results.json, report.md and charts
  report    rewrite report.md and the charts from a results directory or results.json
  gate      compare a ci-profile run with a committed baseline (exit 1 on a regression)
  baseline  write a gate baseline from a ci-profile run
  list      list the profiles and workloads

fwctl bench run --targets FILE [--profile quick|full|ci] [--out DIR] [--s-target sqlfwd]
fwctl bench report DIR|results.json
fwctl bench gate --baseline FILE DIR|results.json
fwctl bench baseline --out FILE DIR|results.json ...   (highest ratio of each entry over the runs)

A targets file has one target a line: name addr [key=value ...]; the target
named "direct" is the baseline. See bench/README.md.
`

func benchCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, benchUsage)
		return 2
	}
	switch args[0] {
	case "run":
		return benchRun(args[1:], stdout, stderr)
	case "report":
		return benchReport(args[1:], stdout, stderr)
	case "gate":
		return benchGate(args[1:], stdout, stderr)
	case "baseline":
		return benchBaseline(args[1:], stdout, stderr)
	case "list":
		return benchList(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, benchUsage)
		return 0
	}
	fmt.Fprintf(stderr, "fwctl bench: unknown command %q\n", args[0])
	fmt.Fprint(stderr, benchUsage)
	return 2
}

func benchRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl bench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	targets := fs.String("targets", "", "targets `file` (one target a line)")
	profile := fs.String("profile", "quick", "quick, full, ci, mysql-quick or mysql-full")
	out := fs.String("out", "", "results `dir` (default bench/results/<date>-<profile>)")
	sTarget := fs.String("s-target", "sqlfwd", "target whose closed-loop maximum is S")
	user := fs.String("user", "", "database user (default postgres, or root for MySQL)")
	database := fs.String("database", "", "database name (default postgres, or sqlfw for MySQL)")
	workloads := fs.String("workloads", "", "comma-separated workloads to keep from the profile (default all)")
	reps := fs.Int("reps", 0, "repetitions (default: the profile's)")
	measure := fs.Duration("measure", 0, "measured time per cell (default: the profile's)")
	warmup := fs.Duration("warmup", -1, "warm-up per cell (default: the profile's)")
	conns := fs.Int("conns", 0, "connections per cell (default: the profile's)")
	poisson := fs.Bool("poisson", false, "Poisson arrivals instead of a constant rate")
	seed := fs.Uint64("seed", 0, "seed of the Latin square and Poisson schedules (default: the profile's)")
	noSelfCheck := fs.Bool("no-self-check", false, "skip the generator self-check")
	quiet := fs.Bool("quiet", false, "no progress line")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *targets == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "fwctl bench run: --targets is required and takes no arguments")
		return 2
	}
	p, ok := bench.Profiles()[*profile]
	if !ok {
		fmt.Fprintf(stderr, "fwctl bench run: unknown profile %q\n", *profile)
		return 2
	}
	if *workloads != "" {
		keep := map[string]bool{}
		for _, w := range strings.Split(*workloads, ",") {
			keep[strings.TrimSpace(w)] = true
		}
		var plans []bench.WorkloadPlan
		for _, wp := range p.Workloads {
			if keep[wp.Workload] {
				plans = append(plans, wp)
				delete(keep, wp.Workload)
			}
		}
		for w := range keep {
			if _, ok := bench.LookupWorkload(w); !ok {
				fmt.Fprintf(stderr, "fwctl bench run: unknown workload %q\n", w)
				return 2
			}
			plans = append(plans, bench.WorkloadPlan{Workload: w, Fractions: bench.DefaultFractions})
		}
		p.Workloads = plans
	}
	if *reps > 0 {
		p.Reps = *reps
	}
	if *measure > 0 {
		p.Measure = *measure
	}
	if *warmup >= 0 {
		p.Warmup = *warmup
	}
	if *conns > 0 {
		p.Conns = *conns
	}
	if *seed > 0 {
		p.Seed = *seed
	}
	p.Poisson = p.Poisson || *poisson
	if *noSelfCheck {
		p.SelfCheck = 0
	}
	f, err := os.Open(*targets)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl bench run: %v\n", err)
		return 2
	}
	ts, err := bench.ParseTargets(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "fwctl bench run: %v\n", err)
		return 2
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("bench", "results", time.Now().UTC().Format("2006-01-02")+"-"+p.Name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "fwctl bench run: %v\n", err)
		return 2
	}
	logPath := filepath.Join(dir, "targets.log")
	logf, err := os.Create(logPath)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl bench run: %v\n", err)
		return 2
	}
	// sqlfwd logs every blocked statement: the blocked-delete workload
	// alone would write megabytes into a directory meant to be committed.
	defer func() {
		logf.Close()
		capFile(logPath, 64<<10)
	}()
	hasS := false
	for _, t := range ts {
		hasS = hasS || t.Name == *sTarget
	}
	if !hasS {
		fmt.Fprintf(stderr, "fwctl bench run: no target %q to measure S on; S is measured on direct\n", *sTarget)
		*sTarget = bench.Baseline
	}
	// The password comes from the environment, never from a flag that
	// shows in ps.
	password := os.Getenv("PGPASSWORD")
	defUser, defDB := "postgres", "postgres"
	if len(p.Workloads) > 0 {
		if w, _ := bench.LookupWorkload(p.Workloads[0].Workload); w.Protocol == bench.MySQL {
			password = os.Getenv("MYSQL_PWD")
			defUser, defDB = "root", "sqlfw"
		}
	}
	if *user == "" {
		*user = defUser
	}
	if *database == "" {
		*database = defDB
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &bench.Experiment{Profile: p, Targets: ts, STarget: *sTarget, Proc: "/proc", Log: logf,
		DB: bench.DBConfig{User: *user, Database: *database, Password: password}}
	if !*quiet {
		e.Progress = stderr
	}
	res, err := e.Run(ctx)
	if res != nil && len(res.Cells) > 0 {
		if err != nil {
			res.Notes = append(res.Notes, "run interrupted: "+err.Error())
			res.Analysis = bench.Analyse(res)
		}
		if werr := bench.WriteDir(dir, res); werr != nil {
			fmt.Fprintf(stderr, "fwctl bench run: writing results: %v\n", werr)
			return 1
		}
		fmt.Fprintf(stdout, "results in %s (results.json, report.md)\n", dir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fwctl bench run: %v\n", err)
		return 1
	}
	if res.SelfCheck != nil && !res.SelfCheck.Pass {
		fmt.Fprintf(stderr, "fwctl bench run: generator self-check FAILED: %.2f%% of requests saw the pause, expected %.2f%%\n",
			100*res.SelfCheck.Observed, 100*res.SelfCheck.Expected)
		return 1
	}
	return 0
}

// resultsPath accepts a results directory or the file itself.
func resultsPath(arg string) (file, dir string) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return filepath.Join(arg, "results.json"), arg
	}
	return arg, filepath.Dir(arg)
}

func benchReport(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: fwctl bench report DIR|results.json")
		return 2
	}
	file, dir := resultsPath(args[0])
	res, err := bench.ReadResults(file)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl bench report: %v\n", err)
		return 1
	}
	res.Analysis = bench.Analyse(res)
	if err := bench.WriteReport(dir, res); err != nil {
		fmt.Fprintf(stderr, "fwctl bench report: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, "report.md"))
	return 0
}

func benchGate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl bench gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	baseline := fs.String("baseline", "bench/baseline-ci.json", "committed baseline `file`")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: fwctl bench gate --baseline FILE DIR|results.json")
		return 2
	}
	file, _ := resultsPath(fs.Arg(0))
	res, err := bench.ReadResults(file)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl bench gate: %v\n", err)
		return 2
	}
	base, err := bench.ReadBaseline(*baseline)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl bench gate: %v\n", err)
		return 2
	}
	rows, pass := bench.Gate(res, base)
	bench.WriteGate(stdout, res, base, rows, pass)
	if !pass {
		return 1
	}
	return 0
}

func benchBaseline(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl bench baseline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "bench/baseline-ci.json", "baseline `file` to write")
	threshold := fs.Float64("threshold", 0, "failing ratio (default: the profile's, 2.5)")
	if err := fs.Parse(args); err != nil || fs.NArg() < 1 {
		fmt.Fprintln(stderr, "usage: fwctl bench baseline --out FILE DIR|results.json ...")
		return 2
	}
	var runs []*bench.Results
	for _, arg := range fs.Args() {
		file, _ := resultsPath(arg)
		res, err := bench.ReadResults(file)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl bench baseline: %v\n", err)
			return 1
		}
		runs = append(runs, res)
	}
	th := *threshold
	if th == 0 {
		th = runs[0].Profile.GateMinRatio
	}
	if th == 0 {
		th = 2.5
	}
	b, err := bench.NewBaseline(runs, th)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl bench baseline: %v\n", err)
		return 1
	}
	raw, _ := json.MarshalIndent(b, "", " ")
	if err := os.WriteFile(*out, append(raw, '\n'), 0o644); err != nil {
		fmt.Fprintf(stderr, "fwctl bench baseline: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (%d ratios from %d runs, calibration %s)\n", *out, len(b.Ratios), b.Runs, b.Calibration)
	return 0
}

func benchList(stdout io.Writer) int {
	ps := bench.Profiles()
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(stdout, "profiles:")
	for _, n := range names {
		p := ps[n]
		var ws []string
		for _, w := range p.Workloads {
			if len(w.Targets) > 0 {
				ws = append(ws, fmt.Sprintf("%s (direct, %s)", w.Workload, strings.Join(w.Targets, ", ")))
				continue
			}
			ws = append(ws, w.Workload)
		}
		fmt.Fprintf(stdout, "  %-6s %d reps, %v + %v per cell: %s\n", n, p.Reps, p.Warmup, p.Measure, strings.Join(ws, ", "))
	}
	fmt.Fprintln(stdout, "workloads:")
	for _, w := range bench.Workloads() {
		fmt.Fprintf(stdout, "  %-21s %s\n", w.Name, w.Doc)
	}
	return 0
}

// capFile cuts a log down to its first limit bytes, saying how much went.
// Targets write straight into the file during the run (no copying
// goroutine in the generator's process); the cut comes afterwards.
func capFile(path string, limit int64) error {
	st, err := os.Stat(path)
	if err != nil || st.Size() <= limit {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(limit); err != nil {
		return err
	}
	_, err = fmt.Fprintf(io.NewOffsetWriter(f, limit), "\n[fwctl bench: %d more bytes of target output dropped]\n", st.Size()-limit)
	return err
}
