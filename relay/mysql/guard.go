package mysql

// A client that half-closes after sending (a pipelining client that shuts
// down its write side, `printf … | nc`) still gets the answers to every
// command it sent whole: the server's side is half-closed too, after
// everything the client sent, and toClient relays the rest of the answers
// (and the replies sqlfw queued among them) until the server closes, as a
// server read directly would answer each command before it reads the end.
// A command the client sent only part of is never forwarded.
//
// Idle timeouts: a session idle outside a transaction for idle_timeout, or
// inside one for idle_in_transaction_timeout, is closed with the error
// MySQL 8 sends when its own wait_timeout ends a session
// (ER_CLIENT_INTERACTION_TIMEOUT, which the client reads as the answer to
// its next command). toClient arms the timeout when a response leaves
// nothing owed, toServer disarms it at every read, and a read deadline that
// passes is checked against the session's real state before anything is
// closed.

import (
	"time"

	"github.com/sqlfw/sqlfw/relay"
)

const errClientInteractionTimeout = 4031 // ER_CLIENT_INTERACTION_TIMEOUT

// halfClose is toServer's answer to the client's EOF. It reports false
// when the server owes the client nothing (after COM_QUIT, or between
// commands), or when the server connection cannot be half-closed: the
// session then closes at once, so that its connection slot is free by the
// time a client that quit connects again.
func (s *session) halfClose() bool {
	s.mu.Lock()
	owed := s.head < len(s.queue)
	s.mu.Unlock()
	if !owed {
		return false
	}
	if !relay.CloseWrite(s.Server) {
		return false
	}
	s.log.Debug("client closed its side: relaying the rest of the server's answers")
	s.leaveOpen = true
	return true
}

// idleFor returns the timeout that applies and whether the session is
// idle now.
func (s *session) idleFor() (time.Duration, bool) {
	s.mu.Lock()
	busy, inTx := s.head < len(s.queue) || s.reading, s.inTx
	s.mu.Unlock()
	t := s.env.Limits.IdleTimeout
	if inTx {
		t = s.env.Limits.IdleInTransactionTimeout
	}
	return t, !busy && s.phase.Load() == phaseCommand
}

// armIdle is toClient's, after a response is forwarded.
func (s *session) armIdle() {
	if t, idle := s.idleFor(); idle {
		s.idle.Arm(s.Client, t)
	}
}

// idleExpired is toServer's answer to a read deadline that passed: it
// reports true (and has told the client) when the session has been idle for
// its timeout (relay.IdleTimer.Expired).
func (s *session) idleExpired() bool {
	t, idle := s.idleFor()
	if !s.idle.Expired(s.Client, t, idle) {
		return false
	}
	s.env.Observer.Count(relay.IdleClosed, 1)
	s.log.Info("closing connection: idle timeout", "timeout", t)
	s.Tell(errPacket(0, errClientInteractionTimeout, sqlstateGeneral, "sqlfw: the client was disconnected because it was idle for longer than "+t.String()))
	return true
}
