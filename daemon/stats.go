package daemon

import (
	"sync/atomic"

	"golang.org/x/sys/cpu"

	"github.com/sqlfw/sqlfw/relay"
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
	// the failures by cause (relay.TLSFailure), client leg and server leg
	tlsFailBy     [2][relay.NumTLSFailures]atomic.Uint64
	cancels       atomic.Uint64
	messages      atomic.Uint64 // Query, Parse and FunctionCall messages judged
	executions    atomic.Uint64 // executions of prepared statements decided by a remembered verdict
	statements    atomic.Uint64 // statements in both
	allowed       atomic.Uint64
	denied        atomic.Uint64 // blocked (enforce)
	logged        atomic.Uint64 // allowed by a log rule
	wouldDeny     atomic.Uint64 // denied by the policy, let through by monitor or detect
	drift         atomic.Uint64 // decided by a learned policy's drift rule (learn.go)
	parseErrors   atomic.Uint64
	protocolErrs  atomic.Uint64
	evalNanos     atomic.Uint64
	bytesToServer atomic.Uint64
	// bytesToClient is the only counter a session's toClient adds to, on
	// a cache line of its own: the two relay goroutines run on different
	// threads, and sharing toServer's line made every add a transfer of the
	// line between the cores (issue 15)
	_             cpu.CacheLinePad
	bytesToClient atomic.Uint64
	_             cpu.CacheLinePad
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
		Executions:         c.executions.Load(),
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
