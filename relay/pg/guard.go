package pg

// Bounds a PostgreSQL session keeps against faults and abuse (docs/design.md,
// "Faults and abuse"):
//
//   - Before authentication a client may send only what PostgreSQL accepts
//     then (auth.go).
//   - All sessions together hold at most max_buffered_bytes for client
//     messages read whole to be judged, beyond their fixed relay buffers
//     (relay.Env's Budget, the daemon's bufferBudget). A session that would
//     exceed it waits (its client is not read meanwhile) and is closed with
//     SQLSTATE 53200 if the memory does not come free in time.
//   - The server's first reply to the startup packet and the end of
//     authentication are awaited for a bounded time (auth.go).
//   - A client that half-closes after sending still gets every answer: the
//     server's side is half-closed too, and the session ends when the server
//     closes.
//   - Message types a client may not send, and small messages with
//     malformed bodies, close the session with 08P01 instead of being
//     relayed.

import (
	"time"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// sqlstateOutOfMemory is what a session gets when the buffer budget is spent.
const sqlstateOutOfMemory = "53200"

// halfClose is toServer's answer to the client's EOF: the server gets EOF
// too, after everything the client sent, and toClient relays the rest of
// the answer until the server closes. It reports false when the server
// connection cannot be half-closed (the session then closes at once).
func (s *session) halfClose() bool {
	if !relay.CloseWrite(s.Server) {
		return false
	}
	s.log.Debug("client closed its side: relaying the rest of the server's answer")
	s.leaveOpen = true
	return true
}

// outOfMemory closes a session whose message could not be held.
func (s *session) outOfMemory(err error) {
	s.log.Warn("closing connection: no memory for its message", "err", err)
	s.Tell(fatal(sqlstateOutOfMemory, "sqlfw: out of memory for statements being judged; try again"))
}

// Connection limits and idle timeouts.
const (
	sqlstateTooManyConnections = "53300" // too_many_connections (a relay.Refusal)
	sqlstateIdleSession        = "57P05" // idle_session_timeout
	sqlstateIdleInTransaction  = "25P03" // idle_in_transaction_session_timeout
)

func (s *session) idleTimeout(status byte) time.Duration {
	if status == wire.TxIdle {
		return s.env.Limits.IdleTimeout
	}
	return s.env.Limits.IdleInTransactionTimeout
}

// armIdle is toClient's, after a ReadyForQuery.
func (s *session) armIdle(status byte) {
	t := s.idleTimeout(status)
	s.mu.Lock()
	busy := s.outstanding > 0
	s.mu.Unlock()
	if !busy {
		s.idle.Arm(s.Client, t)
	}
}

// idleExpired is toServer's answer to a read deadline that passed: it
// reports true (and has told the client) when the session has been idle for
// its timeout (relay.IdleTimer.Expired).
func (s *session) idleExpired() bool {
	status := byte(s.txStatus.Load())
	t := s.idleTimeout(status)
	s.mu.Lock()
	busy := s.outstanding > 0
	s.mu.Unlock()
	if !s.idle.Expired(s.Client, t, !busy) {
		return false
	}
	code, what := sqlstateIdleSession, "terminating connection due to idle-session timeout"
	if status != wire.TxIdle {
		code, what = sqlstateIdleInTransaction, "terminating connection due to idle-in-transaction timeout"
	}
	s.env.Observer.Count(relay.IdleClosed, 1)
	s.log.Info("closing connection: "+what, "timeout", t)
	s.Tell(fatal(code, "sqlfw: "+what))
	return true
}
