package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/sqlfw/sqlfw/control"
)

func connectionsCmd(args []string, stdout, stderr io.Writer) int {
	var conns []control.Connection
	if done, code := fetchView("connections", "/v1/connections", args, stdout, stderr, &conns); done {
		return code
	}
	if len(conns) == 0 {
		fmt.Fprintln(stdout, "no open connections")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tdatabase\tclient\tprocess\tuser\tdbname\tstatements\tallowed\tdenied\tlogged\twould deny\tsince\ttls (client / server)")
	for _, c := range conns {
		proc := "-"
		if p := c.Process; p != nil {
			proc = fmt.Sprintf("%s[%d] uid %d", p.Comm, p.PID, p.UID)
		}
		leg := func(s string) string {
			if s == "" {
				return "clear"
			}
			return s
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s / %s\n", c.ID, c.Database, c.Client, proc, c.User, c.DBName,
			c.Statements, c.Allowed, c.Denied, c.Logged, c.WouldDeny, time.Since(c.Since).Round(time.Second), leg(c.ClientTLS), leg(c.ServerTLS))
	}
	tw.Flush()
	return 0
}
