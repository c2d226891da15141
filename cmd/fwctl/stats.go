package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sqlfw/sqlfw/cgroupstats"
	"github.com/sqlfw/sqlfw/control"
)

func stats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", controlSocket(), "sqlfwd's control socket `path`")
	asJSON := fs.Bool("json", cur.json, "print the raw JSON")
	watch := fs.Bool("watch", false, "print again every stats window until interrupted")
	count := fs.Int("watch-count", 0, "with --watch: stop after `N` prints (0: until Ctrl-C)")
	interval := fs.Duration("interval", 0, "with --watch: refresh period (default the daemon's stats window)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *count > 0 {
		*watch = true
	}
	var stop chan os.Signal
	if *watch {
		stop = make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt)
		defer signal.Stop(stop)
	}
	for n := 1; ; n++ {
		body, err := controlCall(*sock, http.MethodGet, "/v1/stats", nil)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: stats: %v\n", err)
			return 2
		}
		var st control.Stats
		if err := json.Unmarshal(body, &st); err != nil {
			fmt.Fprintf(stderr, "fwctl: stats: %v\n", err)
			return 2
		}
		if *asJSON {
			stdout.Write(body)
		} else {
			if n > 1 {
				fmt.Fprintln(stdout)
			}
			printStats(stdout, &st)
		}
		if !*watch || (*count > 0 && n >= *count) {
			return 0
		}
		wait := *interval
		if wait <= 0 {
			wait = control.DefaultStatsWindow
			if st.Window != nil && st.Window.Seconds > 0 {
				wait = time.Duration(st.Window.Seconds * float64(time.Second))
			}
		}
		select {
		case <-stop:
			return 0
		case <-time.After(wait):
		}
	}
}

func printStats(w io.Writer, st *control.Stats) {
	fmt.Fprintf(w, "sqlfwd %s, up %s\n", st.Version, st.Uptime)
	ic := st.Interception
	switch {
	case ic.Active:
		fmt.Fprintf(w, "interception: %v; %d redirected (%d from pods), %d steered, %d unix, %d refused (no origin), %d own skipped (%d unix), %d loops to itself refused, %d other netns skipped, %d map full, %d on sockmap (%d fell back to TCP)\n",
			ic.Programs, ic.Redirected, ic.PodRedirected, ic.Steered, ic.UnixRedirected, ic.Refused, ic.SkippedOwn, ic.UnixSkippedOwn, ic.OwnLoops, ic.SkippedNetns, ic.MapFull, ic.SockmapAdded, ic.SockmapFallback)
	case ic.Fallback != "":
		fmt.Fprintf(w, "interception: off, fell back to the explicit listener: %s\n", ic.Fallback)
	default:
		fmt.Fprintln(w, "interception: off (explicit listener)")
	}
	printWindow(w, st)
	for _, db := range st.Databases {
		listen := db.Listen
		if listen == "" {
			listen = "(intercepted)"
		}
		fmt.Fprintf(w, "\n%s (%s) %s -> %s, mode %s\n", db.Name, db.Protocol, listen, db.Upstream, db.Mode)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  connections\t%d active\t%d total\t%d refused\t%d cancel requests\n",
			db.ConnectionsActive, db.ConnectionsTotal, db.ConnectionsRefused, db.CancelRequests)
		fmt.Fprintf(tw, "  judged\t%d messages\t%d statements\t%d prepared executions\t\n", db.Messages, db.Statements, db.Executions)
		fmt.Fprintf(tw, "  verdicts\t%d allowed\t%d denied\t%d logged\t%d would deny (monitor/detect)\n",
			db.Allowed, db.Denied, db.Logged, db.WouldDeny)
		fmt.Fprintf(tw, "  errors\t%d parse\t%d protocol\t\t\n", db.ParseErrors, db.ProtocolErrors)
		fmt.Fprintf(tw, "  evaluation\t%s mean per message\t\t\t\n", time.Duration(db.EvalMeanNanos))
		fmt.Fprintf(tw, "  bytes\t%d to server\t%d to client\t\t\n", db.BytesToServer, db.BytesToClient)
		tw.Flush()
	}
}

