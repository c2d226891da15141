package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sqlfw/sqlfw/control"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
)

// Mode says what a deny verdict does: the engine's one Mode type.
type Mode = engine.Mode

const (
	ModeEnforce = engine.ModeEnforce
	ModeMonitor = engine.ModeMonitor
	ModeDetect  = engine.ModeDetect
)

// Config is sqlfwd's configuration: global settings and the databases it
// protects. docs/config.md documents every key.
type Config struct {
	// src is the file the configuration was parsed from (ParseFile), so
	// that Normalize places its problems there; nil otherwise.
	src *source

	LogLevel      string `yaml:"log_level"`
	LogFormat     string `yaml:"log_format"`
	ControlSocket string `yaml:"control_socket"`
	// ControlGroup may use the control socket besides root and sqlfwd's
	// own user (the socket becomes 0660, owned by the group).
	ControlGroup string        `yaml:"control_group"`
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	// MaxClientConnections bounds the client connections of all databases
	// together (0: no bound).
	MaxClientConnections int `yaml:"max_client_connections"`
	// MaxBufferedBytes bounds the memory all sessions together may hold
	// beyond their relay buffers for client messages being read whole to be
	// judged (default 256 MiB). A session that would exceed it waits up to
	// a second for others to finish, then is closed with SQLSTATE 53200.
	MaxBufferedBytes int64 `yaml:"max_buffered_bytes"`
	// ControlIdleTimeout closes control-socket connections idle this long
	// between requests (default 15s).
	ControlIdleTimeout time.Duration `yaml:"control_idle_timeout"`
	// StatsWindow is the reporting window of fwctl stats (default 10s).
	StatsWindow time.Duration `yaml:"stats_window"`
	// ReloadOnChange, when positive, is how often the configuration file,
	// the policies and certificates are polled; a changed content reloads
	// as SIGHUP does (a ConfigMap in Kubernetes changes by a symlink swap,
	// which polling sees). Default 0: only SIGHUP reloads.
	ReloadOnChange time.Duration `yaml:"reload_on_change"`
	// MetricsListen serves Prometheus metrics on host:port (default off).
	MetricsListen string `yaml:"metrics_listen"`
	// Intercept holds the settings of transparent interception shared by
	// every database that uses it.
	Intercept Intercept `yaml:"intercept"`
	// Audit is the tamper-evident audit trail (off when Path is empty).
	Audit AuditConfig `yaml:"audit"`
	// Discovery protects the database servers found on this host besides
	// Databases (daemon/discovered.go); a missing configuration file turns
	// it on.
	Discovery Discovery  `yaml:"discovery"`
	Databases []Database `yaml:"databases"`
}

// Discovery configures the protection of the servers found on this host.
type Discovery struct {
	// Enabled: protect the PostgreSQL and MySQL/MariaDB servers listening
	// on this host (read from /proc), each intercepted in app-host mode
	// with its protocol's default policy, and pick up those that start or
	// stop later. Servers a configured database covers are left to it.
	Enabled bool `yaml:"enabled"`
	// Interval between rescans of /proc (default 5s).
	Interval time.Duration `yaml:"interval"`
	// NoLearn: the databases discovery protects do not start learning
	// their applications by themselves (docs/learn.md).
	NoLearn bool `yaml:"no_learn"`
}

// DefaultDiscoveryInterval: Discovery.Interval.
const DefaultDiscoveryInterval = 5 * time.Second

// AuditConfig configures the audit trail (daemon/audit.go writes it).
type AuditConfig struct {
	// Path of the JSON-lines file; appended to, its hash chain continued.
	// "-" is standard output (a new chain at each start), for a
	// container's log stream.
	Path string `yaml:"path"`
	// IncludeAllowed records allowed verdicts too (default: sessions and
	// every verdict that is not a plain allow).
	IncludeAllowed bool `yaml:"include_allowed"`
	// Queue bounds the records waiting for the writer (default 8192).
	Queue int `yaml:"queue"`
	// Anchor: every this many records the chain head goes to the daemon's
	// log (default 10000).
	Anchor int `yaml:"anchor"`
	// KeyFile holds a secret key (at least 16 bytes): the chain is then
	// HMAC-SHA256 under it, which only a key holder can extend or rebuild.
	KeyFile string `yaml:"key_file"`
}

