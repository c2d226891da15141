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

func connectionsCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fwctl connections", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sock := fs.String("control-socket", daemon.DefaultControlSocket, "sqlfwd's control socket `path`")
	asJSON := fs.Bool("json", false, "print the raw JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	body, err := controlCall(*sock, http.MethodGet, "/v1/connections", nil)
	if err != nil {
		fmt.Fprintf(stderr, "fwctl: connections: %v\n", err)
		return 2
	}
	if *asJSON {
		stdout.Write(body)
		return 0
	}
	var conns []daemon.Connection
	if err := json.Unmarshal(body, &conns); err != nil {
		fmt.Fprintf(stderr, "fwctl: connections: %v\n", err)
		return 2
	}
	if len(conns) == 0 {
		fmt.Fprintln(stdout, "no open connections")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tdatabase\tclient\tprocess\tuser\tdbname\tstatements\tallowed\tdenied\tlogged\twould deny\tsince")
	for _, c := range conns {
		proc := "-"
		if p := c.Process; p != nil {
			proc = fmt.Sprintf("%s[%d] uid %d", p.Comm, p.PID, p.UID)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", c.ID, c.Database, c.Client, proc, c.User, c.DBName,
			c.Statements, c.Allowed, c.Denied, c.Logged, c.WouldDeny, time.Since(c.Since).Round(time.Second))
	}
	tw.Flush()
	return 0
}
