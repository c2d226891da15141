package daemon

// Transparent interception: the kernel side lives in bpf/; this file
// decides what to load, owns the listeners the programs send connections
// to, and turns an accepted connection into an arrival (which database,
// where to dial, who the client is).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/bpf"
	"github.com/sqlfw/sqlfw/cgroupstats"
	"github.com/sqlfw/sqlfw/relay"
)

// arrival is an accepted client connection, the database it is for, and
// what is known about it.
type arrival struct {
	db   *database
	conn relay.Conn
}

// interceptor holds the loaded programs and their listeners.
type interceptor struct {
	d        *Daemon
	cgroup2  string // the cgroup2 mount, for cgroup id → path
	redirect *bpf.Redirect
	fast     *bpf.Fast // intercept.fastpath, nil when off
	steer    *bpf.Steer
	unixRd   *bpf.UnixRedirect
	lns      []net.Listener

	// upstreamSplice is the upstream splice of db-host mode
	// (intercept.splice_upstream without app-host interception), nil
	// when off.
	upstreamSplice *bpf.Redirect
	// cg is the cgroup the app-host programs are attached to.
	cg string
	// unixLns holds each database's unix listener (under mu); unixNote
	// says why unix sockets are not intercepted, once that is known.
	unixLns map[*database]net.Listener
	// unixAsWarn says unixAsWarning once.
	unixAsWarn sync.Once
	unixNote   string
	// routes maps every destination ever protected to its database. It
	// only grows (copy on write), so a connection redirected just before
	// its address was unprotected still finds its database; the accept
	// loops read it without a lock.
	routes atomic.Pointer[map[netip.AddrPort]*database]
	// mu guards active, the addresses protected in the kernel now.
	mu      sync.Mutex
	active  map[netip.AddrPort]*database
	steered map[uint16]*database
	cgPaths sync.Map // cgroup id → path
	stop    chan struct{}
	// lock makes this the one daemon intercepting its cgroup (hostlock.go).
	lock *cgroupLock
}

// interceptUnavailableError is a failure to set up interception that a
// fallback to the explicit listener may absorb. Reason is why, as the
// fallback's log line and fwctl status say it.
type interceptUnavailableError struct{ Reason error }

func (e *interceptUnavailableError) Error() string {
	return "interception unavailable: " + e.Reason.Error()
}

func (e *interceptUnavailableError) Unwrap() error { return e.Reason }

// interceptUnavailable marks err as an interceptUnavailableError.
func interceptUnavailable(err error) error { return &interceptUnavailableError{Reason: err} }

