package bpf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// RedirectConfig says where the app-host programs attach and where they send
// protected connections. The zero value of each optional field disables it.
type RedirectConfig struct {
	// Cgroup is a cgroup2 directory (see cgroupstats.Cgroup2Mount); processes in it and
	// below are intercepted. The daemon uses the mount point itself.
	Cgroup string
	// Listen4 and Listen6 are the daemon's listener addresses (specific
	// addresses, not wildcards) for IPv4 and IPv6 destinations. At least one
	// must be valid; destinations of a family without a listener are left
	// alone. IPv4-mapped IPv6 destinations go to Listen4.
	Listen4, Listen6 netip.AddrPort
	// PodListen4 and PodListen6, when valid, turn on pod interception:
	// a connect from another network namespace (a pod on a Kubernetes
	// node, in the cgroup) to a protected address that is not loopback
	// goes to this listener instead of being left alone. It must be an
	// address the daemon listens on in its own namespace and that pods
	// route to (a node address, e.g. the host side of their veth), so
	// neither loopback nor a wildcard. A pod's connects to its own loopback
	// are always left alone (SkippedNetns).
	PodListen4, PodListen6 netip.AddrPort
	// Mark identifies the daemon's own sockets (its upstream connections),
	// which are never redirected; so does a socket cookie given to
	// ExemptCookie while the socket connects. (A tgid is not used: the
	// daemon's getpid() in a PID namespace is another process's tgid in the
	// kernel's.)
	Mark uint32
	// NetnsCookie is the daemon's network namespace (NetnsCookie of its
	// listener). Connections from that namespace go to Listen4/6; from
	// others only non-loopback ones, and only to PodListen4/6: a
	// container's 127.0.0.1 is not the host's.
	NetnsCookie uint64
	// Sockmap splices client and daemon sockets in the kernel (sk_msg). The
	// daemon must then relay with plain Read/Write loops: io.Copy uses
	// splice(2), which never sees redirected data.
	Sockmap bool
	// SpliceUpstream (with Sockmap) splices the daemon's upstream leg too
	// when the database's socket is on this host: the daemon's own socket
	// (Mark or an exempt cookie) to a protected address and the database's
	// accepted socket of that connection go into relay_socks, so each
	// write the daemon makes lands on the database's receive queue and
	// each reply on the daemon's, without loopback TCP. The daemon still
	// reads and writes every byte: only bytes it wrote reach the database.
	// sockops sees a socket only in a cgroup it is attached to, so
	// SpliceCgroups lists the cgroup2 directories of the database's
	// listener and of the daemon, where they are not under Cgroup. A leg
	// whose first byte is sent before both ends are in the map stays on
	// TCP for its life (SockmapFallback), as a client leg does. The
	// upstream socket must not also be on the sk_skb fast path.
	SpliceUpstream bool
	SpliceCgroups  []string
	// UpstreamOnly (with Sockmap and SpliceUpstream) loads the programs
	// for the upstream splice alone, for db-host mode, where sqlfwd
	// reaches the database on this host's loopback and its clients come
	// from the network: nothing is attached to Cgroup (which may be
	// empty), no connect is redirected, no client leg spliced; sockops goes
	// to SpliceCgroups only (the database's and sqlfwd's own) and
	// Protected are the upstream addresses whose legs are spliced. Listen4
	// and Listen6 are then not used.
	UpstreamOnly bool
	// FailClosed makes connect() fail with EPERM when the origin of a
	// protected connection cannot be recorded (map full). Otherwise such a
	// connection goes directly to the database. Counted in MapFull.
	FailClosed bool
	// PinDir, when set (a directory on a bpffs mount), pins the attached
	// links there so that the programs outlive the daemon: if it dies (or
	// stops with Release), protected connects keep being sent to its closed
	// listener and are refused instead of reaching the database unjudged.
	// LoadRedirect takes over what an earlier daemon pinned there: each
	// pinned link is switched to the new program in place (BPF_LINK_UPDATE),
	// so the hook is never absent; Close removes the pins and detaches.
	PinDir string
	// Protected are the destinations to protect from the first instant the
	// programs run (Protect adds more later). With PinDir this matters: a
	// program that takes over a pinned hook with an empty address map would
	// let every connect through until Protect.
	Protected []netip.AddrPort
}

// Redirect is the loaded and attached app-host programs. Close detaches: new
// connections then go directly to their destination.
type Redirect struct {
	objs      redirectObjects
	links     []link.Link
	msgTarget int // relay_socks fd with relay_msg attached, or -1
	// spliceLinks are sockops in SpliceCgroups: never pinned, closed by
	// Release and Close alike.
	spliceLinks []link.Link
	pinned      bool
}

