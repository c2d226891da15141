package bpf

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
)

func listenUnix(t *testing.T, path, reply string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	serveLines(t, ln, reply, nil)
}

func TestUnixRedirect(t *testing.T) {
	mnt := requireKernel(t, ebpf.CGroupSockAddr)
	if err := ProbeUnix(); errors.Is(err, ErrUnsupported) {
		t.Skipf("skipping: %v", err)
	} else if err != nil {
		t.Fatalf("ProbeUnix: %v", err)
	}
	cg := testCgroup(t, mnt)
	dir := t.TempDir()
	db, daemon := filepath.Join(dir, ".s.PGSQL.5432"), filepath.Join(dir, "sqlfw.sock")
	listenUnix(t, db, "db")
	listenUnix(t, daemon, "daemon")

	u, err := LoadUnixRedirect(UnixConfig{Cgroup: cg, Mark: testMark, NetnsCookie: ownNetnsCookie(t)})
	if err != nil {
		t.Fatalf("LoadUnixRedirect: %v", err)
	}
	defer u.Close()
	if err := u.Protect(db, daemon); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		opts helperOpts
		want string
	}{
		{"protected path", helperOpts{Cgroup: cg, Dial: db}, "daemon"},
		{"doubled slashes", helperOpts{Cgroup: cg, Dial: "/" + strings.ReplaceAll(db, "/", "//")}, "daemon"},
		{"dot components", helperOpts{Cgroup: cg, Dial: strings.ReplaceAll(db, "/", "/./")}, "daemon"},
		{"relative", helperOpts{Cgroup: cg, Dial: "unix:.s.PGSQL.5432", Dir: dir}, "daemon"},
		{"relative dot", helperOpts{Cgroup: cg, Dial: "unix:./.s.PGSQL.5432", Dir: dir}, "daemon"},
		{"relative from above", helperOpts{Cgroup: cg, Dial: "unix:" + filepath.Base(dir) + "//.s.PGSQL.5432", Dir: filepath.Dir(dir)}, "daemon"},
		{"relative from the root", helperOpts{Cgroup: cg, Dial: "unix:" + db[1:], Dir: "/"}, "daemon"},
		{"proc self cwd", helperOpts{Cgroup: cg, Dial: "/proc/self/cwd/.s.PGSQL.5432", Dir: dir}, "daemon"},
		{"proc thread-self cwd", helperOpts{Cgroup: cg, Dial: "/proc/thread-self/cwd/./.s.PGSQL.5432", Dir: dir}, "daemon"},
		{"proc self root", helperOpts{Cgroup: cg, Dial: "/proc/self/root" + db}, "daemon"},
		{"relative elsewhere", helperOpts{Cgroup: cg, Dial: "unix:sqlfw.sock", Dir: dir}, "daemon"},
		{"relative, outside the cgroup", helperOpts{Dial: "unix:.s.PGSQL.5432", Dir: dir}, "db"},
		{"daemon's own marked socket", helperOpts{Cgroup: cg, Dial: db, Mark: testMark}, "db"},
		{"outside the cgroup", helperOpts{Dial: db}, "db"},
		{"other path", helperOpts{Cgroup: cg, Dial: daemon}, "daemon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := runHelper(t, tt.opts)
			if res.Reply != tt.want {
				t.Errorf("dial %s: reply %q err %q, want %q", tt.opts.Dial, res.Reply, res.Err, tt.want)
			}
		})
	}
	if c, err := u.Counters(); err != nil || c.Redirected != 10 || c.SkippedOwn != 1 {
		t.Errorf("Counters() = %+v, %v; want Redirected 10 SkippedOwn 1", c, err)
	}

	// The daemon's own socket by cookie, from inside the cgroup: exempt
	// while ExemptCookie holds, redirected like any other after.
	t.Run("exempt cookie", func(t *testing.T) {
		enterCgroup(t, cg)
		var cookie uint64
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var err error
			if cookie, err = SocketCookie(rc); err != nil {
				return err
			}
			return u.ExemptCookie(cookie)
		}}
		c, err := d.Dial("unix", db)
		if err != nil {
			t.Fatal(err)
		}
		if got := roundTrip(t, c); got != "db" {
			t.Errorf("exempt socket: reply %q, want \"db\"", got)
		}
		c.Close()
		if err := u.UnexemptCookie(cookie); err != nil {
			t.Fatal(err)
		}
		if c, err = net.Dial("unix", db); err != nil {
			t.Fatal(err)
		}
		if got := roundTrip(t, c); got != "daemon" {
			t.Errorf("socket not exempt: reply %q, want \"daemon\"", got)
		}
		c.Close()
	})
	if c, err := u.Counters(); err != nil || c.Redirected != 11 || c.SkippedOwn != 2 {
		t.Errorf("Counters() = %+v, %v; want Redirected 11 SkippedOwn 2", c, err)
	}
	if err := u.Unprotect(db); err != nil {
		t.Fatal(err)
	}
	for _, o := range []helperOpts{{Cgroup: cg, Dial: db}, {Cgroup: cg, Dial: "unix:.s.PGSQL.5432", Dir: dir}, {Cgroup: cg, Dial: "/proc/self/root" + db}} {
		if res, _ := runHelper(t, o); res.Reply != "db" {
			t.Errorf("after Unprotect, dial %s: reply %q err %q, want \"db\"", o.Dial, res.Reply, res.Err)
		}
	}
}

