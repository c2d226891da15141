package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/cgroupstats"
)

// The fallback's note is the reason interception is unavailable, found by
// type however the error was wrapped, not by cutting its text.
func TestInterceptUnavailableReason(t *testing.T) {
	err := fmt.Errorf("starting: %w", interceptUnavailable(fmt.Errorf("no cgroup2 mount: %w", io.EOF)))
	var u *interceptUnavailableError
	if !errors.As(err, &u) || u.Reason.Error() != "no cgroup2 mount: EOF" {
		t.Fatalf("errors.As(%v): %v, reason %v", err, u != nil, u)
	}
	if want := "starting: interception unavailable: no cgroup2 mount: EOF"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if !errors.Is(err, io.EOF) {
		t.Error("the cause is not reachable with errors.Is")
	}
	if errors.As(fmt.Errorf("listening: %w", io.EOF), &u) {
		t.Error("an error that is not an unavailable interception matched")
	}
}

// The client-process readers go through the daemon's procfs root: a fake
// tree stands in for /proc.
func TestProcReadersUseTheRoot(t *testing.T) {
	proc := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(proc, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("4242/comm", "billing-worker\n")
	write("4242/cgroup", "12:cpu,cpuacct:/legacy\n0::/system.slice/billing.service\n")
	write("4242/status", "Name:\tbilling-worker\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nGroups:\t27 990 1000 \n")

	if got := readComm(proc, 4242); got != "billing-worker" {
		t.Errorf("readComm = %q, want billing-worker", got)
	}
	if got := procCgroup(proc, 4242); got != "/system.slice/billing.service" {
		t.Errorf("procCgroup = %q, want /system.slice/billing.service", got)
	}
	cred := &unix.Ucred{Pid: 4242, Uid: 1000, Gid: 1000}
	for _, tc := range []struct {
		gid  int
		want bool
	}{{990, true}, {1000, true}, {27, true}, {991, false}, {-1, false}} {
		if got := inGroup(proc, cred, tc.gid); got != tc.want {
			t.Errorf("inGroup(gid %d) = %v, want %v", tc.gid, got, tc.want)
		}
	}
	// a process the tree does not have: nothing known, nothing granted
	if readComm(proc, 7) != "" || procCgroup(proc, 7) != "" || inGroup(proc, &unix.Ucred{Pid: 7, Gid: 1}, 990) {
		t.Error("a missing process was read")
	}
}

func TestIsCgroup2Root(t *testing.T) {
	touch := func(dir string, names ...string) string {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	tests := []struct {
		name string
		dir  string
		want bool
	}{
		{"root of a hierarchy", touch(t.TempDir(), "cgroup.controllers", "cgroup.procs"), true},
		{"a child cgroup", touch(t.TempDir(), "cgroup.controllers", "cgroup.procs", "cgroup.freeze"), false},
		{"not a cgroup", t.TempDir(), false},
		{"missing", filepath.Join(t.TempDir(), "absent"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isCgroup2Root(tt.dir); got != tt.want {
				t.Errorf("isCgroup2Root(%s) = %v, want %v", tt.dir, got, tt.want)
			}
		})
	}
	// The real mount, where there is one.
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		if mnt, err := cgroupstats.Cgroup2Mount(bytes.NewReader(b)); err == nil && !isCgroup2Root(mnt) {
			t.Errorf("isCgroup2Root(%s) = false for the cgroup2 mount", mnt)
		}
	}
}

// A socket under /run is also protected by its /var/run name and the
// reverse (where /var/run links to /run), and by its resolved path.
func TestSocketNames(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(real, link)
	if got, want := socketNames(filepath.Join(link, "s.sock")), []string{filepath.Join(link, "s.sock"), filepath.Join(real, "s.sock")}; !slices.Equal(got, want) {
		t.Errorf("through a link: %q, want %q", got, want)
	}
	if r, err := filepath.EvalSymlinks("/var/run"); err != nil || r != "/run" {
		t.Skip("skipping: /var/run is not a link to /run here")
	}
	for in, want := range map[string][]string{
		"/run/mysqld/mysqld.sock":           {"/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock"},
		"/var/run/postgresql/.s.PGSQL.5432": {"/var/run/postgresql/.s.PGSQL.5432", "/run/postgresql/.s.PGSQL.5432"},
	} {
		if _, err := os.Stat(filepath.Dir(in)); err != nil {
			continue // the directory must exist for its resolved name
		}
		if got := socketNames(in); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// A connection the accept loop hands over after close has let the redirect
// object go (it was accepted just before its listener closed) is refused
// with an error, not a nil dereference that kills the draining daemon (seen
// in TestInterceptFailClosed's SIGTERM under load).
func TestFromRedirectAfterClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	it := &interceptor{} // as close leaves it: no redirect object
	if _, err := it.fromRedirect(s); err == nil {
		t.Fatal("fromRedirect without a redirect object: no error")
	}
}