// ClientInfo is the process that made a redirected connect(), read in the
// kernel at connect time.
type ClientInfo struct {
	Tgid     uint32
	Uid      uint32
	Comm     string // task comm, at most 15 bytes
	CgroupID uint64 // cgroup2 inode number; the path is found by walking the mount
	// Cookie is the client socket's cookie (SO_COOKIE): unique for the
	// boot, so a daemon that knows its own sockets' cookies can tell a
	// connection from itself.
	Cookie uint64
	// NetnsCookie is the client socket's network namespace: the daemon's
	// own, or a pod's when the connection came through the pod listener.
	NetnsCookie uint64
}

// Origin is what a redirected connection was aimed at and who made it.
type Origin struct {
	Dst    netip.AddrPort
	Client ClientInfo
}

// Counters are totals since load, summed over CPUs.
type Counters struct {
	Redirected   uint64 // connects rewritten to the listener
	SkippedOwn   uint64 // protected destination, but the daemon's own socket
	SkippedNetns uint64 // protected destination, but another network namespace
	MapFull      uint64 // origin not recorded (connection direct, or refused if FailClosed)
	SockmapAdded uint64 // sockets put on the in-kernel fast path
	// SockmapFallback counts sockets that had to stay on TCP because they
	// sent before their peer was on the fast path.
	SockmapFallback uint64
	// PodRedirected counts the connects from other network namespaces
	// sent to the pod listener (also counted in Redirected).
	PodRedirected uint64
}

// Counter slots, in the order of the enum in redirect.c.
const (
	ctrRedirected = iota
	ctrSkippedOwn
	ctrSkippedNetns
	ctrMapFull
	ctrSockmapAdded
	ctrSockmapFallback
	ctrPodRedirected
)