// startIntercept loads and attaches what the databases' intercept modes
// need. On error everything it set up is released.
func (d *Daemon) startIntercept() (err error) {
	ic := &d.cfg.Intercept
	var appHost, dbHost []*database
	for _, db := range d.databases() {
		switch db.cfg.Intercept {
		case InterceptAppHost:
			appHost = append(appHost, db)
		case InterceptDBHost:
			dbHost = append(dbHost, db)
		}
	}
	if len(appHost) == 0 && len(dbHost) == 0 && !d.cfg.Discovery.Enabled {
		return nil
	}
	// Discovery needs the app-host programs even before it finds a server.
	appHostOn := len(appHost) > 0 || d.cfg.Discovery.Enabled
	it := &interceptor{d: d, active: map[netip.AddrPort]*database{}, steered: map[uint16]*database{}, unixLns: map[*database]net.Listener{}}
	defer func() {
		if err != nil {
			it.close()
		}
	}()
	if err := bpf.Probe(); err != nil {
		return interceptUnavailable(err)
	}
	mi, err := os.Open(filepath.Join(d.proc, "self/mountinfo"))
	if err != nil {
		return interceptUnavailable(err)
	}
	it.cgroup2, err = cgroupstats.Cgroup2Mount(mi)
	mi.Close()
	if err != nil && appHostOn {
		return interceptUnavailable(fmt.Errorf("no cgroup2 mount: %w", err))
	}

	var lc net.ListenConfig
	lc.SetMultipathTCP(false) // SOCKMAPs cannot hold MPTCP sockets
	if appHostOn {
		cg := ic.Cgroup
		if cg == "" {
			cg = it.cgroup2
		} else if isCgroup2Root(cg) {
			// Another view of a whole hierarchy (the host's, mounted into
			// a container with a cgroup namespace of its own): the clients'
			// cgroup ids are found there, not in our own mount.
			it.cgroup2 = cg
		}
		it.cg = cg
		// one daemon per cgroup: refuse (not fall back) when another
		// intercepts it
		if it.lock, err = lockCgroup(d.proc, it.cgroup2, cg, ic.TakeOver, d.cfg.DrainTimeout+10*time.Second); err != nil {
			return err
		}
		ln4, err := lc.Listen(context.Background(), "tcp4", ic.Listen4)
		if err != nil {
			return fmt.Errorf("intercept listener: %w", err)
		}
		it.lns = append(it.lns, ln4)
		rc := bpf.RedirectConfig{
			Cgroup:     cg,
			Listen4:    ln4.Addr().(*net.TCPAddr).AddrPort(),
			Mark:       ic.Mark,
			Sockmap:    *ic.Sockmap,
			FailClosed: ic.FailClosed,
			// experimental (intercept.splice_upstream)
			SpliceUpstream: len(ic.SpliceUpstream) > 0,
			SpliceCgroups:  ic.SpliceUpstream,
		}
		if ln6, err := lc.Listen(context.Background(), "tcp6", ic.Listen6); err == nil {
			it.lns = append(it.lns, ln6)
			rc.Listen6 = ln6.Addr().(*net.TCPAddr).AddrPort()
		} else {
			d.log.Warn("no IPv6 redirect listener: IPv6 clients will not be intercepted", "listen", ic.Listen6, "err", err)
		}
		if ic.Pods {
			if err := it.listenPods(lc, &rc); err != nil {
				return err
			}
		}
		if rc.NetnsCookie, err = bpf.NetnsCookie(ln4.(*net.TCPListener)); err != nil {
			return interceptUnavailable(err)
		}
		if ic.FailClosed {
			if err := bpf.EnsureBPFFS(ic.PinDir); err != nil {
				return interceptUnavailable(fmt.Errorf("fail_closed: %w", err))
			}
			rc.PinDir = ic.PinDir
		}
		// The addresses go in before the programs attach: with fail_closed
		// they take over an earlier daemon's hook at once.
		for _, db := range appHost {
			addrs, err := protectedAddrs(db.cfg)
			if err != nil {
				return err
			}
			for _, a := range addrs {
				if other := it.active[a]; other != nil {
					return fmt.Errorf("database %s: %s is already protected for database %s", db.cfg.Name, a, other.cfg.Name)
				}
				it.active[a] = db
				rc.Protected = append(rc.Protected, a)
			}
		}
		if it.redirect, err = bpf.LoadRedirect(rc); err != nil {
			return interceptUnavailable(err)
		}
		d.own.add(it.redirect)
		if ic.Fastpath {
			if it.fast, err = bpf.LoadFast(it.redirect); err != nil {
				d.log.Warn("intercept.fastpath: the kernel fast path is not available; sessions relay in user space", "err", err)
				it.fast = nil
			} else {
				d.log.Warn("intercept.fastpath is on: EXPERIMENTAL kernel fast path for the server-to-client direction (bpf/doc.go)")
			}
		}
		for _, db := range appHost {
			addrs, _ := protectedAddrs(db.cfg)
			d.log.Info("intercepting", "database", db.cfg.Name, "mode", InterceptAppHost, "addresses", fmt.Sprint(addrs),
				"cgroup", cg, "sockmap", *ic.Sockmap, "splice_upstream", ic.SpliceUpstream, "fail_closed", ic.FailClosed, "pods", ic.Pods)
		}
		routes := maps.Clone(it.active)
		it.routes.Store(&routes)
		for _, ln := range it.lns {
			d.wg.Add(1)
			go d.acceptLoop(ln, it.fromRedirect)
		}
		it.stop = make(chan struct{})
		go it.watchMapFull(it.stop)
		if err := it.startUnix(appHost); err != nil {
			return err
		}
	}
	if len(dbHost) > 0 {
		ln, err := lc.Listen(context.Background(), "tcp", "[::]:0")
		if err != nil {
			return fmt.Errorf("steering listener: %w", err)
		}
		it.lns = append(it.lns, ln)
		var ports []uint16
		for _, db := range dbHost {
			ap, err := netip.ParseAddrPort(db.cfg.Upstream)
			if err != nil {
				return fmt.Errorf("database %s: db-host mode needs an IP upstream (the database on loopback): %w", db.cfg.Name, err)
			}
			if it.steered[ap.Port()] != nil {
				return fmt.Errorf("database %s: port %d is already steered", db.cfg.Name, ap.Port())
			}
			it.steered[ap.Port()] = db
			ports = append(ports, ap.Port())
			d.log.Info("intercepting", "database", db.cfg.Name, "mode", InterceptDBHost, "port", ap.Port(), "netns", ic.Netns)
		}
		if it.steer, err = bpf.LoadSteer(bpf.SteerConfig{Netns: ic.Netns, Ports: ports, Listener: ln.(*net.TCPListener)}); err != nil {
			return interceptUnavailable(err)
		}
		if len(ic.SpliceUpstream) > 0 {
			if err := it.spliceDBHost(dbHost, appHostOn); err != nil {
				return err
			}
		}
		d.wg.Add(1)
		go d.acceptLoop(ln, it.fromSteer)
	}
	d.intercept = it
	return nil
}

