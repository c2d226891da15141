package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/cgroupstats"
)

// statsJSON is the part of fwctl stats --json these tests read: the
// control socket's contract, decoded independently of the daemon's types.
type statsJSON struct {
	Window *struct {
		Start   time.Time `json:"start"`
		Seconds float64   `json:"seconds"`
		CPU     struct {
			Used              *float64 `json:"used_vcpus"`
			UsageSource       string   `json:"usage_source"`
			Quota             *float64 `json:"quota_vcpus"`
			QuotaUnlimited    bool     `json:"quota_unlimited"`
			Periods           *uint64  `json:"periods"`
			ThrottledPeriods  *uint64  `json:"throttled_periods"`
			ThrottledFraction *float64 `json:"throttled_fraction"`
		} `json:"cpu"`
		Total struct {
			Statements uint64 `json:"statements"`
			Held       struct {
				Count int64 `json:"count"`
			} `json:"held"`
			Tail struct {
				Statements   uint64   `json:"statements"`
				Samples      uint64   `json:"samples"`
				MeanHeldUs   float64  `json:"mean_held_us"`
				Evaluation   *float64 `json:"evaluation"`
				QuotaWait    *float64 `json:"quota_wait"`
				RunQueueWait *float64 `json:"run_queue_wait"`
				Relay        *float64 `json:"relay"`
				Dominant     string   `json:"dominant"`
			} `json:"tail"`
		} `json:"total"`
		Advice string `json:"advice"`
	} `json:"window"`
}

// requireCPUCgroup skips unless the test runs as root with the cgroup v1 cpu
// controller (CFS bandwidth) mounted, and returns the cpu and cpuacct
// hierarchies' directories of this process (cpuacct may be "" or the same).
func requireCPUCgroup(t *testing.T) (cpu, cpuacct string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: putting sqlfwd in a cgroup needs root")
	}
	l := cgroupstats.New("/proc", "/").Layout()
	if l.Version != cgroupstats.V1 && l.Version != cgroupstats.Hybrid || l.CPU == "" {
		t.Skipf("skipping: no cgroup v1 cpu controller mounted here (layout %+v)", l)
	}
	if _, err := os.Stat(filepath.Join(l.CPU, "cpu.cfs_quota_us")); err != nil {
		t.Skipf("skipping: kernel without CFS bandwidth control: %v", err)
	}
	return l.CPU, l.CPUAcct
}

