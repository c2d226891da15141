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
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
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
	if errors.Is(u.GuardErr, ErrGuardRefused) {
		t.Skipf("skipping: the kernel refuses the guard here: %v", u.GuardErr)
	} else if u.GuardErr != nil {
		t.Fatalf("GuardErr %v does not wrap ErrGuardRefused", u.GuardErr)
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

// brokenProgram replaces spec's program name by one the verifier rejects
// (R0 read from an uninitialised register), as a mistake in unix.c would be.
func brokenProgram(t *testing.T, spec *ebpf.CollectionSpec, name string) {
	t.Helper()
	p, ok := spec.Programs[name]
	if !ok {
		t.Fatalf("no program %s in the unix spec", name)
	}
	p.Instructions = asm.Instructions{asm.Mov.Reg(asm.R0, asm.R5), asm.Return()}
}

// TestUnixBrokenObjectFails: a unix.c the verifier rejects is an error of
// its own, neither ErrUnsupported nor ErrNoPrivilege, so the daemon does
// not fall back to "unix sockets not intercepted" and TestUnixRedirect
// fails instead of skipping. The guard's own refusal here (no trampoline)
// is ErrGuardRefused; a guard the verifier read and rejected is not.
func TestUnixBrokenObjectFails(t *testing.T) {
	mnt := requireKernel(t, ebpf.CGroupSockAddr)
	if err := ProbeUnix(); errors.Is(err, ErrUnsupported) {
		t.Skipf("skipping: %v", err)
	} else if err != nil {
		t.Fatalf("ProbeUnix: %v", err)
	}
	cfg := UnixConfig{Cgroup: testCgroup(t, mnt), Mark: testMark, NetnsCookie: ownNetnsCookie(t)}

	spec, err := loadUnix()
	if err != nil {
		t.Fatal(err)
	}
	brokenProgram(t, spec, "redirect_connect_unix")
	u, err := loadUnixRedirect(cfg, spec)
	if err == nil {
		u.Close()
		t.Fatal("a connect_unix program the verifier rejects loaded")
	}
	if errors.Is(err, ErrUnsupported) || errors.Is(err, ErrNoPrivilege) {
		t.Fatalf("broken connect_unix = %v; want neither ErrUnsupported nor ErrNoPrivilege", err)
	}
	if !verifierRejected(err) {
		t.Fatalf("broken connect_unix = %v; want the verifier's rejection", err)
	}
	t.Logf("broken connect_unix: %.200s", err)

	// The guards: whatever this kernel answers for the real programs must
	// be classified as it is; a verifier rejection is never "refused".
	for _, name := range []string{"guard_unix_stream_connect", "guard_unix_connect_ret"} {
		spec, err := loadUnix()
		if err != nil {
			t.Fatal(err)
		}
		brokenProgram(t, spec, name)
		u, err := loadUnixRedirect(cfg, spec)
		switch {
		case err != nil:
			if errors.Is(err, ErrGuardRefused) || errors.Is(err, ErrUnsupported) || errors.Is(err, ErrNoPrivilege) {
				t.Errorf("broken %s: %v; want an error of its own", name, err)
			}
			t.Logf("broken %s fails loudly: %.200s", name, err)
		case u.GuardErr != nil:
			// The kernel refused before reading the program (EPERM, no
			// trampoline): the broken body was never verified.
			if !errors.Is(u.GuardErr, ErrGuardRefused) || verifierRejected(u.GuardErr) {
				t.Errorf("broken %s: GuardErr %v; want ErrGuardRefused without a verifier log", name, u.GuardErr)
			}
			t.Logf("broken %s: the kernel refused it unread: %.200s", name, u.GuardErr)
			u.Close()
		default:
			// The other guard loaded; only the broken one being the LSM
			// one and refused unread gets here.
			t.Logf("broken %s: guard %s loaded instead", name, u.GuardKind)
			u.Close()
		}
	}
}

// TestKernelRefused: the classification of a guard's failure, on the
// kernel's real answers: a verifier rejection (a socket filter reading an
// uninitialised register, EACCES with a log) is not a refusal, the
// kernel's EPERM before verification is.
func TestKernelRefused(t *testing.T) {
	requireKernel(t, ebpf.SocketFilter)
	_, verr := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Reg(asm.R0, asm.R5), asm.Return()},
	})
	if verr == nil {
		t.Fatal("the verifier accepted a read of R5")
	}
	eperm := fmt.Errorf("load program: %w", unix.EPERM)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"verifier rejection", classify(verr), false},
		{"EPERM before verification", classify(eperm), true},
		{"kernel lacks the hook", classify(fmt.Errorf("x: %w", ebpf.ErrNotSupported)), true},
		{"EINVAL without a log", classify(fmt.Errorf("x: %w", unix.EINVAL)), true},
		{"E2BIG", classify(fmt.Errorf("x: %w", unix.E2BIG)), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := kernelRefused(tc.err); got != tc.want {
				t.Errorf("kernelRefused(%v) = %v; want %v", tc.err, got, tc.want)
			}
		})
	}
	if errors.Is(classify(verr), ErrNoPrivilege) {
		t.Errorf("classify(verifier EACCES) = %v; want not ErrNoPrivilege", classify(verr))
	}
}
