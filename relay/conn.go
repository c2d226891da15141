package relay

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"

	"github.com/sqlfw/sqlfw/engine"
)

// Via says how a client connection reached the daemon.
type Via string

const (
	// ViaListen: the database's explicit listener.
	ViaListen Via = "listen"
	// ViaRedirect: a cgroup connect program redirected it (app host).
	ViaRedirect Via = "redirect"
	// ViaSteer: the sk_lookup program steered it (database host).
	ViaSteer Via = "steer"
	// ViaUnix: the unix-socket redirect.
	ViaUnix Via = "unix"
)

// Process is the client process behind a connection, when interception
// could see it (the connect() call, or SO_PEERCRED of a unix socket). It is
// the engine's ProcessInfo, so that one description serves interception,
// the session's logs, the policy's process scopes, fwctl connections and
// the audit trail (whose JSON, audit.Process and control.ConnectionOwner,
// is made from it at the edge).
type Process = engine.ProcessInfo

// processAttrs are a process's attributes for a session's log lines (none
// when unknown).
func processAttrs(p Process) []any {
	if !p.Known {
		return nil
	}
	return []any{slog.Group("process", "pid", p.Tgid, "uid", p.UID, "comm", p.Comm, "cgroup", p.Cgroup)}
}

// Upstream is the server a session dials.
type Upstream struct {
	// Network is "tcp" or "unix".
	Network, Addr string
	// TLS is the server leg's configuration (nil: plaintext), TLSMode the
	// configured upstream_tls.mode (libpq's sslmode names: with "prefer"
	// the session goes on in clear when the server declines).
	TLS     *tls.Config
	TLSMode string
	// RefuseClearPassword: the upstream is off this host and clear-text
	// passwords may not cross a plaintext server leg to it (the
	// configuration's upstream_tls.allow_clear_password is off). A session
	// whose client leg is TLS and server leg is not then refuses an
	// authentication that would send the client's password in clear: the
	// client believes it is encrypted to the end.
	RefuseClearPassword bool
	// As, when set, is the client whose credentials the upstream unix
	// socket must see (SO_PEERCRED): a redirected unix-socket client, so
	// that the server's peer or unix_socket authentication, and the
	// socket file's permissions, judge the client and not sqlfwd.
	As *Credentials
}

// Credentials are a unix-socket client's, as SO_PEERCRED and SO_PEERGROUPS
// gave them.
type Credentials struct {
	UID, GID uint32
	Groups   []uint32
}

type dialAsKey struct{}

// Dial connects to the upstream through env.Dial, with the credentials to
// connect as (if any) in the context, where DialAs finds them.
func (u *Upstream) Dial(ctx context.Context, env *Env) (net.Conn, error) {
	if u.As != nil {
		ctx = WithDialAs(ctx, u.As)
	}
	return env.Dial(ctx, u.Network, u.Addr)
}

// Connect dials the upstream within connect_timeout. A failure is counted
// (ConnRefused) and logged; the protocol tells the client in its words.
func (u *Upstream) Connect(env *Env, log *slog.Logger) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), env.Limits.ConnectTimeout)
	defer cancel()
	c, err := u.Dial(ctx, env)
	if err != nil {
		env.Observer.Count(ConnRefused, 1)
		log.Error("cannot reach the database server", "upstream", u.Addr, "err", err)
	}
	return c, err
}

// WithDialAs returns ctx carrying the credentials a dial must connect as.
func WithDialAs(ctx context.Context, as *Credentials) context.Context {
	return context.WithValue(ctx, dialAsKey{}, as)
}

// DialAs returns the credentials a dial must connect as (nil: the
// daemon's own), for an Env.Dial implementation.
func DialAs(ctx context.Context) *Credentials {
	c, _ := ctx.Value(dialAsKey{}).(*Credentials)
	return c
}

// Conn is a client connection as it arrived. Serve owns Client from the
// moment it is called and closes it.
type Conn struct {
	Client net.Conn
	// ID numbers the daemon's sessions (logs, audit, fwctl connections).
	ID  uint64
	Via Via
	// Origin is the address the client asked for (interception only).
	Origin   string
	Process  Process
	Upstream Upstream
	// Fast, when set, is the kernel fast path for the server-to-client
	// direction (plaintext TCP legs only).
	Fast FastPath
}

// Logger is base with the connection's attributes: session, client, via,
// origin and process.
func (c *Conn) Logger(base *slog.Logger) *slog.Logger {
	log := base.With("session", c.ID, "client", c.Client.RemoteAddr().String(), "via", string(c.Via))
	if c.Origin != "" {
		log = log.With("origin", c.Origin)
	}
	return log.With(processAttrs(c.Process)...)
}

// FastPath is the kernel's server-to-client fast path for a session
// (experimental; the daemon gives it to intercepted sessions when
// intercept.fastpath is on). Attach takes the plain sockets of both legs
// before the server has sent anything.
type FastPath interface {
	Attach(server, client net.Conn) (FastLeg, error)
}

// FastLeg is one session on the fast path (bpf.FastLeg): the kernel relays
// server messages the session need not see between Resume and Halt.
// Every write to the client leg is made after a Halt and counted with
// Wrote; Resume only with everything read from the server written, at a
// message boundary.
type FastLeg interface {
	Resume(read uint64, status byte, ok func() bool)
	Halt(apply func(FastReport)) error
	TakePrefix() FastPrefix
	Wrote(n int)
	Close()
}

// FastReport is what the kernel relayed since the last Halt.
type FastReport struct {
	Ready      uint64 // ReadyForQuery messages
	Status     byte   // their transaction status (all the same)
	Redirected uint64 // bytes
}

// FastPrefix is where the first byte read after a Halt stands in the
// message the kernel was relaying: Need length bytes to come (Acc those
// seen), or Rem body bytes; they go to the client as they are.
type FastPrefix struct{ Rem, Need, Acc uint64 }