// TestUnixGuard: a connect from the cgroup that reaches a guarded server
// socket by another name than the redirected ones (a symlink, a hard link,
// a ".." path, a /proc/PID/root path) is refused with EPERM by
// whichever guard loads here; the protected name itself is redirected;
// sqlfwd's own dial (an exempt cookie), a client outside the cgroup (also in
// a sibling cgroup) and an unguarded socket are left alone.
func TestUnixGuard(t *testing.T) {
	mnt := requireKernel(t, ebpf.CGroupSockAddr)
	if err := ProbeUnix(); errors.Is(err, ErrUnsupported) {
		t.Skipf("skipping: %v", err)
	} else if err != nil {
		t.Fatalf("ProbeUnix: %v", err)
	}
	cg, sibling := testCgroup(t, mnt), testCgroup(t, mnt)
	dir := t.TempDir()
	db, daemon := filepath.Join(dir, ".s.PGSQL.5432"), filepath.Join(dir, "sqlfw.sock")
	other := filepath.Join(dir, "other.sock")
	listenUnix(t, db, "db")
	listenUnix(t, daemon, "daemon")
	listenUnix(t, other, "other")
	symlink, hardlink := filepath.Join(dir, "link"), filepath.Join(dir, "hard")
	if err := os.Symlink(db, symlink); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(db, hardlink); err != nil {
		t.Fatal(err)
	}

	u, err := LoadUnixRedirect(UnixConfig{Cgroup: cg, Mark: testMark, NetnsCookie: ownNetnsCookie(t)})
	if err != nil {
		t.Fatalf("LoadUnixRedirect: %v", err)
	}
	defer u.Close()
	if u.GuardErr != nil {
		t.Skipf("skipping: no guard loads here: %v", u.GuardErr)
	}
	t.Logf("guard: %s", u.GuardKind)
	if err := u.Protect(db, daemon); err != nil {
		t.Fatal(err)
	}
	if err := u.Guard(db); err != nil {
		t.Fatal(err)
	}
	procRoot := fmt.Sprintf("/proc/%d/root%s", os.Getpid(), db)

	refused := syscall.EPERM.Error()
	tests := []struct {
		name string
		opts helperOpts
		want string // reply, or the error text
	}{
		{"protected path", helperOpts{Cgroup: cg, Dial: db}, "daemon"},
		{"symlink", helperOpts{Cgroup: cg, Dial: symlink}, refused},
		{"hard link", helperOpts{Cgroup: cg, Dial: hardlink}, refused},
		{"dot dot", helperOpts{Cgroup: cg, Dial: dir + "/../" + filepath.Base(dir) + "/.s.PGSQL.5432"}, refused},
		{"proc pid root", helperOpts{Cgroup: cg, Dial: procRoot}, refused},
		{"relative (redirected, not refused)", helperOpts{Cgroup: cg, Dial: "unix:.s.PGSQL.5432", Dir: dir}, "daemon"},
		{"daemon's marked socket", helperOpts{Cgroup: cg, Dial: db, Mark: testMark}, "db"},
		{"unguarded socket", helperOpts{Cgroup: cg, Dial: other}, "other"},
		{"outside the cgroup, symlink", helperOpts{Dial: symlink}, "db"},
		{"sibling cgroup, hard link", helperOpts{Cgroup: sibling, Dial: hardlink}, "db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := runHelper(t, tt.opts)
			if got := res.Reply; got != tt.want && !strings.Contains(res.Err, tt.want) {
				t.Errorf("dial %s: reply %q err %q, want %q", tt.opts.Dial, res.Reply, res.Err, tt.want)
			}
		})
	}
	if c, err := u.Counters(); err != nil || c.GuardRefused != 4 {
		t.Errorf("Counters() = %+v, %v; want GuardRefused 4", c, err)
	}

	// sqlfwd's own dial by another name, exempt by cookie, from the cgroup.
	t.Run("exempt cookie", func(t *testing.T) {
		enterCgroup(t, cg)
		var cookie uint64
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var err error
			if cookie, err = SocketCookie(rc); err != nil {
				return err
			}
			return u.ExemptCookie(cookie)
		}}
		c, err := d.Dial("unix", symlink)
		if err != nil {
			t.Fatal(err)
		}
		if got := roundTrip(t, c); got != "db" {
			t.Errorf("exempt socket: reply %q, want \"db\"", got)
		}
		c.Close()
		_ = u.UnexemptCookie(cookie)
	})

	// A server that binds its path anew is guarded again by Reguard; an
	// unguarded path is reachable by its other names.
	os.Remove(db)
	os.Remove(hardlink)
	listenUnix(t, db, "db2")
	if res, _ := runHelper(t, helperOpts{Cgroup: cg, Dial: symlink}); res.Reply != "db2" {
		t.Errorf("new socket before Reguard: reply %q err %q, want \"db2\" (old inode guarded only)", res.Reply, res.Err)
	}
	if err := u.Reguard(); err != nil {
		t.Fatal(err)
	}
	if res, _ := runHelper(t, helperOpts{Cgroup: cg, Dial: symlink}); !strings.Contains(res.Err, refused) {
		t.Errorf("new socket after Reguard: reply %q err %q, want %q", res.Reply, res.Err, refused)
	}
	u.Unguard(db)
	if res, _ := runHelper(t, helperOpts{Cgroup: cg, Dial: symlink}); res.Reply != "db2" {
		t.Errorf("after Unguard: reply %q err %q, want \"db2\"", res.Reply, res.Err)
	}
}