// spliceDBHost loads the upstream splice for db-host databases
// (intercept.splice_upstream, experimental): sqlfwd's legs to their
// loopback upstreams and the database's sockets of them are spliced in
// the kernel; the clients' legs come from the network and stay TCP. With
// app-host interception on as well, its programs already splice the legs
// to protected addresses, and a second sockhash on the same sockets is
// not attempted: db-host legs then stay TCP (logged).
func (it *interceptor) spliceDBHost(dbHost []*database, appHostOn bool) error {
	d := it.d
	if appHostOn {
		d.log.Warn("intercept.splice_upstream: db-host databases beside app-host interception are not spliced (only the app-host legs are)")
		return nil
	}
	rc := bpf.RedirectConfig{
		Mark: d.cfg.Intercept.Mark, Sockmap: true, SpliceUpstream: true, UpstreamOnly: true,
		SpliceCgroups: d.cfg.Intercept.SpliceUpstream,
	}
	for _, db := range dbHost {
		ap, _ := netip.ParseAddrPort(db.cfg.Upstream) // checked by the caller
		rc.Protected = append(rc.Protected, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	r, err := bpf.LoadRedirect(rc)
	if err != nil {
		return interceptUnavailable(fmt.Errorf("splice_upstream: %w", err))
	}
	it.upstreamSplice = r
	d.own.add(r)
	d.log.Warn("intercept.splice_upstream is on: EXPERIMENTAL, db-host upstream legs spliced in the kernel", "cgroups", fmt.Sprint(rc.SpliceCgroups), "upstreams", fmt.Sprint(rc.Protected))
	return nil
}

// listenPods opens the pod listener: connects from pods on this node (other
// network namespaces) to protected non-loopback addresses arrive there, and
// are identified like any redirected connection (fromRedirect).
func (it *interceptor) listenPods(lc net.ListenConfig, rc *bpf.RedirectConfig) error {
	aps, err := it.d.cfg.Intercept.PodListeners()
	if err != nil {
		return err
	}
	for _, ap := range aps {
		network := "tcp6"
		if ap.Addr().Is4() {
			network = "tcp4"
		}
		ln, err := lc.Listen(context.Background(), network, ap.String())
		if err != nil {
			return fmt.Errorf("pod listener (pod_listen must be an address of this host): %w", err)
		}
		it.lns = append(it.lns, ln)
		got := ln.Addr().(*net.TCPAddr).AddrPort()
		got = netip.AddrPortFrom(got.Addr().Unmap(), got.Port())
		if got.Addr().Is4() {
			rc.PodListen4 = got
		} else {
			rc.PodListen6 = got
		}
		it.d.log.Info("intercepting pods", "pod_listen", got.String())
	}
	return nil
}

// startUnix redirects the unix sockets of app-host databases that name one.
func (it *interceptor) startUnix(dbs []*database) error {
	d := it.d
	var want []*database
	for _, db := range dbs {
		if db.cfg.UnixSocket != "" {
			want = append(want, db)
		}
	}
	if len(want) == 0 {
		return nil
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if err := it.loadUnix(); err != nil {
		return err
	}
	if it.unixRd == nil {
		// TCP interception still works; say plainly what is not covered
		for _, db := range want {
			d.log.Warn("unix-socket interception unavailable (needs kernel 6.7 or later): clients of this socket reach the database unjudged; set fail_closed to refuse to start instead",
				"database", db.cfg.Name, "socket", db.cfg.UnixSocket, "err", it.unixNote)
		}
		return nil
	}
	for _, db := range want {
		if err := it.protectUnix(db); err != nil {
			return err
		}
	}
	return nil
}

// loadUnix loads the unix-socket program unless it is loaded or known to
// be unavailable (it.unixNote then says why; an error only when
// fail_closed forbids going on without it). Under it.mu.
func (it *interceptor) loadUnix() error {
	if it.unixRd != nil || it.unixNote != "" {
		return nil
	}
	d := it.d
	if err := bpf.ProbeUnix(); err != nil {
		if errors.Is(err, bpf.ErrUnsupported) && !d.cfg.Intercept.FailClosed {
			it.unixNote = err.Error()
			return nil
		}
		return unixUnavailable(err)
	}
	ur, err := bpf.LoadUnixRedirect(bpf.UnixConfig{
		Cgroup: it.cg, Mark: d.cfg.Intercept.Mark,
		NetnsCookie: mustCookie(it.lns[0]),
	})
	if err != nil {
		return unixUnavailable(err)
	}
	it.unixRd = ur
	d.own.add(ur)
	if ur.GuardErr != nil {
		d.log.Warn(unixGuardWarning, "reason", guardRefusal(ur.GuardErr))
	} else if it.stop != nil {
		go it.reguardLoop(it.stop, ur)
	}
	return nil
}

// unixUnavailable is loadUnix's error: the kernel's refusal or lack of a
// feature may fall back to the explicit listeners; anything else (the
// verifier rejects bpf/unix.c, a guard fails other than by the kernel's
// refusal) is a broken build that no fallback may hide, so sqlfwd stops.
func unixUnavailable(err error) error {
	err = fmt.Errorf("unix sockets: %w", err)
	if errors.Is(err, bpf.ErrNoPrivilege) || errors.Is(err, bpf.ErrUnsupported) {
		return interceptUnavailable(err)
	}
	return err
}

// protectUnix opens db's unix listener (once) and redirects connects to
// db's socket there. Under it.mu, with it.unixRd loaded.
func (it *interceptor) protectUnix(db *database) error {
	d := it.d
	ln := it.unixLns[db]
	if ln == nil {
		dir := d.cfg.Intercept.SocketDir
		if dir == "" {
			dir = filepath.Dir(d.cfg.ControlSocket)
			if d.cfg.ControlSocket == "none" {
				dir = os.TempDir()
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("unix listener directory: %w", err)
		}
		path := filepath.Join(dir, "sqlfw-"+db.cfg.Name+"-"+filepath.Base(db.cfg.UnixSocket))
		_ = os.Remove(path)
		var err error
		ln, err = net.Listen("unix", path)
		if err != nil {
			return fmt.Errorf("database %s: unix listener: %w", db.cfg.Name, err)
		}
		// clients of any user reach the database's socket; they must
		// reach ours too (the database still authenticates them)
		if err := os.Chmod(path, 0o777); err != nil {
			ln.Close()
			return err
		}
		it.unixLns[db] = ln
		d.wg.Add(1)
		go d.acceptLoop(ln, func(c net.Conn) (arrival, error) { return it.fromUnix(db, c) })
	}
	path := ln.Addr().String()
	names := socketNames(db.cfg.UnixSocket)
	for i, name := range names {
		if err := it.unixRd.Protect(name, path); err != nil {
			for _, done := range names[:i] {
				_ = it.unixRd.Unprotect(done)
			}
			return err
		}
	}
	guarded := it.unixRd.GuardErr == nil
	if err := it.unixRd.Guard(db.cfg.UnixSocket); err != nil && guarded {
		// absent now (the server is starting): reguardLoop keeps looking
		d.log.Info("unix socket not there yet: its other names are refused once it is", "database", db.cfg.Name, "socket", db.cfg.UnixSocket, "err", err)
	}
	d.log.Info("intercepting unix socket", "database", db.cfg.Name, "socket", db.cfg.UnixSocket, "names", strings.Join(names, " "), "listener", path, "connects_as_client", d.dialAs, "other_names_refused", guarded, "guard", it.unixRd.GuardKind)
	if !d.dialAs {
		it.unixAsWarn.Do(func() { d.log.Warn(unixAsWarning, "uid", os.Geteuid()) })
	}
	return nil
}

// socketNames are the names clients commonly reach a unix socket by: the
// path itself, the path with its directory's symlinks resolved, and, where
// /var/run is a link to /run (Debian), the same path under the other of
// the two. The kernel matches the path as the client spells it (before
// any lookup), so another spelling (relative, "..", "//", another link)
// is not intercepted: docs/operations.md says so.
func socketNames(path string) []string {
	names := []string{path}
	add := func(p string) {
		if p != "" && !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		add(filepath.Join(dir, filepath.Base(path)))
	}
	if run, err := filepath.EvalSymlinks("/var/run"); err == nil && run == "/run" {
		for _, n := range slices.Clone(names) {
			if rest, ok := strings.CutPrefix(n, "/run/"); ok {
				add("/var/run/" + rest)
			}
			if rest, ok := strings.CutPrefix(n, "/var/run/"); ok {
				add("/run/" + rest)
			}
		}
	}
	return names
}

// protectDB intercepts a discovered database: its addresses (routes first,
// so that a connect redirected at once finds it) and its unix socket. An
// address a configured database holds is refused; one a discovered entry
// that went away held passes to db.
func (it *interceptor) protectDB(db *database) error {
	if it.redirect == nil {
		return errors.New("app-host interception is not active")
	}
	addrs, err := protectedAddrs(db.cfg)
	if err != nil {
		return err
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if err := it.protectAddrs(it.redirect, db, addrs); err != nil {
		return err
	}
	d := it.d
	d.log.Info("intercepting", "database", db.cfg.Name, "mode", InterceptAppHost, "addresses", fmt.Sprint(addrs), "cgroup", it.cg)
	if db.cfg.UnixSocket == "" {
		return nil
	}
	if err := it.loadUnix(); err != nil || it.unixRd == nil {
		d.log.Warn("unix-socket interception unavailable: clients of this socket reach the database unjudged",
			"database", db.cfg.Name, "socket", db.cfg.UnixSocket, "err", errors.Join(err, errorsNew(it.unixNote)))
		return nil
	}
	if err := it.protectUnix(db); err != nil {
		d.log.Warn("unix-socket interception failed: clients of this socket reach the database unjudged",
			"database", db.cfg.Name, "socket", db.cfg.UnixSocket, "err", err)
	}
	return nil
}

// addrMap is the kernel's set of protected addresses (bpf.Redirect's).
type addrMap interface {
	Protect(netip.AddrPort) error
	Unprotect(netip.AddrPort) error
}

// protectAddrs is protectDB's for the addresses, under it.mu: their routes
// first, then each address into m. It leaves no half state: when one
// cannot be written, those it wrote are taken out again and the routes
// are what they were, so that m, active and the routes say what they said
// before (an address db already held stays). One that cannot be taken out
// stays in active, where unprotectDB finds it, with its route, so that
// the connections the kernel still redirects find db; the error says so.
func (it *interceptor) protectAddrs(m addrMap, db *database, addrs []netip.AddrPort) error {
	prev := it.routes.Load()
	routes := maps.Clone(*prev)
	for _, a := range addrs {
		if other := it.active[a]; other != nil && other != db {
			return fmt.Errorf("%s is already protected for database %s", a, other.cfg.Name)
		}
		if p := routes[a]; p != nil && p != db && p.found == nil {
			return fmt.Errorf("%s was protected for database %s", a, p.cfg.Name)
		}
		routes[a] = db
	}
	it.routes.Store(&routes)
	var added []netip.AddrPort
	for _, a := range addrs {
		if it.active[a] == db {
			continue // db's already (or listed twice)
		}
		if err := m.Protect(a); err != nil {
			err = fmt.Errorf("database %s: %w", db.cfg.Name, err)
			kept := maps.Clone(*prev)
			for _, x := range added {
				if uerr := m.Unprotect(x); uerr != nil {
					err = errors.Join(err, fmt.Errorf("%s stays protected: %w", x, uerr))
					kept[x] = db
					continue
				}
				delete(it.active, x)
			}
			it.routes.Store(&kept)
			return err
		}
		added = append(added, a)
		it.active[a] = db
	}
	return nil
}

// unprotectDB stops intercepting new connects to db's addresses and unix
// socket. Its routes stay, so a connection redirected just before still
// finds db; sessions running go on.
func (it *interceptor) unprotectDB(db *database) {
	it.mu.Lock()
	defer it.mu.Unlock()
	for a, owner := range it.active {
		if owner != db {
			continue
		}
		if err := it.redirect.Unprotect(a); err != nil {
			it.d.log.Warn("unprotecting", "database", db.cfg.Name, "address", a.String(), "err", err)
			continue
		}
		delete(it.active, a)
	}
	if it.unixRd != nil && it.unixLns[db] != nil {
		for _, name := range socketNames(db.cfg.UnixSocket) {
			if err := it.unixRd.Unprotect(name); err != nil {
				it.d.log.Warn("unprotecting", "database", db.cfg.Name, "socket", name, "err", err)
			}
		}
		it.unixRd.Unguard(db.cfg.UnixSocket)
	}
	it.d.log.Info("no longer intercepting", "database", db.cfg.Name)
}

// forgetDB drops db's routes and closes its unix listener: nothing can be
// on its way to db any more.
func (it *interceptor) forgetDB(db *database) {
	it.mu.Lock()
	defer it.mu.Unlock()
	routes := maps.Clone(*it.routes.Load())
	maps.DeleteFunc(routes, func(_ netip.AddrPort, owner *database) bool { return owner == db })
	it.routes.Store(&routes)
	if ln := it.unixLns[db]; ln != nil {
		ln.Close()
		delete(it.unixLns, db)
	}
}

// errorsNew is errors.New that keeps "" as no error.
func errorsNew(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

func mustCookie(ln net.Listener) uint64 {
	c, _ := bpf.NetnsCookie(ln.(syscall.Conn))
	return c
}

// protectedAddrs lists what app-host mode redirects for a database.
func protectedAddrs(c Database) ([]netip.AddrPort, error) {
	if c.Upstream == "" && c.UnixOnly() {
		return nil, nil // reached by its unix socket alone
	}
	if len(c.Protect) > 0 {
		out := make([]netip.AddrPort, 0, len(c.Protect))
		for _, p := range c.Protect {
			ap, err := netip.ParseAddrPort(p)
			if err != nil {
				return nil, err
			}
			out = append(out, ap)
		}
		return out, nil
	}
	host, port, err := net.SplitHostPort(c.Upstream)
	if err != nil {
		return nil, err
	}
	pn, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("upstream port %q: %w", port, err)
	}
	var out []netip.AddrPort
	if a, err := netip.ParseAddr(host); err == nil {
		out = append(out, netip.AddrPortFrom(a.Unmap(), uint16(pn)))
	} else {
		ips, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
		if err != nil {
			return nil, fmt.Errorf("resolving upstream %s: %w", host, err)
		}
		for _, a := range ips {
			out = append(out, netip.AddrPortFrom(a.Unmap(), uint16(pn)))
		}
	}
	// A client asking for "localhost" may try either loopback family.
	if len(out) == 1 && out[0].Addr().IsLoopback() {
		other := netip.IPv6Loopback()
		if out[0].Addr().Is6() {
			other = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		}
		out = append(out, netip.AddrPortFrom(other, uint16(pn)))
	}
	return out, nil
}

// redirectNow is the redirect object in force; nil once close has begun
// (an accept loop can still hand over a connection accepted just before
// its listener closed).
func (it *interceptor) redirectNow() *bpf.Redirect {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.redirect
}

// fromRedirect identifies a connection a cgroup program redirected.
func (it *interceptor) fromRedirect(c net.Conn) (arrival, error) {
	peer := c.RemoteAddr().(*net.TCPAddr).AddrPort()
	r := it.redirectNow()
	if r == nil {
		return arrival{}, errors.New("interception is stopping: the connection's original destination is no longer read")
	}
	o, ok := r.Origin(peer)
	if !ok {
		return arrival{}, errors.New("no original destination: the connection was not redirected to sqlfwd (or its record was evicted)")
	}
	if it.d.own.isOwn(o.Client.Cookie) {
		return arrival{}, fmt.Errorf("%w: the client socket (cookie %d) is one of sqlfwd's upstream connections to %s", errOwnLoop, o.Client.Cookie, o.Dst)
	}
	db := (*it.routes.Load())[o.Dst]
	if db == nil {
		return arrival{}, fmt.Errorf("original destination %s is not protected", o.Dst)
	}
	a := arrival{db: db, conn: relay.Conn{
		Client: c, Via: relay.ViaRedirect, Upstream: relay.Upstream{Network: "tcp", Addr: db.cfg.Upstream}, Origin: o.Dst.String(),
		Process: relay.Process{Known: true, Tgid: o.Client.Tgid, UID: o.Client.Uid, Comm: o.Client.Comm, Cgroup: it.cgroupPath(o.Client.CgroupID)},
	}}
	if it.fast != nil {
		a.conn.Fast = fastPath{it.fast}
	}
	return a, nil
}

// fastPath gives relay sessions the kernel fast path (bpf.Fast).
type fastPath struct{ f *bpf.Fast }

func (p fastPath) Attach(server, client net.Conn) (relay.FastLeg, error) {
	l, err := p.f.Attach(server, client)
	if err != nil {
		return nil, err
	}
	return fastLeg{l}, nil
}

type fastLeg struct{ *bpf.FastLeg }

func (l fastLeg) Halt(apply func(relay.FastReport)) error {
	return l.FastLeg.Halt(func(r bpf.FastReport) {
		apply(relay.FastReport{Ready: r.Ready, Status: r.Status, Redirected: r.Redirected})
	})
}

func (l fastLeg) TakePrefix() relay.FastPrefix {
	p := l.FastLeg.TakePrefix()
	return relay.FastPrefix{Rem: p.Rem, Need: p.Need, Acc: p.Acc}
}

// fromSteer identifies a connection the sk_lookup program steered: the
// original destination is the accepted socket's local address.
func (it *interceptor) fromSteer(c net.Conn) (arrival, error) {
	local := c.LocalAddr().(*net.TCPAddr).AddrPort()
	db := it.steered[local.Port()]
	if db == nil || local.Addr().Unmap().IsLoopback() {
		return arrival{}, fmt.Errorf("connection to %s was not steered", local)
	}
	return arrival{db: db, conn: relay.Conn{Client: c, Via: relay.ViaSteer, Upstream: relay.Upstream{Network: "tcp", Addr: db.cfg.Upstream}, Origin: local.String()}}, nil
}

// fromUnix identifies a unix-socket client by its peer credentials.
func (it *interceptor) fromUnix(db *database, c net.Conn) (arrival, error) {
	a := arrival{db: db, conn: relay.Conn{Client: c, Via: relay.ViaUnix, Upstream: relay.Upstream{Network: "unix", Addr: db.cfg.UnixSocket}, Origin: db.cfg.UnixSocket}}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return a, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return a, nil
	}
	if peerIsSelf(rc, os.Getpid()) {
		return arrival{}, fmt.Errorf("%w: the client is sqlfwd's own pid, connecting to %s", errOwnLoop, db.cfg.UnixSocket)
	}
	_ = rc.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err != nil {
			return
		}
		a.conn.Process = relay.Process{Known: true, Tgid: uint32(cred.Pid), UID: cred.Uid, Comm: readComm(it.d.proc, cred.Pid), Cgroup: procCgroup(it.d.proc, cred.Pid)}
	})
	// the server must see the client, not sqlfwd (dialas.go)
	if as := peerCredentials(rc); as != nil && it.d.dialAs && !sameCredentials(as) {
		a.conn.Upstream.As = as
	}
	return a, nil
}

// readComm reads a process's command name (/proc/PID/comm under proc).
func readComm(proc string, pid int32) string {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(int(pid)), "comm"))
	if err != nil {
		return ""
	}
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	return string(b)
}

