package daemon

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/relay"
)

// searchableDir is a temporary directory other users may search (a
// t.TempDir's parent is root's alone).
func searchableDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "sqlfw-dialas-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// peerOf reads the credentials the server side of a unix connection sees.
func peerOf(t *testing.T, c net.Conn) *relay.Credentials {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	as := peerCredentials(rc)
	if as == nil {
		t.Fatal("no SO_PEERCRED")
	}
	return as
}

// TestDialUnixAs: a unix socket dialed as a client sees that client's uid,
// gid and groups in SO_PEERCRED / SO_PEERGROUPS, the socket's permissions
// are checked as that client, and the process keeps its own credentials.
func TestDialUnixAs(t *testing.T) {
	if !canDialAs() {
		t.Skip("skipping: needs CAP_SETUID and CAP_SETGID (run as root)")
	}
	dir := searchableDir(t)
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(path, 0o777)
	accepted := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	d := &Daemon{}
	uid, gid := os.Geteuid(), os.Getegid()
	for _, as := range []relay.Credentials{
		{UID: 65534, GID: 65534, Groups: []uint32{65534}},
		{UID: 4321, GID: 1234, Groups: []uint32{7, 1234, 99}},
		{UID: 4321, GID: 1234},
	} {
		ctx, cancel := context.WithTimeout(relay.WithDialAs(context.Background(), &as), 5*time.Second)
		c, err := d.dial(ctx, "unix", path)
		cancel()
		if err != nil {
			t.Fatalf("dial as %+v: %v", as, err)
		}
		s := <-accepted
		got := peerOf(t, s)
		want := slices.Sorted(slices.Values(as.Groups)) // the kernel keeps them sorted
		if got.UID != as.UID || got.GID != as.GID || !slices.Equal(got.Groups, want) && len(want)+len(got.Groups) > 0 {
			t.Errorf("the server sees %+v, want %+v", *got, as)
		}
		s.Close()
		c.Close()
		if os.Geteuid() != uid || os.Getegid() != gid {
			t.Fatalf("the process's credentials changed: euid %d egid %d", os.Geteuid(), os.Getegid())
		}
	}

	// many at once, with plain dials between them: every thread that took
	// a client's credentials ended with its goroutine, so a plain dial
	// (on whatever thread) is still sqlfwd's own
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if i%2 == 0 {
				ctx = relay.WithDialAs(ctx, &relay.Credentials{UID: 4000 + uint32(i), GID: 4000})
			}
			c, err := d.dial(ctx, "unix", path)
			if err != nil {
				t.Errorf("dial %d: %v", i, err)
				return
			}
			c.Close()
		}()
	}
	wg.Wait()
	seen := map[uint32]int{}
	for range 32 {
		s := <-accepted
		seen[peerOf(t, s).UID]++
		s.Close()
	}
	if seen[uint32(uid)] != 16 || len(seen) != 17 {
		t.Errorf("uids the server saw: %v, want 16 of sqlfwd's (%d) and one each of 4000+2k", seen, uid)
	}

	// the socket's permissions are the client's: a directory only root
	// may search keeps uid 65534 out, as it would keep the client out
	private := filepath.Join(dir, "private")
	os.Mkdir(private, 0o700)
	pln, err := net.Listen("unix", filepath.Join(private, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer pln.Close()
	ctx, cancel := context.WithTimeout(relay.WithDialAs(context.Background(), &relay.Credentials{UID: 65534, GID: 65534}), 5*time.Second)
	defer cancel()
	if _, err := d.dial(ctx, "unix", filepath.Join(private, "s.sock")); !errors.Is(err, unix.EACCES) {
		t.Errorf("dial as 65534 into a 0700 root directory: %v, want EACCES", err)
	}
	if c, err := d.dial(context.Background(), "unix", filepath.Join(private, "s.sock")); err != nil {
		t.Errorf("plain dial into the same directory: %v", err)
	} else {
		c.Close()
	}
}

// BenchmarkDialUnixAs compares a connect as the client (a thread of its
// own per connect) with sqlfwd's plain dial.
func BenchmarkDialUnixAs(b *testing.B) {
	if !canDialAs() {
		b.Skip("skipping: needs CAP_SETUID and CAP_SETGID (run as root)")
	}
	dir := searchableDir(b)
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(path, 0o777)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	d := &Daemon{}
	for _, bc := range []struct {
		name string
		as   *relay.Credentials
	}{{"self", nil}, {"as-client", &relay.Credentials{UID: 65534, GID: 65534}}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			if bc.as != nil {
				ctx = relay.WithDialAs(ctx, bc.as)
			}
			for b.Loop() {
				c, err := d.dial(ctx, "unix", path)
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}