// Interception modes of a database.
const (
	// InterceptOff: clients connect to the database's listen address.
	InterceptOff = "off"
	// InterceptAppHost: local clients' connects to the database's address
	// (and unix socket) are redirected to sqlfwd by cgroup programs.
	InterceptAppHost = "app-host"
	// InterceptDBHost: inbound connections to the database's port on
	// non-loopback addresses are steered to sqlfwd by an sk_lookup program.
	InterceptDBHost = "db-host"
)

// Intercept is the kernel side's configuration.
type Intercept struct {
	// Cgroup is the cgroup2 directory whose processes are intercepted in
	// app-host mode; default the cgroup2 mount point (every process).
	Cgroup string `yaml:"cgroup"`
	// Netns is the network namespace steered in db-host mode; default
	// /proc/self/ns/net.
	Netns string `yaml:"netns"`
	// Mark is the SO_MARK of sqlfwd's own upstream sockets, which are
	// never redirected.
	Mark uint32 `yaml:"mark"`
	// Sockmap splices the local client leg in the kernel (default true).
	Sockmap *bool `yaml:"sockmap"`
	// Fastpath (experimental, default off) lets the kernel relay the
	// server-to-client direction of PostgreSQL sessions where the session
	// need not see it (bpf/doc.go "Fast path"). Plaintext legs only.
	Fastpath bool `yaml:"fastpath"`
	// SpliceUpstream (experimental, default empty: off) splices sqlfwd's
	// upstream leg in the kernel too when the database runs on this host:
	// the cgroup2 directories of the database's listener (its server
	// process) and of sqlfwd itself where it is not under Cgroup, to which
	// the sockops program is also attached. sqlfwd still reads and writes
	// every byte (docs/performance.md, "Where the intercepted path's time
	// goes"). Needs sockmap; excludes fastpath; app-host mode.
	SpliceUpstream []string `yaml:"splice_upstream"`
	// FailClosed refuses a protected connect() whose origin cannot be
	// recorded instead of letting it go directly to the database, and pins
	// the programs in PinDir so that a daemon that dies leaves protected
	// connects refused rather than unjudged. A clean stop (SIGTERM) still
	// detaches.
	FailClosed bool `yaml:"fail_closed"`
	// TakeOver: when another sqlfwd already intercepts the cgroup (or one
	// containing it, or inside it), send it SIGTERM and start once it has
	// exited, instead of refusing to start (daemon/hostlock.go).
	TakeOver bool `yaml:"take_over"`
	// PinDir is where fail_closed pins the programs (default
	// /sys/fs/bpf/sqlfw; bpffs is mounted there when needed).
	PinDir string `yaml:"pin_dir"`
	// Listen4 and Listen6 are the redirect listeners (default
	// 127.0.0.1:0 and [::1]:0, any free port).
	Listen4 string `yaml:"listen4"`
	Listen6 string `yaml:"listen6"`
	// Pods turns on app-host interception of pods on a Kubernetes node
	// (processes in other network namespaces below Cgroup): their connects
	// to protected addresses that are not loopback go to PodListen. A pod's
	// own loopback is never intercepted.
	Pods bool `yaml:"pods"`
	// PodListen is the pod listener: an IP:PORT on this host, in sqlfwd's
	// network namespace, that pods route to (a node address, e.g. the host
	// side of their veth); neither loopback nor a wildcard. Port 0 picks a
	// free one. Dual-stack nodes give one of each family, comma-separated:
	// pods' connects to protected addresses of a family without a pod
	// listener are left alone.
	PodListen string `yaml:"pod_listen"`
	// SocketDir holds the unix listeners that unix-socket clients are
	// redirected to (default the control socket's directory).
	SocketDir string `yaml:"socket_dir"`
}

// DefaultMark is sqlfwd's SO_MARK ("sq" in ASCII, with a high bit so it is
// unlikely to collide with routing marks).
const DefaultMark = 0x80007371

