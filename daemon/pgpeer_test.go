package daemon

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/relay/pg/pgtest"
)

// The daemon's tests run PostgreSQL sessions against pgtest's fake server
// and raw client.
var (
	newFakeServer = pgtest.NewServer
	cannedResult  = pgtest.CannedResult
	dialRaw       = pgtest.Dial
	query         = pgtest.Query
)

// startDaemon runs a daemon in enforce mode with the default policy in
// front of upstream and returns its listening address.
func startDaemon(t testing.TB, upstream string, mode Mode) (*Daemon, string) {
	t.Helper()
	d := startConfig(t, &Config{ControlSocket: "none", Databases: []Database{{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: upstream, Mode: mode,
	}}})
	return d, d.Addr("t").String()
}

// startConfig builds and starts a daemon from cfg and stops it when the
// test ends.
func startConfig(t testing.TB, cfg *Config) *Daemon {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	d, err := New(cfg, log, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := contextWithTimeout(5 * time.Second)
		defer cancel()
		d.Stop(ctx)
	})
	return d
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimSpace(p)))
	return len(p), nil
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
