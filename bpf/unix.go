package bpf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	// links, relative paths) are not refused: neither guard program loads
	// here. Nil when they are.
	GuardErr error
	// GuardKind says which guard refuses them (GuardLSMCgroup or
	// GuardModifyReturn; empty with GuardErr).
	GuardKind string

	mu      sync.Mutex
	guarded map[string]unixUnixInode // path -> its file when last looked at
	// rel holds the protected_rel entries each protected path added; refs
	// counts the paths that added an entry (two spellings of one socket
	// add the same ones).
	rel  map[string][]unixUnixRel
	refs map[unixUnixRel]int
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
// A guard the kernel refuses is GuardErr; any other failure to load the
// guard is an error.
func LoadUnixRedirect(cfg UnixConfig) (*UnixRedirect, error) {
	spec, err := loadUnix()
	if err != nil {
		return nil, fmt.Errorf("loading unix spec: %w", err)
	}
	return loadUnixRedirect(cfg, spec)
}

// loadUnixRedirect is LoadUnixRedirect from spec (a test's altered copy).
func loadUnixRedirect(cfg UnixConfig, spec *ebpf.CollectionSpec) (*UnixRedirect, error) {
	if cfg.Cgroup == "" {
		return nil, errors.New("unix redirect: no cgroup2 directory given")
	}
	cgID, err := cgroupID(cfg.Cgroup)
	if err != nil {
		return nil, fmt.Errorf("unix redirect: %w", err)
	}
	for name, v := range map[string]any{
		unixVarCfgNetnsCookie: cfg.NetnsCookie,
		unixVarCfgMark:        cfg.Mark,
		unixVarCfgCgroupId:    cgID,
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
	refused, broken := u.attachGuard(spec, cfg.Cgroup)
	if broken != nil {
		u.Close()
		return nil, fmt.Errorf("unix-name guard: %w", broken)
	}
	u.GuardErr = refused
	return u, nil
}

// Guard kinds: how other names of a protected socket are refused.
const (
	// GuardLSMCgroup is the lsm_cgroup program on unix_stream_connect,
	// attached to the cgroup (the BPF LSM is active).
	GuardLSMCgroup = "lsm_cgroup"
	// GuardModifyReturn is the modify_return tracing program on
	// security_unix_stream_connect, global and scoped by the program
	// itself to the cgroup's sockets (no BPF LSM needed).
	GuardModifyReturn = "fmod_ret"
)

// ErrGuardRefused: the kernel refuses both guard programs before it reads
// them (no BPF LSM or trampoline, EPERM even as root on some kernels, a
// hook it does not have). UnixRedirect.GuardErr wraps it; any other
// failure of a guard (the verifier rejects it, a map does not fit) is
// LoadUnixRedirect's error, never a quiet "other names not refused".
var ErrGuardRefused = errors.New("the kernel refuses the unix-name guard")

// attachGuard attaches the guard: the lsm_cgroup program where the BPF LSM
// is active, else the modify_return program. When the kernel refuses both,
// refused wraps ErrGuardRefused and names both reasons; broken is a
// failure that is not the kernel's refusal.
func (u *UnixRedirect) attachGuard(spec *ebpf.CollectionSpec, cgroup string) (refused, broken error) {
	lsmErr := u.attachLSMGuard(spec, cgroup)
	if lsmErr == nil {
		u.GuardKind = GuardLSMCgroup
		return nil, nil
	}
	if !kernelRefused(lsmErr) {
		return nil, lsmErr
	}
	retErr := u.attachReturnGuard(spec)
	if retErr == nil {
		u.GuardKind = GuardModifyReturn
		return nil, nil
	}
	if !kernelRefused(retErr) {
		return nil, retErr
	}
	return fmt.Errorf("%w: %w; and %w", ErrGuardRefused, lsmErr, retErr), nil
}

// kernelRefused reports whether err (classified) is the kernel's refusal
// of a program before verification: no privilege, a feature or hook it
// lacks, or EINVAL with an empty verifier log (a program or attach type it
// does not know). A program the verifier read and rejected is not.
func kernelRefused(err error) bool {
	if verifierRejected(err) {
		return false
	}
	return errors.Is(err, ErrNoPrivilege) || errors.Is(err, ErrUnsupported) || errors.Is(err, unix.EINVAL)
}

// guardMaps are the redirect's maps, shared by whichever guard loads.
func (u *UnixRedirect) guardMaps() *ebpf.CollectionOptions {
	return &ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{
		unixMapGuardedInodes:  u.objs.GuardedInodes,
		unixMapOwnCookies:     u.objs.OwnCookies,
		unixMapUnixCounters:   u.objs.UnixCounters,
		unixMapUnixBufs:       u.objs.UnixBufs,
		unixMapProtectedPaths: u.objs.ProtectedPaths,
	}}
}

