package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
	"github.com/sqlfw/sqlfw/relay"
)

// Daemon is a running sqlfwd: its databases, listeners, sessions and
// control socket.
type Daemon struct {
	cfg     *Config
	log     *slog.Logger
	version string
	started time.Time

	// dbs is the list of protected databases: an immutable slice swapped
	// whole (copy on write under dbsMu) when discovery adds a database, so
	// the control socket, metrics and stats read it without a lock. No
	// session reads it: an arrival carries its database.
	dbs   atomic.Pointer[[]*database]
	dbsMu sync.Mutex
	// relays holds one relay per protocol, shared by its databases (a
	// relay may route between sessions: a cancel request names a session
	// of any database); under dbsMu.
	relays map[string]relay.Protocol
	// discovery rescans the host for servers (discovered.go); nil unless
	// discovery is enabled.
	discovery *discovery
	audit     *auditor // nil when no audit trail is configured
	control   *controlServer
	intercept *interceptor
	// interceptNote says why interception is not active, when it was
	// asked for and the daemon fell back to its explicit listeners.
	interceptNote string
	// dialAs: the process may connect to a unix socket as its client
	// (CAP_SETUID and CAP_SETGID; dialas.go).
	dialAs bool
	// refused counts intercepted connections that could not be identified.
	refused atomic.Uint64
	dialer  net.Dialer
	// own exempts the dialer's sockets from redirection and catches loops
	// (ownsock.go).
	own *ownSockets
	// sleep is the accept loops' back-off (time.Sleep; tests count it).
	sleep func(time.Duration)
	// proc is the procfs root every /proc read goes through ("/proc";
	// tests point it at a fake tree).
	proc string
	// budget bounds the message memory of all sessions (guard.go).
	budget *bufferBudget
	// logs bounds verdict and session error lines per daemon and reason
	// (logrl.go); stopLogSummary ends its periodic summary.
	logs           *logLimiter
	stopLogSummary func()
	// clients counts client connections of all databases, for
	// max_client_connections (guard.go), maxClients (a reload changes it).
	clients    atomic.Int64
	maxClients atomic.Int64
	// ready: started and not draining (/readyz). reloads counts reloads
	// by outcome, lastReload is the last successful one (unix seconds).
	ready                  atomic.Bool
	reloadsOK, reloadsFail atomic.Uint64
	lastReload             atomic.Int64

	// reloadMu serialises reloads and learner changes.
	reloadMu sync.Mutex
	// src is where the configuration came from (nil: the command line, or
	// discovery without a file); inForce is the configuration in force,
	// under reloadMu; cfgSum the checksum of the file content last applied
	// and pendingRestart the keys of that content not in force until a
	// restart (reload.go).
	src            *ConfigSource
	inForce        *Config
	cfgSum         atomic.Pointer[string]
	pendingRestart atomic.Pointer[[]string]
	mu             sync.Mutex
	sessions       map[relay.Session]*sessionObserver
	draining       bool
	wg             sync.WaitGroup // accept loops and sessions
	nextID         atomic.Uint64

	// onProtectionChange is called when discovery's count of unprotected
	// paths changes (sqlfwd's main sends systemd a new STATUS).
	onProtectionChange atomic.Pointer[func()]

	// statsState and metrics: breakdown.go and metrics.go.
	statsState *statsState
	procsStop  chan struct{} // stops the GOMAXPROCS tuner (procs.go)
	metrics    *metricsServer
}