// Database is one protected database: where clients come in, where the
// server is, and the policy that judges its statements.
type Database struct {
	Name string `yaml:"name"`
	// Protocol names the database's entry in the protocol table (package
	// protocol): its relay, dialect, default policy and defaults.
	Protocol string `yaml:"protocol"`
	// Listen is the explicit listener; optional when Intercept is set.
	Listen   string `yaml:"listen"`
	Upstream string `yaml:"upstream"`
	// Intercept is off (default), app-host or db-host.
	Intercept string `yaml:"intercept"`
	// Protect lists the addresses redirected in app-host mode; default the
	// upstream address, plus the other loopback family's address when the
	// upstream is on loopback.
	Protect []string `yaml:"protect"`
	// UnixSocket is the database's unix socket path, redirected too in
	// app-host mode (kernel 6.7 or later); sqlfwd connects to it for
	// unix-socket clients. A server with no TCP listener is configured
	// by it alone, without upstream (UnixOnly).
	UnixSocket string `yaml:"unix_socket"`
	// Policy is a policy file; empty means the embedded default policy.
	Policy string `yaml:"policy"`
	Mode   Mode   `yaml:"mode"`
	// Learn starts learning each application's statements when sqlfwd
	// starts (fwctl learn start does it at run time); LearnBy names what
	// tells applications apart (engine.ParseLearnBy; default
	// user,database,unit). Learning never changes a verdict: only
	// fwctl learn promote does (docs/learn.md).
	Learn   bool   `yaml:"learn"`
	LearnBy string `yaml:"learn_by"`
	// LearnedPolicy is the file fwctl learn promote writes the learned
	// rules to; they are appended to the policy's rules whenever it is
	// built (start, reload). A missing file is no learned rules yet.
	// Empty: a promotion lasts until sqlfwd stops.
	LearnedPolicy string `yaml:"learned_policy"`
	// ReusePort sets SO_REUSEPORT on the explicit listener, so that several
	// sqlfwd processes can serve one address (scale-out).
	ReusePort bool `yaml:"reuse_port"`
	// AllowCommands relays the protocol commands named that its relay
	// refuses otherwise (the protocol's AllowableCommands: MySQL's
	// COM_REGISTER_SLAVE, COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID, for a
	// replica through sqlfwd).
	AllowCommands []string `yaml:"allow_commands"`
	// MaxMessageBytes bounds a client message held whole to be judged.
	MaxMessageBytes int `yaml:"max_message_bytes"`
	// BufferBytes is the relay buffer per direction and connection.
	BufferBytes    int           `yaml:"buffer_bytes"`
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// StartupTimeout bounds the time a client may take to send its
	// startup packet.
	StartupTimeout time.Duration `yaml:"startup_timeout"`
	// ServerReplyTimeout bounds the wait for the server's first answer to
	// the startup packet; AuthTimeout the whole authentication, up to the
	// server's first ReadyForQuery (PostgreSQL's own authentication_timeout
	// is 60s). A server that does not answer in time gets the client an
	// 08006 error instead of a wait without end.
	ServerReplyTimeout time.Duration `yaml:"server_reply_timeout"`
	AuthTimeout        time.Duration `yaml:"auth_timeout"`
	// TLS is the client leg, UpstreamTLS the server leg (tls.go; the
	// handshakes are daemon/tls.go's).
	TLS         *TLSConfig   `yaml:"tls"`
	UpstreamTLS *UpstreamTLS `yaml:"upstream_tls"`
	// MaxConnections bounds this database's client connections (0: no
	// bound); more get FATAL 53300, as PostgreSQL answers beyond its own.
	MaxConnections int `yaml:"max_connections"`
	// IdleTimeout closes a session idle outside a transaction this long,
	// IdleInTransactionTimeout one idle inside a transaction (0: never),
	// with PostgreSQL's own errors (57P05, 25P03).
	IdleTimeout              time.Duration `yaml:"idle_timeout"`
	IdleInTransactionTimeout time.Duration `yaml:"idle_in_transaction_timeout"`
	// PolicyCacheBytes bounds the engine's cache of analysed statements.
	PolicyCacheBytes int64 `yaml:"policy_cache_bytes"`
	// MaxParseBytes is the largest statement text the engine parses
	// (engine.DefaultMaxParseBytes when 0); a longer one that no limits
	// rule decided is denied as parse-bound, never parsed.
	MaxParseBytes int `yaml:"max_parse_bytes"`
	// Catalog is sqlfwd's own connection to the database's catalog, from
	// which it learns what views, functions, triggers and rules do
	// (docs/operations.md, "The catalog connection"); nil: none, statements
	// are judged by their text alone.
	Catalog *CatalogConfig `yaml:"catalog"`
}

