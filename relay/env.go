package relay

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"github.com/sqlfw/sqlfw/engine"
)

// Env is what one protected database lends each of its sessions. The daemon
// builds it once per database; every field is safe for concurrent use.
type Env struct {
	// Database is the database's configured name.
	Database string
	// Engine returns the engine to judge with now: a reload swaps it, and
	// a statement is judged by the engine it loaded.
	Engine func() *engine.Engine
	// Enforces reports whether a deny verdict blocks: whether the mode
	// that applies to it is enforce (the live override, else mode, the
	// verdict's Mode from its rule or policy, else the configured one).
	// It takes the mode, not the verdict, so that the caller's verdict
	// does not escape.
	Enforces func(mode engine.Mode) bool
	// Dial connects to the upstream (and to where a cancel request goes);
	// it sets SO_MARK when interception needs the daemon's own sockets
	// marked, and connects a unix socket as DialAs(ctx) when that is set
	// (sessions dial through Upstream.Dial).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// ClientTLS returns the client leg's configuration: what a session
	// presents to a client that asks for TLS (nil: no TLS). A reload
	// swaps it; open sessions keep theirs. (The server leg's is the
	// Upstream's.)
	ClientTLS func() *tls.Config
	Limits    Limits
	// AllowCommands names the protocol commands relayed beyond those
	// applications send (MySQL: replication, config allow_commands).
	AllowCommands []string
	// Budget bounds the message memory of all sessions together.
	Budget Budget
	// Admit counts a client whose startup has been read against the
	// connection limits. A *Refusal says why it may not go on; otherwise
	// release must be called when the session ends.
	Admit func() (release func(), err error)
	// Log is the database's logger.
	Log      *slog.Logger
	Observer Observer
	// Meter returns the timers of a new session.
	Meter func(id uint64) Meter
}

// Limits are a database's bounds on its sessions (docs/config.md).
type Limits struct {
	// StartupTimeout bounds the client's startup (encryption requests and
	// the startup packet); ConnectTimeout a dial of the upstream.
	StartupTimeout, ConnectTimeout time.Duration
	// ServerReplyTimeout bounds the server's first reply to the startup
	// packet, AuthTimeout the end of authentication from the session's
	// start.
	ServerReplyTimeout, AuthTimeout time.Duration
	// IdleTimeout and IdleInTransactionTimeout close idle sessions (0:
	// never).
	IdleTimeout, IdleInTransactionTimeout time.Duration
	// BufferBytes is each framer's initial buffer; MaxMessageBytes the
	// largest message after authentication.
	BufferBytes, MaxMessageBytes int
	// RequireTLS refuses clients that do not ask for TLS.
	RequireTLS bool
}

// Budget is memory shared by all sessions' framers beyond their initial
// buffers (wire/pg's Budget has the same methods).
type Budget interface {
	// Reserve takes n bytes, waiting a bounded time for them to come free.
	Reserve(n int) error
	// Release gives back n bytes.
	Release(n int)
}

// RefusalReason is why a client is turned away before its session starts.
type RefusalReason uint8

const (
	// TooManyConnections: max_connections or max_client_connections.
	TooManyConnections RefusalReason = iota + 1
	// ShuttingDown: the daemon is draining.
	ShuttingDown
	// Unavailable: the daemon cannot judge this session now (its
	// database's catalog could not be read); a later try may succeed.
	Unavailable
)

// RefuseShuttingDown is the refusal of a daemon that is draining.
var RefuseShuttingDown = &Refusal{Reason: ShuttingDown, Msg: "sqlfw: the firewall is shutting down"}

// Refusal is a client turned away before its session starts. Msg is what
// the client is told ("sqlfw: ..."); the protocol gives it its own code
// (Protocol.Refuse).
type Refusal struct {
	Reason RefusalReason
	Msg    string
}

func (r *Refusal) Error() string { return r.Msg }