// database is one protected database at run time.
type database struct {
	cfg Database
	// engine is swapped whole by a reload; a statement is judged by the
	// engine it loaded, so in-flight statements finish under their policy.
	engine atomic.Pointer[engine.Engine]
	// confMode is the configured mode (mode, which a reload changes).
	confMode atomic.Pointer[Mode]
	// policySum is the SHA-256 of the policy file the engine in force was
	// built from ("" for the embedded default); policyPath that file's
	// path (policy, which a reload may change).
	policySum  atomic.Pointer[string]
	policyPath atomic.Pointer[string]
	// override is the live mode set by fwctl mode (nil: none); it beats
	// the policy's and the rule's modes.
	override atomic.Pointer[Mode]
	// learner records statements while learning is on; it survives reloads.
	learner atomic.Pointer[engine.Learner]
	// learn is when learning started and the learned policy promoted
	// (learn.go).
	learnMu sync.Mutex
	learn   learnState
	ln      net.Listener
	stats   counters
	// admitted counts its sessions past their startup message, against
	// max_connections (budget.go admit), maxConns (a reload changes it).
	admitted atomic.Int64
	maxConns atomic.Int64
	// rec holds the window's timings (breakdown.go); rules the verdicts
	// per rule.
	rec   *recorder
	rules ruleCounts
	// tls is the built TLS of both legs (tls.go); a reload swaps it.
	tls dbTLS
	// protocol is its protocol's entry in the protocol table; proto serves its
	// sessions with env.
	protocol *protocol.Protocol
	proto    relay.Protocol
	env      relay.Env
	// found is set for a database discovery made (discovered.go).
	found *foundState
	// catalog is its catalog connection (catalog.go); nil without one.
	catalog *catalogState
}

// mode is the mode that applies to a verdict: the live override, else the
// rule's or policy's (v.Mode), else the configured one.
func (db *database) mode(v *engine.Verdict) Mode {
	if o := db.override.Load(); o != nil {
		return *o
	}
	if v.Mode != "" {
		return Mode(v.Mode)
	}
	return db.configuredMode()
}

// policy is the path of the database's policy file in force ("": the
// embedded default).
func (db *database) policy() string {
	if p := db.policyPath.Load(); p != nil {
		return *p
	}
	return db.cfg.Policy
}

// configuredMode is the database's mode key as in force (a reload may
// have changed it).
func (db *database) configuredMode() Mode {
	if m := db.confMode.Load(); m != nil {
		return *m
	}
	return db.cfg.Mode
}

// New provisions a daemon: it normalizes the configuration and builds every
// policy and engine. Nothing is opened yet.
func New(cfg *Config, log *slog.Logger, version string) (*Daemon, error) {
	if err := cfg.Normalize(); err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	d := &Daemon{cfg: cfg, log: log, version: version, sessions: map[relay.Session]*sessionObserver{}, sleep: time.Sleep, proc: "/proc",
		budget: newBufferBudget(cfg.MaxBufferedBytes), relays: map[string]relay.Protocol{}, own: newOwnSockets(),
		logs: newLogLimiter(logBurst, logRefill)}
	d.maxClients.Store(int64(cfg.MaxClientConnections))
	var list []*database
	for i := range cfg.Databases {
		db, err := d.newDatabase(&cfg.Databases[i])
		if err != nil {
			return nil, err
		}
		list = append(list, db)
	}
	d.dbs.Store(&list)
	return d, nil
}

// newDatabase builds a database's engine, TLS and what it lends its
// sessions; it is not in the list yet.
func (d *Daemon) newDatabase(dc *Database) (*database, error) {
	p, err := protocol.Named(dc.Protocol)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", dc.Name, err)
	}
	polSum := fileSHA256(dc.Policy)
	eng, err := buildEngine(dc)
	if err != nil {
		return nil, err
	}
	for _, w := range eng.Policy().Warnings() {
		d.log.Warn("policy warning", "database", dc.Name, "warning", w)
	}
	srvTLS, cliTLS, err := buildTLS(dc)
	if err != nil {
		return nil, err
	}
	d.warnClearServerLeg(dc, srvTLS, cliTLS)
	d.dbsMu.Lock()
	r := d.relays[p.Name]
	if r == nil {
		r = p.NewRelay()
		d.relays[p.Name] = r
	}
	d.dbsMu.Unlock()
	db := &database{cfg: *dc, rec: newRecorder(), protocol: p, proto: r}
	d.lend(db)
	db.setEngine(eng)
	db.policySum.Store(&polSum)
	polPath := dc.Policy
	db.policyPath.Store(&polPath)
	m := dc.Mode
	db.confMode.Store(&m)
	db.maxConns.Store(int64(dc.MaxConnections))
	if dc.Learn {
		by, err := engine.ParseLearnBy(dc.LearnBy)
		if err != nil {
			return nil, fmt.Errorf("database %s: learn_by: %w", dc.Name, err)
		}
		d.startLearning(db, by)
	}
	db.tls.server.Store(srvTLS)
	db.tls.client.Store(cliTLS)
	return db, nil
}

