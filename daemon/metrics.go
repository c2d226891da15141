package daemon

// What the daemon says about itself besides /v1/stats: /v1/status and
// /v1/connections on the control socket, and Prometheus metrics on
// metrics_listen. Everything here reads counters the sessions already keep
// and the windows the stats loop publishes: nothing on the statement path.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
)

// Status returns the daemon's status.
func (d *Daemon) Status() Status {
	st := Status{
		APIVersion: APIVersion, Version: d.version, PID: os.Getpid(), StartedAt: d.started,
		UptimeSeconds: time.Since(d.started).Round(time.Millisecond).Seconds(),
		StatsWindow:   d.cfg.StatsWindow.String(), MetricsListen: d.cfg.MetricsListen,
		Interception: d.interceptStats(),
	}
	if d.metrics != nil {
		st.MetricsListen = d.metrics.ln.Addr().String()
	}
	if d.src != nil {
		cs := &ConfigStatus{Path: d.src.Path}
		if p := d.cfgSum.Load(); p != nil {
			cs.SHA256 = *p
		}
		cs.OnDiskDiffers = fileSHA256(d.src.Path) != cs.SHA256
		if p := d.pendingRestart.Load(); p != nil {
			cs.NeedRestart = *p
		}
		st.Config = cs
	}
	if s := d.statsState; s != nil {
		st.Cgroup = s.sampler.Layout().CPU
	}
	d.mu.Lock()
	st.Connections = len(d.sessions)
	d.mu.Unlock()
	for _, db := range d.databases() {
		s := db.stats.snapshot()
		ds := DatabaseStatus{Name: db.cfg.Name, Protocol: db.cfg.Protocol, Listen: db.cfg.Listen, Upstream: db.cfg.Upstream,
			Intercept: db.cfg.Intercept, ModeOverride: db.override.Load() != nil, Policy: db.policy(), Connections: s.ConnectionsActive}
		ds.Mode = string(db.mode(&engine.Verdict{Mode: db.engine.Load().Policy().Mode()}))
		if db.ln != nil {
			ds.Listen = db.ln.Addr().String()
		}
		ds.Catalogs = db.catalogInfos()
		if ds.Policy == "" {
			ds.Policy = "(embedded default)"
		} else {
			if p := db.policySum.Load(); p != nil {
				ds.PolicySHA256 = *p
			}
			ds.PolicyOnDiskDiffers = fileSHA256(ds.Policy) != ds.PolicySHA256
		}
		if f := db.found; f != nil {
			present, pid, comm, since := f.get()
			ds.Discovered, ds.State, ds.Since = true, "gone", &since
			ds.Server = fmt.Sprintf("%s pid %d", comm, pid)
			if present {
				ds.State = "protected"
			}
			ds.UnixSocket, ds.Protect = db.cfg.UnixSocket, db.cfg.Protect
		}
		st.Databases = append(st.Databases, ds)
	}
	if dc := d.discovery; dc != nil {
		st.Discovery = dc.status()
	}
	return st
}

// Connections lists the open sessions, oldest first.
func (d *Daemon) Connections() []Connection {
	d.mu.Lock()
	sessions := make([]*sessionObserver, 0, len(d.sessions))
	for _, so := range d.sessions {
		sessions = append(sessions, so)
	}
	d.mu.Unlock()
	out := make([]Connection, 0, len(sessions))
	for _, so := range sessions {
		s, t := so.s.Info(), &so.tally
		c := Connection{ID: s.ID, Database: s.Database, Client: s.Client, Via: string(s.Via),
			User: s.User, DBName: s.DBName, Application: s.Application, Since: t.since,
			Statements: t.statements.Load(), Allowed: t.allowed.Load(), Denied: t.denied.Load(),
			Logged: t.logged.Load(), WouldDeny: t.wouldDeny.Load(),
			ClientTLS: s.ClientTLS, ServerTLS: s.ServerTLS}
		if p := s.Process; p.Known {
			c.Process = &ConnectionOwner{PID: p.Tgid, UID: p.UID, Comm: p.Comm, Cgroup: p.Cgroup}
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Connection) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// registerStatusRoutes adds /v1/status and /v1/connections to the control
// socket's mux.
func registerStatusRoutes(mux *http.ServeMux, d *Daemon) {
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
	}
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, d.Status()) })
	mux.HandleFunc("GET /v1/connections", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, d.Connections()) })
}

