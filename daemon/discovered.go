package daemon

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sqlfw/sqlfw/discover"
	"github.com/sqlfw/sqlfw/protocol"
)

// Zero-configuration start: without a configuration file (or with
// discovery.enabled) sqlfwd protects the database servers it finds on the
// host (discover.Find over the daemon's /proc root), each with app-host
// interception of its TCP addresses and unix socket and the embedded
// default policy, and rescans every discovery.interval: a server that
// starts later becomes a database, one that stops has its interception
// removed (its open sessions end on their own) and its entry marked gone,
// and a server that comes back on the same addresses takes its old entry
// again, so names and counters do not flap. Configured databases are never
// touched; a server one of them covers is left to it.

// forgetGoneAfter is how long the entry of a server that went away is kept
// (for its counters, and for the server to come back) before it is
// dropped; entries with open sessions are kept until those end.
const forgetGoneAfter = 10 * time.Minute

// foundServer is one server discovery would protect: the database it
// becomes and the process behind it.
type foundServer struct {
	db   Database
	pid  int
	comm string
	what string // the log's description
}

// findServers reads the servers under procRoot and turns each into a
// database to protect; notes says what it leaves alone and why.
func findServers(procRoot string, local []netip.Addr) (found []foundServer, notes []string, err error) {
	// sock_diag reads our own namespace's listeners at a cost that does not
	// grow with the host's connections; only the live /proc is ours.
	servers, err := discover.FindWith(procRoot, discover.Options{Netlink: procRoot == "/proc"})
	if err != nil {
		return nil, nil, err
	}
	taken := map[string]bool{}
	for _, s := range servers {
		what := describeServer(s)
		if len(s.Unproven) > 0 {
			// one line per path discovery could not prove is the server's
			for _, u := range s.Unproven {
				notes = append(notes, "not protected: "+fmt.Sprintf("%s (pid %d, %s): ", s.Protocol, s.PID, s.Comm)+u)
			}
			continue
		}
		if s.OtherNetns {
			notes = append(notes, "not protected: "+what+" because it runs in another network namespace (sqlfwd intercepts connects in its own)")
			continue
		}
		p, ok := protocol.Discovered(s.Protocol)
		switch {
		case !ok:
			notes = append(notes, "not protected: "+what+" because sqlfwd has no "+string(s.Protocol)+" path yet")
			continue
		case len(s.TCP) == 0 && len(s.Unix) == 0:
			notes = append(notes, "not protected: "+what+" because it listens on nothing sqlfwd could reach it through")
			continue
		}
		db := Database{Protocol: p.Name, Intercept: InterceptAppHost}
		if len(s.TCP) > 0 {
			up, protect := upstreamAndProtect(s.TCP, local)
			db.Name, db.Upstream = p.Name+"-"+strconv.Itoa(int(s.TCP[0].Port())), up.String()
			for _, p := range protect {
				db.Protect = append(db.Protect, p.String())
			}
		}
		if len(s.Unix) > 0 {
			db.UnixSocket = s.Unix[0]
		}
		if db.Name == "" {
			// no TCP listener: reached by its unix socket alone, which
			// names it (interception of a unix socket needs no TCP port)
			db.Name = unixOnlyName(p.Name, db.UnixSocket, taken)
		}
		taken[db.Name] = true
		dbs := []Database{db}
		for i := 1; i < len(s.Unix); i++ {
			sock := s.Unix[i]
			// a database has one socket: each other socket of the server
			// (PostgreSQL's unix_socket_directories) is one of its own,
			// never left out unsaid
			name := unixOnlyName(p.Name, sock, taken)
			taken[name] = true
			dbs = append(dbs, Database{Name: name, Protocol: p.Name, Intercept: InterceptAppHost, UnixSocket: sock})
		}
		for _, db := range dbs {
			// the defaults a configured database gets (timeouts, buffers, mode)
			c := Config{Databases: []Database{db}}
			if err := c.Normalize(); err != nil {
				notes = append(notes, "not protected: "+what+" because "+err.Error())
				continue
			}
			found = append(found, foundServer{db: c.Databases[0], pid: s.PID, comm: s.Comm, what: what})
		}
	}
	return found, notes, nil
}