// databases is the current list of databases; the caller must not modify it.
func (d *Daemon) databases() []*database {
	if p := d.dbs.Load(); p != nil {
		return *p
	}
	return nil
}

// addDatabase appends db to the list (copy on write).
func (d *Daemon) addDatabase(db *database) {
	d.dbsMu.Lock()
	defer d.dbsMu.Unlock()
	old := d.databases()
	list := make([]*database, len(old), len(old)+1)
	copy(list, old)
	list = append(list, db)
	d.dbs.Store(&list)
}

// removeDatabase drops db from the list (copy on write). Its sessions keep
// the pointer and end as they would.
func (d *Daemon) removeDatabase(db *database) {
	d.dbsMu.Lock()
	defer d.dbsMu.Unlock()
	old := d.databases()
	list := make([]*database, 0, len(old))
	for _, x := range old {
		if x != db {
			list = append(list, x)
		}
	}
	d.dbs.Store(&list)
}

// lend builds what db lends its sessions.
func (d *Daemon) lend(db *database) {
	c := &db.cfg
	db.env = relay.Env{
		Database:  c.Name,
		Engine:    db.engine.Load,
		Enforces:  func(mode engine.Mode) bool { return db.mode(&engine.Verdict{Mode: mode}) == ModeEnforce },
		Dial:      d.dial,
		ClientTLS: db.tls.server.Load,
		Limits: relay.Limits{
			StartupTimeout: c.StartupTimeout, ConnectTimeout: c.ConnectTimeout,
			ServerReplyTimeout: c.ServerReplyTimeout, AuthTimeout: c.AuthTimeout,
			IdleTimeout: c.IdleTimeout, IdleInTransactionTimeout: c.IdleInTransactionTimeout,
			BufferBytes: c.BufferBytes, MaxMessageBytes: c.MaxMessageBytes,
			RequireTLS: c.TLS != nil && c.TLS.Require,
		},
		AllowCommands: c.AllowCommands,
		Budget:        d.budget,
		Admit:         func() (func(), error) { return d.admit(db) },
		Log:           slog.New(&limitHandler{next: d.log.Handler(), l: d.logs, db: c.Name}).With("database", c.Name),
		Observer:      &observer{d: d, db: db},
		Meter:         func(id uint64) relay.Meter { return d.newMeter(db, id) },
	}
}

