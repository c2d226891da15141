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
//     silent;
//   - a password message ('p': PasswordMessage, SASLInitialResponse,
//     SASLResponse, GSSResponse, whose bodies only the exchange gives a
//     meaning) is relayed only as the answer to a request of the server's:
//     one per Authentication request that takes an answer, seen before the
//     client could read it. One the client sends ahead of the request it
//     answers waits for it (what came before goes on). Once the server has
//     said AuthenticationOk a 'p' is a protocol violation, as PostgreSQL's
//     SocketBackend has it ("invalid frontend message type 112", FATAL
//     08P01): sqlfw answers it so and closes the session, and the server
//     never sees it (authAnswer).
//
// SCRAM channel binding with TLS on both legs (tls.go): the client would
// bind its proof to sqlfwd's certificate, the server checks its own. Unless
// sqlfwd presents the server's own certificate, SCRAM-SHA-256-PLUS cannot
// succeed, so the phase takes it out of the server's offer (authServerSASL),
// and a client that then says it supports binding (the gs2 flag "y", which
// the server refuses as a downgrade attack: libpq's default
// channel_binding=prefer sends it on TLS) is told why in sqlfw's words
// rather than the server's "channel binding negotiation error"
// (authClientSASL). A client that needs no binding is untouched. A
// terminating proxy cannot do better without holding the credentials: the
// binding data and the gs2 flag are covered by the client's proof.

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

const (
	// preAuthMaxMessage bounds every client message before authentication
	// ends.
	preAuthMaxMessage = 65535 + 4
	// msgPasswordAfterAuth: PostgreSQL's words for a 'p' after startup
	// (SocketBackend), and what it was.
	msgPasswordAfterAuth = "sqlfw: invalid frontend message type 112: a password message (or SASL or GSS response) after authentication ended"
)

// authPhase is the phase's state.
type authPhase struct {
	// over is set by toClient at the server's first ReadyForQuery, before
	// the client can see it.
	over atomic.Bool
	// lifted is toServer's: the client's framer has the configured limits.
	lifted bool
	// replied is toClient's: the server has answered the startup message.
	replied bool
	// binding is set at the dial: both legs are TLS, with different
	// certificates, so channel binding cannot succeed.
	binding bool
	// stripped is set by toClient when it took SCRAM-SHA-256-PLUS out of
	// the server's offer, before the client can answer it.
	stripped atomic.Bool
	// initial is toServer's: the SASLInitialResponse has been read.
	initial bool
	// clear is set at the dial: the client leg is TLS, the server leg is
	// not, and the upstream is off the host (RefuseClearPassword).
	clear bool
	// asked counts the server's Authentication requests that take an
	// answer, ok is set at AuthenticationOk: both toClient's, before the
	// client can see the message, and signalled on moved (under the
	// session's mu). answered is toServer's: the 'p' messages relayed.
	asked    atomic.Uint32
	ok       atomic.Bool
	moved    sync.Cond
	answered uint32
}

var (
	wantServerAuth       = wantTable(wire.MsgReadyForQuery, wire.MsgBackendKeyData, wire.MsgParameterStatus, wire.MsgCopyInResponse, wire.MsgAuthentication, msgNegotiateProtocolVersion)
	wantServerAuthPoison = wantTable(wire.MsgReadyForQuery, wire.MsgBackendKeyData, wire.MsgParameterStatus, wire.MsgCopyInResponse, wire.MsgAuthentication, msgNegotiateProtocolVersion,
		wire.MsgErrorResponse, wire.MsgParseComplete, wire.MsgCloseComplete)
)

// authBindingImpossible reports whether SCRAM channel binding cannot cross
// this session: client and server legs both TLS, and the certificate sqlfwd
// shows the client is not the server's own.
func authBindingImpossible(client, server net.Conn, clientCfg *tls.Config) bool {
	ct, ok1 := client.(*tls.Conn)
	st, ok2 := server.(*tls.Conn)
	if !ok1 || !ok2 || clientCfg == nil {
		return false
	}
	peer := st.ConnectionState().PeerCertificates
	if len(peer) == 0 {
		return true
	}
	var ours *tls.Certificate
	switch {
	case clientCfg.GetCertificate != nil:
		ours, _ = clientCfg.GetCertificate(&tls.ClientHelloInfo{ServerName: ct.ConnectionState().ServerName})
	case len(clientCfg.Certificates) > 0:
		ours = &clientCfg.Certificates[0]
	}
	return ours == nil || len(ours.Certificate) == 0 || !bytes.Equal(ours.Certificate[0], peer[0].Raw)
}