// unixOnlyName names a server found by its unix socket alone:
// "postgres-unix-5432" for PostgreSQL's .s.PGSQL.5432, "mysql-unix-mysqld"
// for mysqld.sock; a name another server of this scan took gets "-2", "-3"
// (servers come in pid order, so a stable set keeps its names).
func unixOnlyName(protocol, socket string, taken map[string]bool) string {
	base := filepath.Base(socket)
	if port, ok := strings.CutPrefix(base, ".s.PGSQL."); ok {
		base = port
	}
	base = strings.TrimSuffix(base, ".sock")
	base = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, strings.TrimLeft(base, "."))
	if len(base) > 32 {
		base = base[:32]
	}
	name := protocol + "-unix-" + base
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-unix-%s-%d", protocol, base, i)
	}
	return name
}

// describeServer names a server and what it listens on for the log.
func describeServer(s discover.Server) string {
	on := ""
	if len(s.TCP)+len(s.Unix) > 0 {
		var l []string
		for _, a := range s.TCP {
			l = append(l, a.String())
		}
		on = " on " + strings.Join(append(l, s.Unix...), " ")
	}
	return fmt.Sprintf("%s (pid %d, %s)%s", s.Protocol, s.PID, s.Comm, on)
}

// unprotectedPrefix starts the notes of paths to a server that nothing
// protects (a WARN line each, counted in sqlfw_unprotected_paths).
const unprotectedPrefix = "not protected: "

// foundState is what discovery knows of a database it made (nil for a
// configured database). Status reads it under mu; the discovery loop writes.
type foundState struct {
	mu      sync.Mutex
	present bool // a server listens: its addresses are intercepted
	pid     int
	comm    string
	since   time.Time // when it took the present state
}

func (f *foundState) get() (present bool, pid int, comm string, since time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.present, f.pid, f.comm, f.since
}

func (f *foundState) set(present bool, pid int, comm string, since time.Time) {
	f.mu.Lock()
	f.present, f.pid, f.comm, f.since = present, pid, comm, since
	f.mu.Unlock()
}

// discoveryKernel is what a rescan changes in the kernel: the interceptor,
// or a fake in tests; nil before interception starts (startIntercept then
// protects every app-host database of the list, discovered ones included).
type discoveryKernel interface {
	// protectDB intercepts new connects to db's addresses and unix socket.
	protectDB(db *database) error
	// unprotectDB stops intercepting them; connections already redirected
	// still find db.
	unprotectDB(db *database)
	// forgetDB releases what is left of db (its routes, its unix listener)
	// once no connection can be on its way to it.
	forgetDB(db *database)
}

