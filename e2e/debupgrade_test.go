package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeSystemctl stands in for systemctl in the maintainer scripts: it logs
// each call and acts on one "unit", a sqlfwd started from /usr/bin (so
// that a restart runs whatever binary the package has put there).
const fakeSystemctl = `#!/bin/sh
echo "$*" >> "$SQLFW_E2E_LOG"
running() { [ -f "$SQLFW_E2E_PID" ] && kill -0 "$(cat "$SQLFW_E2E_PID")" 2>/dev/null; }
stop() {
	if running; then
		pid=$(cat "$SQLFW_E2E_PID"); kill -TERM "$pid"
		while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	fi
	rm -f "$SQLFW_E2E_PID"
}
start() {
	setsid /usr/bin/sqlfwd --protocol postgres --listen "$SQLFW_E2E_LISTEN" --upstream 127.0.0.1:1 \
		--control-socket "$SQLFW_E2E_SOCK" --log-format text >>"$SQLFW_E2E_DAEMONLOG" 2>&1 </dev/null &
	echo $! > "$SQLFW_E2E_PID"
}
case "$1" in
start) running || start ;;
stop) stop ;;
try-restart) if running; then stop; start; fi ;;
esac
exit 0
`

// TestDebUpgradeRestartsRemoveStops installs two builds of the package on
// this host with dpkg, one after the other, in a mount namespace where
// /run/systemd/system exists (so the scripts take the systemd branch) and
// systemctl is a stand-in that logs its calls and runs a real sqlfwd from
// /usr/bin: the first install starts nothing, the upgrade restarts the
// running daemon with the new binary (its version changes, its pid too),
// the removal stops it, the purge removes the user and /var/lib/sqlfw. The
// booted-systemd test of the same package is nspawn's (docs/testing.md).
func TestDebUpgradeRestartsRemoveStops(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: dpkg -i needs root")
	}
	for _, tool := range []string{"make", "dpkg", "dpkg-deb", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s is not installed", tool)
		}
	}
	if out, _ := exec.Command("dpkg-query", "-W", "-f", "${Status}", "sqlfw").Output(); len(out) > 0 && !strings.Contains(string(out), "not-installed") {
		t.Skipf("skipping: the package sqlfw is installed on this host (%s): not touching it", out)
	}
	if _, err := user.Lookup("sqlfw"); err == nil {
		t.Skip("skipping: a user sqlfw exists on this host; the purge would delete it")
	}
	for _, f := range []string{"/usr/bin/sqlfwd", "/usr/bin/fwctl"} {
		if _, err := os.Stat(f); err == nil {
			t.Skipf("skipping: %s exists and is not the package's", f)
		}
	}
	dir := t.TempDir()
	// two builds: the "previous" one and this one
	debs := map[string]string{}
	for _, v := range []string{"0.1.0+e2e.1", "0.1.0+e2e.2"} {
		cmd := exec.Command("make", "--no-print-directory", "deb", "VERSION="+v)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make deb VERSION=%s: %v\n%s", v, err, out)
		}
		src := filepath.Join("../dist", "sqlfw_"+v+"_"+debArch(t)+".deb")
		dst := filepath.Join(dir, filepath.Base(src))
		if err := os.Rename(src, dst); err != nil {
			t.Fatal(err)
		}
		debs[v] = dst
	}
	fakebin := filepath.Join(dir, "fakebin")
	os.MkdirAll(fakebin, 0o755)
	if err := os.WriteFile(filepath.Join(fakebin, "systemctl"), []byte(fakeSystemctl), 0o755); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "control.sock")
	logf, pidf := filepath.Join(dir, "systemctl.log"), filepath.Join(dir, "unit.pid")
	env := append(os.Environ(), "PATH="+fakebin+":"+os.Getenv("PATH"),
		"SQLFW_E2E_LOG="+logf, "SQLFW_E2E_PID="+pidf, "SQLFW_E2E_SOCK="+sock,
		"SQLFW_E2E_LISTEN=127.0.0.1:"+strconv.Itoa(port), "SQLFW_E2E_DAEMONLOG="+filepath.Join(dir, "daemon.log"))
	// dpkg in a mount namespace whose /run is a fresh tmpfs with
	// /run/systemd/system: only the scripts see a "booted systemd"
	dpkg := func(args ...string) string {
		t.Helper()
		script := `mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system && exec dpkg "$@"`
		var out []byte
		var err error
		for try := 0; try < 30; try++ { // another dpkg or apt may hold the lock for a while
			cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", script, "sh"}, args...)...)
			cmd.Env = env
			out, err = cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "lock") {
				break
			}
			time.Sleep(2 * time.Second)
		}
		if err != nil {
			t.Fatalf("dpkg %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidf); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
		}
		cmd := exec.Command("unshare", "-m", "sh", "-c", `mount -t tmpfs tmpfs /run && exec dpkg --purge sqlfw`)
		cmd.Env = env
		cmd.Run()
	})
	calls := func() []string {
		b, _ := os.ReadFile(logf)
		os.Remove(logf)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	unitPid := func() int {
		b, err := os.ReadFile(pidf)
		if err != nil {
			return 0
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return pid
	}
	// the running daemon's version, from its control socket
	version := func() string {
		t.Helper()
		var last psqlResult
		for i := 0; i < 100; i++ {
			last = runToolPath(t, "/usr/bin/fwctl", "--control-socket", sock, "status", "--json")
			if last.Exit == 0 {
				var st struct{ Version string }
				if err := json.Unmarshal([]byte(last.Stdout), &st); err != nil {
					t.Fatalf("fwctl status --json: %v: %s", err, last.Stdout)
				}
				return st.Version
			}
			time.Sleep(100 * time.Millisecond)
		}
		daemonLog, _ := os.ReadFile(filepath.Join(dir, "daemon.log"))
		t.Fatalf("the unit's sqlfwd does not answer: %s\n%s", last, daemonLog)
		return ""
	}

	// first install: the user and state directory, daemon-reload, nothing started
	dpkg("-i", debs["0.1.0+e2e.1"])
	if got := calls(); strings.Join(got, ";") != "daemon-reload" {
		t.Errorf("first install: systemctl %q, want only daemon-reload (nothing started or restarted)", got)
	}
	if unitPid() != 0 {
		t.Error("the first install started the unit")
	}
	if _, err := user.Lookup("sqlfw"); err != nil {
		t.Errorf("no user sqlfw after install: %v", err)
	}
	if fi, err := os.Stat("/var/lib/sqlfw"); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("/var/lib/sqlfw: %v %v, want a 0750 directory", fi, err)
	}
	for _, f := range []string{"/usr/share/man/man8/sqlfwd.8.gz", "/usr/share/man/man1/fwctl.1.gz", "/usr/share/man/man5/sqlfwd.yaml.5.gz", "/usr/share/doc/sqlfw/changelog.Debian.gz"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("installed package lacks %s", f)
		}
	}
	// the operator starts the unit
	start := exec.Command(filepath.Join(fakebin, "systemctl"), "start", "sqlfwd.service")
	start.Env = env
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("start: %v %s", err, out)
	}
	calls()
	if v := version(); v != "0.1.0+e2e.1" {
		t.Fatalf("running version %q, want 0.1.0+e2e.1", v)
	}
	oldPid := unitPid()

	// upgrade: nothing stopped by prerm, try-restart by postinst
	dpkg("-i", debs["0.1.0+e2e.2"])
	// (the old package's postrm reloads the units too)
	got := calls()
	restarts := 0
	for _, c := range got {
		if strings.HasPrefix(c, "stop") {
			t.Errorf("upgrade: systemctl %q: a stop (the old daemon should judge until the restart)", got)
		}
		if c == "try-restart sqlfwd.service sqlfwd-listener.service" {
			restarts++
		}
	}
	if restarts != 1 || got[len(got)-1] != "try-restart sqlfwd.service sqlfwd-listener.service" || got[len(got)-2] != "daemon-reload" {
		t.Errorf("upgrade: systemctl %q, want daemon-reload, then one try-restart of both units, last", got)
	}
	if v := version(); v != "0.1.0+e2e.2" {
		t.Errorf("after the upgrade the running sqlfwd is %q, want the new build 0.1.0+e2e.2", v)
	}
	if p := unitPid(); p == oldPid || p == 0 {
		t.Errorf("after the upgrade the unit's pid is %d (was %d): not restarted", p, oldPid)
	}
	if alive(oldPid) {
		t.Errorf("the old sqlfwd (pid %d) still runs after the upgrade", oldPid)
	}

	// removal stops the unit; purge removes the user and the state
	dpkg("-r", "sqlfw")
	if got := strings.Join(calls(), ";"); !strings.HasPrefix(got, "stop sqlfwd.service sqlfwd-listener.service") {
		t.Errorf("remove: systemctl %q, want a stop of both units first", got)
	}
	if p := unitPid(); p != 0 {
		t.Errorf("after removal the unit still has pid %d", p)
	}
	if _, err := os.Stat("/usr/bin/sqlfwd"); err == nil {
		t.Error("/usr/bin/sqlfwd is still there after removal")
	}
	if _, err := os.Stat("/var/lib/sqlfw"); err != nil {
		t.Error("removal (not purge) deleted /var/lib/sqlfw: the audit trail goes only on purge")
	}
	dpkg("--purge", "sqlfw")
	if _, err := user.Lookup("sqlfw"); err == nil {
		t.Error("the user sqlfw is still there after purge")
	}
	if _, err := os.Stat("/var/lib/sqlfw"); err == nil {
		t.Error("/var/lib/sqlfw is still there after purge")
	}
}

func debArch(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOARCH").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// alive reports a process that exists and is not a zombie (an exited
// daemon whose parent, the stand-in systemctl, is gone may wait unreaped).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
