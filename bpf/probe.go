package bpf

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"
)

// Callers branch on these to pick a fallback (an explicit listener) and to
// print one line saying what is missing.
var (
	// ErrNoPrivilege: the kernel refused with EPERM/EACCES. Loading and
	// attaching need CAP_BPF + CAP_NET_ADMIN (or CAP_SYS_ADMIN).
	ErrNoPrivilege = errors.New("no privilege for eBPF (need CAP_BPF and CAP_NET_ADMIN, or CAP_SYS_ADMIN)")
	// ErrUnsupported: the kernel lacks a program type, attach type, helper
	// or kfunc that sqlfw uses.
	ErrUnsupported = errors.New("kernel lacks a required eBPF feature")
)

// classify wraps err with ErrNoPrivilege or ErrUnsupported when it is one of
// those. EPERM is not ebpf.ErrNotSupported, so both are checked. A program
// the verifier read and rejected (its log says why) is neither, whatever
// the errno: the verifier answers EACCES for a bad program, and calling
// that "no privilege" would hide a broken object behind a fallback.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case verifierRejected(err):
		return err
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("%w: %w", ErrNoPrivilege, err)
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return err
}

// verifierRejected reports whether err is the verifier's rejection of a
// program it read: a VerifierError with a log. The kernel's refusals
// before verification (no capability, an attach type it does not know, no
// trampoline) leave the log empty.
func verifierRejected(err error) bool {
	var ve *ebpf.VerifierError
	return errors.As(err, &ve) && len(ve.Log) > 0
}

// Probe checks that the kernel has, and lets this process use, the program
// types of both interception modes. The error wraps ErrNoPrivilege or
// ErrUnsupported and names the program type.
func Probe() error {
	for _, pt := range []ebpf.ProgramType{ebpf.CGroupSockAddr, ebpf.SockOps, ebpf.SkMsg, ebpf.SkLookup} {
		if err := features.HaveProgramType(pt); err != nil {
			return classify(fmt.Errorf("probing program type %s: %w", pt, err))
		}
	}
	return nil
}

// NetnsCookie returns the cookie of the network namespace that c's socket
// lives in (SO_NETNS_COOKIE, kernel ≥ 5.14). Pass the daemon's listener to
// get the value for RedirectConfig.NetnsCookie.
func NetnsCookie(c syscall.Conn) (uint64, error) {
	var cookie uint64
	err := control(c, func(fd int) error {
		v, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
		cookie = v
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reading SO_NETNS_COOKIE: %w", err)
	}
	return cookie, nil
}

// SocketCookie is the socket's SO_COOKIE, what bpf_get_socket_cookie sees:
// unique for the boot and the same in every namespace. It takes the RawConn
// a net.Dialer's Control gets.
func SocketCookie(rc syscall.RawConn) (uint64, error) {
	var cookie uint64
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		cookie, gerr = unix.GetsockoptUint64(int(fd), unix.SOL_SOCKET, unix.SO_COOKIE)
	}); err != nil {
		return 0, err
	}
	if gerr != nil {
		return 0, fmt.Errorf("reading SO_COOKIE: %w", gerr)
	}
	return cookie, nil
}

// control runs fn with the raw descriptor of c.
func control(c syscall.Conn, fn func(fd int) error) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
