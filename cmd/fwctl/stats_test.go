package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/control"
)

// fakeControl serves a canned /v1/stats on a unix socket and counts calls.
func fakeControl(t *testing.T, st control.Stats) (string, *atomic.Int64) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "control.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/stats", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_ = json.NewEncoder(w).Encode(st)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock, &calls
}

func f(v float64) *float64 { return &v }
func u(v uint64) *uint64   { return &v }

func TestStatsTableAndWatch(t *testing.T) {
	win := &control.StatsWindow{Start: time.Now(), Seconds: 0.05, SampleEvery: 16,
		CPU: control.CPUWindow{Used: f(0.1), Quota: f(0.1), QuotaUse: f(0.99), Periods: u(20), ThrottledPeriods: u(8), ThrottledFraction: f(0.4), ThrottledSeconds: f(1.5), RunQueueWaitSeconds: f(2)},
		Total: control.DBWindow{Statements: 1000, StatementsPerSec: 500, Held: control.Dist{Count: 1000, P50: 60, P99: 80000},
			Tail: control.Attribution{FromQuantile: 0.99, FromUs: 65536, Statements: 10, Samples: 5, MeanHeldUs: 81000,
				Evaluation: f(0.01), QuotaWait: f(0.95), RunQueueWait: f(0.03), Relay: f(0.01), OffCPU: f(0.98), Dominant: "quota_wait"}},
		Advice: "p99 is dominated by CPU-quota wait: 40% of periods throttled; raise CPUQuota or add an instance."}
	st := control.Stats{Version: "test", Window: win, Databases: []control.DatabaseStats{{Name: "app", Protocol: "postgres", Window: &win.Total}}}
	sock, calls := fakeControl(t, st)

	var out, errb bytes.Buffer
	if code := run([]string{"stats", "--control-socket", sock, "--watch-count", "3"}, &out, &errb); code != 0 {
		t.Fatalf("fwctl stats --watch-count 3: exit %d, stderr %s", code, errb.String())
	}
	if calls.Load() != 3 {
		t.Errorf("--watch-count 3: got %d requests, want 3", calls.Load())
	}
	got := out.String()
	for _, want := range []string{
		"held p99", "app", "total", "80ms",
		"throttled 8 (40%)",
		"quota wait 95%",
		"advice: p99 is dominated by CPU-quota wait",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("fwctl stats output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "sqlfwd test"); n != 3 {
		t.Errorf("got %d reports, want 3:\n%s", n, got)
	}

	out.Reset()
	if code := run([]string{"stats", "--control-socket", sock, "--json"}, &out, &errb); code != 0 || !json.Valid(out.Bytes()) {
		t.Fatalf("fwctl stats --json: exit %d, output %q", code, out.String())
	}
}
