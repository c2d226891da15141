package daemon

import (
	"strings"
	"testing"
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
