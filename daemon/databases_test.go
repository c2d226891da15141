package daemon

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/relay"
)

// Two databases from one configuration: each listener reaches its own
// upstream with its own mode.
func TestSeveralDatabases(t *testing.T) {
	a := newFakeServer(t, cannedResult(1))
	a.Record()
	b := newFakeServer(t, cannedResult(2))
	b.Record()
	cfg := &Config{ControlSocket: "none", Databases: []Database{
		{Name: "a", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: a.Addr()},
		{Name: "b", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: b.Addr(), Mode: ModeMonitor},
	}}
	d := startConfig(t, cfg)
	for _, name := range []string{"a", "b"} {
		rc := dialRaw(t, d.Addr(name).String())
		rc.Startup()
		rc.Write(query("delete from t"))
		rc.ReadUntilReady()
	}
	if got := a.Queries(); len(got) != 1 || !strings.HasPrefix(got[0], "sqlfw_blocked_") {
		t.Errorf("database a (enforce) received %q, want the poison", got)
	}
	if got := b.Queries(); len(got) != 1 || got[0] != "delete from t" {
		t.Errorf("database b (monitor) received %q, want the statement", got)
	}
	st := d.Snapshot()
	if len(st.Databases) != 2 || st.Databases[0].Denied != 1 || st.Databases[1].WouldDeny != 1 {
		t.Errorf("stats %+v, want a: 1 denied, b: 1 would deny", st.Databases)
	}
}

// offHostTCP tells an upstream that may leave the host (where a plaintext
// server leg behind a TLS client leg is warned about) from a local one.
func TestOffHostTCP(t *testing.T) {
	for _, tc := range []struct {
		upstream string
		want     bool
	}{
		{"127.0.0.1:5432", false},
		{"127.0.0.53:3306", false},
		{"[::1]:5432", false},
		{"[::ffff:127.0.0.1]:5432", false},
		{"localhost:5432", false},
		{"LOCALHOST:3306", false},
		{"/run/postgresql/.s.PGSQL.5432", false},
		{"/run/mysqld/mysqld.sock", false},
		{"10.1.2.3:5432", true},
		{"[2001:db8::1]:3306", true},
		{"db.internal:5432", true},
	} {
		if got := offHostTCP(tc.upstream); got != tc.want {
			t.Errorf("offHostTCP(%q) = %v, want %v", tc.upstream, got, tc.want)
		}
	}
}

// refuseClearPassword: clear-text authentication is refused on a
// plaintext server leg to an upstream that may leave the host, unless
// upstream_tls.allow_clear_password.
func TestRefuseClearPassword(t *testing.T) {
	for _, tc := range []struct {
		name  string
		up    relay.Upstream
		allow bool
		want  bool
	}{
		{"off host", relay.Upstream{Network: "tcp", Addr: "10.1.2.3:5432"}, false, true},
		{"a name", relay.Upstream{Network: "tcp", Addr: "db.internal:3306"}, false, true},
		{"allowed", relay.Upstream{Network: "tcp", Addr: "10.1.2.3:5432"}, true, false},
		{"loopback", relay.Upstream{Network: "tcp", Addr: "127.0.0.1:5432"}, false, false},
		{"unix socket", relay.Upstream{Network: "unix", Addr: "/run/mysqld/mysqld.sock"}, false, false},
	} {
		dc := &Database{Upstream: tc.up.Addr}
		if tc.allow {
			dc.UpstreamTLS = &UpstreamTLS{AllowClearPassword: true}
		}
		if got := refuseClearPassword(dc, tc.up); got != tc.want {
			t.Errorf("%s: refuseClearPassword(%+v) = %v, want %v", tc.name, tc.up, got, tc.want)
		}
	}
}
