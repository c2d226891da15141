package bpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
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
	objs unixObjects
	link link.Link
}

// UnixCounters are totals since load, summed over CPUs.
type UnixCounters struct {
	Redirected    uint64
	SkippedOwn    uint64
	SkippedNetns  uint64
	SetPathFailed uint64 // kfunc refused the new path; connection went direct
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
	return u, nil
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
	var objs unixObjects
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
	var v [4]uint64
	if err := sumPerCPU(u.objs.UnixCounters, v[:]); err != nil {
		return UnixCounters{}, fmt.Errorf("reading unix counters: %w", err)
	}
	return UnixCounters{Redirected: v[0], SkippedOwn: v[1], SkippedNetns: v[2], SetPathFailed: v[3]}, nil
}

// Close detaches and unloads; safe after a partial load and more than once.
func (u *UnixRedirect) Close() error {
	var errs []error
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
