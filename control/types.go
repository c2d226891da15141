package control

import (
	"time"

	"github.com/sqlfw/sqlfw/engine"
)

// The JSON of the control socket's answers. The daemon fills these; fwctl
// and any other client decode them. Field names are the wire's contract:
// adding a field is compatible, renaming or removing one is a new API
// version.

// APIVersion is the version of the control socket's JSON (the /v1/ prefix).
const APIVersion = 1

// Status is what GET /v1/status returns.
type Status struct {
	APIVersion    int               `json:"api_version"`
	Version       string            `json:"version"`
	PID           int               `json:"pid"`
	StartedAt     time.Time         `json:"started_at"`
	UptimeSeconds float64           `json:"uptime_seconds"`
	StatsWindow   string            `json:"stats_window"`
	MetricsListen string            `json:"metrics_listen,omitempty"`
	Cgroup        string            `json:"cgroup,omitempty"`
	Interception  InterceptionStats `json:"interception"`
	// Discovery is set when sqlfwd protects the servers it finds on the
	// host (zero configuration, or discovery.enabled).
	Discovery   *DiscoveryStatus `json:"discovery,omitempty"`
	Connections int              `json:"connections"`
	Databases   []DatabaseStatus `json:"databases"`
	// Config is the configuration file in force (absent without one).
	Config *ConfigStatus `json:"config,omitempty"`
}

// ConfigStatus is the configuration file sqlfwd runs from.
type ConfigStatus struct {
	Path string `json:"path"`
	// SHA256 is the checksum of the content last applied (at start or at
	// the last successful reload); OnDiskDiffers says the file on disk now
	// differs (a reload applies it, or refuses it if it is broken). An
	// empty SHA256: there was no file when sqlfwd started (it protects
	// what discovery finds); OnDiskDiffers then says one is there now,
	// which a reload checks and a restart puts in force.
	SHA256        string `json:"sha256"`
	OnDiskDiffers bool   `json:"on_disk_differs"`
	// NeedRestart names the keys of the applied content whose new value
	// is in force only after a restart.
	NeedRestart []string `json:"need_restart,omitempty"`
}

// DiscoveryStatus says how discovery scans the host and what it left alone.
type DiscoveryStatus struct {
	// Interval between rescans of /proc.
	Interval string `json:"interval"`
	// Scans counts the scans since start; LastScan is when the last one
	// ended and LastScanMicros what it took.
	Scans          uint64    `json:"scans"`
	LastScan       time.Time `json:"last_scan"`
	LastScanMicros int64     `json:"last_scan_us"`
	// LastError is the last scan's error ("" when it read /proc).
	LastError string `json:"last_error,omitempty"`
	// NotProtected lists the servers the last scan found and left alone,
	// each with the reason: "not protected: SERVER PATH because REASON"
	// for a path to a server nothing protects, "not protected by
	// discovery: …: configured as database NAME" for one a configured
	// database covers.
	NotProtected []string `json:"not_protected,omitempty"`
	// Unprotected counts the paths nothing protects (the "not protected:"
	// lines of NotProtected; the metric sqlfw_unprotected_paths).
	Unprotected int `json:"unprotected_paths"`
}

// DatabaseStatus is one database in Status.
type DatabaseStatus struct {
	Name         string `json:"name"`
	Protocol     string `json:"protocol"`
	Listen       string `json:"listen,omitempty"`
	Upstream     string `json:"upstream"`
	Intercept    string `json:"intercept"`
	Mode         string `json:"mode"`
	ModeOverride bool   `json:"mode_override"`
	Policy       string `json:"policy"`
	// PolicySHA256 is the checksum of the policy file content in force
	// (read at start or at the last successful reload; empty for the
	// embedded default, or when the file could not be read then).
	// PolicyOnDiskDiffers: the file on disk now has other content (or is
	// gone); a reload puts it in force, or refuses it.
	PolicySHA256        string `json:"policy_sha256,omitempty"`
	PolicyOnDiskDiffers bool   `json:"policy_on_disk_differs,omitempty"`
	Connections         int64  `json:"connections"`
	// Discovered: discovery found its server (it is not in the
	// configuration). State is then "protected" (a server listens and its
	// addresses and unix socket are intercepted) or "gone" (the server
	// stopped: new connections are no longer intercepted, open sessions
	// end on their own; the entry is kept so that a server coming back on
	// the same addresses keeps its name and counters). Since is when it
	// took that state; Server names the process ("postgres pid 1234").
	Discovered bool       `json:"discovered,omitempty"`
	State      string     `json:"state,omitempty"`
	Since      *time.Time `json:"since,omitempty"`
	Server     string     `json:"server,omitempty"`
	UnixSocket string     `json:"unix_socket,omitempty"`
	Protect    []string   `json:"protect,omitempty"`
	// Catalogs are its catalog connections: the configured one first
	// (DBName ""), then the per-database ones (docs/operations.md, "The
	// catalog connection").
	Catalogs []CatalogStatus `json:"catalogs,omitempty"`
}

