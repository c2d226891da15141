package daemon

import (
	"sync/atomic"
	"time"
)

// counters are one database's totals since start. Sessions add to them
// with atomics: no lock on the statement path.
type counters struct {
	connTotal   atomic.Uint64
	connActive  atomic.Int64
	connRefused atomic.Uint64 // upstream unreachable, bad startup
	connLimited atomic.Uint64 // refused by max_connections / max_client_connections
	idleClosed  atomic.Uint64 // closed by idle_timeout / idle_in_transaction_timeout
	// TLS handshakes of the client and the server leg (tls.go)
	tlsClientOK, tlsClientFail, tlsServerOK, tlsServerFail atomic.Uint64
	cancels                                                atomic.Uint64
	messages                                               atomic.Uint64 // Query, Parse and FunctionCall messages judged
	statements                                             atomic.Uint64 // statements in them
	allowed                                                atomic.Uint64
	denied                                                 atomic.Uint64 // blocked (enforce)
	logged                                                 atomic.Uint64 // allowed by a log rule
	wouldDeny                                              atomic.Uint64 // denied by the policy, let through by monitor or detect
	parseErrors                                            atomic.Uint64
	protocolErrs                                           atomic.Uint64
	evalNanos                                              atomic.Uint64
	bytesToServer                                          atomic.Uint64
	bytesToClient                                          atomic.Uint64
}

// DatabaseStats is the control socket's view of one database.
type DatabaseStats struct {
	Name     string `json:"name"`
	Protocol string `json:"protocol"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Mode     Mode   `json:"mode"`
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
	// Window is the latest complete stats window (breakdown.go).
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
	// with the cgroup's CPU figures and the advice line (breakdown.go).
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
	Steered         uint64 `json:"steered"`
	UnixRedirected  uint64 `json:"unix_redirected"`
}

func (c *counters) snapshot() DatabaseStats {
	s := DatabaseStats{
		ConnectionsTotal:   c.connTotal.Load(),
		ConnectionsActive:  c.connActive.Load(),
		ConnectionsRefused: c.connRefused.Load(),
		ConnectionsLimited: c.connLimited.Load(),
		IdleClosed:         c.idleClosed.Load(),
		CancelRequests:     c.cancels.Load(),
		Messages:           c.messages.Load(),
		Statements:         c.statements.Load(),
		Allowed:            c.allowed.Load(),
		Denied:             c.denied.Load(),
		Logged:             c.logged.Load(),
		WouldDeny:          c.wouldDeny.Load(),
		ParseErrors:        c.parseErrors.Load(),
		ProtocolErrors:     c.protocolErrs.Load(),
		BytesToServer:      c.bytesToServer.Load(),
		BytesToClient:      c.bytesToClient.Load(),
	}
	if s.Messages > 0 {
		s.EvalMeanNanos = c.evalNanos.Load() / s.Messages
	}
	return s
}
