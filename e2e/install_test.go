package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMakeInstall installs into a scratch prefix with `make install`, checks
// what it put where, runs the installed sqlfwd, verifies the installed units
// with systemd-analyze (no warning allowed) and scores their hardening, and
// checks that `make uninstall` removes everything but the configuration.
func TestMakeInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("skipping: make is not installed")
	}
	pfx := t.TempDir()
	vars := []string{"PREFIX=" + pfx, "SYSCONFDIR=" + pfx + "/etc"}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"--no-print-directory"}, append(args, vars...)...)...)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("install")
	want := []string{"bin/sqlfwd", "bin/fwctl", "lib/systemd/system/sqlfwd.service", "lib/systemd/system/sqlfwd-listener.service",
		"lib/sysusers.d/sqlfw.conf", "share/sqlfw/policy/postgres.yaml", "share/sqlfw/policy/mysql.yaml", "share/sqlfw/sqlfwd.yaml.example",
		"share/bash-completion/completions/fwctl", "share/man/man1/fwctl.1", "share/man/man5/sqlfwd.yaml.5", "share/man/man8/sqlfwd.8"}
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(pfx, f)); err != nil {
			t.Errorf("make install did not install %s: %v", f, err)
		}
	}
	res := runToolPath(t, filepath.Join(pfx, "bin/sqlfwd"), "--version")
	if res.Exit != 0 || !strings.HasPrefix(res.Stdout, "sqlfwd ") {
		t.Errorf("installed sqlfwd --version: %s", res)
	}
	// each protocol's default policy, named by the protocol, validates
	// for it (fwctl policy default --protocol prints the same)
	for _, p := range []string{"postgres", "mysql"} {
		path := filepath.Join(pfx, "share/sqlfw/policy", p+".yaml")
		if res := runToolPath(t, filepath.Join(pfx, "bin/fwctl"), "policy", "validate", "--protocol", p, path); res.Exit != 0 {
			t.Errorf("the installed default policy of %s does not validate for it: %s", p, res)
		}
		text, _ := os.ReadFile(path)
		if res := runToolPath(t, filepath.Join(pfx, "bin/fwctl"), "policy", "default", "--protocol", p); res.Exit != 0 || res.Stdout != string(text) {
			t.Errorf("fwctl policy default --protocol %s is not the installed %s.yaml: %s", p, p, res.Stderr)
		}
	}
	unit, _ := os.ReadFile(filepath.Join(pfx, "lib/systemd/system/sqlfwd.service"))
	if !strings.Contains(string(unit), "ExecStart="+pfx+"/bin/sqlfwd ") {
		t.Errorf("the installed unit does not start the installed binary:\n%s", unit)
	}

	if sa, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze not installed: the units are not verified")
	} else {
		for _, u := range []string{"sqlfwd.service", "sqlfwd-listener.service"} {
			path := filepath.Join(pfx, "lib/systemd/system", u)
			out, err := exec.Command(sa, "verify", path).CombinedOutput()
			if err != nil || len(strings.TrimSpace(string(out))) != 0 {
				t.Errorf("systemd-analyze verify %s: %v\n%s", u, err, out)
			}
			score := exposure(t, sa, path)
			t.Logf("systemd-analyze security --offline %s: %.1f", u, score)
			if score > 2.5 {
				t.Errorf("%s: exposure %.1f, want at most 2.5 (hardening lost?)", u, score)
			}
		}
		for _, other := range []string{"/lib/systemd/system/haproxy.service", "/lib/systemd/system/pgbouncer.service"} {
			if _, err := os.Stat(other); err == nil {
				t.Logf("for comparison, %s: %.1f", filepath.Base(other), exposure(t, sa, other))
			}
		}
	}

	run("uninstall")
	var left []string
	filepath.Walk(pfx, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			left = append(left, strings.TrimPrefix(p, pfx+"/"))
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("after make uninstall: %v left, want nothing", left)
	}
	if _, err := os.Stat(filepath.Join(pfx, "etc/sqlfw/sqlfwd.yaml")); err == nil {
		t.Error("make install wrote etc/sqlfw/sqlfwd.yaml: a fresh install should start without one (zero configuration)")
	}
}

func exposure(t *testing.T, sa, unit string) float64 {
	t.Helper()
	out, _ := exec.Command(sa, "security", "--offline=true", unit).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("systemd-analyze security %s: no score in\n%s", unit, out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// unitCaps reads AmbientCapabilities from a unit file.
func unitCaps(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "AmbientCapabilities="); ok {
			return strings.Fields(v)
		}
	}
	t.Fatalf("%s has no AmbientCapabilities", path)
	return nil
}

// TestInterceptAsServiceUser runs sqlfwd as the unit does: a user of its
// own holding exactly the unit's AmbientCapabilities (through setpriv, as
// systemd would grant them), and checks that interception works, not the
// fallback.
func TestInterceptAsServiceUser(t *testing.T) {
	needKernel(t)
	wrapUser, name, list := unitUser(t)
	cg := childCgroup(t)
	// the service user creates its control socket here (t.TempDir's
	// parent is root's alone)
	ctl, err := os.MkdirTemp("", "sqlfw-svcuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ctl) })
	os.Chmod(ctl, 0o777)
	args := []string{"--intercept", "--cgroup", cg, "--control-socket", filepath.Join(ctl, "c.sock")}
	wrap := append(inCgroup(cg), wrapUser...)
	d, err := startDaemonWrapped(wrap, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 30))
		}
		d.stop()
	})
	for i := 0; !strings.Contains(d.log(), `"msg":"sqlfwd started"`); i++ {
		if i > 100 {
			t.Fatalf("sqlfwd did not start; log:\n%s", d.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(d.log(), `"msg":"intercepting"`) {
		t.Fatalf("as %s with %s, sqlfwd did not intercept:\n%s", name, list, tail(d.log(), 10))
	}
	freshTable(t, "icept_svcuser", 1, 2)
	if res := psqlIn(t, cg, "127.0.0.1", "delete from icept_svcuser"); !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("psql through the intercepted address: %s, want %s", res, codeBlocked)
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	t.Logf("sqlfwd credentials:\n%s", grepLines(string(b), "Uid:", "CapEff:", "CapAmb:"))

	// a second one as the same user, with the same control socket, as a
	// second start of the unit's ExecStart would be: it exits 1 naming the
	// first, which goes on judging
	log, code := runToEndWrapped(t, wrap, args...)
	if want := fmt.Sprintf("sqlfwd pid %d", d.cmd.Process.Pid); code != 1 || !strings.Contains(log, "another sqlfwd already intercepts cgroup "+cg) || !strings.Contains(log, want) {
		t.Errorf("a second sqlfwd as %s: exit %d, log:\n%s\nwant exit 1 naming %s", name, code, tail(log, 5), want)
	}
	if res := psqlIn(t, cg, "127.0.0.1", "delete from icept_svcuser"); !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("after the refused second daemon: %s, want %s", res, codeBlocked)
	}
}

func grepLines(s string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}