// printWindow prints the latest stats window: a row per database and the
// total, the CPU and throttling figures, the tail attribution and advice.
func printWindow(w io.Writer, st *control.Stats) {
	win := st.Window
	if win == nil {
		fmt.Fprintln(w, "\nno complete stats window yet")
		return
	}
	fmt.Fprintf(w, "\nwindow: %.1f s from %s (CPU and throttling sampled in 1 of %d batches)\n",
		win.Seconds, win.Start.Local().Format("15:04:05"), win.SampleEvery)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "database\tstmts/s\theld p50\theld p99\teval p50\teval p99\teval CPU p99\trelay p50\trelay p99\t")
	row := func(name string, d *control.DBWindow) {
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, d.StatementsPerSec,
			us(d.Held.P50, d.Held.Count), us(d.Held.P99, d.Held.Count), us(d.EvalWall.P50, d.EvalWall.Count), us(d.EvalWall.P99, d.EvalWall.Count),
			us(d.EvalCPU.P99, d.EvalCPU.Count), us(d.Relay.P50, d.Relay.Count), us(d.Relay.P99, d.Relay.Count))
	}
	for _, db := range st.Databases {
		if db.Window != nil {
			row(db.Name, db.Window)
		}
	}
	row("total", &win.Total)
	tw.Flush()

	c := win.CPU
	var b strings.Builder
	b.WriteString("CPU: used ")
	b.WriteString(opt(c.Used, "%.2f vCPU"))
	if c.UsageSource == cgroupstats.UsageProcess {
		b.WriteString(" (sqlfwd's own process: its cpuacct group is not its cpu group)")
	}
	switch {
	case c.QuotaUnlimited:
		b.WriteString(", no quota")
	case c.Quota != nil:
		fmt.Fprintf(&b, " of a %.2f vCPU quota", *c.Quota)
		if c.QuotaUse != nil {
			fmt.Fprintf(&b, " (%.0f%%)", *c.QuotaUse*100)
		}
	default:
		b.WriteString(", quota unknown")
	}
	fmt.Fprintf(&b, "; periods %s, throttled %s", opt(c.Periods, "%d"), opt(c.ThrottledPeriods, "%d"))
	if c.ThrottledFraction != nil {
		fmt.Fprintf(&b, " (%.0f%%)", *c.ThrottledFraction*100)
	}
	fmt.Fprintf(&b, ", throttled time %s, run-queue wait %s", opt(c.ThrottledSeconds, "%.3f s"), opt(c.RunQueueWaitSeconds, "%.3f s"))
	fmt.Fprintln(w, b.String())

	a := win.Total.Tail
	if a.Statements == 0 {
		fmt.Fprintln(w, "held-time tail: no statements")
	} else {
		fmt.Fprintf(w, "held-time tail (held >= %s, the slowest %.1f%%: %d statements, %d sampled", us(a.FromUs, 1), (1-a.FromQuantile)*100, a.Statements, a.Samples)
		if a.Samples > 0 && a.MeanHeldUs > 0 {
			fmt.Fprintf(w, ", mean %s", us(a.MeanHeldUs, 1))
		}
		fmt.Fprint(w, "): ")
		if a.OffCPU == nil {
			fmt.Fprintln(w, "too few samples to attribute")
		} else {
			fmt.Fprintf(w, "evaluation %s, quota wait %s, run-queue wait %s, relay %s\n",
				pct(a.Evaluation), pct(a.QuotaWait), pct(a.RunQueueWait), pct(a.Relay))
		}
	}
	if win.Advice != "" {
		fmt.Fprintln(w, "advice:", win.Advice)
	}
}

// us formats microseconds; "-" when nothing was recorded.
func us(v float64, n int64) string {
	if n == 0 {
		return "-"
	}
	d := time.Duration(v * 1e3)
	switch {
	case d < time.Microsecond:
		return d.String()
	case d < time.Millisecond:
		return d.Round(100 * time.Nanosecond).String()
	default:
		return d.Round(10 * time.Microsecond).String()
	}
}

func pct(p *float64) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.0f%%", *p*100)
}

func opt[T any](p *T, format string) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprintf(format, *p)
}