// attachLSMGuard loads the lsm_cgroup guard on the redirect's maps and
// attaches it to cgroup.
func (u *UnixRedirect) attachLSMGuard(spec *ebpf.CollectionSpec, cgroup string) error {
	var g struct {
		Guard *ebpf.Program `ebpf:"guard_unix_stream_connect"`
	}
	if err := spec.LoadAndAssign(&g, u.guardMaps()); err != nil {
		return fmt.Errorf("loading the lsm_cgroup guard (needs the BPF LSM active, \"bpf\" in the kernel's lsm= list, and BPF trampolines, kernel 6.0 or later): %w", classify(err))
	}
	l, err := link.AttachCgroup(link.CgroupOptions{Path: cgroup, Attach: ebpf.AttachLSMCgroup, Program: g.Guard})
	if err != nil {
		g.Guard.Close()
		return fmt.Errorf("attaching the lsm_cgroup guard to %s (needs the BPF LSM active, \"bpf\" in the kernel's lsm= list, and BPF trampolines, kernel 6.0 or later): %w", cgroup, classify(err))
	}
	u.guard, u.guardLink = g.Guard, l
	return nil
}

// attachReturnGuard loads the modify_return guard on the redirect's maps
// and attaches it to security_unix_stream_connect (the program checks the
// cgroup itself: cfg_cgroup_id was set before the redirect loaded).
func (u *UnixRedirect) attachReturnGuard(spec *ebpf.CollectionSpec) error {
	var g struct {
		Guard *ebpf.Program `ebpf:"guard_unix_connect_ret"`
	}
	if err := spec.LoadAndAssign(&g, u.guardMaps()); err != nil {
		return fmt.Errorf("loading the fmod_ret guard (modify_return on security_unix_stream_connect: needs BPF trampolines, kernel 5.7 or later with ftrace): %w", classify(err))
	}
	l, err := link.AttachTracing(link.TracingOptions{Program: g.Guard, AttachType: ebpf.AttachModifyReturn})
	if err != nil {
		g.Guard.Close()
		return fmt.Errorf("attaching the fmod_ret guard to security_unix_stream_connect: %w", classify(err))
	}
	u.guard, u.guardLink = g.Guard, l
	return nil
}

// cgroupID is the id BPF sees for the cgroup2 directory dir (its inode
// number, the kernfs node id).
func cgroupID(dir string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return 0, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	return st.Ino, nil
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

// classifyUnix also maps the kernel's answer on kernels without the hook
// or the kfunc (EINVAL before verification, a kfunc missing from its BTF)
// to ErrUnsupported, since a probe cannot tell them apart more cheaply. A
// program the verifier rejected is a broken object, not an old kernel: it
// stays an error of its own, so the daemon fails and tests fail.
func classifyUnix(err error) error {
	err = classify(err)
	if errors.Is(err, ErrNoPrivilege) || errors.Is(err, ErrUnsupported) || verifierRejected(err) {
		return err
	}
	if errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("%w (connect_unix needs kernel 6.7 or later): %w", ErrUnsupported, err)
	}
	return err
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
// Paths are filesystem paths; abstract names are not supported. The same
// socket named relative to a client's working or root directory (a
// relative name, /proc/self/cwd/..., /proc/self/root/...) is sent there
// too, from its directory and each directory above it as they are now.
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
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.rel[dbPath]; ok {
		return nil
	}
	rels := relKeys(dbPath)
	for i, r := range rels {
		if err := u.objs.ProtectedRel.Update(&r, &t, ebpf.UpdateAny); err != nil {
			u.dropRel(rels[:i])
			return fmt.Errorf("protecting %s by relative names: %w", dbPath, err)
		}
	}
	if u.rel == nil {
		u.rel, u.refs = map[string][]unixUnixRel{}, map[unixUnixRel]int{}
	}
	u.rel[dbPath] = rels
	for _, r := range rels {
		u.refs[r]++
	}
	return nil
}

// relKeys are dbPath's protected_rel keys: for its directory (symlinks
// resolved) and each one above it, that directory's file and the rest of
// the path. A directory that cannot be looked at ends the list (the names
// from below it are still there).
func relKeys(dbPath string) []unixUnixRel {
	dir, err := filepath.EvalSymlinks(filepath.Dir(dbPath))
	if err != nil {
		return nil
	}
	rest := filepath.Base(dbPath)
	var keys []unixUnixRel
	for {
		var st unix.Stat_t
		if len(rest) >= unixPathMax || unix.Stat(dir, &st) != nil {
			break
		}
		k := unixUnixRel{Ino: st.Ino, Dev: unix.Major(uint64(st.Dev))<<20 | unix.Minor(uint64(st.Dev))}
		copy(k.Path[:], rest)
		keys = append(keys, k)
		if dir == "/" {
			break
		}
		rest = filepath.Base(dir) + "/" + rest
		dir = filepath.Dir(dir)
	}
	return keys
}

// dropRel (under mu) deletes entries no protected path holds any more.
func (u *UnixRedirect) dropRel(rels []unixUnixRel) {
	for _, r := range rels {
		if u.refs[r] > 0 {
			continue
		}
		_ = u.objs.ProtectedRel.Delete(&r)
	}
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
	u.mu.Lock()
	defer u.mu.Unlock()
	if rels, ok := u.rel[dbPath]; ok {
		for _, r := range rels {
			if u.refs[r]--; u.refs[r] <= 0 {
				delete(u.refs, r)
			}
		}
		delete(u.rel, dbPath)
		u.dropRel(rels)
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
