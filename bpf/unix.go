package bpf

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// UnixConfig configures the unix-socket redirect. The fields mean what they
// mean in RedirectConfig.
type UnixConfig struct {
	Cgroup      string
	Mark        uint32
	NetnsCookie uint64
}

// UnixRedirect is the attached cgroup/connect_unix program (kernel ≥ 6.7).
// It is separate from Redirect so that TCP interception still works on older
// kernels. The daemon learns the original path from which of its listeners
// accepted (one listener per protected path) and the client from
// SO_PEERCRED; getpeername on the client shows the daemon's path.
type UnixRedirect struct {
	objs unixLoaded
	link link.Link
	// guard is the lsm_cgroup program that refuses other names of a
	// protected socket (nil when it could not attach: GuardErr says why).
	guard     *ebpf.Program
	guardLink link.Link
	// GuardErr says why other names of a protected socket (symlinks, hard
	// links, relative paths) are not refused: the kernel has no BPF LSM
	// active, or is older than 6.0. Nil when they are.
	GuardErr error

	mu      sync.Mutex
	guarded map[string]unixUnixInode // path -> its file when last looked at
}

// unixLoaded is what the redirect loads: its maps and the connect_unix
// program (the guard loads on its own, as it needs the BPF LSM).
type unixLoaded struct {
	unixMaps
	RedirectConnectUnix *ebpf.Program `ebpf:"redirect_connect_unix"`
}

func (o *unixLoaded) Close() error {
	return errors.Join(o.unixMaps.Close(), closeProgram(o.RedirectConnectUnix))
}

func closeProgram(p *ebpf.Program) error {
	if p == nil {
		return nil
	}
	return p.Close()
}

// UnixCounters are totals since load, summed over CPUs.
type UnixCounters struct {
	Redirected    uint64
	SkippedOwn    uint64
	SkippedNetns  uint64
	SetPathFailed uint64 // kfunc refused the new path; connection went direct
	// GuardRefused counts connects that reached a protected server socket
	// by another name and were refused (EPERM).
	GuardRefused uint64
}

const unixPathMax = 108

// LoadUnixRedirect loads and attaches the unix-socket program. On kernels
// before 6.7 the error wraps ErrUnsupported.
func LoadUnixRedirect(cfg UnixConfig) (*UnixRedirect, error) {
	if cfg.Cgroup == "" {
		return nil, errors.New("unix redirect: no cgroup2 directory given")
	}
	spec, err := loadUnix()
	if err != nil {
		return nil, fmt.Errorf("loading unix spec: %w", err)
	}
	for name, v := range map[string]any{
		unixVarCfgNetnsCookie: cfg.NetnsCookie,
		unixVarCfgMark:        cfg.Mark,
	} {
		if err := spec.Variables[name].Set(v); err != nil {
			return nil, fmt.Errorf("setting %s: %w", name, err)
		}
	}
	u := &UnixRedirect{}
	if err := spec.LoadAndAssign(&u.objs, nil); err != nil {
		return nil, classifyUnix(fmt.Errorf("loading unix objects: %w", err))
	}
	l, err := link.AttachCgroup(link.CgroupOptions{
		Path:    cfg.Cgroup,
		Attach:  ebpf.AttachCgroupUnixConnect,
		Program: u.objs.RedirectConnectUnix,
	})
	if err != nil {
		u.Close()
		return nil, classifyUnix(fmt.Errorf("attaching connect_unix to %s: %w", cfg.Cgroup, err))
	}
	u.link = l
	u.GuardErr = u.attachGuard(spec, cfg.Cgroup)
	return u, nil
}

// attachGuard loads the lsm_cgroup guard on the redirect's maps and
// attaches it to cgroup.
func (u *UnixRedirect) attachGuard(spec *ebpf.CollectionSpec, cgroup string) error {
	var g struct {
		Guard *ebpf.Program `ebpf:"guard_unix_stream_connect"`
	}
	err := spec.LoadAndAssign(&g, &ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{
		unixMapGuardedInodes:  u.objs.GuardedInodes,
		unixMapOwnCookies:     u.objs.OwnCookies,
		unixMapUnixCounters:   u.objs.UnixCounters,
		unixMapUnixScratch:    u.objs.UnixScratch,
		unixMapProtectedPaths: u.objs.ProtectedPaths,
	}})
	if err != nil {
		return fmt.Errorf("loading the guard (BPF LSM, kernel 6.0 or later, \"bpf\" in the kernel's lsm= list): %w", classify(err))
	}
	l, err := link.AttachCgroup(link.CgroupOptions{Path: cgroup, Attach: ebpf.AttachLSMCgroup, Program: g.Guard})
	if err != nil {
		g.Guard.Close()
		return fmt.Errorf("attaching the guard to %s (BPF LSM, kernel 6.0 or later, \"bpf\" in the kernel's lsm= list): %w", cgroup, classify(err))
	}
	u.guard, u.guardLink = g.Guard, l
	return nil
}