// CatalogStatus is one catalog connection.
type CatalogStatus struct {
	DBName      string `json:"dbname"`
	Reads       uint64 `json:"reads"`
	Failures    uint64 `json:"failures"`
	Objects     int    `json:"objects"`
	Bytes       int64  `json:"bytes"`
	Sessions    int    `json:"sessions"`
	LastMicros  int64  `json:"last_read_micros"`
	LastError   string `json:"last_error,omitempty"`
	PerDatabase bool   `json:"per_database"`
}

// Connection is one open session in GET /v1/connections.
type Connection struct {
	ID          uint64           `json:"id"`
	Database    string           `json:"database"`
	Client      string           `json:"client"`
	Via         string           `json:"via"`
	User        string           `json:"user"`
	DBName      string           `json:"dbname"`
	Application string           `json:"application,omitempty"`
	Process     *ConnectionOwner `json:"process,omitempty"`
	Since       time.Time        `json:"since"`
	Statements  uint64           `json:"statements"`
	Allowed     uint64           `json:"allowed"`
	Denied      uint64           `json:"denied"`
	Logged      uint64           `json:"logged"`
	WouldDeny   uint64           `json:"would_deny"`
	// ClientTLS and ServerTLS name each leg's TLS version and cipher
	// ("" in clear).
	ClientTLS string `json:"client_tls,omitempty"`
	ServerTLS string `json:"server_tls,omitempty"`
}

// ConnectionOwner is the client process, when interception saw it.
type ConnectionOwner struct {
	PID    uint32 `json:"pid"`
	UID    uint32 `json:"uid"`
	Comm   string `json:"comm"`
	Cgroup string `json:"cgroup,omitempty"`
}