// authServerWant is toClient's framer table: in the phase, with the
// Authentication requests.
func (s *session) authServerWant(want *[256]bool) *[256]bool {
	if s.auth.over.Load() {
		return want
	}
	if want == wantServerPoison {
		return wantServerAuthPoison
	}
	return wantServerAuth
}

// authRequest is toClient's for an Authentication message, before the
// client can see it: it counts the requests that take an answer and marks
// AuthenticationOk. It reports false when the session must end.
func (s *session) authRequest(fr *wire.Framer, msg, scratch []byte) ([]byte, bool) {
	code, err := wire.AuthCode(msg)
	if err != nil {
		s.ServerMalformed(s.log, "message", err)
		return scratch, false
	}
	s.mu.Lock()
	switch code {
	case wire.AuthOK:
		s.auth.ok.Store(true)
	case wire.AuthSASLFinal: // the server's last SCRAM message; AuthenticationOk follows
	default: // a password, a SASL or GSS round: one answer each
		s.auth.asked.Add(1)
	}
	s.auth.moved.Broadcast()
	s.mu.Unlock()
	if s.auth.binding || s.auth.clear {
		return s.authServerSASL(fr, msg, scratch)
	}
	return scratch, true
}

// authAnswer is toServer's for a 'p' message from the client (msg; syncs
// counts the sync points pending before it in the read). It reports false
// when the session must end: the 'p' came after AuthenticationOk (the
// client has its FATAL 08P01 and nothing of the read was sent), or the
// session closed while it waited for the request it answers.
func (s *session) authAnswer(fr *wire.Framer, msg []byte, syncs *int) bool {
	if !s.auth.ok.Load() && s.auth.answered >= s.auth.asked.Load() {
		// Ahead of the request it answers: what came before goes now, and
		// msg once the request has come.
		before := fr.TakeBefore(msg)
		s.mu.Lock()
		s.outstanding += *syncs
		s.syncsSent += uint64(*syncs)
		s.mu.Unlock()
		*syncs = 0
		if s.writeServer(before) != nil {
			return false
		}
		s.mu.Lock()
		for !s.auth.ok.Load() && s.auth.answered >= s.auth.asked.Load() && !s.closed {
			s.auth.moved.Wait()
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return false
		}
		if !s.auth.ok.Load() {
			s.auth.answered++
			if s.auth.stripped.Load() && !s.auth.initial && !s.authClientSASL(msg) {
				return false
			}
			return s.writeServer(msg) == nil
		}
	}
	if s.auth.ok.Load() {
		s.env.Observer.Count(relay.ProtocolErrors, 1)
		s.log.Warn("closing connection: protocol violation from client: a password message after authentication ended")
		s.Tell(fatal(sqlstateProtocolViolation, msgPasswordAfterAuth))
		return false
	}
	s.auth.answered++ // stays pending: forwarded as it came
	if s.auth.stripped.Load() && !s.auth.initial {
		return s.authClientSASL(msg)
	}
	return true
}

// authServerSASL is toClient's for an Authentication message in the
// phase: an AuthenticationSASL offering SCRAM-SHA-256-PLUS is sent to the
// client without it (appended to scratch after the bytes before it). It
// returns the scratch buffer and false when the session must end.
func (s *session) authServerSASL(fr *wire.Framer, msg, scratch []byte) ([]byte, bool) {
	code, err := wire.AuthCode(msg)
	if err == nil && code == wire.AuthCleartextPassword && s.auth.clear {
		return scratch, s.authServerClear(fr, msg)
	}
	if err != nil || code != wire.AuthSASL {
		return scratch, err == nil // other requests pass untouched
	}
	out, dropped, err := wire.AppendSASLWithout(scratch[:0], msg, wire.SCRAMSHA256Plus)
	if err != nil {
		s.ServerMalformed(s.log, "message", err)
		return scratch, false
	}
	if !dropped {
		return out, true
	}
	s.auth.stripped.Store(true) // before the client can answer
	before := fr.TakeBefore(msg)
	out = append(append(out[:0:0], before...), out...)
	if err := s.WriteClient(out); err != nil {
		return out, false
	}
	s.log.Debug("SCRAM-SHA-256-PLUS not offered to the client: channel binding cannot cross TLS termination")
	return out, true
}