// Start opens the listeners and the control socket and starts accepting.
// After an error, Stop releases whatever was opened.
func (d *Daemon) Start() error {
	d.started = time.Now()
	if d.cfg.Audit.Path != "" {
		a, err := openAudit(d.cfg.Audit, d.log)
		if err != nil {
			return err
		}
		d.audit = a
		d.log.Info("audit trail", "path", d.cfg.Audit.Path, "include_allowed", d.cfg.Audit.IncludeAllowed)
	}
	for _, db := range d.databases() {
		if err := d.startCatalog(db); err != nil {
			return err
		}
	}
	var lc net.ListenConfig
	// Go's listeners may default to MPTCP, which sockmap cannot hold;
	// sqlfwd's sockets are plain TCP.
	lc.SetMultipathTCP(false)
	for _, db := range d.databases() {
		if db.cfg.Listen == "" {
			continue
		}
		dlc := lc
		if db.cfg.ReusePort {
			// several sqlfwd processes share the port; the kernel spreads
			// new connections over them (scale out past one CPU quota)
			dlc.Control = func(_, _ string, c syscall.RawConn) error {
				var serr error
				if err := c.Control(func(fd uintptr) {
					serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
				}); err != nil {
					return err
				}
				return serr
			}
		}
		ln, err := dlc.Listen(context.Background(), "tcp", db.cfg.Listen)
		if err != nil {
			return fmt.Errorf("database %s: listening on %s: %w", db.cfg.Name, db.cfg.Listen, listenInUse(d.proc, db.cfg.Listen, err))
		}
		db.ln = ln
		d.log.Info("listening", "database", db.cfg.Name, "protocol", db.cfg.Protocol,
			"listen", ln.Addr().String(), "upstream", db.cfg.Upstream, "mode", string(db.cfg.Mode))
	}
	if d.cfg.Discovery.Enabled {
		// The first scan fills the list before interception starts, so
		// that the programs attach with the servers' addresses in place.
		d.discovery = newDiscovery(d)
		d.discovery.rescan()
	}
	// The daemon's own upstream sockets are exempt by cookie while they
	// connect, in any PID namespace (ownsock.go), and TCP ones also carry
	// the mark. Set before the programs attach: a session accepted at once
	// dials with it.
	d.dialer.ControlContext = d.upstreamControl(int(d.cfg.Intercept.Mark))
	d.dialAs = canDialAs()
	if err := d.startIntercept(); err != nil {
		var unavailable *interceptUnavailableError
		if !errors.As(err, &unavailable) || !d.canFallBack() {
			return fmt.Errorf("interception: %w", err)
		}
		d.interceptNote = unavailable.Reason.Error()
		d.log.Warn("interception unavailable, falling back to the explicit listeners", "reason", d.interceptNote)
		for _, db := range d.databases() {
			db.cfg.Intercept = InterceptOff
		}
	}
	if d.intercept == nil {
		d.dialer.ControlContext = nil // nothing to be exempt from (and no mark without CAP_NET_ADMIN)
	}
	d.startStats(d.proc, "/")
	d.stopLogSummary = d.startLogSummary()
	d.procsStop = make(chan struct{})
	startProcsTuner(d.log, d.procsStop)
	if err := d.startMetrics(); err != nil {
		return err
	}
	if d.cfg.ControlSocket != "" && d.cfg.ControlSocket != "none" {
		cs, err := startControl(d, d.cfg.ControlSocket)
		if err != nil {
			return err
		}
		d.control = cs
	}
	for _, db := range d.databases() {
		if db.ln != nil {
			d.wg.Add(1)
			go d.acceptLoop(db.ln, listenArrival(db))
		}
	}
	if dc := d.discovery; dc != nil {
		if d.intercept != nil {
			dc.kernel = d.intercept
		}
		dc.startWatch()
		dc.running = true
		go dc.run()
		when := "no inotify"
		if dc.watch != nil {
			when = strings.Join(dc.sockDirs, " ") + " and the found sockets' directories"
		}
		d.log.Info("discovery: rescanning for servers that start or stop", "every", dc.interval.String(),
			"and_when_a_socket_changes_in", when, "databases", len(d.databases()))
	}
	d.ready.Store(true) // /readyz
	return nil
}

// canFallBack reports whether every database that asked for interception
// also has an explicit listener to fall back to.
func (d *Daemon) canFallBack() bool {
	if d.cfg.Discovery.Enabled {
		return false // what discovery finds is reached only through interception
	}
	if d.cfg.Intercept.FailClosed {
		// the clients' own connects would go to the server unjudged:
		// fail_closed refuses to start instead (docs/operations.md)
		return false
	}
	for _, db := range d.databases() {
		if db.cfg.Intercept != InterceptOff && db.cfg.Listen == "" {
			return false
		}
	}
	return true
}

// track counts a new session in the wait group unless the daemon is
// draining.
func (d *Daemon) track() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.wg.Add(1)
	return true
}

// Addr returns the listening address of the named database, or nil.
func (d *Daemon) Addr(name string) net.Addr {
	for _, db := range d.databases() {
		if db.cfg.Name == name && db.ln != nil {
			return db.ln.Addr()
		}
	}
	return nil
}

// listenArrival makes an arrival of a connection to db's explicit listener.
func listenArrival(db *database) func(net.Conn) (arrival, error) {
	return func(c net.Conn) (arrival, error) {
		return arrival{db: db, conn: relay.Conn{Client: c, Via: relay.ViaListen, Upstream: relay.Upstream{Network: "tcp", Addr: db.cfg.Upstream}}}, nil
	}
}

func (d *Daemon) register(s relay.Session, so *sessionObserver) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.sessions[s] = so
	return true
}

func (d *Daemon) unregister(s relay.Session) {
	d.mu.Lock()
	delete(d.sessions, s)
	d.mu.Unlock()
}