// metricsServer serves Prometheus metrics over plain HTTP.
type metricsServer struct {
	ln  net.Listener
	srv *http.Server
}

func (d *Daemon) startMetrics() error {
	if d.cfg.MetricsListen == "" {
		return nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &metricsCollector{d: d})
	ln, err := net.Listen("tcp", d.cfg.MetricsListen)
	if err != nil {
		return fmt.Errorf("metrics: listening on %s: %w", d.cfg.MetricsListen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// /healthz: the process serves; /readyz: it judges traffic (started,
	// not draining), for load balancers and Kubernetes probes.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !d.ready.Load() {
			http.Error(w, "not ready: starting or draining", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	m := &metricsServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go func() {
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("metrics listener stopped", "err", err)
		}
	}()
	d.metrics = m
	d.log.Info("metrics", "listen", ln.Addr().String())
	return nil
}

func (d *Daemon) stopMetrics() {
	if d.metrics == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = d.metrics.srv.Shutdown(ctx)
}

// MetricsAddr is where Prometheus metrics are served, or nil.
func (d *Daemon) MetricsAddr() net.Addr {
	if d.metrics == nil {
		return nil
	}
	return d.metrics.ln.Addr()
}

var (
	dbLabel          = []string{"database"}
	descStatements   = prometheus.NewDesc("sqlfw_statements_total", "Statements judged (a multi-statement Query counts each), and executions of prepared statements.", dbLabel, nil)
	descExecutions   = prometheus.NewDesc("sqlfw_prepared_executions_total", "Executions of prepared statements, decided by the verdict remembered from the prepare (also in sqlfw_statements_total and sqlfw_verdicts_total).", dbLabel, nil)
	descVerdicts     = prometheus.NewDesc("sqlfw_verdicts_total", "Judged messages by verdict as applied: allowed, logged, denied (blocked), would_deny (monitor/detect).", []string{"database", "verdict"}, nil)
	descRules        = prometheus.NewDesc("sqlfw_rule_verdicts_total", "Judged messages by the rule that decided them.", []string{"database", "rule"}, nil)
	descDrift        = prometheus.NewDesc("sqlfw_learned_drift_total", "Messages a promoted learned policy's drift rule (learned-drift) decided: statements outside what their application was seen doing, denied or logged as the operator chose (docs/learn.md).", dbLabel, nil)
	descCatReads     = prometheus.NewDesc("sqlfw_catalog_reads_total", "Successful reads of a catalog connection's catalog; dbname is the database of a per-database catalog, \"\" the configured one (docs/operations.md, \"The catalog connection\").", []string{"database", "dbname"}, nil)
	descCatFailures  = prometheus.NewDesc("sqlfw_catalog_read_failures_total", "Failed reads of a catalog connection's catalog (the catalog in force kept).", []string{"database", "dbname"}, nil)
	descCatObjects   = prometheus.NewDesc("sqlfw_catalog_objects", "Objects of the catalog in force.", []string{"database", "dbname"}, nil)
	descCatSessions  = prometheus.NewDesc("sqlfw_catalog_sessions", "Sessions judged with a per-database catalog now.", []string{"database", "dbname"}, nil)
	descLearning     = prometheus.NewDesc("sqlfw_learning", "1 while the database learns its applications' statements (fwctl learn start).", dbLabel, nil)
	descLearnedPrint = prometheus.NewDesc("sqlfw_learned_fingerprints", "Statement shapes learned, all applications together.", dbLabel, nil)
	descParseErrors  = prometheus.NewDesc("sqlfw_parse_errors_total", "Statements the engine could not parse.", dbLabel, nil)
	descConnTotal    = prometheus.NewDesc("sqlfw_connections_total", "Client connections accepted.", dbLabel, nil)
	descConnActive   = prometheus.NewDesc("sqlfw_connections", "Client connections open now.", dbLabel, nil)
	descConnRefused  = prometheus.NewDesc("sqlfw_connections_refused_total", "Connections closed before a session: upstream unreachable or bad startup.", dbLabel, nil)
	descHeld         = prometheus.NewDesc("sqlfw_held_seconds", "Time a statement message was held by sqlfw (last byte in to forwarded); folded in once per stats window.", dbLabel, nil)
	descEval         = prometheus.NewDesc("sqlfw_evaluation_seconds", "Wall time of each policy evaluation; folded in once per stats window.", dbLabel, nil)
	descRelay        = prometheus.NewDesc("sqlfw_response_relay_seconds", "Time from a response's first bytes to its ReadyForQuery forwarded; folded in once per stats window.", dbLabel, nil)
	descPeriods      = prometheus.NewDesc("sqlfw_cgroup_cpu_periods_total", "CFS enforcement periods of sqlfwd's cgroup (nr_periods).", nil, nil)
	descThrottled    = prometheus.NewDesc("sqlfw_cgroup_cpu_throttled_periods_total", "CFS periods in which sqlfwd's cgroup was throttled (nr_throttled).", nil, nil)
	descThrottledSec = prometheus.NewDesc("sqlfw_cgroup_cpu_throttled_seconds_total", "Time sqlfwd's cgroup was throttled, summed over CPUs (throttled_time).", nil, nil)
	descQuota        = prometheus.NewDesc("sqlfw_cgroup_cpu_quota_vcpus", "CPU quota of sqlfwd's cgroup in vCPUs (absent when unlimited).", nil, nil)
	descUsage        = prometheus.NewDesc("sqlfw_cgroup_cpu_usage_seconds_total", "CPU time used by sqlfwd's cgroup.", nil, nil)
	descRunQueue     = prometheus.NewDesc("sqlfw_run_queue_wait_seconds_total", "Time sqlfwd's threads waited on a run queue (schedstat), threads alive now.", nil, nil)
	descAuditDropped = prometheus.NewDesc("sqlfw_audit_dropped_total", "Audit records dropped because the audit queue was full.", nil, nil)
	descAuditWritten = prometheus.NewDesc("sqlfw_audit_written_total", "Audit records written.", nil, nil)
	descAuditQueue   = prometheus.NewDesc("sqlfw_audit_queue_length", "Audit records waiting to be written.", nil, nil)

	descBuild         = prometheus.NewDesc("sqlfw_build_info", "Always 1: the running sqlfwd's version and Go version.", []string{"version", "goversion"}, nil)
	descReady         = prometheus.NewDesc("sqlfw_ready", "1 once listeners and interception are up, 0 while starting or draining.", nil, nil)
	descIntercept     = prometheus.NewDesc("sqlfw_interception_active", "1 when interception programs are attached; 0 when none were asked for or sqlfwd fell back (then sqlfw_interception_fallback says why).", nil, nil)
	descFallback      = prometheus.NewDesc("sqlfw_interception_fallback", "1 when interception was asked for but sqlfwd fell back to its listeners; reason is the first line of why.", []string{"reason"}, nil)
	descMapFull       = prometheus.NewDesc("sqlfw_interception_map_full_total", "Protected connects whose origin could not be recorded (origin map full).", nil, nil)
	descUnjudged      = prometheus.NewDesc("sqlfw_interception_unjudged_total", "Protected connects that went directly to the database, unjudged: map full while failing open.", nil, nil)
	descNoOrigin      = prometheus.NewDesc("sqlfw_interception_refused_total", "Intercepted connections refused because their origin was unknown.", nil, nil)
	descLogSuppressed = prometheus.NewDesc("sqlfw_log_lines_suppressed_total", "Log lines the per-reason limit held back (each reason's count is in the periodic 'suppressed similar log lines' line).", nil, nil)
	descSelfLoops     = prometheus.NewDesc("sqlfw_interception_self_loops_total", "Intercepted connections refused because sqlfwd made them itself (one of its upstream connections redirected back to it).", nil, nil)
	descMode          = prometheus.NewDesc("sqlfw_mode", "1 for the mode in force for the database (override included).", []string{"database", "mode"}, nil)
	descOverride      = prometheus.NewDesc("sqlfw_mode_override", "1 when fwctl mode overrides the configured mode.", dbLabel, nil)
	descReloads       = prometheus.NewDesc("sqlfw_reloads_total", "Policy reloads by result.", []string{"result"}, nil)
	descLastReload    = prometheus.NewDesc("sqlfw_last_reload_success_timestamp_seconds", "When the policies were last reloaded successfully (0: never).", nil, nil)
	descConnLimited   = prometheus.NewDesc("sqlfw_connections_limited_total", "Connections refused by max_connections or max_client_connections.", dbLabel, nil)
	descTLS           = prometheus.NewDesc("sqlfw_tls_handshakes_total", "TLS handshakes by leg (client, server) and result (ok, failed).", []string{"database", "leg", "result"}, nil)
	descTLSFail       = prometheus.NewDesc("sqlfw_tls_handshake_failures_total", "Failed TLS handshakes by leg (client, server) and cause (certificate, protocol, timeout, closed, refused, other).", []string{"database", "leg", "reason"}, nil)
	descIdleClosed    = prometheus.NewDesc("sqlfw_idle_closed_total", "Sessions closed by idle_timeout or idle_in_transaction_timeout.", dbLabel, nil)
	descDiscovered    = prometheus.NewDesc("sqlfw_discovered_server_up", "For a database discovery made: 1 while its server listens and is intercepted, 0 once it went away.", dbLabel, nil)
	descScans         = prometheus.NewDesc("sqlfw_discovery_scans_total", "Scans of /proc for database servers.", nil, nil)
	descScanSeconds   = prometheus.NewDesc("sqlfw_discovery_last_scan_duration_seconds", "What the last scan of /proc took.", nil, nil)
	descUnprotected   = prometheus.NewDesc("sqlfw_unprotected_paths", "Paths to database servers on this host that discovery found and nothing protects (each is a WARN line and a 'not protected' line of fwctl status).", nil, nil)
)

// noTimings stands for the histograms of a database that has had no stats
// window yet (read only).
var noTimings = newTimings()

// promBuckets are the histogram bounds in seconds: 10 µs to 10 s.
var promBuckets = []float64{10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10}

// metricsCollector turns the daemon's counters into metrics at scrape time.
type metricsCollector struct{ d *Daemon }

func (c *metricsCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.d
	counter := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, labels...)
	}
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	var hists map[*database]*timings
	st := d.statsState
	if st != nil {
		st.mu.Lock()
		defer st.mu.Unlock()
		hists = st.hists
	}
	for _, db := range d.databases() {
		n := db.cfg.Name
		s := db.stats.snapshot()
		counter(descStatements, float64(s.Statements), n)
		counter(descExecutions, float64(s.Executions), n)
		counter(descVerdicts, float64(s.Allowed), n, "allowed")
		counter(descVerdicts, float64(s.Logged), n, "logged")
		counter(descVerdicts, float64(s.Denied), n, "denied")
		counter(descVerdicts, float64(s.WouldDeny), n, "would_deny")
		counter(descParseErrors, float64(s.ParseErrors), n)
		counter(descDrift, float64(db.stats.drift.Load()), n)
		gauge(descLearning, boolGauge(db.engine.Load().Learner() != nil), n)
		for _, ci := range db.catalogInfos() {
			counter(descCatReads, float64(ci.Reads), n, ci.DBName)
			counter(descCatFailures, float64(ci.Failures), n, ci.DBName)
			gauge(descCatObjects, float64(ci.Objects), n, ci.DBName)
			if ci.PerDatabase {
				gauge(descCatSessions, float64(ci.Sessions), n, ci.DBName)
			}
		}
		if l := db.learner.Load(); l != nil {
			fps, _ := l.Len()
			gauge(descLearnedPrint, float64(fps), n)
		}
		counter(descConnTotal, float64(s.ConnectionsTotal), n)
		gauge(descConnActive, float64(s.ConnectionsActive), n)
		counter(descConnRefused, float64(s.ConnectionsRefused), n)
		counter(descConnLimited, float64(s.ConnectionsLimited), n)
		counter(descIdleClosed, float64(s.IdleClosed), n)
		counter(descTLS, float64(db.stats.tlsClientOK.Load()), n, "client", "ok")
		counter(descTLS, float64(db.stats.tlsClientFail.Load()), n, "client", "failed")
		counter(descTLS, float64(db.stats.tlsServerOK.Load()), n, "server", "ok")
		counter(descTLS, float64(db.stats.tlsServerFail.Load()), n, "server", "failed")
		for leg, name := range [2]string{"client", "server"} {
			for f := relay.TLSFailure(0); f < relay.NumTLSFailures; f++ {
				counter(descTLSFail, float64(db.stats.tlsFailBy[leg][f].Load()), n, name, f.String())
			}
		}
		mode := db.configuredMode()
		override := 0.0
		if o := db.override.Load(); o != nil {
			mode, override = *o, 1
		}
		gauge(descMode, 1, n, string(mode))
		gauge(descOverride, override, n)
		for rule, v := range db.rules.snapshot() {
			counter(descRules, float64(v), n, rule)
		}
		if f := db.found; f != nil {
			present, _, _, _ := f.get()
			gauge(descDiscovered, boolGauge(present), n)
		}
		if st != nil {
			h := hists[db]
			if h == nil { // before its first window: empty, but there
				h = noTimings
			}
			ch <- promHistogram(descHeld, h.held, n)
			ch <- promHistogram(descEval, h.evalWall, n)
			ch <- promHistogram(descRelay, h.relay, n)
		}
	}
	if st != nil {
		cs := st.snap.Stats
		if v, ok := cs.Periods.Get(); ok {
			counter(descPeriods, float64(v))
		}
		if v, ok := cs.ThrottledPeriods.Get(); ok {
			counter(descThrottled, float64(v))
		}
		if v, ok := cs.ThrottledTime.Get(); ok {
			counter(descThrottledSec, v.Seconds())
		}
		if q, ok := cs.Quota.Get(); ok && !q.Unlimited {
			gauge(descQuota, q.CPUs)
		}
		if v, ok := cs.Usage.Get(); ok {
			counter(descUsage, v.Seconds())
		}
		if v, ok := st.snap.RunQueueWait().Get(); ok {
			counter(descRunQueue, v.Seconds())
		}
	}
	gauge(descBuild, 1, d.version, runtime.Version())
	gauge(descReady, boolGauge(d.ready.Load()))
	is := d.interceptStats()
	gauge(descIntercept, boolGauge(is.Active))
	if is.Fallback != "" {
		reason, _, _ := strings.Cut(is.Fallback, "\n")
		gauge(descFallback, 1, reason)
	}
	counter(descMapFull, float64(is.MapFull))
	unjudged := is.MapFull
	if d.cfg.Intercept.FailClosed {
		unjudged = 0
	}
	counter(descUnjudged, float64(unjudged))
	counter(descNoOrigin, float64(is.Refused))
	counter(descSelfLoops, float64(is.OwnLoops))
	counter(descLogSuppressed, float64(d.logs.suppressed()))
	if dc := d.discovery; dc != nil {
		ds := dc.status()
		counter(descScans, float64(ds.Scans))
		gauge(descScanSeconds, float64(ds.LastScanMicros)/1e6)
		gauge(descUnprotected, float64(ds.Unprotected))
	}
	counter(descReloads, float64(d.reloadsOK.Load()), "ok")
	counter(descReloads, float64(d.reloadsFail.Load()), "failed")
	gauge(descLastReload, float64(d.lastReload.Load()))
	if a := d.audit; a != nil {
		counter(descAuditDropped, float64(a.dropped.Load()))
		counter(descAuditWritten, float64(a.written.Load()))
		gauge(descAuditQueue, float64(len(a.ch)))
	}
}

// promHistogram converts a histogram of nanoseconds into a Prometheus one
// (seconds). A value goes to the first bound at or above the lowest value
// its HDR bucket stands for (3 significant digits).
func promHistogram(desc *prometheus.Desc, h *hdrhistogram.Histogram, labels ...string) prometheus.Metric {
	counts := make([]uint64, len(promBuckets))
	var sum float64
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		sum += float64(bar.Count) * float64(bar.From+bar.To) / 2 / 1e9
		if i := sort.SearchFloat64s(promBuckets, float64(bar.From)/1e9); i < len(counts) {
			counts[i] += uint64(bar.Count)
		}
	}
	buckets := make(map[float64]uint64, len(promBuckets))
	var cum uint64
	for i, b := range promBuckets {
		cum += counts[i]
		buckets[b] = cum
	}
	return prometheus.MustNewConstHistogram(desc, uint64(h.TotalCount()), sum, buckets, labels...)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
