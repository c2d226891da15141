package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/relay"
)

// Connecting to a unix socket as the client that connected to sqlfwd.
//
// A redirected unix-socket client reaches the server through sqlfwd's own
// connect(), and the kernel records the connecting thread's effective
// credentials as the server's SO_PEERCRED. Without more, every such client
// is sqlfwd's user to the server: PostgreSQL's peer and MariaDB's
// unix_socket authentication (Debian's defaults for local administrators)
// refuse or misidentify it, and the socket file's permissions are checked
// against sqlfwd rather than the client, which could then reach a socket
// it may not open itself.
//
// So the upstream connect runs on a thread of its own whose supplementary
// groups, effective gid and effective uid are the client's (SO_PEERCRED and
// SO_PEERGROUPS of the accepted socket). The thread is locked and never
// unlocked: the runtime ends a thread whose goroutine exits locked, and the
// changed credentials end with it. They are changed with raw system calls,
// which change the calling thread only (Go's and libc's set*id change every
// thread of the process). This needs CAP_SETUID and CAP_SETGID; without
// them sqlfwd connects as itself and says so once (unixAsWarning).

// canDialAs reports whether this process may connect as another user: it
// has CAP_SETUID and CAP_SETGID in its effective set.
func canDialAs() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	const need = 1<<unix.CAP_SETUID | 1<<unix.CAP_SETGID
	return data[0].Effective&need == need
}

// unixAsWarning is what the daemon says once when it intercepts a unix
// socket and cannot connect as its clients.
const unixAsWarning = "unix-socket clients reach the server as sqlfwd's own user: the server's peer / unix_socket authentication and the socket's permissions see sqlfwd, not the client; grant CAP_SETUID and CAP_SETGID (deploy/sqlfwd.service does) so that sqlfwd connects as each client"

// peerCredentials reads a unix-socket client's credentials, or nil.
func peerCredentials(rc syscall.RawConn) *relay.Credentials {
	var as *relay.Credentials
	_ = rc.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err != nil {
			return
		}
		as = &relay.Credentials{UID: cred.Uid, GID: cred.Gid, Groups: peerGroups(int(fd))}
	})
	return as
}

// peerGroups reads SO_PEERGROUPS (nil when the kernel has none to give).
func peerGroups(fd int) []uint32 {
	buf := make([]uint32, 64)
	for {
		n := uint32(len(buf) * 4)
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_PEERGROUPS,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
		switch {
		case e == 0:
			return buf[:n/4]
		case e == unix.ERANGE && int(n/4) > len(buf) && n/4 <= 65536:
			buf = make([]uint32, n/4)
		default:
			return nil
		}
	}
}

// sameCredentials reports whether as are this process's own effective
// uid and gid (no thread of its own is needed then).
func sameCredentials(as *relay.Credentials) bool {
	return int(as.UID) == os.Geteuid() && int(as.GID) == os.Getegid()
}

// dialUnixAs connects to the unix socket at path as as, before ctx ends.
func (d *Daemon) dialUnixAs(ctx context.Context, path string, as *relay.Credentials) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		c, err := d.connectUnixAs(ctx, path, as)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: ctx.Err()}
	}
}

// connectUnixAs runs on a locked thread that ends after it: it takes as's
// credentials and connects.
func (d *Daemon) connectUnixAs(ctx context.Context, path string, as *relay.Credentials) (net.Conn, error) {
	opErr := func(err error) error {
		return &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: err}
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, opErr(os.NewSyscallError("socket", err))
	}
	keep := false
	defer func() {
		if !keep {
			unix.Close(fd)
		}
	}()
	if ctl := d.dialer.ControlContext; ctl != nil {
		// the own-socket exemption, as for the dialer's sockets
		if err := ctl(ctx, "unix", path, rawFD(fd)); err != nil {
			return nil, opErr(err)
		}
	}
	// a blocking connect() on a unix socket waits at most SO_SNDTIMEO for
	// a full backlog
	if dl, ok := ctx.Deadline(); ok {
		wait := time.Until(dl)
		if wait <= 0 {
			return nil, opErr(context.DeadlineExceeded)
		}
		tv := unix.NsecToTimeval(wait.Nanoseconds())
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
			return nil, opErr(os.NewSyscallError("setsockopt", err))
		}
	}
	if err := becomeOnThisThread(as); err != nil {
		return nil, opErr(fmt.Errorf("taking the client's credentials (uid %d gid %d): %w", as.UID, as.GID, err))
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINPROGRESS) {
			err = context.DeadlineExceeded
		}
		return nil, opErr(os.NewSyscallError("connect", err))
	}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &unix.Timeval{})
	f := os.NewFile(uintptr(fd), path)
	keep = true
	c, err := net.FileConn(f) // a dup, non-blocking, in the runtime's poller
	f.Close()
	if err != nil {
		return nil, opErr(err)
	}
	return c, nil
}

// becomeOnThisThread sets the calling thread's supplementary groups,
// effective gid and effective uid to as's (real and saved ids stay).
func becomeOnThisThread(as *relay.Credentials) error {
	var groups unsafe.Pointer
	if len(as.Groups) > 0 {
		groups = unsafe.Pointer(&as.Groups[0])
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(as.Groups)), uintptr(groups), 0); e != 0 {
		return os.NewSyscallError("setgroups", e)
	}
	const keep = ^uintptr(0) // -1: unchanged
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, keep, uintptr(as.GID), keep); e != 0 {
		return os.NewSyscallError("setresgid", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, keep, uintptr(as.UID), keep); e != 0 {
		return os.NewSyscallError("setresuid", e)
	}
	return nil
}

// rawFD is a socket not yet in the runtime's poller, as the dialer's
// Control sees one.
type rawFD int

func (f rawFD) Control(fn func(fd uintptr)) error { fn(uintptr(f)); return nil }
func (f rawFD) Read(func(fd uintptr) bool) error  { return errors.ErrUnsupported }
func (f rawFD) Write(func(fd uintptr) bool) error { return errors.ErrUnsupported }