// CatalogConfig is a database's catalog connection.
type CatalogConfig struct {
	// DSN is how to connect as the monitoring role: a PostgreSQL URL or
	// keyword string (postgres://sqlfw_catalog@127.0.0.1:5432/shop), a
	// go-sql-driver/mysql DSN for MySQL (sqlfw_catalog@tcp(127.0.0.1:3306)/).
	// A password is better in DSNFile (or PostgreSQL's PGPASSFILE) than in
	// this file.
	DSN string `yaml:"dsn"`
	// DSNFile is a file holding the DSN (mode 0600), read at start and
	// reload; instead of DSN.
	DSNFile string `yaml:"dsn_file"`
	// Refresh is the interval between reads of the catalog (default 60s);
	// DDL the relay lets through also starts one.
	Refresh time.Duration `yaml:"refresh"`
	// TrustSchemas are schemas whose objects are taken as they are: not
	// expanded, never unknown_object.
	TrustSchemas []string `yaml:"trust_schemas"`
	// MaxDatabases bounds the per-database catalogs (PostgreSQL: one
	// connection per other database a client session starts in; default
	// 8; docs/operations.md, "The catalog connection").
	MaxDatabases int `yaml:"max_databases"`
}

// DefaultCatalogRefresh: CatalogConfig.Refresh.
const DefaultCatalogRefresh = 60 * time.Second

// DefaultCatalogMaxDatabases: CatalogConfig.MaxDatabases.
const DefaultCatalogMaxDatabases = 8

// Defaults.
const (
	DefaultControlSocket = control.DefaultSocket
	// DefaultPinDir: Intercept.PinDir.
	DefaultPinDir       = "/sys/fs/bpf/sqlfw"
	DefaultDrainTimeout = 30 * time.Second
	// DefaultControlIdleTimeout: Config.ControlIdleTimeout.
	DefaultControlIdleTimeout = 15 * time.Second
	DefaultConnectTimeout     = 5 * time.Second
	DefaultStartupTimeout     = 10 * time.Second
	DefaultServerReplyTimeout = 10 * time.Second
	DefaultAuthTimeout        = 70 * time.Second
	// DefaultMaxBufferedBytes: Config.MaxBufferedBytes.
	DefaultMaxBufferedBytes = 256 << 20
	// DefaultStatsWindow: Config.StatsWindow.
	DefaultStatsWindow = control.DefaultStatsWindow
)

// Parse reads a YAML configuration. Unknown keys are errors. A problem is
// reported as Errors: each at its line and column, with the key's path in
// the file and what it wants in words (yamlerr.go), all of them at once.
func Parse(text []byte) (*Config, error) {
	c, _, err := parse(text)
	return c, err
}

// parse is Parse, also returning the document's root node.
func parse(text []byte) (*Config, *yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		return nil, nil, syntaxError(text, err)
	}
	if len(root.Content) == 0 {
		return nil, nil, errors.New("configuration is empty")
	}
	var errs Errors
	checkNode(root.Content[0], reflect.TypeOf(Config{}), "", &errs)
	if len(errs) > 0 {
		return nil, nil, errs
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, errors.New("configuration is empty")
		}
		return nil, nil, fmt.Errorf("parsing configuration: %w", err)
	}
	return &c, &root, nil
}

// ParseFile is Parse naming the file: each problem on its own line as
// FILE:LINE:COLUMN: message.
// Normalize's problems then name the file too, each at the key it is
// about.
func ParseFile(path string, text []byte) (*Config, error) {
	c, root, err := parse(text)
	if err != nil {
		return nil, inFile(path, err)
	}
	c.src = &source{file: path, root: root}
	return c, nil
}

// Load reads and parses a configuration file; its errors name the file.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	return ParseFile(path, b)
}