// Stop stops accepting, lets sessions finish what they are doing (an idle
// session is closed at once, a busy one when its current transaction and
// pending statements are done) until ctx ends, then closes whatever is
// left. It is safe after a partial Start.
func (d *Daemon) Stop(ctx context.Context) error {
	d.ready.Store(false)
	d.mu.Lock()
	d.draining = true
	sessions := make([]relay.Session, 0, len(d.sessions))
	for s := range d.sessions {
		sessions = append(sessions, s)
	}
	d.mu.Unlock()
	if dc := d.discovery; dc != nil && dc.running {
		dc.close() // no scan changes the interception from here on
	}
	// Detach first: new connections go directly to the database while
	// the sessions drain.
	if d.intercept != nil {
		d.intercept.close()
	}
	for _, db := range d.databases() {
		if db.ln != nil {
			db.ln.Close()
		}
	}
	for _, s := range sessions {
		s.Drain()
	}
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		d.mu.Lock()
		n := len(d.sessions)
		for s := range d.sessions {
			s.Close()
		}
		d.mu.Unlock()
		d.log.Warn("drain timeout: closing busy sessions", "sessions", n)
		<-done
		err = nil
	}
	if d.control != nil {
		d.control.stop()
	}
	if d.audit != nil {
		d.audit.close()
	}
	for _, db := range d.databases() {
		db.catalog.close()
	}
	d.stopMetrics()
	d.stopStats()
	if d.stopLogSummary != nil {
		d.stopLogSummary()
		d.stopLogSummary = nil
	}
	if d.procsStop != nil {
		close(d.procsStop)
	}
	return err
}

// Snapshot returns the counters of every database.
func (d *Daemon) Snapshot() Stats {
	st := Stats{Version: d.version, StartedAt: d.started, Uptime: time.Since(d.started).Round(time.Second).String()}
	st.Interception = d.interceptStats()
	dbs := d.databases()
	for _, db := range dbs {
		s := db.stats.snapshot()
		s.Name, s.Protocol, s.Listen, s.Upstream = db.cfg.Name, db.cfg.Protocol, db.cfg.Listen, db.cfg.Upstream
		eng := db.engine.Load()
		s.Mode = string(db.mode(&engine.Verdict{Mode: eng.Policy().Mode()}))
		s.ModeOverride = db.override.Load() != nil
		s.Policy = db.policy()
		if s.Policy == "" {
			s.Policy = "(embedded default)"
		}
		s.Learning = eng.Learner() != nil
		if l := db.learner.Load(); l != nil {
			s.Learned, _ = l.Len()
		}
		if db.ln != nil {
			s.Listen = db.ln.Addr().String()
		}
		st.Databases = append(st.Databases, s)
	}
	d.addWindows(&st, dbs)
	return st
}

// Reload reads the configuration file again (when the daemon has one) and
// rebuilds every database's engine from its policy file. Nothing changes
// unless all of it is valid: a broken file keeps the configuration,
// policies and certificates in force and the error says why. Statements
// already being judged finish under the old engine; new ones use the new
// engine, whose caches start empty.
func (d *Daemon) Reload() error {
	_, err := d.ReloadReport()
	return err
}

