package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestZeroConfig starts sqlfwd with a configuration file that does not
// exist, as a fresh install's unit does: it must find the test PostgreSQL
// (an unusual port, a unix socket in a temporary directory) in /proc,
// intercept it with the default policy, say what it found (MariaDB too, which it
// protects with the MySQL path), and block what the default policy blocks over TCP and
// the unix socket.
func TestZeroConfig(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	d, err := startDaemonWrapped(inCgroup(cg), "--config", filepath.Join(t.TempDir(), "absent.yaml"), "--cgroup", cg)
	if err == nil {
		t.Fatal("sqlfwd accepted --listen with a discovering start; want the per-database flags refused")
	}
	// startDaemonWrapped adds --listen and --upstream, which discovery
	// refuses: start it by hand instead.
	d, err = startDiscovering(t, cg)
	if err != nil {
		t.Fatal(err)
	}
	log := d.log()
	name := fmt.Sprintf("postgres-%d", pg.Port)
	if !strings.Contains(log, "no configuration file") || !logHas(log, `"msg":"discovery: found and protecting"`, `"database":"`+name+`"`) {
		t.Fatalf("the log does not say what discovery found:\n%s", tail(log, 20))
	}
	if port := os.Getenv("SQLFW_MY_PORT"); port != "" && !logHas(log, `"msg":"discovery: found and protecting"`, `"database":"mysql-`+port+`"`) {
		t.Errorf("the log does not say it protects the MariaDB it found:\n%s", tail(log, 20))
	}
	freshTable(t, "zeroconf_t", 1, 2)
	for _, host := range []string{"127.0.0.1", pg.SockDir} {
		if host == "" {
			continue
		}
		if res := psqlIn(t, cg, host, "delete from zeroconf_t"); !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("psql -h %s: got %s, want %s", host, res, codeBlocked)
		}
	}
	if got := directInts(t, "select count(*) from zeroconf_t"); got[0] != 2 {
		t.Errorf("rows: %v, want 2", got)
	}
	res := runToolPath(t, filepath.Join(binDir, "fwctl"), "status", "--control-socket", d.control)
	if res.Exit != 0 || !strings.Contains(res.Stdout, name) {
		t.Errorf("fwctl status does not list %s: %s", name, res)
	}
}

// startDiscovering runs sqlfwd in cg with only a missing --config, its
// own control socket, --cgroup cg and extra.
func startDiscovering(t *testing.T, cg string, extra ...string) (*daemon, error) {
	return startDiscoveringWrapped(t, inCgroup(cg), cg, nil, extra...)
}

// startDiscoveringWrapped is startDiscovering with a command prefix of its
// own (wrap ends with whatever runs sqlfwd) and environment additions; the
// control socket's directory is open to the service user.
func startDiscoveringWrapped(t *testing.T, wrap []string, cg string, env []string, extra ...string) (*daemon, error) {
	dir, err := os.MkdirTemp("", "sqlfwd-")
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	d := &daemon{control: filepath.Join(dir, "control.sock"), logPath: filepath.Join(dir, "sqlfwd.log"), done: make(chan struct{})}
	logf, err := os.Create(d.logPath)
	if err != nil {
		return nil, err
	}
	argv := append(append([]string{}, wrap...), filepath.Join(binDir, "sqlfwd"), "--config", filepath.Join(dir, "absent.yaml"),
		"--cgroup", cg, "--control-socket", d.control)
	argv = append(argv, extra...)
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Env = append(os.Environ(), env...)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		d.waitErr = d.cmd.Wait()
		logf.Close()
		close(d.done)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 40))
		}
		d.stop()
	})
	for i := 0; !strings.Contains(d.log(), `"msg":"sqlfwd started"`); i++ {
		select {
		case <-d.done:
			return nil, fmt.Errorf("sqlfwd exited: %v\n%s", d.waitErr, d.log())
		default:
		}
		if i > 200 {
			return nil, fmt.Errorf("sqlfwd did not start:\n%s", d.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return d, nil
}

// logHas reports whether one line of log holds every part.
func logHas(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