// DatabaseStats is the control socket's view of one database.
type DatabaseStats struct {
	Name     string `json:"name"`
	Protocol string `json:"protocol"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Mode     string `json:"mode"`
	// ModeOverride is true when fwctl mode set Mode live.
	ModeOverride bool   `json:"mode_override"`
	Policy       string `json:"policy"`
	Learning     bool   `json:"learning"`
	Learned      int    `json:"learned"`

	ConnectionsTotal   uint64 `json:"connections_total"`
	ConnectionsActive  int64  `json:"connections_active"`
	ConnectionsRefused uint64 `json:"connections_refused"`
	ConnectionsLimited uint64 `json:"connections_limited"`
	IdleClosed         uint64 `json:"idle_closed"`
	CancelRequests     uint64 `json:"cancel_requests"`
	Messages           uint64 `json:"messages_judged"`
	Executions         uint64 `json:"executions"` // of prepared statements, by the verdict remembered from the prepare; in Statements and the verdicts too
	Statements         uint64 `json:"statements"`
	Allowed            uint64 `json:"allowed"`
	Denied             uint64 `json:"denied"`
	Logged             uint64 `json:"logged"`
	WouldDeny          uint64 `json:"would_deny"`
	ParseErrors        uint64 `json:"parse_errors"`
	ProtocolErrors     uint64 `json:"protocol_errors"`
	// EvalMeanNanos is the mean engine time per judged message.
	EvalMeanNanos uint64 `json:"eval_mean_ns"`
	BytesToServer uint64 `json:"bytes_to_server"`
	BytesToClient uint64 `json:"bytes_to_client"`
	// Window is the latest complete stats window (daemon/breakdown.go).
	Window *DBWindow `json:"window,omitempty"`
}

// Stats is what GET /v1/stats on the control socket returns.
type Stats struct {
	Version      string            `json:"version"`
	StartedAt    time.Time         `json:"started_at"`
	Uptime       string            `json:"uptime"`
	Interception InterceptionStats `json:"interception"`
	Databases    []DatabaseStats   `json:"databases"`
	// Window is the latest complete stats window, all databases together,
	// with the cgroup's CPU figures and the advice line (daemon/breakdown.go).
	Window *StatsWindow `json:"window,omitempty"`
}

// InterceptionStats describes transparent interception.
type InterceptionStats struct {
	// Active is true when kernel programs are attached.
	Active bool `json:"active"`
	// Programs lists what is attached: redirect, sockmap, unix, steer.
	Programs []string `json:"programs,omitempty"`
	// Fallback says why interception was asked for but is not active.
	Fallback string `json:"fallback,omitempty"`
	// Refused counts intercepted connections without a known origin.
	Refused         uint64 `json:"refused"`
	Redirected      uint64 `json:"redirected"`
	SkippedOwn      uint64 `json:"skipped_own"`
	SkippedNetns    uint64 `json:"skipped_netns"`
	MapFull         uint64 `json:"map_full"`
	SockmapAdded    uint64 `json:"sockmap_added"`
	SockmapFallback uint64 `json:"sockmap_fallback"`
	// Fastpath* are the experimental kernel fast path's (intercept.fastpath):
	// sessions put on it, bytes and ReadyForQuery messages the kernel relayed
	// to clients, and the halts that handed a session back to user space.
	FastpathSessions uint64 `json:"fastpath_sessions,omitempty"`
	FastpathBytes    uint64 `json:"fastpath_bytes,omitempty"`
	FastpathReady    uint64 `json:"fastpath_ready,omitempty"`
	FastpathHalts    uint64 `json:"fastpath_halts,omitempty"`
	Steered          uint64 `json:"steered"`
	UnixRedirected   uint64 `json:"unix_redirected"`
	// UnixSkippedOwn counts sqlfwd's own connects to protected unix
	// sockets left alone (SkippedOwn is TCP's).
	UnixSkippedOwn uint64 `json:"unix_skipped_own"`
	// UnixOtherNames says whether a protected unix socket reached by
	// another name (a user's symlink or hard link, a relative path) is
	// refused: "refused", or "NOT refused: " and the kernel's reason (no
	// BPF LSM); empty without unix-socket interception.
	UnixOtherNames string `json:"unix_other_names,omitempty"`
	// UnixGuardRefused counts the connects so refused.
	UnixGuardRefused uint64 `json:"unix_guard_refused"`
	// OwnLoops counts connections refused because sqlfwd made them itself:
	// one of its upstream connections came back to it (an exemption that
	// did not hold, e.g. another program attached above its cgroup).
	OwnLoops uint64 `json:"own_loops"`
	// PodRedirected counts the redirected connects that came from pods
	// (other network namespaces) through the pod listener; they are also
	// in Redirected.
	PodRedirected uint64 `json:"pod_redirected"`
}

// DefaultStatsWindow is the daemon's reporting window unless stats_window
// says otherwise.
const DefaultStatsWindow = 10 * time.Second

// Dist summarises a histogram, in microseconds.
type Dist struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
	Max   float64 `json:"max_us"`
}

// Attribution splits the held-time tail. Shares are of the tail
// statements' total held time and add up to 1; null when unknown.
type Attribution struct {
	// FromQuantile is where the tail starts: 0.99, or lower when the p99
	// tail held too few sampled statements (never below 0.90).
	FromQuantile float64 `json:"from_quantile"`
	// FromUs is the held time the tail starts at (a bucket boundary).
	FromUs     float64 `json:"from_us"`
	Statements uint64  `json:"statements"`
	// Samples are the tail statements whose CPU time and throttling were
	// measured; the shares come from them.
	Samples    uint64  `json:"samples"`
	MeanHeldUs float64 `json:"mean_held_us"`

	Evaluation   *float64 `json:"evaluation"`
	QuotaWait    *float64 `json:"quota_wait"`
	RunQueueWait *float64 `json:"run_queue_wait"`
	Relay        *float64 `json:"relay"`
	// OffCPU is QuotaWait + RunQueueWait, also when the split is unknown
	// (no cgroup cpu.stat to watch).
	OffCPU *float64 `json:"off_cpu"`
	// Dominant names the largest share: evaluation, quota_wait,
	// run_queue_wait, relay, or off_cpu when the wait's cause is unknown.
	Dominant string `json:"dominant,omitempty"`
}

// Share returns a named share (as in Dominant), or -1 when unknown.
func (a *Attribution) Share(name string) float64 {
	var p *float64
	switch name {
	case "evaluation":
		p = a.Evaluation
	case "quota_wait":
		p = a.QuotaWait
	case "run_queue_wait":
		p = a.RunQueueWait
	case "relay":
		p = a.Relay
	case "off_cpu":
		p = a.OffCPU
	}
	if p == nil {
		return -1
	}
	return *p
}

// DBWindow is one database's (or all databases') figures over a window.
type DBWindow struct {
	Statements       uint64  `json:"statements"`
	StatementsPerSec float64 `json:"statements_per_sec"`
	// Held is the time a statement message was held by sqlfw (all of
	// them); EvalWall the wall time of each engine call; EvalCPU its CPU
	// time (sampled batches only); Relay a response's time from its first
	// bytes to its ReadyForQuery forwarded.
	Held     Dist        `json:"held"`
	EvalWall Dist        `json:"eval_wall"`
	EvalCPU  Dist        `json:"eval_cpu"`
	Relay    Dist        `json:"relay"`
	Tail     Attribution `json:"tail"`
}

// CPUWindow is the daemon's cgroup over a window (unknown figures null).
type CPUWindow struct {
	Cgroup string   `json:"cgroup,omitempty"`
	Used   *float64 `json:"used_vcpus"`
	// UsageSource: "cgroup" (the quota group's own usage) or "process"
	// (sqlfwd's own CPU time, where the cpuacct group is another group).
	UsageSource    string   `json:"usage_source,omitempty"`
	Quota          *float64 `json:"quota_vcpus"`
	QuotaUnlimited bool     `json:"quota_unlimited"`
	// QuotaUse is Used ÷ Quota; the sizing rule keeps it near 0.5.
	QuotaUse          *float64 `json:"quota_use"`
	PeriodUs          *float64 `json:"period_us"`
	Periods           *uint64  `json:"periods"`
	ThrottledPeriods  *uint64  `json:"throttled_periods"`
	ThrottledFraction *float64 `json:"throttled_fraction"`
	// ThrottledSeconds is summed over CPUs, as the kernel counts it.
	ThrottledSeconds *float64 `json:"throttled_seconds"`
	// RunQueueWaitSeconds sums the daemon's threads' run-queue wait.
	RunQueueWaitSeconds *float64 `json:"run_queue_wait_seconds"`
}

// StatsWindow is the latest complete window, in GET /v1/stats.
type StatsWindow struct {
	Start       time.Time `json:"start"`
	Seconds     float64   `json:"seconds"`
	SampleEvery int       `json:"sample_every"`
	CPU         CPUWindow `json:"cpu"`
	Total       DBWindow  `json:"total"`
	// Advice is one sentence when the figures call for a change.
	Advice string `json:"advice,omitempty"`
}

// LearnStatus is the control socket's view of learning for one database
// (GET /v1/learn/status): whether it learns, what was learned per
// application (engine.LearnReport), and the learned policy in force.
type LearnStatus struct {
	Database string `json:"database"`
	Protocol string `json:"protocol"`
	Learning bool   `json:"learning"`
	Since    string `json:"since,omitempty"`
	// Report is nil when nothing was learned since sqlfwd started.
	Report   *engine.LearnReport `json:"report,omitempty"`
	Promoted *Promotion          `json:"promoted,omitempty"`
	// Drift counts the messages the learned policy's drift rule decided
	// since sqlfwd started (also sqlfw_learned_drift_total).
	Drift uint64 `json:"drift"`
}

// Promotion is the learned policy in force.
type Promotion struct {
	Form  string `json:"form"`
	Drift string `json:"drift"`
	Mode  string `json:"mode,omitempty"`
	At    string `json:"at,omitempty"`
	Rules int    `json:"rules"`
	// File is where it was written (learned_policy), "" when it lasts
	// only until sqlfwd stops.
	File string `json:"file,omitempty"`
}