// authServerClear is authServerSASL's for an AuthenticationCleartextPassword
// that must not reach the client (auth.clear): what came before it goes
// out, then FATAL 28000 instead of it; the session ends.
func (s *session) authServerClear(fr *wire.Framer, msg []byte) bool {
	s.env.Observer.Count(relay.ConnRefused, 1)
	s.log.Warn("refusing connection: the server asks for the password in clear, and the server leg is not encrypted while the client's is (set upstream_tls, or upstream_tls.allow_clear_password)", "upstream", s.conn.Upstream.Addr)
	out := append([]byte(nil), fr.TakeBefore(msg)...)
	out = wire.AppendError(out, wire.SeverityFatal, sqlstateInvalidAuthorization,
		"sqlfw: the database server asks for the password in clear, and sqlfw's connection to it is not encrypted: the password is not sent (configure upstream_tls, or upstream_tls.allow_clear_password)", "", "")
	_ = s.WriteClient(out)
	return false
}

// authClientSASL is toServer's for the client's first 'p' after a
// stripped offer: a SASLInitialResponse that asks for channel binding is
// refused with sqlfw's explanation, never forwarded. It returns false when
// the session must end.
func (s *session) authClientSASL(msg []byte) bool {
	s.auth.initial = true
	si, err := wire.ParseSASLInitial(msg)
	if err != nil {
		return true // not SASL's shape: the server judges it
	}
	if si.Binding != 'y' && si.Binding != 'p' && string(si.Mechanism) != wire.SCRAMSHA256Plus {
		return true
	}
	s.env.Observer.Count(relay.ConnRefused, 1)
	s.log.Warn("refusing connection: the client asks for SCRAM channel binding, which cannot cross sqlfw's TLS termination (connect with channel_binding=disable)")
	s.Tell(fatal(sqlstateInvalidAuthorization,
		"sqlfw: SCRAM channel binding cannot pass through sqlfw, which terminates TLS on both legs: the client would bind to sqlfw's certificate, not the database server's; connect with channel_binding=disable (both legs stay encrypted)"))
	return false
}

// authClientFramer is toServer's framer for the client, with the phase's
// limits.
func (s *session) authClientFramer() *wire.Framer {
	return wire.NewFramer(s.Client, s.env.Limits.BufferBytes, preAuthMaxMessage, preAuthMaxMessage)
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
	_ = s.Server.SetReadDeadline(s.authDeadline(false))
}

// authServerRead is toClient's after each read from the server: the first
// reply has come, the end of the phase is due auth_timeout after the start.
func (s *session) authServerRead() {
	if !s.auth.replied {
		s.auth.replied = true
		_ = s.Server.SetReadDeadline(s.authDeadline(true))
	}
}

// authReady is toClient's at every ReadyForQuery: the first ends the
// phase.
func (s *session) authReady() {
	if !s.auth.over.Load() {
		s.auth.over.Store(true) // before the client can see it
		_ = s.Server.SetReadDeadline(time.Time{})
	}
}

// authTimedOut is toClient's when a read from the server failed with err:
// it reports whether the phase's deadline passed, and then has told the
// client (when it is between messages: nothing of a message was relayed
// half) and logged it.
func (s *session) authTimedOut(err error, midMessage bool) bool {
	if !relay.IsTimeout(err) || s.auth.over.Load() {
		return false
	}
	s.env.Observer.Count(relay.ConnRefused, 1)
	what := fmt.Sprintf("sqlfw: the database server did not answer the connection within %v", s.env.Limits.ServerReplyTimeout)
	if s.auth.replied {
		what = fmt.Sprintf("sqlfw: the database server did not complete authentication within %v", s.env.Limits.AuthTimeout)
	}
	s.log.Error("closing connection: "+what[len("sqlfw: "):], "upstream", s.conn.Upstream.Addr)
	if !midMessage {
		s.Tell(fatal(sqlstateConnectionFailure, what))
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