// procCgroup reads a process's cgroup2 path ("0::/path" in /proc/PID/cgroup
// under proc).
func procCgroup(proc string, pid int32) string {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(int(pid)), "cgroup"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if len(line) > 3 && line[:3] == "0::" {
			return line[3:]
		}
	}
	return ""
}

// isCgroup2Root reports whether dir is the root of a cgroup2 hierarchy:
// every cgroup but the root has cgroup.freeze (Linux 5.2 and later).
func isCgroup2Root(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "cgroup.freeze"))
	return errors.Is(err, fs.ErrNotExist)
}

// cgroupPath turns a cgroup id (the cgroup2 directory's inode number) into
// its path under the mount, walking the hierarchy on a miss. Results are
// cached; a cgroup created later is found by the next walk.
func (it *interceptor) cgroupPath(id uint64) string {
	if id == 0 || it.cgroup2 == "" {
		return ""
	}
	if p, ok := it.cgPaths.Load(id); ok {
		return p.(string)
	}
	found := ""
	_ = filepath.WalkDir(it.cgroup2, func(path string, de fs.DirEntry, err error) error {
		if err != nil || !de.IsDir() {
			return nil
		}
		info, err := de.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Ino == id {
			rel, _ := filepath.Rel(it.cgroup2, path)
			found = "/" + rel
			if rel == "." {
				found = "/"
			}
			return filepath.SkipAll
		}
		return nil
	})
	if found != "" {
		it.cgPaths.Store(id, found)
	}
	return found
}