// childCgroup makes a child of parent, removed at the end of the test
// (after the daemon in it has stopped: cleanups run last-registered first).
func statsCgroup(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, fmt.Sprintf("sqlfw-e2e-%s-%d", name, os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("creating cgroup %s: %v", dir, err)
	}
	t.Cleanup(func() {
		var err error
		for range 100 {
			if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Errorf("removing cgroup %s: %v", dir, err)
	})
	return dir
}

// TestStatsThrottling runs the same pgbench load through a sqlfwd in a cgroup
// v1 cpu child, once with a quota of 0.1 vCPU and once without, and checks
// what fwctl stats --json says: throttled periods and a held-time tail
// attributed mostly to quota wait with the quota, no throttling without.
// It asserts on counters and attribution shares, never on timings.
func TestStatsThrottling(t *testing.T) {
	needSqlfwd(t)
	needBinary(t)
	cpuRoot, acctRoot := requireCPUCgroup(t)
	fwctl := filepath.Join(binDir, "fwctl")

	conn := []string{"-h", pg.Host, "-p", fmt.Sprint(pg.Port), "-U", pg.User}
	init := append(append([]string{"-i", "-s", "1", "-q"}, conn...), pg.Database)
	if res := runTool(t, 3*time.Minute, "", nil, "pgbench", init...); res.Exit != 0 {
		t.Fatalf("input pgbench %s (directly on PostgreSQL)\ngot %s\nwant exit 0", strings.Join(init, " "), res)
	}
	t.Cleanup(func() {
		directExec(t, "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
	})

	tests := []struct {
		name      string
		quotaUs   string // cpu.cfs_quota_us with a 100 ms period
		throttled bool
		// cpuOnly: sqlfwd joins a cpu child but stays in the root
		// cpuacct group (where the two are mounted apart): the usage must
		// then come from the process, not from the root's cpuacct.usage.
		cpuOnly bool
	}{
		{"quota 0.1 vCPU", "10000", true, false},
		{"no quota", "-1", false, false},
		{"quota 0.1 vCPU, cpu child only", "10000", true, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cpu := statsCgroup(t, cpuRoot, fmt.Sprintf("cpu%d", i))
			writeCgroupValue(t, filepath.Join(cpu, "cpu.cfs_period_us"), "100000")
			writeCgroupValue(t, filepath.Join(cpu, "cpu.cfs_quota_us"), tt.quotaUs)
			enter := fmt.Sprintf("echo $$ > %s/cgroup.procs", cpu)
			separate := acctRoot != "" && acctRoot != cpuRoot
			if tt.cpuOnly && !separate {
				t.Skip("cpu and cpuacct are co-mounted here: a cpu child is a cpuacct child too")
			}
			if separate && !tt.cpuOnly {
				// cpuacct is its own hierarchy here: without a child of
				// its own, the usage read would be the whole root's.
				acct := statsCgroup(t, acctRoot, fmt.Sprintf("acct%d", i))
				enter += fmt.Sprintf(" && echo $$ > %s/cgroup.procs", acct)
			}
			d, err := startDaemonWrapped([]string{"sh", "-c", enter + ` && exec "$0" "$@"`}, "--stats-window", "2s")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("sqlfwd log (last lines):\n%s", tail(d.log(), 30))
				}
				if err := d.stop(); err != nil {
					t.Errorf("stopping sqlfwd: %v", err)
				}
			})

			host, port, _ := net.SplitHostPort(d.addr)
			args := []string{"-S", "-n", "-c", "4", "-j", "2", "-T", "10", "-h", host, "-p", port, "-U", pg.User, pg.Database}
			done := make(chan psqlResult, 1)
			pgbench := tool(t, "pgbench")
			go func() {
				res, err := execCmd(3*time.Minute, "", nil, pgbench, args...)
				if err != nil {
					res.Exit, res.Stderr = -1, res.Stderr+err.Error()
				}
				done <- res
			}()

			// Poll the latest window while the load runs and keep the one
			// with the most statements: a window fully inside the load.
			var best statsJSON
			// every window published during the load, by start time: the
			// attribution is judged over all their tail samples, since one
			// window holds only about ten
			windows := map[time.Time]statsJSON{}
			var bench psqlResult
		poll:
			for {
				select {
				case bench = <-done:
					break poll
				case <-time.After(500 * time.Millisecond):
				}
				res := runToolPath(t, fwctl, "stats", "--json", "--control-socket", d.control)
				var st statsJSON
				if res.Exit != 0 || json.Unmarshal([]byte(res.Stdout), &st) != nil {
					t.Fatalf("input fwctl stats --json\ngot %s\nwant exit 0 and JSON", res)
				}
				if st.Window != nil && (best.Window == nil || st.Window.Total.Held.Count > best.Window.Total.Held.Count) {
					best = st
				}
				if st.Window != nil && st.Window.Total.Held.Count > 0 {
					windows[st.Window.Start] = st
				}
			}
			if bench.Exit != 0 {
				t.Fatalf("input pgbench %s through sqlfwd\ngot %s\nwant exit 0", strings.Join(args, " "), bench)
			}
			text := runToolPath(t, fwctl, "stats", "--control-socket", d.control)
			t.Logf("fwctl stats after pgbench %s:\n%s", strings.Join(args, " "), text.Stdout)
			if !regexp.MustCompile(`held-time tail`).MatchString(text.Stdout) {
				t.Errorf("input fwctl stats\ngot %s\nwant the held-time tail line", text)
			}

			w := best.Window
			if w == nil || w.Total.Held.Count == 0 {
				t.Fatalf("no stats window with statements was published during the load")
			}
			js, _ := json.MarshalIndent(w, "", "  ")
			t.Logf("busiest window:\n%s", js)
			if tt.cpuOnly {
				// The root's usage during the load is the whole machine's
				// (pgbench, PostgreSQL): well above the 0.1 vCPU quota.
				if w.CPU.UsageSource != "process" || w.CPU.Used == nil || *w.CPU.Used > 0.15 {
					t.Errorf("cpu child only: usage from %q, %v vCPU; want the process's own, within the 0.1 vCPU quota\n%s", w.CPU.UsageSource, w.CPU.Used, js)
				}
				if !strings.Contains(text.Stdout, "sqlfwd's own process") {
					t.Errorf("fwctl stats does not say the usage is the process's own:\n%s", text.Stdout)
				}
			}
			thr := w.CPU.ThrottledPeriods
			if thr == nil {
				t.Fatalf("throttled periods unknown: %s", js)
			}
			tail := w.Total.Tail
			if tt.throttled {
				if *thr == 0 {
					t.Errorf("quota 0.1 vCPU: got 0 throttled periods, want > 0\n%s", js)
				}
				// The windows' sampled tail statements pooled: of their
				// held time, how much was quota wait. Pooled by held time,
				// not by sample count: a window whose sampled tail missed
				// the few throttled holds (one batch in 16 is sampled) has
				// many short samples and must not outweigh the others.
				var heldUs, quotaUs, runqUs, samples float64
				advised := false
				for _, st := range windows {
					tl := st.Window.Total.Tail
					if tl.QuotaWait == nil || tl.RunQueueWait == nil || tl.Samples == 0 {
						continue
					}
					h := float64(tl.Samples) * tl.MeanHeldUs
					samples += float64(tl.Samples)
					heldUs += h
					quotaUs += h * *tl.QuotaWait
					runqUs += h * *tl.RunQueueWait
					advised = advised || strings.Contains(st.Window.Advice, "CPU-quota wait")
				}
				t.Logf("quota 0.1 vCPU: over %d windows and %.0f tail samples, quota wait %.0f%%, run-queue wait %.0f%% of their held time",
					len(windows), samples, 100*quotaUs/max(heldUs, 1), 100*runqUs/max(heldUs, 1))
				if heldUs == 0 || quotaUs/heldUs <= 0.5 || quotaUs <= runqUs {
					t.Errorf("quota 0.1 vCPU: over %d windows and %.0f tail samples, quota wait %.0f%%, run-queue wait %.0f%% of their held time; want quota wait > 50%% and dominant\n%s",
						len(windows), samples, 100*quotaUs/max(heldUs, 1), 100*runqUs/max(heldUs, 1), js)
				}
				if !advised {
					t.Errorf("quota 0.1 vCPU: no window's advice names CPU-quota wait (busiest: %q)", w.Advice)
				}
				return
			}
			if *thr != 0 {
				t.Errorf("no quota: got %d throttled periods, want 0\n%s", *thr, js)
			}
			if !w.CPU.QuotaUnlimited {
				t.Errorf("no quota: quota_unlimited false\n%s", js)
			}
			if tail.QuotaWait != nil && *tail.QuotaWait != 0 {
				t.Errorf("no quota: got quota wait share %v, want 0\n%s", *tail.QuotaWait, js)
			}
			if strings.Contains(w.Advice, "quota") {
				t.Errorf("no quota: got advice %q, want none about the quota", w.Advice)
			}
		})
	}
}