// ReloadReport is Reload, saying which keys it applied and which need a
// restart.
func (d *Daemon) ReloadReport() (ReloadResult, error) {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	var res ReloadResult
	fail := func(what string, err error) (ReloadResult, error) {
		d.reloadsFail.Add(1)
		d.log.Error("reload failed: "+what, "err", err)
		return ReloadResult{}, err
	}
	var next *Config
	var nextSum string
	if d.src != nil && d.src.AbsentAtStart {
		// started without a file: one written since is checked, not
		// applied (ConfigSource.AbsentAtStart)
		b, err := os.ReadFile(d.src.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			var none []string
			d.pendingRestart.Store(&none)
		case err != nil:
			return fail("keeping the configuration in force", fmt.Errorf("reading configuration: %w", err))
		default:
			if _, err := d.src.Load(b); err != nil {
				return fail("the configuration file is not valid, keeping the configuration in force", err)
			}
			res.NeedRestart = []string{absentNeedsRestart}
			d.pendingRestart.Store(&res.NeedRestart)
			d.log.Warn("configuration file written since sqlfwd started without one: valid, in force only after a restart of sqlfwd", "path", d.src.Path)
		}
	} else if d.src != nil {
		b, err := os.ReadFile(d.src.Path)
		if err != nil {
			return fail("keeping the configuration in force", fmt.Errorf("reading configuration: %w", err))
		}
		next, err = d.src.Load(b)
		if err != nil {
			return fail("the configuration file is not valid, keeping the configuration in force", err)
		}
		nextSum = sha256Hex(b)
		_, res.NeedRestart = configDiff(d.inForce, next)
	}
	dbs := d.databases()
	engines := make([]*engine.Engine, len(dbs))
	sums := make([]string, len(dbs))
	paths := make([]string, len(dbs))
	for i, db := range dbs {
		paths[i] = db.policy()
		if next != nil && db.found == nil {
			for _, n := range next.Databases {
				if n.Name == db.cfg.Name {
					paths[i] = n.Policy // the file's policy key, applied live
				}
			}
		}
	}
	type tlsPair struct{ server, client *tls.Config }
	tlsCfgs := make([]tlsPair, len(dbs))
	for i, db := range dbs {
		srv, cli, err := buildTLS(&db.cfg)
		if err != nil {
			return fail("keeping the configuration, policies and certificates in force", err)
		}
		tlsCfgs[i] = tlsPair{srv, cli}
		sums[i] = fileSHA256(paths[i])
		eng, err := d.buildEngineFor(db, paths[i])
		if err != nil {
			return fail("keeping the configuration and policies in force", err)
		}
		engines[i] = eng
	}
	for i, db := range dbs {
		old := db.engine.Load()
		engines[i].SetLearner(old.Learner())
		db.setEngine(engines[i])
		db.policySum.Store(&sums[i])
		db.policyPath.Store(&paths[i])
		// new handshakes get the re-read certificates; open sessions keep
		// theirs
		db.tls.server.Store(tlsCfgs[i].server)
		db.tls.client.Store(tlsCfgs[i].client)
		d.warnClearServerLeg(&db.cfg, tlsCfgs[i].server, tlsCfgs[i].client)
		for _, w := range engines[i].Policy().Warnings() {
			d.log.Warn("policy warning", "database", db.cfg.Name, "warning", w)
		}
		d.log.Info("policy reloaded", "database", db.cfg.Name, "policy", paths[i])
	}
	if next != nil {
		res.Applied = d.applyLive(next)
		d.cfgSum.Store(&nextSum)
		pending := res.NeedRestart
		d.pendingRestart.Store(&pending)
		if len(res.Applied) > 0 {
			d.log.Info("configuration reloaded: applied live", "keys", strings.Join(res.Applied, " "))
		}
		if len(res.NeedRestart) > 0 {
			d.log.Warn("configuration reloaded: these keys changed in the file but keep their old value until sqlfwd restarts", "keys", strings.Join(res.NeedRestart, " "))
		}
	}
	d.reloadsOK.Add(1)
	d.lastReload.Store(time.Now().Unix())
	if dc := d.discovery; dc != nil && dc.running {
		// the discovered databases stay as they are; look for new servers
		// now rather than at the next interval
		dc.rescanSoon()
	}
	return res, nil
}

// applyLive puts the live keys of next in force (under reloadMu) and
// records them in inForce; it returns them as key=value.
func (d *Daemon) applyLive(next *Config) []string {
	var applied []string
	if next.LogLevel != d.inForce.LogLevel && d.src.Level != nil {
		var lv slog.Level
		if err := lv.UnmarshalText([]byte(next.LogLevel)); err == nil {
			d.src.Level.Set(lv)
			d.inForce.LogLevel = next.LogLevel
			applied = append(applied, "log_level="+next.LogLevel)
		}
	}
	if next.MaxClientConnections != d.inForce.MaxClientConnections {
		d.maxClients.Store(int64(next.MaxClientConnections))
		d.inForce.MaxClientConnections = next.MaxClientConnections
		applied = append(applied, fmt.Sprintf("max_client_connections=%d", next.MaxClientConnections))
	}
	for i := range next.Databases {
		n := &next.Databases[i]
		for j := range d.inForce.Databases {
			o := &d.inForce.Databases[j]
			if o.Name != n.Name {
				continue
			}
			var db *database
			for _, x := range d.databases() {
				if x.found == nil && x.cfg.Name == n.Name {
					db = x
				}
			}
			if db == nil {
				continue
			}
			if o.Mode != n.Mode {
				m := n.Mode
				db.confMode.Store(&m)
				o.Mode = n.Mode
				applied = append(applied, fmt.Sprintf("databases[%s].mode=%s", n.Name, n.Mode))
			}
			if o.Policy != n.Policy { // the engine was built from it already
				o.Policy = n.Policy
				applied = append(applied, fmt.Sprintf("databases[%s].policy=%s", n.Name, orDash(n.Policy)))
			}
			if o.MaxConnections != n.MaxConnections {
				// open sessions stay; new ones are counted against it
				db.maxConns.Store(int64(n.MaxConnections))
				o.MaxConnections = n.MaxConnections
				applied = append(applied, fmt.Sprintf("databases[%s].max_connections=%d", n.Name, n.MaxConnections))
			}
		}
	}
	return applied
}