// UnixOnly reports whether the database is reached by its unix socket
// alone: app-host interception of unix_socket, no explicit listener and no
// protected TCP address, so sqlfwd never needs its TCP upstream.
func (db *Database) UnixOnly() bool {
	return db.UnixSocket != "" && db.Intercept == InterceptAppHost && db.Listen == "" && len(db.Protect) == 0
}

// Normalize fills defaults and checks the configuration. It reports every
// problem it finds, not only the first.
func (c *Config) Normalize() error {
	var errs []error
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, atKey("log_level", fmt.Errorf("log_level %q: want debug, info, warn or error", c.LogLevel)))
	}
	if c.LogFormat == "" {
		c.LogFormat = "auto"
	}
	switch c.LogFormat {
	case "auto", "text", "json":
	default:
		errs = append(errs, atKey("log_format", fmt.Errorf("log_format %q: want auto, text or json", c.LogFormat)))
	}
	if c.ControlSocket == "" {
		c.ControlSocket = DefaultControlSocket
	}
	if c.MaxBufferedBytes == 0 {
		c.MaxBufferedBytes = DefaultMaxBufferedBytes
	} else if c.MaxBufferedBytes < 1<<20 {
		errs = append(errs, atKey("max_buffered_bytes", fmt.Errorf("max_buffered_bytes %d is below 1 MiB", c.MaxBufferedBytes)))
	}
	if c.ControlIdleTimeout <= 0 {
		c.ControlIdleTimeout = DefaultControlIdleTimeout
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.StatsWindow == 0 {
		c.StatsWindow = DefaultStatsWindow
	} else if c.StatsWindow < 100*time.Millisecond {
		errs = append(errs, atKey("stats_window", fmt.Errorf("stats_window %v is below 100ms", c.StatsWindow)))
	}
	if c.MetricsListen != "" {
		if err := checkHostPort(c.MetricsListen); err != nil {
			errs = append(errs, atKey("metrics_listen", fmt.Errorf("metrics_listen: %w", err)))
		}
	}
	if len(c.Databases) == 0 && !c.Discovery.Enabled {
		errs = append(errs, errors.New("no databases configured (and discovery.enabled is false)"))
	}
	if c.Discovery.Interval == 0 {
		c.Discovery.Interval = DefaultDiscoveryInterval
	} else if c.Discovery.Interval < 100*time.Millisecond {
		errs = append(errs, atKey("discovery.interval", fmt.Errorf("discovery.interval %v is below 100ms", c.Discovery.Interval)))
	}
	names := map[string]bool{}
	listens := map[string]bool{}
	for i := range c.Databases {
		db := &c.Databases[i]
		if db.Name == "" {
			db.Name = fmt.Sprintf("db%d", i)
		}
		where := fmt.Sprintf("databases[%d] (%s)", i, db.Name)
		if names[db.Name] {
			errs = append(errs, atKey(dbKey(i, "name"), fmt.Errorf("%s: duplicate name", where)))
		}
		names[db.Name] = true
		if _, err := engine.ParseLearnBy(db.LearnBy); err != nil {
			errs = append(errs, atKey(dbKey(i, "learn_by"), fmt.Errorf("%s: learn_by: %w", where, err)))
		}
		if cc := db.Catalog; cc != nil {
			switch {
			case cc.DSN == "" && cc.DSNFile == "":
				errs = append(errs, atKey(dbKey(i, "catalog"), fmt.Errorf("%s: catalog: dsn or dsn_file is required", where)))
			case cc.DSN != "" && cc.DSNFile != "":
				errs = append(errs, atKey(dbKey(i, "catalog"), fmt.Errorf("%s: catalog: dsn and dsn_file are exclusive", where)))
			}
			if cc.Refresh == 0 {
				cc.Refresh = DefaultCatalogRefresh
			} else if cc.Refresh < time.Second {
				errs = append(errs, atKey(dbKey(i, "catalog.refresh"), fmt.Errorf("%s: catalog: refresh %s: want at least 1s", where, cc.Refresh)))
			}
			if cc.MaxDatabases == 0 {
				cc.MaxDatabases = DefaultCatalogMaxDatabases
			} else if cc.MaxDatabases < 0 {
				errs = append(errs, atKey(dbKey(i, "catalog.max_databases"), fmt.Errorf("%s: catalog: max_databases %d: want 0 (the default, %d) or more", where, cc.MaxDatabases, DefaultCatalogMaxDatabases)))
			}
			for j, s := range cc.TrustSchemas {
				cc.TrustSchemas[j] = strings.ToLower(s)
			}
		}
		proto, perr := db.protocolEntry()
		if perr != nil {
			errs = append(errs, atKey(dbKey(i, "protocol"), fmt.Errorf("%s: %w", where, perr)))
		}
		switch db.Intercept {
		case "":
			db.Intercept = InterceptOff
		case InterceptOff, InterceptAppHost, InterceptDBHost:
		default:
			errs = append(errs, atKey(dbKey(i, "intercept"), fmt.Errorf("%s: intercept %q: want off, app-host or db-host", where, db.Intercept)))
		}
		if db.Intercept != InterceptAppHost && (len(db.Protect) > 0 || db.UnixSocket != "") {
			errs = append(errs, atKey(dbKey(i, "intercept"), fmt.Errorf("%s: protect and unix_socket need intercept: app-host", where)))
		}
		for _, p := range db.Protect {
			if _, err := netip.ParseAddrPort(p); err != nil {
				errs = append(errs, atKey(dbKey(i, "protect"), fmt.Errorf("%s: protect %q: want an IP address and port: %w", where, p, err)))
			}
		}
		if db.Listen == "" && db.Intercept != InterceptOff {
			// interception alone: no explicit listener
		} else if err := checkHostPort(db.Listen); err != nil {
			errs = append(errs, atKey(dbKey(i, "listen"), fmt.Errorf("%s: listen: %w", where, err)))
		} else if listens[db.Listen] && !strings.HasSuffix(db.Listen, ":0") {
			errs = append(errs, atKey(dbKey(i, "listen"), fmt.Errorf("%s: listen %s is used twice", where, db.Listen)))
		}
		listens[db.Listen] = true
		if db.Upstream == "" && db.UnixOnly() {
			// reached only by its unix socket: nothing is dialled over TCP
		} else if err := checkHostPort(db.Upstream); err != nil {
			errs = append(errs, atKey(dbKey(i, "upstream"), fmt.Errorf("%s: upstream: %w (it may be left out only for a server reached by its unix_socket alone: intercept: app-host, no listen, no protect)", where, err)))
		}
		if db.Mode == "" {
			db.Mode = ModeEnforce
		}
		switch db.Mode {
		case ModeEnforce, ModeMonitor, ModeDetect:
		default:
			errs = append(errs, atKey(dbKey(i, "mode"), fmt.Errorf("%s: mode %q: want enforce, monitor or detect", where, db.Mode)))
		}
		for _, name := range db.AllowCommands {
			if proto == nil {
				break
			}
			if _, ok := proto.Command(name); !ok {
				errs = append(errs, atKey(dbKey(i, "allow_commands"), fmt.Errorf("%s: allow_commands %q: %s", where, name, allowable(proto))))
			}
		}
		if db.MaxMessageBytes == 0 {
			if proto != nil {
				db.MaxMessageBytes = proto.MaxMessageBytes
			}
		} else if db.MaxMessageBytes < 1024 {
			errs = append(errs, atKey(dbKey(i, "max_message_bytes"), fmt.Errorf("%s: max_message_bytes %d is below 1024", where, db.MaxMessageBytes)))
		}
		if db.MaxParseBytes == 0 {
			db.MaxParseBytes = engine.DefaultMaxParseBytes
		} else if db.MaxParseBytes < 1024 {
			errs = append(errs, atKey(dbKey(i, "max_parse_bytes"), fmt.Errorf("%s: max_parse_bytes %d is below 1024", where, db.MaxParseBytes)))
		}
		if db.BufferBytes == 0 {
			if proto != nil {
				db.BufferBytes = proto.BufferBytes
			}
		} else if db.BufferBytes < 512 {
			errs = append(errs, atKey(dbKey(i, "buffer_bytes"), fmt.Errorf("%s: buffer_bytes %d is below 512", where, db.BufferBytes)))
		}
		if db.ConnectTimeout == 0 {
			db.ConnectTimeout = DefaultConnectTimeout
		}
		if db.UpstreamTLS != nil {
			if err := db.UpstreamTLS.Check(); err != nil {
				errs = append(errs, atKey(dbKey(i, "upstream_tls"), fmt.Errorf("%s: %w", where, err)))
			}
		}
		if db.ServerReplyTimeout <= 0 {
			db.ServerReplyTimeout = DefaultServerReplyTimeout
		}
		if db.AuthTimeout <= 0 {
			db.AuthTimeout = DefaultAuthTimeout
		}
		if db.StartupTimeout == 0 {
			db.StartupTimeout = DefaultStartupTimeout
		}
	}
	if c.Audit.Queue == 0 {
		c.Audit.Queue = 8192
	}
	if c.Audit.Anchor == 0 {
		c.Audit.Anchor = 10000
	}
	if err := c.Intercept.checkPods(); err != nil {
		errs = append(errs, atKey("intercept", fmt.Errorf("intercept: %w", err)))
	}
	if c.Intercept.Mark == 0 {
		c.Intercept.Mark = DefaultMark
	}
	if c.Intercept.Sockmap == nil {
		on := true
		c.Intercept.Sockmap = &on
	}
	if len(c.Intercept.SpliceUpstream) > 0 {
		switch {
		case !*c.Intercept.Sockmap:
			errs = append(errs, atKey("intercept", errors.New("intercept: splice_upstream needs sockmap")))
		case c.Intercept.Fastpath:
			errs = append(errs, atKey("intercept", errors.New("intercept: splice_upstream and fastpath exclude each other (the fast path reads the upstream socket's TCP queue, which a spliced leg never fills)")))
		}
	}
	if c.Intercept.Netns == "" {
		c.Intercept.Netns = "/proc/self/ns/net"
	}
	if c.Intercept.PinDir == "" {
		c.Intercept.PinDir = DefaultPinDir
	}
	if c.Intercept.Listen4 == "" {
		c.Intercept.Listen4 = "127.0.0.1:0"
	}
	if c.Intercept.Listen6 == "" {
		c.Intercept.Listen6 = "[::1]:0"
	}
	if len(errs) > 0 && c.src != nil {
		return c.src.place(errs)
	}
	return errors.Join(errs...)
}

