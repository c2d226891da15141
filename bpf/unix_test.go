package bpf

import (
	"errors"
	"net"
	"path/filepath"
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
	if c, err := u.Counters(); err != nil || c.Redirected != 1 || c.SkippedOwn != 1 {
		t.Errorf("Counters() = %+v, %v; want Redirected 1 SkippedOwn 1", c, err)
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
	if c, err := u.Counters(); err != nil || c.Redirected != 2 || c.SkippedOwn != 2 {
		t.Errorf("Counters() = %+v, %v; want Redirected 2 SkippedOwn 2", c, err)
	}
	if err := u.Unprotect(db); err != nil {
		t.Fatal(err)
	}
	if res, _ := runHelper(t, helperOpts{Cgroup: cg, Dial: db}); res.Reply != "db" {
		t.Errorf("after Unprotect: reply %q err %q, want \"db\"", res.Reply, res.Err)
	}
}