// close detaches the programs first, so that new connections go directly
// to the database, then closes the listeners. Safe after a partial start.
// With fail_closed the pinned app-host programs stay attached instead: new
// protected connects are refused until a new sqlfwd takes them over, or
// `sqlfwd --detach-pins` removes them.
func (it *interceptor) close() {
	if it.stop != nil {
		close(it.stop)
		it.stop = nil
	}
	it.d.own.clear() // before the maps close; dials from now on need no exemption
	var errs []error
	if it.fast != nil {
		errs = append(errs, it.fast.Close())
		it.fast = nil
	}
	if it.redirect != nil {
		if it.d.cfg.Intercept.FailClosed {
			errs = append(errs, it.redirect.Release())
			it.d.log.Warn("fail_closed: interception stays pinned: protected connects are refused until sqlfwd starts again (sqlfwd --detach-pins removes it)", "pin_dir", it.d.cfg.Intercept.PinDir)
		} else {
			errs = append(errs, it.redirect.Close())
		}
	}
	if it.steer != nil {
		errs = append(errs, it.steer.Close())
	}
	if it.upstreamSplice != nil {
		errs = append(errs, it.upstreamSplice.Close())
	}
	if it.unixRd != nil {
		errs = append(errs, it.unixRd.Close())
	}
	if err := errors.Join(errs...); err != nil {
		it.d.log.Warn("detaching interception", "err", err)
	}
	it.mu.Lock()
	it.redirect, it.steer, it.unixRd, it.upstreamSplice = nil, nil, nil, nil
	it.mu.Unlock()
	defer it.lock.release()
	for _, ln := range it.lns {
		ln.Close()
	}
	it.lns = nil
	it.mu.Lock()
	for db, ln := range it.unixLns {
		ln.Close()
		delete(it.unixLns, db)
	}
	it.mu.Unlock()
}