// LoadRedirect loads the app-host programs, configures them and attaches them
// to cfg.Cgroup. On error everything already attached is detached again.
func LoadRedirect(cfg RedirectConfig) (*Redirect, error) {
	if cfg.UpstreamOnly {
		switch {
		case !cfg.Sockmap || !cfg.SpliceUpstream:
			return nil, errors.New("redirect: UpstreamOnly needs Sockmap and SpliceUpstream")
		case len(cfg.SpliceCgroups) == 0:
			return nil, errors.New("redirect: UpstreamOnly needs SpliceCgroups")
		case cfg.PinDir != "" || cfg.PodListen4.IsValid() || cfg.PodListen6.IsValid():
			return nil, errors.New("redirect: UpstreamOnly takes neither PinDir nor pod listeners")
		}
		cfg.Listen4, cfg.Listen6 = netip.AddrPort{}, netip.AddrPort{}
	} else if cfg.Cgroup == "" {
		return nil, errors.New("redirect: no cgroup2 directory given")
	}
	l4, l6 := cfg.Listen4, cfg.Listen6
	if l4.IsValid() && (!l4.Addr().Unmap().Is4() || l4.Addr().IsUnspecified() || l4.Port() == 0) {
		return nil, fmt.Errorf("redirect: Listen4 %s is not a specific IPv4 address and port", l4)
	}
	if l6.IsValid() && (!l6.Addr().Is6() || l6.Addr().Is4In6() || l6.Addr().IsUnspecified() || l6.Port() == 0) {
		return nil, fmt.Errorf("redirect: Listen6 %s is not a specific IPv6 address and port", l6)
	}
	if !l4.IsValid() && !l6.IsValid() && !cfg.UpstreamOnly {
		return nil, errors.New("redirect: neither Listen4 nor Listen6 given")
	}
	p4, p6 := cfg.PodListen4, cfg.PodListen6
	if p4.IsValid() && (!p4.Addr().Unmap().Is4() || !podReachable(p4)) {
		return nil, fmt.Errorf("redirect: PodListen4 %s is not a specific, non-loopback IPv4 address and port", p4)
	}
	if p6.IsValid() && (!p6.Addr().Is6() || p6.Addr().Is4In6() || !podReachable(p6)) {
		return nil, fmt.Errorf("redirect: PodListen6 %s is not a specific, non-loopback IPv6 address and port", p6)
	}

	spec, err := loadRedirect()
	if err != nil {
		return nil, fmt.Errorf("loading redirect spec: %w", err)
	}
	vars := map[string]any{
		redirectVarCfgNetnsCookie:    cfg.NetnsCookie,
		redirectVarCfgMark:           cfg.Mark,
		redirectVarCfgSockmap:        boolByte(cfg.Sockmap),
		redirectVarCfgFailClosed:     boolByte(cfg.FailClosed),
		redirectVarCfgSpliceUpstream: boolByte(cfg.Sockmap && cfg.SpliceUpstream),
	}
	if l4.IsValid() {
		vars[redirectVarCfgListen4Ip] = ip4Word(l4.Addr().Unmap())
		vars[redirectVarCfgListen4Port] = uint32(l4.Port())
	}
	if l6.IsValid() {
		vars[redirectVarCfgListen6Ip] = ip6Words(l6.Addr())
		vars[redirectVarCfgListen6Port] = uint32(l6.Port())
	}
	if p4.IsValid() {
		vars[redirectVarCfgPod4Ip] = ip4Word(p4.Addr().Unmap())
		vars[redirectVarCfgPod4Port] = uint32(p4.Port())
	}
	if p6.IsValid() {
		vars[redirectVarCfgPod6Ip] = ip6Words(p6.Addr())
		vars[redirectVarCfgPod6Port] = uint32(p6.Port())
	}
	for name, v := range vars {
		if err := spec.Variables[name].Set(v); err != nil {
			return nil, fmt.Errorf("setting %s: %w", name, err)
		}
	}

	r := &Redirect{msgTarget: -1}
	if err := spec.LoadAndAssign(&r.objs, nil); err != nil {
		return nil, classify(fmt.Errorf("loading redirect objects: %w", err))
	}
	for _, a := range cfg.Protected {
		if err := r.Protect(a); err != nil {
			r.Close()
			return nil, err
		}
	}
	p := &r.objs.redirectPrograms
	progs := []struct {
		prog   *ebpf.Program
		attach ebpf.AttachType
	}{
		{p.RedirectConnect4, ebpf.AttachCGroupInet4Connect},
		{p.RedirectConnect6, ebpf.AttachCGroupInet6Connect},
		{p.RedirectGetpeername4, ebpf.AttachCgroupInet4GetPeername},
		{p.RedirectGetpeername6, ebpf.AttachCgroupInet6GetPeername},
		{p.RedirectSockops, ebpf.AttachCGroupSockOps},
	}
	if cfg.UpstreamOnly {
		progs = nil // sockops goes to SpliceCgroups below
	}
	old := make([]link.Link, len(progs)) // pinned by an earlier daemon, by index
	taken := make([]bool, len(progs))
	if cfg.PinDir != "" {
		old = loadPinned(cfg.PinDir, len(progs))
	}
	for i, a := range progs {
		if l := old[i]; l != nil {
			// The earlier daemon's hook switches to our program in one
			// step: no connect in between goes unjudged.
			if err := l.Update(a.prog); err == nil {
				r.links = append(r.links, l)
				old[i], taken[i] = nil, true
				continue
			}
		}
		l, err := link.AttachCgroup(link.CgroupOptions{Path: cfg.Cgroup, Attach: a.attach, Program: a.prog})
		if err != nil {
			closeLinks(old)
			r.abandon(cfg)
			return nil, classify(fmt.Errorf("attaching %s to %s: %w", a.attach, cfg.Cgroup, err))
		}
		r.links = append(r.links, l)
	}
	// Pins that could not be taken over are removed only now that our own
	// programs are attached beside them.
	for _, l := range old {
		if l != nil {
			_ = l.Unpin()
		}
	}
	closeLinks(old)
	if cfg.Sockmap {
		err := link.RawAttachProgram(link.RawAttachProgramOptions{
			Target:  r.objs.RelaySocks.FD(),
			Program: p.RelayMsg,
			Attach:  ebpf.AttachSkMsgVerdict,
		})
		if err != nil {
			r.abandon(cfg)
			return nil, classify(fmt.Errorf("attaching sk_msg to relay_socks: %w", err))
		}
		r.msgTarget = r.objs.RelaySocks.FD()
	}
	if cfg.Sockmap && cfg.SpliceUpstream {
		// Not pinned: without the daemon there is no upstream leg to splice.
		for _, cg := range cfg.SpliceCgroups {
			l, err := link.AttachCgroup(link.CgroupOptions{Path: cg, Attach: ebpf.AttachCGroupSockOps, Program: p.RedirectSockops})
			if err != nil {
				r.abandon(cfg)
				return nil, classify(fmt.Errorf("attaching sockops to %s for the upstream splice: %w", cg, err))
			}
			r.spliceLinks = append(r.spliceLinks, l)
		}
	}
	if cfg.PinDir != "" {
		if err := os.MkdirAll(cfg.PinDir, 0o700); err != nil {
			r.abandon(cfg)
			return nil, fmt.Errorf("pin directory: %w", err)
		}
		r.pinned = true // Close unpins whatever got pinned
		for i, l := range r.links {
			if taken[i] {
				continue // taken over in place: already pinned there
			}
			if err := l.Pin(pinPath(cfg.PinDir, i)); err != nil {
				r.abandon(cfg)
				return nil, fmt.Errorf("pinning link %d in %s (is it on a bpffs mount?): %w", i, cfg.PinDir, err)
			}
		}
	}
	return r, nil
}

