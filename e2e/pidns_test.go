package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterceptInPIDNamespace runs sqlfwd as a plain container run would:
// in a PID namespace of its own (it is pid 1 there) with its own /proc,
// intercepting a child cgroup. Its own upstream connections (TCP and the
// unix socket) must reach PostgreSQL, not come back to it: clients in the
// cgroup are judged and answered, every session is a client's, and no loop
// was refused or logged. It runs as root and as the unit runs it (its
// user, exactly its capabilities: setpriv inside the namespace, as a
// container's USER would).
func TestInterceptInPIDNamespace(t *testing.T) {
	needKernel(t)
	t.Run("root", func(t *testing.T) { interceptInPIDNamespace(t, false) })
	t.Run("unit user", func(t *testing.T) { interceptInPIDNamespace(t, true) })
}

func interceptInPIDNamespace(t *testing.T, asUnit bool) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("skipping: unshare (util-linux) is not installed")
	}
	cg := childCgroup(t)
	args := []string{"--intercept", "--cgroup", cg}
	if pg.SockDir != "" {
		args = append(args, "--unix-socket", fmt.Sprintf("%s/.s.PGSQL.%d", pg.SockDir, pg.Port))
	}
	// unshare --fork ignores SIGTERM while it waits: the test stops the
	// daemon (its child) itself.
	wrap := append(inCgroup(cg), unshare, "--pid", "--fork", "--mount-proc", "--kill-child")
	var control string
	if asUnit {
		wrap = append(wrap, unitWrap(t)...)
		control = unitControlSocket(t)
		args = append(args, "--control-socket", control)
	}
	d, err := startDaemonWrapped(wrap, args...)
	if err != nil {
		t.Fatal(err)
	}
	if control != "" {
		d.control = control
	}
	var inner int
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 40))
		}
		if inner != 0 {
			syscall.Kill(inner, syscall.SIGTERM)
		}
		_ = d.stop()
	})
	for i := 0; !strings.Contains(d.log(), `"msg":"sqlfwd started"`); i++ {
		if i > 100 {
			t.Fatalf("sqlfwd did not finish starting; its log:\n%s", d.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(d.log(), `"msg":"intercepting"`) {
		t.Fatalf("sqlfwd did not intercept; its log:\n%s", d.log())
	}
	// The daemon is unshare's child, pid 1 in its namespace.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", d.cmd.Process.Pid, d.cmd.Process.Pid))
	if err != nil || len(strings.Fields(string(b))) != 1 {
		t.Fatalf("children of unshare: %q, %v", b, err)
	}
	inner, _ = strconv.Atoi(strings.Fields(string(b))[0])
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", inner))
	if nspid := grepLines(string(st), "NSpid:"); !strings.HasSuffix(strings.TrimSpace(nspid), "\t1") {
		t.Fatalf("sqlfwd is not pid 1 of a PID namespace of its own: %q", nspid)
	}
	if asUnit {
		_, name, _ := unitUser(t)
		u, err := user.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		uid := grepLines(string(st), "Uid:")
		if f := strings.Fields(uid); len(f) < 2 || f[1] != u.Uid {
			t.Fatalf("sqlfwd runs as %q, want uid %s (%s)", uid, u.Uid, name)
		}
		t.Logf("sqlfwd in the namespace:\n%s", grepLines(string(st), "Uid:", "CapEff:", "CapAmb:"))
	}

	table := "icept_pidns"
	if asUnit {
		table = "icept_pidns_unit"
	}
	freshTable(t, table, 1, 2, 3)
	before := stats(t, d)
	hosts := []string{"127.0.0.1", "::1"}
	if pg.SockDir != "" {
		hosts = append(hosts, pg.SockDir)
	}
	for _, h := range hosts {
		psqlJudged(t, cg, h, table)
	}
	if got := directInts(t, "select count(*) from "+table); len(got) != 1 || got[0] != 3 {
		t.Errorf("rows after the blocked deletes: %v, want [3]", got)
	}
	s := stats(t, d)
	ic, db := s.Interception, s.Databases[0]
	// Every session is a redirected client connect: a looping upstream
	// connect would be redirected too (and refused as a loop, or served).
	redirected := ic.Redirected + ic.UnixRedirected - before.Interception.Redirected - before.Interception.UnixRedirected
	sessions := db.ConnectionsTotal - before.Databases[0].ConnectionsTotal
	if redirected != sessions || sessions != uint64(2*len(hosts)) {
		t.Errorf("%d connects redirected, %d sessions, for %d client connections: want them equal", redirected, sessions, 2*len(hosts))
	}
	if ic.OwnLoops != 0 || ic.Refused != 0 {
		t.Errorf("interception counters %+v: want no loops, none refused", ic)
	}
	// sqlfwd's upstream connects were left alone by the programs (TCP to
	// the database's address, and its unix socket).
	if ic.SkippedOwn < 4 || (pg.SockDir != "" && (ic.UnixRedirected < 2 || ic.UnixSkippedOwn < 2)) {
		t.Errorf("interception counters %+v: want sqlfwd's own upstream connects skipped (≥ 4 TCP, ≥ 2 unix)", ic)
	}
	if db.Denied != uint64(len(hosts)) {
		t.Errorf("denied = %d, want %d", db.Denied, len(hosts))
	}
	if strings.Contains(d.log(), "to itself") {
		t.Errorf("sqlfwd logged a loop:\n%s", tail(d.log(), 10))
	}
}
