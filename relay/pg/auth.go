package pg

// The authentication phase: from the startup message forwarded to the
// server to the server's first ReadyForQuery. The server asks (cleartext,
// MD5, SASL/SCRAM, GSS), the client answers, the server says
// AuthenticationOk, reports its parameters and the cancel key, and is ready.
// sqlfw judges nothing in it and passes every byte on untouched: the
// password or SCRAM exchange is between the client and the server. The two
// relay loops carry it (a pipelining client's messages are relayed in
// order, as after it); what holds only in this phase is here:
//
//   - the client may send only what PostgreSQL accepts then: messages of at
//     most preAuthMaxMessage bytes (its own limit for password and SASL
//     messages is PG_MAX_AUTH_TOKEN_LENGTH, 65535, in
//     src/include/libpq/auth.h); the client's framer gets the configured
//     limits once the phase is over;
//   - the server's first reply is awaited server_reply_timeout, the end of
//     the phase auth_timeout from the session's start; then the client gets
//     08006 instead of waiting for ever on a server that accepted and went
//     silent.
//
// Terminating TLS on both legs makes SCRAM channel binding fail (tls.go);
// binding to the server's certificate would belong here.

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// preAuthMaxMessage bounds every client message before authentication ends.
const preAuthMaxMessage = 65535 + 4

// authPhase is the phase's state.
type authPhase struct {
	// over is set by toClient at the server's first ReadyForQuery, before
	// the client can see it.
	over atomic.Bool
	// lifted is toServer's: the client's framer has the configured limits.
	lifted bool
	// replied is toClient's: the server has answered the startup message.
	replied bool
}

// authClientFramer is toServer's framer for the client, with the phase's
// limits.
func (s *session) authClientFramer() *wire.Framer {
	return wire.NewFramer(s.client, s.env.Limits.BufferBytes, preAuthMaxMessage, preAuthMaxMessage)
}

// authClientRead is toServer's after each read from the client: once the
// phase is over the client's messages get the configured limits.
func (s *session) authClientRead(fr *wire.Framer) {
	if !s.auth.lifted && s.auth.over.Load() {
		s.auth.lifted = true
		fr.SetLimits(s.env.Limits.MaxMessageBytes, s.env.Limits.MaxMessageBytes)
	}
}

// authServerStart is toClient's before its first read from the server.
func (s *session) authServerStart() {
	_ = s.server.SetReadDeadline(s.authDeadline(false))
}

// authServerRead is toClient's after each read from the server: the first
// reply has come, the end of the phase is due auth_timeout after the start.
func (s *session) authServerRead() {
	if !s.auth.replied {
		s.auth.replied = true
		_ = s.server.SetReadDeadline(s.authDeadline(true))
	}
}

// authReady is toClient's at every ReadyForQuery: the first ends the
// phase.
func (s *session) authReady() {
	if !s.auth.over.Load() {
		s.auth.over.Store(true) // before the client can see it
		_ = s.server.SetReadDeadline(time.Time{})
	}
}

// authTimedOut is toClient's when a read from the server failed with err:
// it reports whether the phase's deadline passed, and then has told the
// client (when it is between messages: nothing of a message was relayed
// half) and logged it.
func (s *session) authTimedOut(err error, midMessage bool) bool {
	if !isTimeout(err) || s.auth.over.Load() {
		return false
	}
	s.env.Observer.Count(relay.ConnRefused, 1)
	what := fmt.Sprintf("sqlfw: the database server did not answer the connection within %v", s.env.Limits.ServerReplyTimeout)
	if s.auth.replied {
		what = fmt.Sprintf("sqlfw: the database server did not complete authentication within %v", s.env.Limits.AuthTimeout)
	}
	s.log.Error("closing connection: "+what[len("sqlfw: "):], "upstream", s.conn.Upstream.Addr)
	if !midMessage {
		s.cw.Lock()
		writeFatal(s.client, sqlstateConnectionFailure, what)
		s.cw.Unlock()
	}
	return true
}

// authDeadline is toClient's read deadline on the server in the phase: the
// first reply within server_reply_timeout, the end of authentication
// within auth_timeout of the session's start.
func (s *session) authDeadline(replied bool) time.Time {
	if !replied {
		return time.Now().Add(s.env.Limits.ServerReplyTimeout)
	}
	return s.begun.Add(s.env.Limits.AuthTimeout)
}
