package e2e

// One daemon per cgroup (issue 23 item 3): a second sqlfwd intercepting
// the same cgroup exits with an error naming the first; --take-over stops
// the first (SIGTERM) and takes the fail_closed pins over.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/bpf"
)

// It runs as root with fail_closed and as the unit runs it (its user,
// exactly its capabilities), both daemons alike, without fail_closed: the
// unit's user cannot reach a pin directory under /sys/fs/bpf, which is
// root's and mode 0700 (docs/operations.md); the lock is on the cgroups.
func TestSecondDaemonRefused(t *testing.T) {
	needKernel(t)
	t.Run("root", func(t *testing.T) { secondDaemonRefused(t, nil) })
	t.Run("unit user", func(t *testing.T) { secondDaemonRefused(t, unitWrap(t)) })
}

func secondDaemonRefused(t *testing.T, wrap []string) {
	cg := childCgroup(t)
	pinDir := fmt.Sprintf("/sys/fs/bpf/sqlfw-e2e-lock-%d", os.Getpid())
	t.Cleanup(func() {
		if err := bpf.UnpinAll(pinDir); err != nil {
			t.Errorf("unpinning %s: %v", pinDir, err)
		}
		os.Remove(pinDir)
	})
	table := "hostlock_t"
	if wrap != nil {
		table = "hostlock_unit"
	}
	freshTable(t, table, 1, 2)
	args := []string{"--fail-closed", "--pin-dir", pinDir}
	if wrap != nil {
		args = nil
	}
	d1 := startInterceptingWrapped(t, cg, wrap, args...)

	// a second one beside it, on the same cgroup, and one on a cgroup
	// inside it: both refuse to start and name the first
	inner := filepath.Join(cg, "inner")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(inner)
	for _, c := range []string{cg, inner} {
		second := append([]string{"--intercept", "--cgroup", c}, args...)
		if wrap != nil {
			second = append(second, "--control-socket", unitControlSocket(t))
		}
		log, code := runToEndWrapped(t, wrap, second...)
		want := fmt.Sprintf("sqlfwd pid %d", d1.cmd.Process.Pid)
		if code != 1 || !strings.Contains(log, "another sqlfwd already intercepts cgroup "+c) || !strings.Contains(log, want) {
			t.Errorf("second daemon on %s: exit %d, log:\n%s\nwant exit 1 and an error naming %s", c, code, tail(log, 5), want)
		}
	}
	select {
	case <-d1.done:
		t.Fatalf("the first daemon exited:\n%s", tail(d1.log(), 10))
	default:
	}
	if res := psqlIn(t, cg, "127.0.0.1", "delete from "+table); !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("after the refused second daemon: got %s, want %s from the first", res, codeBlocked)
	}
	if !strings.Contains(d1.log(), `"msg":"statement blocked"`) {
		t.Errorf("the first daemon did not judge the statement:\n%s", tail(d1.log(), 5))
	}

	// --take-over: the first drains and exits 0, the new one intercepts
	d2 := startInterceptingWrapped(t, cg, wrap, append(args, "--take-over")...)
	select {
	case <-d1.done:
		if wrap != nil {
			if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d2.cmd.Process.Pid)); err == nil {
				t.Logf("the new daemon:\n%s", grepLines(string(st), "Uid:", "CapEff:"))
			}
		}
		if code := d1.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("the daemon taken over exited %d, want 0 (a SIGTERM drain)", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first daemon still runs after --take-over started")
	}
	if res := psqlIn(t, cg, "127.0.0.1", "delete from "+table); !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("after the take-over: got %s, want %s", res, codeBlocked)
	}
	if !strings.Contains(d2.log(), `"msg":"statement blocked"`) {
		t.Errorf("the new daemon did not judge the statement:\n%s", tail(d2.log(), 5))
	}
	if got := directInts(t, "select count(*) from "+table); got[0] != 2 {
		t.Errorf("rows: %v, want 2", got)
	}
}

// runToEnd runs a sqlfwd expected to exit on its own and returns its log
// and exit code.
func runToEnd(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return runToEndWrapped(t, nil, args...)
}

// runToEndWrapped is runToEnd with a command prefix (startDaemonWrapped).
func runToEndWrapped(t *testing.T, wrap []string, args ...string) (string, int) {
	t.Helper()
	d, err := startDaemonWrapped(wrap, args...)
	if err != nil {
		// it exited before listening: the error carries the log
		return err.Error(), 1
	}
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		d.stop()
		return d.log(), -1
	}
	log, code := d.log(), d.cmd.ProcessState.ExitCode()
	os.RemoveAll(filepath.Dir(d.logPath))
	return log, code
}
