package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startControlled runs a daemon with a control socket, Prometheus metrics
// and a short stats window in front of a fake server.
func startControlled(t *testing.T) (*Daemon, string) {
	t.Helper()
	fs := newFakeServer(t, cannedResult(1))
	sock := filepath.Join(t.TempDir(), "control.sock")
	cfg := &Config{ControlSocket: sock, MetricsListen: "127.0.0.1:0", StatsWindow: 200 * time.Millisecond,
		Databases: []Database{{Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.Addr()}}}
	d := startConfig(t, cfg)
	return d, sock
}

func controlGet(t *testing.T, sock, path string) []byte {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	resp, err := c.Get("http://sqlfwd" + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", path, resp.Status, b)
	}
	return b
}

// Garbage on the control socket gets an HTTP error; the daemon lives on.
func TestControlSocketGarbage(t *testing.T) {
	_, sock := startControlled(t)
	for _, garbage := range []string{"\x00\x01\x02 not http\r\n\r\n", "GET /v1/stats HTTP/9.9\r\n\r\n", strings.Repeat("A", 70000) + "\r\n\r\n"} {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write([]byte(garbage))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil || !(strings.HasPrefix(line, "HTTP/1.1 4") || strings.HasPrefix(line, "HTTP/1.1 5")) {
			t.Errorf("input %.20q...: got %q, %v; want an HTTP error status line", garbage, line, err)
		}
	}
	var st Stats
	if err := json.Unmarshal(controlGet(t, sock, "/v1/stats"), &st); err != nil || len(st.Databases) != 1 {
		t.Fatalf("after garbage: /v1/stats %+v, %v; want the daemon's stats", st, err)
	}
}

func TestStatusConnectionsAndMetrics(t *testing.T) {
	d, sock := startControlled(t)
	rc := dialRaw(t, d.Addr("t").String())
	rc.Startup()
	rc.Write(query("select 1"))
	rc.ReadUntilReady()
	rc.Write(query("delete from accounts"))
	rc.ReadUntilReady()

	var st Status
	if err := json.Unmarshal(controlGet(t, sock, "/v1/status"), &st); err != nil {
		t.Fatal(err)
	}
	if st.APIVersion != 1 || st.Connections != 1 || len(st.Databases) != 1 || Mode(st.Databases[0].Mode) != ModeEnforce || st.MetricsListen == "" {
		t.Errorf("/v1/status: got %+v, want api 1, 1 connection, database t in enforce, metrics listening", st)
	}
	var conns []Connection
	if err := json.Unmarshal(controlGet(t, sock, "/v1/connections"), &conns); err != nil {
		t.Fatal(err)
	}
	if len(conns) != 1 || conns[0].User != "u" || conns[0].DBName != "d" || conns[0].Allowed != 1 || conns[0].Denied != 1 || conns[0].Statements != 2 {
		t.Errorf("/v1/connections: got %+v, want user u, dbname d, 1 allowed, 1 denied, 2 statements", conns)
	}

	// Wait for a window holding the two statements.
	var stats Stats
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := json.Unmarshal(controlGet(t, sock, "/v1/stats"), &stats); err != nil {
			t.Fatal(err)
		}
		if stats.Window != nil && stats.Window.Total.Held.Count > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if w := stats.Window; w == nil || w.Total.Held.Count != 2 || stats.Databases[0].Window == nil || w.Total.Relay.Count != 2 {
		t.Fatalf("/v1/stats window: got %+v, want 2 held statements and 2 relayed responses", stats.Window)
	}

	resp, err := http.Get("http://" + d.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`sqlfw_statements_total{database="t"} 2`,
		`sqlfw_verdicts_total{database="t",verdict="denied"} 1`,
		`sqlfw_verdicts_total{database="t",verdict="allowed"} 1`,
		`sqlfw_connections{database="t"} 1`,
		`sqlfw_held_seconds_count{database="t"} 2`,
		`sqlfw_evaluation_seconds_bucket{database="t",le="+Inf"} 2`,
		`sqlfw_rule_verdicts_total{database="t",rule=`,
		`sqlfw_build_info{goversion="go`,
		`sqlfw_ready 1`,
		`sqlfw_interception_active 0`,
		`sqlfw_interception_unjudged_total 0`,
		`sqlfw_mode{database="t",mode="enforce"} 1`,
		`sqlfw_mode_override{database="t"} 0`,
		`sqlfw_reloads_total{result="ok"} 0`,
		`sqlfw_connections_limited_total{database="t"} 0`,
		`sqlfw_log_lines_suppressed_total 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics: no line %q in\n%s", want, grepLines(string(body), "sqlfw_"))
		}
	}
}

// /healthz answers while the process serves, /readyz only while it judges
// traffic: 503 once it drains.
func TestHealthAndReadiness(t *testing.T) {
	d, _ := startControlled(t)
	get := func(path string) int {
		resp, err := http.Get("http://" + d.MetricsAddr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if get("/healthz") != 200 || get("/readyz") != 200 {
		t.Fatalf("running: healthz %d, readyz %d; want 200, 200", get("/healthz"), get("/readyz"))
	}
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	d.ready.Store(false) // as Stop does first, before the listeners close
	if get("/readyz") != http.StatusServiceUnavailable || get("/healthz") != 200 {
		t.Errorf("draining: readyz %d, healthz %d; want 503, 200", get("/readyz"), get("/healthz"))
	}
	resp, _ := http.Get("http://" + d.MetricsAddr().String() + "/metrics")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`sqlfw_ready 0`, `sqlfw_reloads_total{result="ok"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics: no line %q", want)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The control socket closes keep-alive connections that go idle, and
// refuses more than maxControlConns at once.
func TestControlSocketIdleAndCap(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	sock := filepath.Join(t.TempDir(), "control.sock")
	startConfig(t, &Config{ControlSocket: sock, ControlIdleTimeout: 300 * time.Millisecond,
		Databases: []Database{{Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.Addr()}}})

	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("GET /v1/status HTTP/1.1\r\nHost: sqlfwd\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/status: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// Idle now: the server must close the connection by itself.
	if n, err := br.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle keep-alive connection: read %d, %v; want EOF (closed by the server)", n, err)
	}

	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < maxControlConns+20; i++ {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Read all at once: a read after a passed deadline fails without
	// looking for EOF.
	var closed atomic.Int32
	var wg sync.WaitGroup
	deadline := time.Now().Add(time.Second)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(deadline)
			if _, err := c.Read(make([]byte, 1)); err == io.EOF {
				closed.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := closed.Load(); n < 20 || n > 20+1 {
		t.Errorf("%d of %d connections closed at once, want 20 (the cap is %d)", n, len(conns), maxControlConns)
	}
}
