// Command sqlfwd is the sqlfw daemon: a SQL firewall in front of PostgreSQL.
//
//	sqlfwd --protocol postgres --listen 127.0.0.1:6432 --upstream 127.0.0.1:5432 \
//	       [--policy FILE] [--mode enforce|monitor|detect] [--control-socket PATH]
//	sqlfwd --config FILE
//
// SIGTERM and SIGINT drain the sessions and exit 0; SIGHUP reloads the
// configuration file and the policies (a broken file is refused). Exit 2 is
// a usage or configuration error (the units' RestartPreventExitStatus), 1 a
// failure to start.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/bpf"
	ctl "github.com/sqlfw/sqlfw/control"
	"github.com/sqlfw/sqlfw/daemon"
	"github.com/sqlfw/sqlfw/protocol/builtin"
)

// version is stamped by the Makefile with -ldflags -X main.version=...
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	builtin.Register() // the protocol table (protocol/builtin)
	fs := flag.NewFlagSet("sqlfwd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		configPath = fs.String("config", "", "YAML configuration `file` (several databases); excludes the per-database flags; when the file does not exist, as --discover")
		requireCfg = fs.Bool("require-config", false, "a missing --config file is a configuration error (exit 2) instead of starting discovery (the listener unit, which cannot intercept)")
		discoverF  = fs.Bool("discover", false, "protect the PostgreSQL and MySQL/MariaDB servers found on this host (listening sockets of their processes in /proc), each intercepted with its protocol's default policy; rescans pick up servers that start or stop later")
		discoverIv = fs.Duration("discover-interval", 0, "how often discovery rescans /proc for servers that started or stopped (default 5s)")
		protocol   = fs.String("protocol", "", "wire protocol of the database: postgres or mysql")
		listen     = fs.String("listen", "", "`host:port` where clients connect")
		upstream   = fs.String("upstream", "", "`host:port` of the database server")
		policy     = fs.String("policy", "", "policy `file` (default: the embedded default policy)")
		mode       = fs.String("mode", "", "enforce, monitor or detect (default enforce)")
		learnF     = fs.Bool("learn", false, "learn each application's statements from the start (fwctl learn; docs/learn.md)")
		learnBy    = fs.String("learn-by", "", "what tells applications apart while learning: a list of user, database, unit, cgroup, comm, uid (default user,database,unit)")
		learnedPol = fs.String("learned-policy", "", "`file` fwctl learn promote writes the learned rules to; appended to the policy at every start and reload")
		control    = fs.String("control-socket", "", "control socket `path` for fwctl (default $"+ctl.EnvSocket+", else the file's control_socket, else "+daemon.DefaultControlSocket+"; none to disable)")
		logLevel   = fs.String("log-level", "", "debug, info, warn or error (default info)")
		logFormat  = fs.String("log-format", "", "text, json or auto: text on a terminal, JSON otherwise (default auto)")
		drain      = fs.Duration("drain-timeout", 0, "how long SIGTERM waits for busy sessions (default 30s)")
		maxMsg     = fs.Int("max-message-bytes", 0, "largest client message held to be judged (default 64 MiB)")
		allowCmds  = fs.String("allow-commands", "", "mysql: comma-separated replication commands to relay (COM_REGISTER_SLAVE, COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID; default none)")
		maxConns   = fs.Int("max-connections", 0, "client connections allowed at once; more get 53300 (default no limit)")
		tlsCert    = fs.String("tls-cert", "", "serve TLS to clients with this certificate `file` (PEM; with --tls-key)")
		tlsKey     = fs.String("tls-key", "", "the certificate's private key `file` (PEM)")
		tlsCA      = fs.String("tls-client-ca", "", "require client certificates signed by the CA in `file`")
		tlsReq     = fs.Bool("tls-require", false, "refuse clients that do not ask for TLS")
		upTLS      = fs.String("upstream-tls", "", "TLS to the server: disable, prefer, require, verify-ca or verify-full (default disable)")
		upCA       = fs.String("upstream-ca", "", "CA `file` that verifies the server's certificate (default: the system pool)")
		upName     = fs.String("upstream-server-name", "", "name verify-full checks in the server's certificate (default: the upstream host)")
		idleTO     = fs.Duration("idle-timeout", 0, "close sessions idle outside a transaction this long, with 57P05 (default never)")
		idleTxTO   = fs.Duration("idle-in-transaction-timeout", 0, "close sessions idle inside a transaction this long, with 25P03 (default never)")
		intercept  = fs.Bool("intercept", false, "intercept clients of --upstream transparently with eBPF (needs CAP_BPF and CAP_NET_ADMIN); --listen then becomes the fallback")
		icMode     = fs.String("intercept-mode", "", "app-host (local clients, the default with --intercept) or db-host (inbound connections to the upstream's port)")
		reusePort  = fs.Bool("reuse-port", false, "SO_REUSEPORT on --listen: several sqlfwd processes share the address (scale-out)")
		protect    = fs.String("protect", "", "app-host: comma-separated `IP:PORT` list to intercept (default the upstream, plus the other loopback family for a loopback upstream)")
		unixSock   = fs.String("unix-socket", "", "app-host: also intercept clients of the database's unix socket `path` (kernel 6.7+)")
		cgroup     = fs.String("cgroup", "", "app-host: intercept only processes in this cgroup2 `directory` (default all)")
		podListen  = fs.String("pod-listen", "", "app-host: also intercept pods on this node (other network namespaces) connecting to protected non-loopback addresses; they are sent to this `IP:PORT` of the host, which pods route to (dual stack: one IPv4 and one IPv6, comma-separated)")
		sockmap    = fs.String("sockmap", "", "on or off: splice the local client leg in the kernel (default on)")
		spliceUp   = fs.String("splice-upstream", "", "EXPERIMENTAL: splice the upstream leg in the kernel too; DIR[,DIR]: the cgroup2 directories of the local database's server and of sqlfwd if not under --cgroup (intercept.splice_upstream)")
		fastpath   = fs.Bool("fastpath", false, "EXPERIMENTAL: the kernel relays the server-to-client direction of intercepted PostgreSQL sessions where it can (intercept.fastpath)")
		failClosed = fs.Bool("fail-closed", false, "refuse protected connects sqlfwd cannot judge: when its origin map is full, and after the daemon dies (programs pinned in --pin-dir); default fail open")
		takeOver   = fs.Bool("take-over", false, "when another sqlfwd already intercepts this cgroup, send it SIGTERM and start once it has exited (with --fail-closed its pinned programs refuse connects meanwhile) instead of refusing to start")
		pinDir     = fs.String("pin-dir", "", "where --fail-closed pins the programs (default /sys/fs/bpf/sqlfw)")
		detachPins = fs.Bool("detach-pins", false, "remove the interception a --fail-closed sqlfwd left pinned in --pin-dir (protected connects then go directly to the database), and exit")
		ctlGroup   = fs.String("control-group", "", "also let members of `group` use the control socket (mode 0660)")
		auditLog   = fs.String("audit-log", "", "append a hash-chained audit trail (JSON lines) to `file`")
		auditAll   = fs.Bool("audit-allowed", false, "record allowed verdicts in the audit trail too")
		auditKey   = fs.String("audit-key-file", "", "chain the audit trail with HMAC-SHA256 under the secret key in `file` (at least 16 bytes)")
		metrics    = fs.String("metrics-listen", "", "serve Prometheus metrics on `host:port` (e.g. 127.0.0.1:9187; default off)")
		statsWin   = fs.Duration("stats-window", 0, "reporting window of fwctl stats (default 10s)")
		reloadPoll = fs.Duration("reload-on-change", 0, "poll the configuration, policy and certificate files this often and reload when their content changes, as SIGHUP (default off)")
		showVer    = fs.Bool("version", false, "print the version and exit")
		checkCfg   = fs.Bool("check-config", false, "check the configuration and the policies it names, print the result and exit (0 valid, 2 not)")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // the flags were printed
		}
		return 2
	}
	if *showVer {
		fmt.Fprintln(os.Stdout, "sqlfwd", version)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sqlfwd: unexpected argument %q\n", fs.Arg(0))
		return 2
	}

	var cfg *daemon.Config
	var cfgBytes []byte // the configuration file's content, when there is one
	absentCfg := false  // --config names a file that is not there: zero-config
	perDB := *protocol != "" || *listen != "" || *upstream != "" || *policy != "" || *mode != "" || *maxMsg != 0 || *reusePort ||
		*learnF || *learnBy != "" || *learnedPol != "" ||
		*intercept || *icMode != "" || *unixSock != "" || *protect != "" || *maxConns != 0 || *idleTO != 0 || *idleTxTO != 0 ||
		*tlsCert != "" || *tlsKey != "" || *tlsCA != "" || *tlsReq || *upTLS != "" || *upCA != "" || *upName != "" || *allowCmds != ""
	var discovered []string // what discovery found, logged once the logger exists
	if *configPath != "" && !*discoverF {
		if _, err := os.Stat(*configPath); errors.Is(err, os.ErrNotExist) {
			if *requireCfg {
				fmt.Fprintf(stderr, "sqlfwd: no configuration file at %s (--require-config): write one (man sqlfwd.yaml; an example is /usr/share/sqlfw/sqlfwd.yaml.example)\n", *configPath)
				return 2
			}
			discovered = append(discovered, "no configuration file at "+*configPath+": protecting the servers found on this host")
			*discoverF = true
			absentCfg = true
		}
	}
	if *discoverF {
		if perDB {
			fmt.Fprintln(stderr, "sqlfwd: --discover (or a missing --config file) excludes the per-database flags")
			return 2
		}
		// the daemon scans /proc at start and every interval after
		cfg = &daemon.Config{Discovery: daemon.Discovery{Enabled: true}}
	} else if *configPath != "" {
		if perDB {
			fmt.Fprintln(stderr, "sqlfwd: --config excludes --protocol, --listen, --upstream, --policy, --mode, --max-message-bytes, --intercept, --intercept-mode, --protect and --unix-socket: put them in the file")
			return 2
		}
		b, err := os.ReadFile(*configPath)
		if err != nil {
			fmt.Fprintln(stderr, "sqlfwd: reading configuration:", err)
			return 2
		}
		c, err := daemon.ParseConfigFile(*configPath, b)
		if err != nil {
			fmt.Fprintf(stderr, "sqlfwd: configuration not valid:\n%v\n", err)
			return 2
		}
		cfg, cfgBytes = c, b
	} else {
		db := daemon.Database{
			Name: "default", Protocol: *protocol, Listen: *listen, Upstream: *upstream,
			Policy: *policy, Mode: daemon.Mode(*mode), MaxMessageBytes: *maxMsg,
			Learn: *learnF, LearnBy: *learnBy, LearnedPolicy: *learnedPol,
			UnixSocket: *unixSock, ReusePort: *reusePort,
			MaxConnections: *maxConns, IdleTimeout: *idleTO, IdleInTransactionTimeout: *idleTxTO,
		}
		if *protect != "" {
			db.Protect = strings.Split(*protect, ",")
		}
		if *allowCmds != "" {
			db.AllowCommands = strings.Split(*allowCmds, ",")
		}
		if *tlsCert != "" || *tlsKey != "" || *tlsCA != "" || *tlsReq {
			db.TLS = &daemon.TLSConfig{Cert: *tlsCert, Key: *tlsKey, ClientCA: *tlsCA, Require: *tlsReq}
		}
		if *upTLS != "" || *upCA != "" || *upName != "" {
			db.UpstreamTLS = &daemon.UpstreamTLS{Mode: *upTLS, CA: *upCA, ServerName: *upName}
		}
		if *intercept || *icMode != "" {
			db.Intercept = daemon.InterceptAppHost
			if *icMode != "" {
				db.Intercept = *icMode
			}
		}
		cfg = &daemon.Config{Databases: []daemon.Database{db}}
	}
	switch *sockmap {
	case "", "on", "off":
	default:
		fmt.Fprintln(stderr, "sqlfwd: --sockmap takes on or off")
		return 2
	}
	// overrides: the command-line settings that beat the file's, applied
	// again to the file a reload reads
	overrides := func(cfg *daemon.Config) {
		if *discoverIv != 0 {
			cfg.Discovery.Interval = *discoverIv
		}
		if *cgroup != "" {
			cfg.Intercept.Cgroup = *cgroup
		}
		if *podListen != "" {
			cfg.Intercept.Pods, cfg.Intercept.PodListen = true, *podListen
		}
		if *sockmap != "" {
			on := *sockmap == "on"
			cfg.Intercept.Sockmap = &on
		}
		if *fastpath {
			cfg.Intercept.Fastpath = true
		}
		if *spliceUp != "" {
			cfg.Intercept.SpliceUpstream = strings.Split(*spliceUp, ",")
		}
		if *failClosed {
			cfg.Intercept.FailClosed = true
		}
		if *takeOver {
			cfg.Intercept.TakeOver = true
		}
		if *pinDir != "" {
			cfg.Intercept.PinDir = *pinDir
		}
		if *auditLog != "" {
			cfg.Audit.Path = *auditLog
		}
		if *ctlGroup != "" {
			cfg.ControlGroup = *ctlGroup
		}
		if *auditAll {
			cfg.Audit.IncludeAllowed = true
		}
		if *auditKey != "" {
			cfg.Audit.KeyFile = *auditKey
		}
		// flag > $SQLFW_CONTROL_SOCKET > the file's > the default, as fwctl
		// resolves it (control.ResolveSocket)
		fromFile := cfg.ControlSocket
		cfg.ControlSocket = ctl.ResolveSocket(*control, func() string { return fromFile })
		if *logLevel != "" {
			cfg.LogLevel = *logLevel
		}
		if *logFormat != "" {
			cfg.LogFormat = *logFormat
		}
		if *drain != 0 {
			cfg.DrainTimeout = *drain
		}
		if *metrics != "" {
			cfg.MetricsListen = *metrics
		}
		if *reloadPoll != 0 {
			cfg.ReloadOnChange = *reloadPoll
		}
		if *statsWin != 0 {
			cfg.StatsWindow = *statsWin
		}
	}
	overrides(cfg)
	if *detachPins {
		dir := cfg.Intercept.PinDir
		if dir == "" {
			dir = daemon.DefaultPinDir
		}
		if err := bpf.UnpinAll(dir); err != nil {
			fmt.Fprintln(stderr, "sqlfwd: detaching pinned interception:", err)
			return 1
		}
		fmt.Fprintln(stderr, "sqlfwd: detached the interception pinned in", dir)
		return 0
	}
	if err := cfg.Normalize(); err != nil {
		fmt.Fprintf(stderr, "sqlfwd: configuration not valid:\n%v\n", err)
		return 2
	}
	level := new(slog.LevelVar)
	log := newLogger(stderr, level, cfg.LogLevel, cfg.LogFormat)
	for _, n := range discovered {
		log.Info("discovery: " + n)
	}

	d, err := daemon.New(cfg, log, version)
	if err == nil && (cfgBytes != nil || absentCfg) {
		// a file written after a start without one is checked by a
		// reload, in force after a restart (ConfigSource.AbsentAtStart)
		path := *configPath
		err = d.SetConfigSource(daemon.ConfigSource{Path: path, Level: level, AbsentAtStart: absentCfg, Load: func(b []byte) (*daemon.Config, error) {
			c, err := daemon.ParseConfigFile(path, b)
			if err != nil {
				return nil, err
			}
			overrides(c)
			if err := c.Normalize(); err != nil {
				return nil, err // FILE:LINE:COLUMN: each problem (config.ParseFile)
			}
			return c, nil
		}}, cfgBytes)
	}
	if *checkCfg {
		if err != nil {
			fmt.Fprintln(stderr, "sqlfwd: configuration not valid:", err)
			return 2
		}
		more := ""
		if cfg.Discovery.Enabled {
			more = ", and the servers discovery finds on this host"
		}
		fmt.Fprintf(stderr, "sqlfwd: configuration valid (%d databases%s)\n", len(cfg.Databases), more)
		return 0
	}
	if err != nil {
		// New opens nothing: what it refuses is the configuration or a
		// file it names (a policy, a certificate), and a restart would
		// refuse it again: exit 2, which the units do not restart on
		log.Error("cannot start: configuration not valid", "err", err)
		return 2
	}
	// Signals are caught from here on: a SIGTERM while the daemon starts,
	// or just after it says so, drains it once it has started instead of
	// meeting the runtime's default action.
	sig := make(chan os.Signal, 4) // room for a SIGTERM behind a reload
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := d.Start(); err != nil {
		log.Error("cannot start", "err", err)
		_ = d.Stop(context.Background())
		return 1
	}
	log.Info("sqlfwd started", "version", version)
	sdn := newNotifier(log)
	sdn.ready(d.ProtectionSummary())
	d.OnProtectionChange(func() { sdn.status(d.ProtectionSummary()) })

	if cfg.ReloadOnChange > 0 {
		stopWatch := make(chan struct{})
		defer close(stopWatch)
		files := daemon.WatchedFiles(cfg, *configPath)
		log.Info("reloading when files change", "files", strings.Join(files, " "), "every", cfg.ReloadOnChange.String())
		go daemon.WatchFiles(stopWatch, files, cfg.ReloadOnChange, func() {
			log.Info("a watched file changed: reloading")
			select {
			case sig <- syscall.SIGHUP:
			default: // a signal is pending already
			}
		})
	}
	s := <-sig
	for s == syscall.SIGHUP {
		// a broken configuration or policy file keeps the configuration in
		// force; the reload logs why, and which keys need a restart
		sdn.reloading()
		if res, err := d.ReloadReport(); err != nil {
			sdn.reloaded("reload refused, configuration in force kept: " + err.Error())
		} else {
			sdn.reloaded(res.String())
		}
		s = <-sig
	}
	sdn.stopping("draining")
	log.Info("draining", "signal", s.String(), "timeout", cfg.DrainTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DrainTimeout)
	defer cancel()
	if err := d.Stop(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Error("stop", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// newLogger logs at lv, set from level (a reload may change lv).
func newLogger(w io.Writer, lv *slog.LevelVar, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	lv.Set(l)
	opts := &slog.HandlerOptions{Level: lv}
	if format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok && isTerminal(f) {
			format = "text"
		}
	}
	mk := func(w io.Writer) slog.Handler {
		if format == "text" {
			return slog.NewTextHandler(w, opts)
		}
		return slog.NewJSONHandler(w, opts)
	}
	if f, ok := w.(*os.File); ok && journalStream(f) {
		return slog.New(newJournalHandler(w, mk))
	}
	return slog.New(mk(w))
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