// interceptStats reads the programs' counters.
func (d *Daemon) interceptStats() InterceptionStats {
	st := InterceptionStats{Fallback: d.interceptNote, Refused: d.refused.Load()}
	it := d.intercept
	if it == nil {
		return st
	}
	st.Active = true
	st.OwnLoops = d.own.loopCount()
	if it.redirect != nil {
		st.Programs = append(st.Programs, "redirect")
		if *d.cfg.Intercept.Sockmap {
			st.Programs = append(st.Programs, "sockmap")
		}
		if c, err := it.redirect.Counters(); err == nil {
			st.Redirected, st.SkippedOwn, st.SkippedNetns, st.MapFull = c.Redirected, c.SkippedOwn, c.SkippedNetns, c.MapFull
			st.SockmapAdded, st.SockmapFallback = c.SockmapAdded, c.SockmapFallback
			st.PodRedirected = c.PodRedirected
		}
	}
	if it.upstreamSplice != nil {
		st.Programs = append(st.Programs, "splice_upstream")
		if c, err := it.upstreamSplice.Counters(); err == nil {
			st.SockmapAdded, st.SockmapFallback = c.SockmapAdded, c.SockmapFallback
		}
	}
	if it.fast != nil {
		st.Programs = append(st.Programs, "fastpath")
		c := it.fast.Counters()
		st.FastpathSessions, st.FastpathBytes, st.FastpathReady, st.FastpathHalts = c.Sessions, c.Bytes, c.Ready, c.Halts
	}
	it.mu.Lock() // discovery may load the unix program at run time
	unixRd := it.unixRd
	it.mu.Unlock()
	if unixRd != nil {
		st.Programs = append(st.Programs, "unix")
		if c, err := unixRd.Counters(); err == nil {
			st.UnixRedirected, st.UnixSkippedOwn, st.UnixGuardRefused = c.Redirected, c.SkippedOwn, c.GuardRefused
		}
		st.UnixOtherNames = "refused"
		if unixRd.GuardErr != nil {
			st.UnixOtherNames = "NOT refused: " + guardRefusal(unixRd.GuardErr)
		}
	}
	if it.steer != nil {
		st.Programs = append(st.Programs, "steer")
		if c, err := it.steer.Counters(); err == nil {
			st.Steered = c.Steered
		}
	}
	return st
}