// TestStatsStatusConnections checks fwctl status and fwctl connections
// against the shared daemon with one open pgx connection.
func TestStatsStatusConnections(t *testing.T) {
	needSqlfwd(t)
	d := sharedDaemon(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, "application_name=e2e-stats"))
	if _, err := c.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	fwctl := filepath.Join(binDir, "fwctl")
	res := runToolPath(t, fwctl, "status", "--control-socket", d.control)
	if res.Exit != 0 || !strings.Contains(res.Stdout, "enforce") || !strings.Contains(res.Stdout, "connections:") {
		t.Errorf("input fwctl status\ngot %s\nwant exit 0, the mode and the connection count", res)
	}
	res = runToolPath(t, fwctl, "connections", "--json", "--control-socket", d.control)
	var conns []struct {
		User       string `json:"user"`
		Client     string `json:"client"`
		Statements uint64 `json:"statements"`
		Allowed    uint64 `json:"allowed"`
	}
	if res.Exit != 0 || json.Unmarshal([]byte(res.Stdout), &conns) != nil {
		t.Fatalf("input fwctl connections --json\ngot %s\nwant exit 0 and JSON", res)
	}
	found := false
	for _, cn := range conns {
		if cn.User == pg.User && cn.Statements >= 1 && cn.Allowed >= 1 && strings.HasPrefix(cn.Client, "127.0.0.1:") {
			found = true
		}
	}
	if !found {
		t.Errorf("input fwctl connections --json\ngot %s\nwant a connection of user %s from 127.0.0.1 with at least one allowed statement", res.Stdout, pg.User)
	}
}

