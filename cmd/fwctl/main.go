// Command fwctl talks to sqlfwd and checks statements against a policy.
//
//	fwctl stats [--control-socket PATH] [--json]
//	fwctl check --protocol postgres [--policy FILE] [--user U] [--database D] "SQL"
//
// check exits 0 when the statement is allowed, 1 when it is denied and 2 on
// an error.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"github.com/sqlfw/sqlfw/daemon"
	"github.com/sqlfw/sqlfw/engine"
)

var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: fwctl COMMAND [flags]

commands:
  stats     counters of a running sqlfwd (connections, statements, verdicts)
  check     judge one statement with a policy, without a daemon
  version   print the version
`)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "stats":
		return stats(args[1:], stdout, stderr)
	case "check":
		return check(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "fwctl", version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "fwctl: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func stats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", daemon.DefaultControlSocket, "sqlfwd's control socket `path`")
	asJSON := fs.Bool("json", false, "print the raw JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	client := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", *sock)
		}},
	}
	resp, err := client.Get("http://sqlfwd/v1/stats")
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: cannot reach sqlfwd at %s: %v\n", *sock, err)
		return 2
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "fwctl: stats: %s %v\n", resp.Status, err)
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
	for _, db := range st.Databases {
		fmt.Fprintf(w, "\n%s (%s) %s -> %s, mode %s\n", db.Name, db.Protocol, db.Listen, db.Upstream, db.Mode)
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

func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	protocol := fs.String("protocol", "postgres", "postgres")
	policyPath := fs.String("policy", "", "policy `file` (default: the embedded default policy)")
	user := fs.String("user", "", "database user of the session")
	database := fs.String("database", "", "database of the session")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *protocol != "postgres" {
		fmt.Fprintf(stderr, "fwctl: protocol %q is not supported yet (postgres)\n", *protocol)
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, `usage: fwctl check [--protocol postgres] [--policy FILE] [--user U] [--database D] "SQL"`)
		return 2
	}
	pol := engine.DefaultPolicy()
	if *policyPath != "" {
		text, err := os.ReadFile(*policyPath)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %v\n", err)
			return 2
		}
		pol, err = engine.ParsePolicy(text)
		if err != nil {
			fmt.Fprintf(stderr, "fwctl: %s: %v\n", *policyPath, err)
			return 2
		}
	}
	eng, err := engine.New(pol, engine.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: %v\n", err)
		return 2
	}
	sess := engine.Session{User: *user, Database: *database}
	t0 := time.Now()
	v := eng.JudgePostgres([]byte(fs.Arg(0)), &sess)
	el := time.Since(t0)
	rule := v.RuleID
	if rule == "" {
		rule = "-"
	}
	fmt.Fprintf(stdout, "verdict:    %s\nrule:       %s\n", v.Action, rule)
	if v.Reason != "" {
		fmt.Fprintf(stdout, "reason:     %s\n", v.Reason)
	}
	fmt.Fprintf(stdout, "statements: %d\nevaluation: %s\n", v.Statements, el)
	if v.Action == engine.ActionDeny {
		return 1
	}
	return 0
}