// discovery is the rescan loop's state.
type discovery struct {
	d        *Daemon
	interval time.Duration
	proc     string
	local    func() []netip.Addr
	now      func() time.Time

	mu     sync.Mutex // one scan at a time
	kernel discoveryKernel
	byName map[string]*database // the entries discovery made, present or gone
	notes  map[string]bool      // the last scan's notes, logged when new

	// what Status shows, under statusMu
	statusMu   sync.Mutex
	scans      uint64
	lastScan   time.Time
	lastCost   time.Duration
	lastErr    string
	notProtect []string
	// unprotected counts the notes of paths nothing protects
	unprotected int

	// sockDirs are the directories watched for servers' unix sockets
	// besides those of the sockets found (sockwatch.go); watch is nil when
	// inotify is unavailable.
	sockDirs []string
	watch    *sockWatch
	timerMu  sync.Mutex
	timer    *time.Timer

	running bool // run was started (Start; Stop reads it)
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

func newDiscovery(d *Daemon) *discovery {
	return &discovery{d: d, interval: d.cfg.Discovery.Interval, proc: d.proc, local: localAddrs, now: time.Now,
		byName: map[string]*database{}, notes: map[string]bool{}, sockDirs: defaultSocketDirs,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// run rescans every interval, or at once when kicked, until stopped.
func (dc *discovery) run() {
	defer close(dc.done)
	if w := dc.watch; w != nil {
		go w.run(func() { dc.rescanAfter(sockSettle) })
		defer w.close()
	}
	t := time.NewTicker(dc.interval)
	defer t.Stop()
	for {
		select {
		case <-dc.stop:
			return
		case <-t.C:
		case <-dc.kick:
		}
		dc.rescan()
	}
}

// startWatch sets up the inotify watch of the socket directories (before
// run); without inotify the interval alone finds servers.
func (dc *discovery) startWatch() {
	w, err := newSockWatch()
	if err != nil {
		dc.d.log.Warn("discovery: no inotify: servers are found at the next interval only", "err", err)
		return
	}
	dc.mu.Lock()
	dc.watch = w
	w.watch(dc.socketDirs())
	dc.mu.Unlock()
}

// rescanSoon asks the loop for a scan now (a reload does).
func (dc *discovery) rescanSoon() {
	select {
	case dc.kick <- struct{}{}:
	default:
	}
}

func (dc *discovery) close() {
	close(dc.stop)
	<-dc.done
	dc.timerMu.Lock()
	if dc.timer != nil {
		dc.timer.Stop()
	}
	dc.timerMu.Unlock()
}

// rescan reads the host's servers once and brings the databases in line:
// new servers are added and intercepted, servers that went away lose their
// interception, servers that came back take their entry again.
func (dc *discovery) rescan() {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	d := dc.d
	start := time.Now()
	found, notes, err := findServers(dc.proc, dc.local())
	cost := time.Since(start)
	dc.statusMu.Lock()
	dc.scans++
	dc.lastScan, dc.lastCost = dc.now(), cost
	dc.lastErr = ""
	if err != nil {
		dc.lastErr = err.Error()
	}
	dc.statusMu.Unlock()
	if err != nil {
		// keep the databases as they are: an unreadable /proc says
		// nothing about the servers
		d.log.Warn("discovery: cannot read the servers", "err", err)
		return
	}
	now := dc.now()
	seen := map[*database]bool{}
	for _, f := range found {
		if other := dc.configuredCovering(f.db); other != "" {
			notes = append(notes, "not protected by discovery: "+f.what+": configured as database "+other)
			continue
		}
		db := dc.byName[f.db.Name]
		if db != nil && !sameServer(db.cfg, f.db) {
			// the same port, other addresses or socket: a new entry
			d.log.Info("discovery: server moved: replacing its database", "database", db.cfg.Name, "upstream", f.db.Upstream, "addresses", fmt.Sprint(f.db.Protect), "unix_socket", f.db.UnixSocket)
			dc.drop(db)
			db = nil
		}
		if db == nil {
			nd, err := dc.add(f, now)
			if err != nil {
				notes = append(notes, "not protected: "+f.what+" because "+err.Error())
				continue
			}
			seen[nd] = true
			d.log.Info("discovery: found and protecting", "database", nd.cfg.Name, "server", f.what, "upstream", nd.cfg.Upstream,
				"addresses", fmt.Sprint(nd.cfg.Protect), "unix_socket", nd.cfg.UnixSocket, "policy", "(embedded default)")
			continue
		}
		seen[db] = true
		present, pid, _, _ := db.found.get()
		switch {
		case !present:
			if err := dc.protect(db); err != nil {
				notes = append(notes, "not protected: "+f.what+" because "+err.Error())
				seen[db] = false
				continue
			}
			db.found.set(true, f.pid, f.comm, now)
			d.log.Info("discovery: server back: protecting it again", "database", db.cfg.Name, "server", f.what)
		case pid != f.pid:
			// restarted between two scans: same addresses, same entry
			db.found.set(true, f.pid, f.comm, now)
			d.log.Info("discovery: server restarted", "database", db.cfg.Name, "server", f.what)
		}
	}
	for _, db := range dc.byName {
		if seen[db] {
			continue
		}
		present, pid, comm, since := db.found.get()
		if present {
			if dc.kernel != nil {
				dc.kernel.unprotectDB(db)
			}
			db.found.set(false, pid, comm, now)
			d.log.Info("discovery: server gone: no longer intercepting its addresses; open sessions end on their own",
				"database", db.cfg.Name, "pid", pid, "sessions", db.stats.connActive.Load())
			continue
		}
		if now.Sub(since) >= forgetGoneAfter && db.stats.connActive.Load() == 0 {
			d.log.Info("discovery: forgetting a server gone since "+since.Format(time.RFC3339), "database", db.cfg.Name)
			dc.drop(db)
		}
	}
	dc.logNotes(notes)
	if dc.watch != nil {
		dc.watch.watch(dc.socketDirs())
	}
}

// configuredCovering names the configured database that already covers
// what db would protect (a name, an address or the unix socket), or "".
func (dc *discovery) configuredCovering(db Database) string {
	for _, c := range dc.d.databases() {
		if c.found != nil {
			continue
		}
		if c.cfg.Name == db.Name || (c.cfg.UnixSocket != "" && c.cfg.UnixSocket == db.UnixSocket) {
			return c.cfg.Name
		}
		covered := []string{c.cfg.Upstream}
		if c.cfg.Intercept == InterceptAppHost {
			if addrs, err := protectedAddrs(c.cfg); err == nil {
				for _, a := range addrs {
					covered = append(covered, a.String())
				}
			}
		}
		for _, a := range covered {
			if a != "" && (a == db.Upstream || slices.Contains(db.Protect, a)) {
				return c.cfg.Name
			}
		}
		if c.cfg.Intercept == InterceptDBHost {
			if up, err := netip.ParseAddrPort(c.cfg.Upstream); err == nil && up.Port() == upstreamPort(db) {
				return c.cfg.Name
			}
		}
	}
	return ""
}

func upstreamPort(db Database) uint16 {
	ap, err := netip.ParseAddrPort(db.Upstream)
	if err != nil {
		return 0
	}
	return ap.Port()
}

// sameServer: a server found again is the entry's when it is reached the
// same way.
func sameServer(a, b Database) bool {
	return a.Protocol == b.Protocol && a.Upstream == b.Upstream && a.UnixSocket == b.UnixSocket && slices.Equal(a.Protect, b.Protect)
}

// add makes a database of a found server, puts it in the list and
// intercepts it.
func (dc *discovery) add(f foundServer, now time.Time) (*database, error) {
	d := dc.d
	cfg := f.db
	// A zero-config install learns its applications from the start
	// (docs/learn.md); promotion stays the operator's decision.
	cfg.Learn = !d.cfg.Discovery.NoLearn
	db, err := d.newDatabase(&cfg)
	if err != nil {
		return nil, err
	}
	db.found = &foundState{present: true, pid: f.pid, comm: f.comm, since: now}
	// in the list before its addresses are protected: a connection
	// redirected at once is counted and shown under it
	d.addDatabase(db)
	if err := dc.protect(db); err != nil {
		d.removeDatabase(db)
		if dc.kernel != nil {
			dc.kernel.unprotectDB(db) // what the rollback could not take out
			dc.kernel.forgetDB(db)
		}
		return nil, err
	}
	dc.byName[db.cfg.Name] = db
	return db, nil
}

func (dc *discovery) protect(db *database) error {
	if dc.kernel == nil {
		return nil
	}
	return dc.kernel.protectDB(db)
}

// drop removes an entry for good: no interception, out of the list.
func (dc *discovery) drop(db *database) {
	if dc.kernel != nil {
		dc.kernel.unprotectDB(db)
		dc.kernel.forgetDB(db)
	}
	dc.d.removeDatabase(db)
	delete(dc.byName, db.cfg.Name)
}

// logNotes logs the notes the previous scan did not have: a server left
// alone is said once, not every interval; a path nothing protects is a
// WARN line. When the count of those changes, onChange hears it (sqlfwd's
// systemd STATUS).
func (dc *discovery) logNotes(notes []string) {
	now := map[string]bool{}
	unprotected := 0
	for _, n := range notes {
		now[n] = true
		bad := strings.HasPrefix(n, unprotectedPrefix)
		if bad {
			unprotected++
		}
		switch {
		case dc.notes[n]:
		case bad:
			dc.d.log.Warn("discovery: " + n)
		default:
			dc.d.log.Info("discovery: " + n)
		}
	}
	for n := range dc.notes {
		if !now[n] && strings.HasPrefix(n, unprotectedPrefix) {
			dc.d.log.Info("discovery: no longer said: " + n)
		}
	}
	dc.notes = now
	slices.Sort(notes)
	dc.statusMu.Lock()
	changed := dc.unprotected != unprotected
	dc.notProtect, dc.unprotected = notes, unprotected
	dc.statusMu.Unlock()
	if changed {
		if f := dc.d.onProtectionChange.Load(); f != nil {
			(*f)()
		}
	}
}

// status is the loop's part of fwctl status.
func (dc *discovery) status() *DiscoveryStatus {
	dc.statusMu.Lock()
	defer dc.statusMu.Unlock()
	return &DiscoveryStatus{Interval: dc.interval.String(), Scans: dc.scans, LastScan: dc.lastScan,
		LastScanMicros: dc.lastCost.Microseconds(), LastError: dc.lastErr, NotProtected: slices.Clone(dc.notProtect),
		Unprotected: dc.unprotected}
}

// upstreamAndProtect picks the address sqlfwd reaches a server at (loopback
// where a listener covers it) and the destinations local clients may use:
// each specific listener address, and for a wildcard listener loopback and
// every local address of its family (a v6 wildcard also takes IPv4).
func upstreamAndProtect(listeners []netip.AddrPort, local []netip.Addr) (netip.AddrPort, []netip.AddrPort) {
	seen := map[netip.AddrPort]bool{}
	var protect []netip.AddrPort
	add := func(a netip.Addr, port uint16) {
		ap := netip.AddrPortFrom(a.Unmap(), port)
		if !seen[ap] {
			seen[ap] = true
			protect = append(protect, ap)
		}
	}
	var up netip.AddrPort
	for _, l := range listeners {
		a, port := l.Addr(), l.Port()
		switch {
		case a.IsUnspecified():
			v6 := a.Is6()
			add(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
			if v6 {
				add(netip.IPv6Loopback(), port)
			}
			for _, la := range local {
				if la.Is4() || v6 {
					add(la, port)
				}
			}
			if !up.IsValid() || !up.Addr().IsLoopback() {
				up = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
			}
		default:
			add(a, port)
			if !up.IsValid() || (a.IsLoopback() && !up.Addr().IsLoopback()) {
				up = netip.AddrPortFrom(a.Unmap(), port)
			}
		}
	}
	return up, protect
}

// localAddrs lists the host's interface addresses (none when they cannot be
// read: loopback is protected all the same).
func localAddrs() []netip.Addr {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, ia := range ifs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && !p.Addr().IsLinkLocalUnicast() {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// OnProtectionChange sets f to be called (from the discovery loop) when
// the number of paths nothing protects changes.
func (d *Daemon) OnProtectionChange(f func()) { d.onProtectionChange.Store(&f) }

// ProtectionSummary is the daemon's state in a line (systemd's STATUS):
// what it serves and, with discovery, how many paths it found that
// nothing protects.
func (d *Daemon) ProtectionSummary() string {
	n := len(d.databases())
	dc := d.discovery
	if dc == nil {
		return fmt.Sprintf("serving %d database(s)", n) + d.unixGuardSummary()
	}

	st := dc.status()
	s := fmt.Sprintf("serving %d database(s), discovering every %s", n, dc.interval)
	if st.Unprotected > 0 {
		s += fmt.Sprintf("; %d path(s) to servers NOT protected (fwctl status says why)", st.Unprotected)
	}
	return s + d.unixGuardSummary()
}

// unixGuardSummary is ProtectionSummary's part for unix sockets reached by
// another name: said only when they are not refused.
func (d *Daemon) unixGuardSummary() string {
	it := d.intercept
	if it == nil {
		return ""
	}
	it.mu.Lock()
	ur := it.unixRd
	it.mu.Unlock()
	if ur == nil || ur.GuardErr == nil {
		return ""
	}
	return "; unix sockets by other names (symlinks) NOT protected"
}
