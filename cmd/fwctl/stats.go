package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/sqlfw/sqlfw/daemon"
)

func stats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", daemon.DefaultControlSocket, "sqlfwd's control socket `path`")
	asJSON := fs.Bool("json", false, "print the raw JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	body, err := controlCall(*sock, http.MethodGet, "/v1/stats", nil)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: stats: %v\n", err)
		return 2
	}
	if *asJSON {
		stdout.Write(body)
		return 0
	}
	var st daemon.Stats
	if err := json.Unmarshal(body, &st); err != nil {
		fmt.Fprintf(stderr, "fwctl: stats: %v\n", err)
		return 2
	}
	printStats(stdout, &st)
	return 0
}

func printStats(w io.Writer, st *daemon.Stats) {
	fmt.Fprintf(w, "sqlfwd %s, up %s\n", st.Version, st.Uptime)
	ic := st.Interception
	switch {
	case ic.Active:
		fmt.Fprintf(w, "interception: %v; %d redirected, %d steered, %d unix, %d refused (no origin), %d own skipped, %d other netns skipped, %d map full, %d on sockmap (%d fell back to TCP)\n",
			ic.Programs, ic.Redirected, ic.Steered, ic.UnixRedirected, ic.Refused, ic.SkippedOwn, ic.SkippedNetns, ic.MapFull, ic.SockmapAdded, ic.SockmapFallback)
	case ic.Fallback != "":
		fmt.Fprintf(w, "interception: off, fell back to the explicit listener: %s\n", ic.Fallback)
	default:
		fmt.Fprintln(w, "interception: off (explicit listener)")
	}
	for _, db := range st.Databases {
		listen := db.Listen
		if listen == "" {
			listen = "(intercepted)"
		}
		fmt.Fprintf(w, "\n%s (%s) %s -> %s, mode %s\n", db.Name, db.Protocol, listen, db.Upstream, db.Mode)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  connections\t%d active\t%d total\t%d refused\t%d cancel requests\n",
			db.ConnectionsActive, db.ConnectionsTotal, db.ConnectionsRefused, db.CancelRequests)
		fmt.Fprintf(tw, "  judged\t%d messages\t%d statements\t\t\n", db.Messages, db.Statements)
		fmt.Fprintf(tw, "  verdicts\t%d allowed\t%d denied\t%d logged\t%d would deny (monitor/detect)\n",
			db.Allowed, db.Denied, db.Logged, db.WouldDeny)
		fmt.Fprintf(tw, "  errors\t%d parse\t%d protocol\t\t\n", db.ParseErrors, db.ProtocolErrors)
		fmt.Fprintf(tw, "  evaluation\t%s mean per message\t\t\t\n", time.Duration(db.EvalMeanNanos))
		fmt.Fprintf(tw, "  bytes\t%d to server\t%d to client\t\t\n", db.BytesToServer, db.BytesToClient)
		tw.Flush()
	}
}
