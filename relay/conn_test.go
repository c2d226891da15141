package relay

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"
)

// A session's log lines name the connection as it arrived: its id, the
// client, how it came, where it was going and the process behind it.
func TestConnLogger(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	for _, tc := range []struct {
		name       string
		conn       Conn
		want, none []string
	}{
		{"explicit listener", Conn{Client: c1, ID: 7, Via: ViaListen},
			[]string{"session=7", "client=pipe", "via=listen"}, []string{"origin=", "process."}},
		{"redirected", Conn{Client: c1, ID: 8, Via: ViaRedirect, Origin: "10.0.0.5:5432",
			Process: Process{Known: true, Tgid: 811, UID: 1000, Comm: "psql", Cgroup: "/user.slice"}},
			[]string{"session=8", "via=redirect", "origin=10.0.0.5:5432", "process.pid=811", "process.comm=psql", "process.cgroup=/user.slice"}, nil},
		{"unknown process", Conn{Client: c1, ID: 9, Via: ViaUnix, Origin: "/run/postgresql/.s.PGSQL.5432", Process: Process{Tgid: 1}},
			[]string{"via=unix"}, []string{"process."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tc.conn.Logger(slog.New(slog.NewTextHandler(&buf, nil))).Info("x")
			line := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("log line %q lacks %q", line, w)
				}
			}
			for _, n := range tc.none {
				if strings.Contains(line, n) {
					t.Errorf("log line %q has %q", line, n)
				}
			}
		})
	}
}
