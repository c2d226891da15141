package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sqlfw/sqlfw/control"
)

func statusCmd(args []string, stdout, stderr io.Writer) int {
	var st control.Status
	if done, code := fetchView("status", "/v1/status", args, stdout, stderr, &st); done {
		return code
	}
	up := time.Duration(st.UptimeSeconds * float64(time.Second)).Round(time.Second)
	fmt.Fprintf(stdout, "sqlfwd %s (pid %d), up %s since %s\n", st.Version, st.PID, up, st.StartedAt.Local().Format(time.RFC3339))
	ic := st.Interception
	switch {
	case ic.Active:
		fmt.Fprintf(stdout, "interception: active, programs %v\n", ic.Programs)
		if strings.HasPrefix(ic.UnixOtherNames, "NOT") {
			fmt.Fprintf(stdout, "not protected: unix sockets reached by another name (a symlink or hard link, a relative path) because they are %s\n", ic.UnixOtherNames)
		}
	case ic.Fallback != "":
		fmt.Fprintf(stdout, "interception: off, fell back to the explicit listener: %s\n", ic.Fallback)
	default:
		fmt.Fprintln(stdout, "interception: off (explicit listener)")
	}
	fmt.Fprintf(stdout, "connections: %d open\n", st.Connections)
	fmt.Fprintf(stdout, "stats window: %s", st.StatsWindow)
	if st.MetricsListen != "" {
		fmt.Fprintf(stdout, ", metrics on http://%s/metrics", st.MetricsListen)
	}
	if st.Cgroup != "" {
		fmt.Fprintf(stdout, ", cgroup %s", st.Cgroup)
	}
	fmt.Fprintln(stdout)
	if c := st.Config; c != nil && c.SHA256 == "" {
		state := "none there now"
		if c.OnDiskDiffers {
			state = "a file there now is in force only after a restart of sqlfwd (fwctl reload checks it)"
		}
		fmt.Fprintf(stdout, "configuration: %s: none when sqlfwd started, protecting what discovery finds; %s\n", c.Path, state)
	} else if c != nil {
		state := "the file on disk is the one in force"
		if c.OnDiskDiffers {
			state = "the file on disk differs (fwctl reload applies it, or refuses it if broken)"
		}
		fmt.Fprintf(stdout, "configuration: %s, sha256 %s in force; %s\n", c.Path, c.SHA256, state)
		if len(c.NeedRestart) > 0 {
			fmt.Fprintf(stdout, "  changed, in force only after a restart: %s\n", strings.Join(c.NeedRestart, ", "))
		}
	}
	if dc := st.Discovery; dc != nil {
		ago := "no scan yet"
		if !dc.LastScan.IsZero() {
			ago = fmt.Sprintf("the last took %s, %s ago", time.Duration(dc.LastScanMicros)*time.Microsecond,
				time.Since(dc.LastScan).Round(time.Second))
		}
		fmt.Fprintf(stdout, "discovery: rescans /proc every %s for servers that start or stop (%d scans, %s)\n", dc.Interval, dc.Scans, ago)
		if dc.LastError != "" {
			fmt.Fprintf(stdout, "  last scan failed: %s\n", dc.LastError)
		}
		for _, n := range dc.NotProtected {
			fmt.Fprintf(stdout, "  %s\n", n)
		}
	}
	gone := false
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\ndatabase\tprotocol\tlisten\tupstream\tintercept\tmode\tconnections\tpolicy\tsha256 in force\tstate")
	for _, db := range st.Databases {
		mode := string(db.Mode)
		if db.ModeOverride {
			mode += " (live override)"
		}
		sum := db.PolicySHA256
		if len(sum) > 16 {
			sum = sum[:16] + "…"
		}
		if sum == "" {
			sum = "-"
		}
		if db.PolicyOnDiskDiffers {
			sum += " (file on disk differs)"
		}
		listen := db.Listen
		if listen == "" {
			listen = "-"
		}
		state := "configured"
		if db.Discovered {
			// protected: a server listens and is intercepted; gone: it
			// stopped, new connections are not intercepted, open sessions
			// end on their own
			state = "found, " + db.State
			gone = gone || db.State == "gone"
			if db.Since != nil {
				state += " since " + db.Since.Local().Format(time.TimeOnly)
			}
			state += " (" + db.Server + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", db.Name, db.Protocol, listen, db.Upstream, db.Intercept, mode, db.Connections, db.Policy, sum, state)
	}
	tw.Flush()
	for _, db := range st.Databases {
		for _, c := range db.Catalogs {
			name := c.DBName
			if name == "" {
				name = "(configured)"
			}
			line := fmt.Sprintf("catalog %s %s: %d objects, %d reads, %d failed, last read %dms", db.Name, name, c.Objects, c.Reads, c.Failures, c.LastMicros/1000)
			if c.PerDatabase {
				line += fmt.Sprintf(", %d sessions", c.Sessions)
			}
			if c.LastError != "" {
				line += ", last error: " + c.LastError
			}
			fmt.Fprintln(stdout, line)
		}
	}
	if gone {
		fmt.Fprintln(stdout, "\ngone: the server stopped; its addresses and socket are no longer intercepted (another process there is reached directly), open sessions end on their own; the entry comes back with its counters if the server starts again on the same addresses, and is dropped 10 minutes after")
	}
	return 0
}
