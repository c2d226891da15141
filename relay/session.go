package relay

import (
	"log/slog"
	"net"
	"time"

	"github.com/sqlfw/sqlfw/engine"
)

// Protocol serves one database protocol's sessions.
type Protocol interface {
	// Serve runs one session until it ends. It owns c.Client and closes
	// it; it registers the session with env.Observer once its server is
	// connected.
	Serve(env *Env, c *Conn)
	// Refuse tells a client, in the protocol's words, why it is turned
	// away. It does not close conn.
	Refuse(conn net.Conn, r *Refusal)
}

// Session is a running session as the daemon sees it.
type Session interface {
	// Info describes the session; it may be called from any goroutine once
	// the session is registered.
	Info() Info
	// Drain closes the session now if it is idle, or when it next becomes
	// idle (its transaction and pending statements done).
	Drain()
	// Close closes both connections now.
	Close()
}

// Info is what fwctl connections and the audit trail say of a session.
type Info struct {
	ID       uint64
	Database string
	Client   string
	Via      Via
	Process  Process
	// User, DBName and Application are the client's login.
	User, DBName, Application string
	// Since is when the session began.
	Since time.Time
	// ClientTLS and ServerTLS name each leg's TLS version and cipher ("" in
	// clear).
	ClientTLS, ServerTLS string
	// ClientCert is the subject of the client's certificate, when it sent
	// one (tls.client_ca).
	ClientCert string
}

// Counter is one of a database's counters that sessions add to.
type Counter uint8

const (
	// ConnRefused: the upstream could not be reached or did not answer.
	ConnRefused Counter = iota
	// IdleClosed: closed by idle_timeout or idle_in_transaction_timeout.
	IdleClosed
	// TLS handshakes of the client and of the server leg.
	TLSClientOK
	TLSClientFail
	TLSServerOK
	TLSServerFail
	// CancelRequests received.
	CancelRequests
	// ProtocolErrors: malformed messages from either side.
	ProtocolErrors
	// BytesToServer and BytesToClient relayed.
	BytesToServer
	BytesToClient
	// TLSClientFailBy+Counter(cause) and TLSServerFailBy+Counter(cause):
	// failed handshakes by cause (TLSFailure, TLSFailCounter). Last, as
	// each spans NumTLSFailures counters.
	TLSClientFailBy
	TLSServerFailBy = TLSClientFailBy + Counter(NumTLSFailures)
)

// Observer hears what the sessions of one database do; the daemon counts,
// logs and audits it. Its methods are called from the sessions' goroutines
// and never block.
type Observer interface {
	// Count adds n to a counter.
	Count(c Counter, n uint64)
	// Open registers a session whose server is connected: from then on
	// the daemon can list, drain and close it, and it reports its verdicts
	// to the SessionObserver returned, until that is closed. log is the
	// session's logger. A refusal (the daemon is shutting down, the
	// session's database cannot be judged now) turns the client away with
	// its message instead; nil lets the session start.
	Open(s Session, log *slog.Logger) (o SessionObserver, no *Refusal)
}

// SessionObserver hears one session's verdicts.
type SessionObserver interface {
	// Judged reports one judged message: typ is the protocol's message
	// type (PostgreSQL's 'Q', 'P', 'F', 'B', 'E'), at when it was judged
	// and el how long the engine took. It is called once per message on
	// the relay path: it must not allocate (v is passed by value so that
	// the caller's does not escape).
	Judged(v engine.Verdict, typ byte, at time.Time, el time.Duration)
	// Applied reports a verdict the session remembered and applied to a
	// message without asking the engine: an execution of a statement it
	// saw prepared (MySQL's COM_STMT_EXECUTE). It counts as Judged does
	// (statements, verdicts, rules, the connection's tally, logs, audit),
	// as an execution instead of a judged message, and without evaluation
	// time. The same rules as Judged's apply.
	Applied(v engine.Verdict, typ byte, at time.Time)
	// Close ends the session's registration.
	Close()
}

// Meter times one session's statements and responses for the stats
// window (docs/stats.md). Hold methods are the client-to-server loop's,
// response methods the server-to-client loop's; none allocates.
type Meter interface {
	// HoldWait: the client-to-server loop is about to read from the client
	// (before each Fill); the wait for the next batch begins here.
	HoldWait()
	// HoldBegin: a read from the client completed a batch. arrived is when
	// the read's bytes reached the socket (Arrived: Unix ns of the
	// real-time clock), 0 when unknown; the hold counts from there.
	HoldBegin(arrived int64)
	// HoldStatement counts a statement message in the batch.
	HoldStatement()
	// EvalStart is called before an engine call; its result goes to
	// EvalEnd with the call's wall time.
	EvalStart() int64
	EvalEnd(cpu0 int64, wall time.Duration)
	// HoldEnd: the batch's bytes are written to the server.
	HoldEnd()
	// HoldAbort: the batch will not end (the session stops).
	HoldAbort()
	// ResponseArrived: bytes came from the server.
	ResponseArrived()
	// ResponseReady counts a response's end (PostgreSQL's ReadyForQuery;
	// the first, which ends the startup phase, is not timed).
	ResponseReady()
	// ResponseForwarded: what was read is written to the client.
	ResponseForwarded()
}