// unixGuardWarning is what the daemon says when the kernel cannot refuse
// other names of a protected unix socket (bpf/unix.c's guard).
const unixGuardWarning = "other names of a protected unix socket (a symlink or hard link to it, a path through .., /proc/PID/root/...) reach the server unjudged: no guard program loads on this kernel to refuse them (lsm_cgroup needs the BPF LSM, fmod_ret BPF trampolines); relative, /proc/self/cwd/ and /proc/self/root/ names and doubled slashes are judged"

// guardRefusal says in an operator's words why no unix-name guard loads:
// which kernel features each guard needs and what the kernel answered (its
// errno), not the loader's error chain, which names Go fields and
// functions ("field Guard", "rlimit.RemoveMemlock") and calls an EPERM
// "no privilege" although the unit has the capabilities and some kernels
// refuse these program types to root as well.
func guardRefusal(err error) string {
	if !errors.Is(err, bpf.ErrGuardRefused) {
		return err.Error()
	}
	answer := ""
	var errno syscall.Errno
	if errors.As(err, &errno) {
		answer = fmt.Sprintf(" (%s, %s)", unix.ErrnoName(errno), errno.Error())
	}
	return "the kernel refuses both guard programs" + answer + `: lsm_cgroup needs the BPF LSM active ("bpf" in the kernel's lsm= list) and BPF trampolines (kernel 6.0 or later); fmod_ret needs BPF trampolines (kernel 5.7 or later with ftrace); a kernel without them refuses them to root as well`
}

