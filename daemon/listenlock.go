package daemon

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/sqlfw/sqlfw/discover"
)

// An explicit listener's address is its own lock: sqlfwd binds without
// SO_REUSEPORT (unless reuse_port asks several daemons to share the port),
// so the kernel refuses a second daemon's bind, and releases the address
// when the first exits however it exits. The refusal names who holds the
// address (listenHolders), as the cgroup lock does (hostlock.go).

// listenInUse turns a bind's EADDRINUSE into an error naming the holder.
func listenInUse(proc, addr string, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	ap, perr := netip.ParseAddrPort(addr)
	if perr != nil {
		return err
	}
	who := describeHolders(proc, listenHolders(proc, ap))
	return fmt.Errorf("%s is already in use by %s: one daemon per listen address (stop it first, or give both reuse_port to share the port): %w", addr, who, err)
}

// listenHolders finds the processes holding a listening socket on ap's
// port that conflicts with ap (the same address, or a wildcard of the
// port), through sock_diag and the fd links this process may read (its
// own user's processes, or all as root). Nil when none is visible.
func listenHolders(proc string, ap netip.AddrPort) []int {
	lns, err := discover.TCPListeners()
	if err != nil {
		return nil
	}
	want := map[string]bool{}
	for ino, l := range lns {
		if l.Port() == ap.Port() && (l.Addr() == ap.Addr().Unmap() || l.Addr().IsUnspecified() || ap.Addr().IsUnspecified()) {
			want["socket:["+strconv.FormatUint(ino, 10)+"]"] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(proc, e.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(proc, e.Name(), "fd", fd.Name())); err == nil && want[link] {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