// podReachable is true for a listener address a pod can reach: a specific,
// non-loopback address (a pod's loopback is its own) and a port.
func podReachable(ap netip.AddrPort) bool {
	a := ap.Addr().Unmap()
	return !a.IsUnspecified() && !a.IsLoopback() && a.Zone() == "" && ap.Port() != 0
}

func pinPath(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("redirect_link%d", i)) }

// loadPinned opens the links an earlier daemon pinned in dir, by index (nil
// where there is none or it cannot be opened).
func loadPinned(dir string, n int) []link.Link {
	out := make([]link.Link, n)
	for i := range out {
		if l, err := link.LoadPinnedLink(pinPath(dir, i), nil); err == nil {
			out[i] = l
		}
	}
	return out
}

func closeLinks(ls []link.Link) {
	for _, l := range ls {
		if l != nil {
			l.Close()
		}
	}
}

// UnpinAll detaches the links pinned in dir by an earlier LoadRedirect
// with PinDir (a daemon that died) and removes their pins. A missing
// directory is not an error.
func UnpinAll(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading pin directory: %w", err)
	}
	var errs []error
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "redirect_link") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		l, err := link.LoadPinnedLink(path, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("loading pinned %s: %w", path, err))
			continue
		}
		if err := l.Unpin(); err != nil {
			errs = append(errs, err)
		}
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// abandon undoes a failed LoadRedirect: with PinDir it releases, so that a
// hook taken over from an earlier daemon keeps refusing instead of opening.
func (r *Redirect) abandon(cfg RedirectConfig) {
	if cfg.PinDir != "" {
		r.pinned = true
		r.Release()
		return
	}
	r.Close()
}

// Release closes the daemon's handles but leaves pinned links attached
// (without PinDir it is Close): after a clean stop with fail_closed, protected
// connects keep going to the closed listener and are refused until a new
// daemon takes the pins over, or UnpinAll removes them.
func (r *Redirect) Release() error {
	if !r.pinned {
		return r.Close()
	}
	r.pinned = false
	closeLinks(r.links)
	r.links = nil
	return r.Close()
}