// protocolEntry returns the database's entry in the protocol table.
func (dc *Database) protocolEntry() (*protocol.Protocol, error) {
	if dc.Protocol == "" {
		return nil, fmt.Errorf("protocol is required (%s)", protocol.Names())
	}
	return protocol.Named(dc.Protocol)
}

// allowable says which commands a protocol's allow_commands may name.
func allowable(p *protocol.Protocol) string {
	if len(p.AllowableCommands) == 0 {
		return fmt.Sprintf("protocol %s has no commands to allow", p.Name)
	}
	return fmt.Sprintf("only protocol %s's %s can be allowed", p.Name, strings.Join(p.AllowableCommands, ", "))
}

// checkPods checks pods and pod_listen together.
func (ic *Intercept) checkPods() error {
	if !ic.Pods {
		if ic.PodListen != "" {
			return errors.New("pod_listen is set but pods is not")
		}
		return nil
	}
	if ic.PodListen == "" {
		return errors.New("pods needs pod_listen: an IP:PORT of this host that pods route to")
	}
	_, err := ic.PodListeners()
	return err
}

// PodListeners parses PodListen: at most one address of each family.
func (ic *Intercept) PodListeners() ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, s := range strings.Split(ic.PodListen, ",") {
		ap, err := netip.ParseAddrPort(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("pod_listen %q: want an IP address and port: %w", s, err)
		}
		ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		if a := ap.Addr(); a.IsLoopback() || a.IsUnspecified() {
			return nil, fmt.Errorf("pod_listen %s: a pod's loopback is its own and a wildcard is no address to send it to: give a node address pods route to", ap)
		}
		for _, o := range out {
			if o.Addr().Is4() == ap.Addr().Is4() {
				return nil, fmt.Errorf("pod_listen: %s and %s are of one family: give at most one IPv4 and one IPv6 address", o, ap)
			}
		}
		out = append(out, ap)
	}
	return out, nil
}

func checkHostPort(s string) error {
	if s == "" {
		return errors.New("address is required (host:port)")
	}
	if _, _, err := net.SplitHostPort(s); err != nil {
		return err
	}
	return nil
}