// Guard refuses connects that reach the socket file at dbPath by another
// name (a no-op when GuardErr is set). The file is named by its device and
// inode: Reguard follows a server that binds the path anew.
func (u *UnixRedirect) Guard(dbPath string) error {
	if u.guard == nil {
		return u.GuardErr
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.guarded == nil {
		u.guarded = map[string]unixUnixInode{}
	}
	u.guarded[dbPath] = unixUnixInode{}
	return u.reguard(dbPath)
}

// Reguard looks at every guarded path again and guards the file now bound
// there (a restarted server's new socket); the first error is returned,
// the other paths are still looked at.
func (u *UnixRedirect) Reguard() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	var first error
	for p := range u.guarded {
		if err := u.reguard(p); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// reguard (under mu) makes the guard hold path's file as it is now.
func (u *UnixRedirect) reguard(path string) error {
	k, err := unixInodeKey(path)
	if err != nil {
		return err // absent (the server is down) or not a socket: kept, looked at again
	}
	old := u.guarded[path]
	if old == k {
		return nil
	}
	if err := u.objs.GuardedInodes.Update(&k, uint8(1), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("guarding %s: %w", path, err)
	}
	if old != (unixUnixInode{}) {
		_ = u.objs.GuardedInodes.Delete(&old)
	}
	u.guarded[path] = k
	return nil
}

// Unguard stops guarding dbPath.
func (u *UnixRedirect) Unguard(dbPath string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if old, ok := u.guarded[dbPath]; ok {
		if old != (unixUnixInode{}) {
			_ = u.objs.GuardedInodes.Delete(&old)
		}
		delete(u.guarded, dbPath)
	}
}

// unixInodeKey names the socket file at path as the kernel does: its
// filesystem's s_dev (major << 20 | minor) and inode number.
func unixInodeKey(path string) (unixUnixInode, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return unixUnixInode{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return unixUnixInode{}, fmt.Errorf("%s is not a socket", path)
	}
	return unixUnixInode{Ino: st.Ino, Dev: unix.Major(uint64(st.Dev))<<20 | unix.Minor(uint64(st.Dev))}, nil
}

// classifyUnix also maps the verifier's and the attach call's answer on
// kernels without the hook or the kfunc (EINVAL, missing kfunc) to
// ErrUnsupported, since a probe cannot tell them apart more cheaply.
func classifyUnix(err error) error {
	err = classify(err)
	if errors.Is(err, ErrNoPrivilege) || errors.Is(err, ErrUnsupported) {
		return err
	}
	return fmt.Errorf("%w (connect_unix needs kernel 6.7 or later): %w", ErrUnsupported, err)
}

// ProbeUnix reports whether unix-socket interception can be loaded here,
// by loading it without attaching.
func ProbeUnix() error {
	spec, err := loadUnix()
	if err != nil {
		return err
	}
	var objs unixLoaded
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		return classifyUnix(fmt.Errorf("loading unix objects: %w", err))
	}
	return objs.Close()
}

// Protect sends new connects to the socket at dbPath to listenPath instead.
// Paths are filesystem paths; abstract names are not supported.
func (u *UnixRedirect) Protect(dbPath, listenPath string) error {
	k, err := unixKey(dbPath)
	if err != nil {
		return err
	}
	if len(listenPath) == 0 || len(listenPath) >= unixPathMax {
		return fmt.Errorf("unix redirect: listener path length %d out of range", len(listenPath))
	}
	var t unixUnixTarget
	copy(t.Path[:], listenPath)
	t.Len = uint32(len(listenPath))
	if err := u.objs.ProtectedPaths.Update(&k, &t, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("protecting %s: %w", dbPath, err)
	}
	return nil
}

// Unprotect stops redirecting new connects to dbPath.
func (u *UnixRedirect) Unprotect(dbPath string) error {
	k, err := unixKey(dbPath)
	if err != nil {
		return err
	}
	if err := u.objs.ProtectedPaths.Delete(&k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("unprotecting %s: %w", dbPath, err)
	}
	return nil
}

// ExemptCookie and UnexemptCookie are Redirect's, for unix sockets.
func (u *UnixRedirect) ExemptCookie(cookie uint64) error {
	if err := u.objs.OwnCookies.Update(&cookie, uint8(1), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("exempting socket %d: %w", cookie, err)
	}
	return nil
}

func (u *UnixRedirect) UnexemptCookie(cookie uint64) error {
	if err := u.objs.OwnCookies.Delete(&cookie); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("unexempting socket %d: %w", cookie, err)
	}
	return nil
}

// Counters sums the per-CPU counters.
func (u *UnixRedirect) Counters() (UnixCounters, error) {
	var v [5]uint64
	if err := sumPerCPU(u.objs.UnixCounters, v[:]); err != nil {
		return UnixCounters{}, fmt.Errorf("reading unix counters: %w", err)
	}
	return UnixCounters{Redirected: v[0], SkippedOwn: v[1], SkippedNetns: v[2], SetPathFailed: v[3], GuardRefused: v[4]}, nil
}

// Close detaches and unloads; safe after a partial load and more than once.
func (u *UnixRedirect) Close() error {
	var errs []error
	if u.guardLink != nil {
		errs = append(errs, u.guardLink.Close())
		u.guardLink = nil
	}
	if u.guard != nil {
		errs = append(errs, u.guard.Close())
		u.guard = nil
	}
	if u.link != nil {
		errs = append(errs, u.link.Close())
		u.link = nil
	}
	errs = append(errs, u.objs.Close())
	return errors.Join(errs...)
}

func unixKey(path string) (unixUnixPath, error) {
	var k unixUnixPath
	if len(path) == 0 || path[0] == 0 || len(path) >= unixPathMax {
		return k, fmt.Errorf("unix redirect: socket path %q unsupported (empty, abstract or too long)", path)
	}
	copy(k.Path[:], path)
	return k, nil
}