// Close detaches and unloads. It is safe on a partially loaded Redirect and
// more than once. Connections already redirected keep working; their
// origins can no longer be looked up.
func (r *Redirect) Close() error {
	var errs []error
	closeLinks(r.spliceLinks)
	r.spliceLinks = nil
	for i := len(r.links) - 1; i >= 0; i-- {
		if r.pinned {
			if err := r.links[i].Unpin(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := r.links[i].Close(); err != nil {
			errs = append(errs, err)
		}
	}
	r.links = nil
	if r.msgTarget >= 0 {
		err := link.RawDetachProgram(link.RawDetachProgramOptions{
			Target:  r.msgTarget,
			Program: r.objs.RelayMsg,
			Attach:  ebpf.AttachSkMsgVerdict,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("detaching sk_msg: %w", err))
		}
		r.msgTarget = -1
	}
	if err := r.objs.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Protect makes new TCP connects to dst (from the cgroup and network
// namespace) go to the listener. dst must be a specific address; an IPv4
// entry also covers its IPv4-mapped IPv6 form.
func (r *Redirect) Protect(dst netip.AddrPort) error {
	k, err := addrKey(dst)
	if err != nil {
		return err
	}
	if err := r.objs.ProtectedAddrs.Update(&k, uint8(1), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("protecting %s: %w", dst, err)
	}
	return nil
}

// ExemptCookie makes the connect hooks leave the socket with this cookie
// (SocketCookie) alone: the daemon's upstream dialer calls it after socket()
// and before connect(), and UnexemptCookie once connect() has returned.
func (r *Redirect) ExemptCookie(cookie uint64) error {
	if err := r.objs.OwnCookies.Update(&cookie, uint8(1), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("exempting socket %d: %w", cookie, err)
	}
	return nil
}

// UnexemptCookie undoes ExemptCookie; a cookie not exempt is not an error.
func (r *Redirect) UnexemptCookie(cookie uint64) error {
	if err := r.objs.OwnCookies.Delete(&cookie); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("unexempting socket %d: %w", cookie, err)
	}
	return nil
}

// Unprotect stops redirecting new connects to dst. Connections already
// redirected are not touched. Removing an address that is not protected is
// not an error.
func (r *Redirect) Unprotect(dst netip.AddrPort) error {
	k, err := addrKey(dst)
	if err != nil {
		return err
	}
	if err := r.objs.ProtectedAddrs.Delete(&k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("unprotecting %s: %w", dst, err)
	}
	return nil
}

// Origin returns and forgets what the kernel recorded for the connection
// whose client end is clientLocal (the peer address of the accepted
// connection). false means the connection was not redirected, or its record
// was evicted or already taken.
func (r *Redirect) Origin(clientLocal netip.AddrPort) (Origin, bool) {
	k, err := addrKey(clientLocal)
	if err != nil {
		return Origin{}, false
	}
	var v redirectOrigin
	if err := r.objs.OriginByClient.LookupAndDelete(&k, &v); err != nil {
		return Origin{}, false
	}
	return Origin{
		Dst: keyAddr(v.Dst),
		Client: ClientInfo{
			Tgid:        v.Tgid,
			Uid:         v.Uid,
			Comm:        commString(v.Comm),
			CgroupID:    v.CgroupId,
			Cookie:      v.Cookie,
			NetnsCookie: v.NetnsCookie,
		},
	}, true
}

// Counters sums the per-CPU counters.
func (r *Redirect) Counters() (Counters, error) {
	var v [ctrPodRedirected + 1]uint64
	if err := sumPerCPU(r.objs.RedirectCounters, v[:]); err != nil {
		return Counters{}, fmt.Errorf("reading redirect counters: %w", err)
	}
	return Counters{
		Redirected:      v[ctrRedirected],
		SkippedOwn:      v[ctrSkippedOwn],
		SkippedNetns:    v[ctrSkippedNetns],
		MapFull:         v[ctrMapFull],
		SockmapAdded:    v[ctrSockmapAdded],
		SockmapFallback: v[ctrSockmapFallback],
		PodRedirected:   v[ctrPodRedirected],
	}, nil
}

// sumPerCPU fills out[i] with the sum over CPUs of slot i of a per-CPU array.
func sumPerCPU(m *ebpf.Map, out []uint64) error {
	var per []uint64
	for i := range out {
		if err := m.Lookup(uint32(i), &per); err != nil {
			return err
		}
		out[i] = 0
		for _, x := range per {
			out[i] += x
		}
	}
	return nil
}

// addrKey converts an endpoint to the map layout: IPv4 and IPv4-mapped as
// AF_INET with the address in Ip[0], addresses in network byte order, port in
// host byte order.
func addrKey(ap netip.AddrPort) (redirectAddrKey, error) {
	a := ap.Addr().Unmap()
	switch {
	case !ap.IsValid():
		return redirectAddrKey{}, errors.New("invalid address")
	case a.Zone() != "":
		return redirectAddrKey{}, fmt.Errorf("%s: zoned addresses are not supported", ap)
	case a.Is4():
		return redirectAddrKey{Family: unix.AF_INET, Port: uint32(ap.Port()), Ip: [4]uint32{ip4Word(a)}}, nil
	default:
		return redirectAddrKey{Family: unix.AF_INET6, Port: uint32(ap.Port()), Ip: ip6Words(a)}, nil
	}
}

func keyAddr(k redirectAddrKey) netip.AddrPort {
	var b [16]byte
	for i, w := range k.Ip {
		binary.NativeEndian.PutUint32(b[4*i:], w)
	}
	if k.Family == unix.AF_INET {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[:4])), uint16(k.Port))
	}
	return netip.AddrPortFrom(netip.AddrFrom16(b), uint16(k.Port))
}

// ip4Word returns the address as the kernel stores it: network byte order in
// memory, read as a native-endian word.
func ip4Word(a netip.Addr) uint32 {
	b := a.As4()
	return binary.NativeEndian.Uint32(b[:])
}

func ip6Words(a netip.Addr) [4]uint32 {
	b := a.As16()
	var w [4]uint32
	for i := range w {
		w[i] = binary.NativeEndian.Uint32(b[4*i:])
	}
	return w
}

func commString(c [16]int8) string {
	b := make([]byte, 0, len(c))
	for _, x := range c {
		b = append(b, byte(x))
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