// reguardEvery is how soon a server that binds its socket anew (a restart)
// has the new file guarded.
const reguardEvery = time.Second

// reguardLoop follows the guarded sockets' files: a restarted server binds
// a new inode, which must be refused by other names as the old one was.
func (it *interceptor) reguardLoop(stop <-chan struct{}, ur *bpf.UnixRedirect) {
	t := time.NewTicker(reguardEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		_ = ur.Reguard() // an absent socket (server down) is looked at again
	}
}

// watchMapFull logs when the kernel could not record a connection's origin:
// such connections went directly to the database (fail open) or were
// refused (fail closed), and neither may pass silently.
func (it *interceptor) watchMapFull(stop <-chan struct{}) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	var seen uint64
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		r := it.redirectNow()
		if r == nil {
			return
		}
		c, err := r.Counters()
		if err != nil || c.MapFull == seen {
			continue
		}
		what := "went directly to the database, unjudged (fail open)"
		if it.d.cfg.Intercept.FailClosed {
			what = "were refused (fail closed)"
		}
		it.d.log.Error("interception map full: connections "+what, "connections", c.MapFull-seen, "total", c.MapFull)
		seen = c.MapFull
	}
}

// Protect adds or removes an app-host protected address at run time. A
// removed address stops being redirected for new connections only; the
// sessions already running stay with sqlfwd.
func (d *Daemon) Protect(name, addr string, add bool) error {
	it := d.intercept
	if it == nil || it.redirect == nil {
		return errors.New("app-host interception is not active")
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: want IP:PORT: %w", addr, err)
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	it.mu.Lock()
	defer it.mu.Unlock()
	if !add {
		db := it.active[ap]
		if db == nil {
			return fmt.Errorf("%s is not protected", ap)
		}
		if err := it.redirect.Unprotect(ap); err != nil {
			return err
		}
		delete(it.active, ap)
		d.log.Info("no longer intercepting", "address", ap.String(), "database", db.cfg.Name)
		return nil
	}
	db, err := d.database(name)
	if err != nil {
		return err
	}
	if db.cfg.Intercept != InterceptAppHost {
		return fmt.Errorf("database %s does not use app-host interception", db.cfg.Name)
	}
	if other := it.active[ap]; other != nil {
		return fmt.Errorf("%s is already protected for database %s", ap, other.cfg.Name)
	}
	if prev := (*it.routes.Load())[ap]; prev != nil && prev != db {
		return fmt.Errorf("%s was protected for database %s; restart sqlfwd to move it", ap, prev.cfg.Name)
	}
	// the route first: a connect redirected right after Protect must find it
	prev := it.routes.Load()
	routes := maps.Clone(*prev)
	routes[ap] = db
	it.routes.Store(&routes)
	if err := it.redirect.Protect(ap); err != nil {
		it.routes.Store(prev) // no half state
		return err
	}
	it.active[ap] = db
	d.log.Info("intercepting", "address", ap.String(), "database", db.cfg.Name)
	return nil
}
