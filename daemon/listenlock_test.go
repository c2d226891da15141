package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// A second daemon with an explicit listener on an address another one
// holds is refused, naming the holder (here this test process, standing
// for the first daemon); with reuse_port on both it shares the port.
func TestListenAddressTaken(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	first := startConfig(t, &Config{ControlSocket: "none", Databases: []Database{{
		Name: "a", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.Addr(),
	}}})
	addr := first.Addr("a").String()
	for _, listen := range []string{addr, strings.Replace(addr, "127.0.0.1", "0.0.0.0", 1)} {
		d, err := New(&Config{ControlSocket: "none", Databases: []Database{{
			Name: "b", Protocol: "postgres", Listen: listen, Upstream: fs.Addr(),
		}}}, slog.New(slog.NewTextHandler(io.Discard, nil)), "test")
		if err != nil {
			t.Fatal(err)
		}
		err = d.Start()
		d.Stop(context.Background())
		want := fmt.Sprintf("%s is already in use by ", listen)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
			t.Errorf("second daemon on %s: %v, want %q naming pid %d", listen, err, want, os.Getpid())
		}
	}
	// reuse_port on both: the port is shared, as asked
	shared := startConfig(t, &Config{ControlSocket: "none", Databases: []Database{{
		Name: "c", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.Addr(), ReusePort: true,
	}}})
	d, err := New(&Config{ControlSocket: "none", Databases: []Database{{
		Name: "d", Protocol: "postgres", Listen: shared.Addr("c").String(), Upstream: fs.Addr(), ReusePort: true,
	}}}, slog.New(slog.NewTextHandler(io.Discard, nil)), "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Errorf("reuse_port on both: %v, want the port shared", err)
	}
	d.Stop(context.Background())
}