// database finds a database by name; "" means the only one.
func (d *Daemon) database(name string) (*database, error) {
	dbs := d.databases()
	if name == "" {
		if len(dbs) == 1 {
			return dbs[0], nil
		}
		return nil, fmt.Errorf("several databases are configured: name one")
	}
	for _, db := range dbs {
		if db.cfg.Name == name {
			return db, nil
		}
	}
	return nil, fmt.Errorf("no database %q", name)
}

// SetMode sets (or with "" clears) the live mode override of a database,
// or of all of them when name is "" and several are configured.
func (d *Daemon) SetMode(name string, m Mode) error {
	switch m {
	case "", ModeEnforce, ModeMonitor, ModeDetect:
	default:
		return fmt.Errorf("mode %q: want enforce, monitor, detect or policy", m)
	}
	dbs := d.databases()
	if name != "" || len(dbs) == 1 {
		db, err := d.database(name)
		if err != nil {
			return err
		}
		dbs = []*database{db}
	}
	for _, db := range dbs {
		if m == "" {
			db.override.Store(nil)
			d.log.Info("mode override cleared", "database", db.cfg.Name)
			continue
		}
		mm := m
		db.override.Store(&mm)
		d.log.Warn("mode override", "database", db.cfg.Name, "mode", string(m))
	}
	return nil
}

// warnClearServerLeg warns when a database's client leg is TLS (srv, the
// configuration sqlfwd serves it with) and its server leg is not (no cli)
// to an upstream off this host: the client believes its connection is
// encrypted to the end. Its sessions refuse clear-text authentication
// there (refuseClearPassword) unless upstream_tls.allow_clear_password.
func (d *Daemon) warnClearServerLeg(dc *Database, srv, cli *tls.Config) {
	if srv == nil || cli != nil || !offHostTCP(dc.Upstream) {
		return
	}
	if dc.UpstreamTLS != nil && dc.UpstreamTLS.AllowClearPassword {
		d.log.Warn("the client leg is TLS but the server leg is not: statements, and the passwords of clear-text authentication (upstream_tls.allow_clear_password), cross the network to the server unencrypted; set upstream_tls",
			"database", dc.Name, "upstream", dc.Upstream)
		return
	}
	d.log.Warn("the client leg is TLS but the server leg is not: statements cross the network to the server unencrypted, and clear-text authentication (PostgreSQL's password method, mysql_clear_password, MariaDB's dialog, sha256_password, caching_sha2_password's full authentication) is refused; set upstream_tls",
		"database", dc.Name, "upstream", dc.Upstream)
}

// refuseClearPassword reports whether a session to up must refuse an
// authentication that sends the password in clear when its server leg is
// plaintext and its client leg TLS (relay.Upstream.RefuseClearPassword).
func refuseClearPassword(dc *Database, up relay.Upstream) bool {
	if dc.UpstreamTLS != nil && dc.UpstreamTLS.AllowClearPassword {
		return false
	}
	return up.Network == "tcp" && offHostTCP(up.Addr)
}

// offHostTCP reports whether upstream is a TCP address that may leave this
// host: not a unix socket path, not a loopback address, not localhost.
func offHostTCP(upstream string) bool {
	host, _, err := net.SplitHostPort(upstream)
	if err != nil {
		return false // a unix socket path
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return !a.Unmap().IsLoopback()
	}
	return true // a name: it may resolve anywhere
}
