package e2e

// Policies and modes through a running sqlfwd: detect mode, hot reload by
// fwctl and SIGHUP (a bad file keeps the old policy), the live mode switch,
// deny_and_close, and learning an allowlist.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// policyFile writes a policy into a temporary file and returns its path.
func policyFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ownDaemon starts a sqlfwd for one test and stops it at the end.
func ownDaemon(t *testing.T, args ...string) *daemon {
	t.Helper()
	needSqlfwd(t)
	d, err := startDaemon(args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 30))
		}
		d.stop()
	})
	return d
}

func fwctl(t *testing.T, d *daemon, args ...string) psqlResult {
	t.Helper()
	return runToolPath(t, filepath.Join(binDir, "fwctl"), append(args, "--control-socket", d.control)...)
}

func TestDetectMode(t *testing.T) {
	d := ownDaemon(t, "--mode", "detect", "--log-format", "json")
	freshTable(t, "detect_t", 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
	if _, err := c.Exec(ctx, "delete from detect_t"); err != nil {
		t.Fatalf("detect mode must let the statement through: %v", err)
	}
	if got := directInts(t, "select count(*) from detect_t"); got[0] != 0 {
		t.Errorf("rows after delete in detect mode: %v, want 0", got)
	}
	log := d.log()
	if !strings.Contains(log, "enforce would block") || !strings.Contains(log, `"rule":"no-unfiltered-writes"`) || !strings.Contains(log, `"eval":`) {
		t.Errorf("detect mode log lacks the would-block report with rule and timing:\n%s", tail(log, 10))
	}
}

func TestReloadAndLiveMode(t *testing.T) {
	deny := "rules:\n  - id: no-secret\n    action: deny\n    reason: the secret table is off limits\n    match:\n      tables: [reload_secret]\n"
	allow := "rules: []\n"
	pol := policyFile(t, deny)
	d := ownDaemon(t, "--policy", pol)
	freshTable(t, "reload_secret", 7)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
	q := "select count(*) from reload_secret"
	var n int
	checkDenied(t, q, c.QueryRow(ctx, q).Scan(&n))

	// a good file: the open connection gets the new policy
	if err := os.WriteFile(pol, []byte(allow), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := fwctl(t, d, "reload"); res.Exit != 0 {
		t.Fatalf("fwctl reload: %s", res)
	}
	if err := c.QueryRow(ctx, q).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after reload to allow-all: %d, %v; want 1", n, err)
	}

	// a broken file: reload fails, the old (allow-all) policy stays
	if err := os.WriteFile(pol, []byte("rules:\n  - id: x\n    action: maybe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := fwctl(t, d, "reload"); res.Exit == 0 || !strings.Contains(res.Stderr, "maybe") {
		t.Fatalf("fwctl reload of a bad file: %s; want an error naming the bad value", res)
	}
	if err := c.QueryRow(ctx, q).Scan(&n); err != nil {
		t.Fatalf("after a failed reload the old policy must stay: %v", err)
	}

	// SIGHUP reloads too
	if err := os.WriteFile(pol, []byte(deny), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for i := 0; !strings.Contains(d.log(), "policy reloaded") || strings.Count(d.log(), "policy reloaded") < 2; i++ {
		if i > 100 {
			t.Fatalf("no reload after SIGHUP:\n%s", tail(d.log(), 10))
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkDenied(t, q, c.QueryRow(ctx, q).Scan(&n))

	// the live mode switch, and back to the policy's
	if res := fwctl(t, d, "mode", "monitor"); res.Exit != 0 {
		t.Fatalf("fwctl mode monitor: %s", res)
	}
	if err := c.QueryRow(ctx, q).Scan(&n); err != nil {
		t.Fatalf("monitor mode must let it through: %v", err)
	}
	if res := fwctl(t, d, "stats", "--json"); !strings.Contains(res.Stdout, `"mode_override": true`) || !strings.Contains(res.Stdout, `"mode": "monitor"`) {
		t.Errorf("stats do not show the override: %s", res.Stdout)
	}
	if res := fwctl(t, d, "mode", "policy"); res.Exit != 0 {
		t.Fatalf("fwctl mode policy: %s", res)
	}
	checkDenied(t, q, c.QueryRow(ctx, q).Scan(&n))
	if res := fwctl(t, d, "mode", "block"); res.Exit != 2 {
		t.Errorf("fwctl mode block: %s; want exit 2", res)
	}
}

func TestDenyAndClose(t *testing.T) {
	pol := policyFile(t, "rules:\n  - id: hostile-sleep\n    action: deny_and_close\n    reason: time-based probing\n    match:\n      functions: [pg_sleep]\n")
	d := ownDaemon(t, "--policy", pol)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
	_, err := c.Exec(ctx, "select pg_sleep(5)")
	checkDenied(t, "select pg_sleep(5)", err)
	if _, err := c.Exec(ctx, "select 1"); err == nil {
		t.Fatalf("the session is still open after a deny_and_close rule")
	}
	if !strings.Contains(d.log(), "closing the session after a deny_and_close rule") {
		t.Errorf("no log line for the closed session:\n%s", tail(d.log(), 10))
	}
}

func TestLearnAllowlist(t *testing.T) {
	d := ownDaemon(t)
	freshTable(t, "learn_t", 1, 2, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res := fwctl(t, d, "learn", "start"); res.Exit != 0 {
		t.Fatalf("fwctl learn start: %s", res)
	}
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
	for _, id := range []int{1, 2, 3} {
		var n int
		if err := c.QueryRow(ctx, "select id from learn_t where id = $1", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	if res := fwctl(t, d, "learn", "stop"); res.Exit != 0 {
		t.Fatalf("fwctl learn stop: %s", res)
	}
	res := fwctl(t, d, "learn", "export")
	if res.Exit != 0 || !strings.Contains(res.Stdout, "fingerprints:") || !strings.Contains(res.Stdout, "learn_t") {
		t.Fatalf("fwctl learn export: %s; want fingerprints with the normalized text", res)
	}
	if strings.Contains(res.Stdout, "where id = 1") {
		t.Errorf("the export carries a literal:\n%s", res.Stdout)
	}
	// enforce the allowlist: learnt statements pass, anything new is denied
	pol := policyFile(t, res.Stdout+"  - id: not-learned\n    action: deny\n    reason: statement not in the learned allowlist\n    match:\n      kind: [select, insert, update, delete]\n")
	d2 := ownDaemon(t, "--policy", pol)
	c2 := connect(t, ctx, dsn("127.0.0.1", portOf(t, d2.addr), pg.User, ""))
	var n int
	if err := c2.QueryRow(ctx, "select id from learn_t where id = $1", 2).Scan(&n); err != nil || n != 2 {
		t.Fatalf("a learnt statement under the allowlist: %d, %v", n, err)
	}
	checkDenied(t, "select count(*) from learn_t", c2.QueryRow(ctx, "select count(*) from learn_t").Scan(&n))
}

// TestControlSocketPeers: only root, sqlfwd's user and members of
// --control-group may use the control socket.
func TestControlSocketPeers(t *testing.T) {
	needSqlfwd(t)
	if os.Geteuid() != 0 {
		t.Skip("skipping: acting as another user needs root")
	}
	dir, err := os.MkdirTemp("", "sqlfw-e2e-peers-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	fw := filepath.Join(dir, "fwctl")
	b, err := os.ReadFile(filepath.Join(binDir, "fwctl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fw, b, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func(sock string) (string, error) {
		cmd := exec.Command(fw, "stats", "--json", "--control-socket", sock)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	plain := ownDaemon(t)
	os.Chmod(filepath.Dir(plain.control), 0o755)
	if out, err := asNobody(plain.control); err == nil {
		t.Errorf("nobody used a 0600 control socket: %s", out)
	}
	grouped := ownDaemon(t, "--control-group", "nogroup")
	os.Chmod(filepath.Dir(grouped.control), 0o755)
	if out, err := asNobody(grouped.control); err != nil || !strings.Contains(out, `"databases"`) {
		t.Errorf("a member of the control group: %v\n%s", err, out)
	}
	if res := fwctl(t, grouped, "stats", "--json"); res.Exit != 0 {
		t.Errorf("root: %s", res)
	}
}

// TestReusePort: two sqlfwd processes share one address with
// --reuse-port; the kernel spreads connections over both, and each judges
// what it gets.
func TestReusePort(t *testing.T) {
	a := ownDaemon(t, "--reuse-port")
	b := ownDaemon(t, "--reuse-port", "--listen", a.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 24; i++ {
		c := connect(t, ctx, dsn("127.0.0.1", portOf(t, a.addr), pg.User, ""))
		_, err := c.Exec(ctx, "delete from sqlfw_reuse_port_t")
		checkDenied(t, "delete from sqlfw_reuse_port_t", err)
		c.Close(ctx)
	}
	sa, sb := stats(t, a).Databases[0], stats(t, b).Databases[0]
	if sa.ConnectionsTotal == 0 || sb.ConnectionsTotal == 0 || sa.Denied+sb.Denied != 24 {
		t.Errorf("connections %d + %d, denied %d + %d; want both > 0 and 24 denied in all", sa.ConnectionsTotal, sb.ConnectionsTotal, sa.Denied, sb.Denied)
	}
}