func writeCgroupValue(t *testing.T, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value), 0); err != nil {
		t.Fatalf("writing %s to %s: %v", value, path, err)
	}
}

// TestStatsPGPreparedExecutions: pgbench -M prepared through sqlfwd (one
// Parse per connection, then Bind/Execute/Sync per statement) counts each
// Bind of the earlier-prepared statement as a prepared execution, in the
// statements and the allowed verdicts, not as a judged message, as MySQL's
// COM_STMT_EXECUTE is (docs/stats.md "Prepared executions"); pgbench -M
// extended (Parse, Bind, Execute in one batch) counts each statement once,
// as the judged Parse. Both are checked against the executions the
// server's own statement log shows.
func TestStatsPGPreparedExecutions(t *testing.T) {
	needSqlfwd(t)
	needBinary(t)
	d, err := startDaemon()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.stop() })
	host, port, _ := net.SplitHostPort(d.addr)
	const clients, perClient = 2, 40
	const n = clients * perClient
	for _, mode := range []string{"prepared", "extended"} {
		marker := "sqlfw_e2e_prepexec_" + randomHex(t)
		script := filepath.Join(t.TempDir(), "bench.sql")
		if err := os.WriteFile(script, []byte("\\set x random(1, 1000)\nSELECT :x + 1 AS "+marker+";\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := stats(t, d).Databases[0]
		args := []string{"-n", "-M", mode, "-c", fmt.Sprint(clients), "-j", "1", "-t", fmt.Sprint(perClient),
			"-f", script, "-h", host, "-p", port, "-U", pg.User, pg.Database}
		if res := runTool(t, 2*time.Minute, "", nil, "pgbench", args...); res.Exit != 0 {
			t.Fatalf("input pgbench %s through sqlfwd\ngot %s\nwant exit 0", strings.Join(args, " "), res)
		}
		after := stats(t, d).Databases[0]
		// the server's word: each statement run is one "execute" line
		logged := 0
		for _, l := range strings.Split(serverLog(t), "\n") {
			if strings.Contains(l, "execute ") && strings.Contains(l, marker) {
				logged++
			}
		}
		if logged != n {
			t.Errorf("-M %s: the server logged %d executions of the script's statement, want %d", mode, logged, n)
		}
		execs := after.Executions - before.Executions
		judged := after.Messages - before.Messages
		stmts := after.Statements - before.Statements
		allowed := after.Allowed - before.Allowed
		t.Logf("-M %s: %d statements run; counted executions %d, judged messages %d, statements %d, allowed %d", mode, n, execs, judged, stmts, allowed)
		switch mode {
		case "prepared":
			if execs != n {
				t.Errorf("-M prepared: executions counted %d, want %d (one per Bind of the prepared statement)", execs, n)
			}
			if judged > clients {
				t.Errorf("-M prepared: %d judged messages, want at most %d (a Parse per connection)", judged, clients)
			}
		case "extended":
			if execs != 0 {
				t.Errorf("-M extended: executions counted %d, want 0 (each Bind runs the Parse of its own batch)", execs)
			}
			if judged != n {
				t.Errorf("-M extended: %d judged messages, want %d (one Parse per statement)", judged, n)
			}
		}
		if stmts != execs+judged || allowed != stmts {
			t.Errorf("-M %s: statements %d and allowed %d, want both %d (executions + judged messages)", mode, stmts, allowed, execs+judged)
		}
	}
}
