package pg

// A PostgreSQL session is two loops over one client and one server socket.
//
// toServer reads client messages with a wire/pg Framer that hands over only
// Query, Parse, FunctionCall, Bind, Execute, Close and Sync; everything else
// (Describe, CopyData, passwords...) is passed over untouched, and each
// read's bytes go to the server in one write.
//
// A blocked message is not dropped but replaced by a "poison": a statement
// that fails in PostgreSQL's raw parser (`sqlfw_blocked_<nonce>_<seq>`).
// The server then fails exactly where the blocked statement stood, so the
// client sees PostgreSQL's own semantics after an error: an implicit
// transaction (a pipeline up to Sync, or a multi-statement Query) is rolled
// back, an explicit transaction block enters the failed state (25P02 until
// ROLLBACK; COMMIT answers ROLLBACK), savepoints work, and the server skips
// the rest of an extended-protocol batch until Sync. The poison's syntax
// error comes back in order among the server's replies; toClient recognises
// it by the session's nonce and replaces it with sqlfw's own ErrorResponse
// (SQLSTATE 42501, the rule id). Nothing of the blocked statement reaches
// the server; the server log shows a syntax error naming the poison.
//
// toClient reads server messages and looks only at ReadyForQuery (to track
// the transaction state and the sync points still outstanding),
// BackendKeyData (to route CancelRequests), ParameterStatus (the settings
// the server lexes with, lexstate.go) and, while a poison or a change to the
// verdict memory is pending (prepared.go), ErrorResponse, ParseComplete and
// CloseComplete.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// SQLSTATEs sqlfw answers with.
const (
	sqlstateBlocked           = "42501" // insufficient_privilege
	sqlstateProtocolViolation = "08P01"
	sqlstateConnectionFailure = "08006"
	sqlstateSyntaxError       = "42601" // what a poison Query or Parse provokes
	sqlstateNoStatement       = "26000" // what a poison Bind provokes
	sqlstateNoPortal          = "34000" // what a poison Execute provokes
	sqlstateAdminShutdown     = "57P01" // the firewall is shutting down
	sqlstateCannotConnectNow  = "57P03" // the session's database cannot be judged now
	// invalid_authorization_specification: TLS required, channel binding
	sqlstateInvalidAuthorization = "28000"
)

var (
	wantClient = wantTable(wire.MsgQuery, wire.MsgParse, wire.MsgFunctionCall, wire.MsgSync, wire.MsgBind, wire.MsgClose,
		wire.MsgExecute, wire.MsgDescribe, wire.MsgFlush, wire.MsgTerminate, wire.MsgCopyDone, // Describe to CopyDone only to check their bodies (guard.go)
		wire.MsgPassword) // relayed only as an answer in the authentication phase (auth.go)
	wantClientSkip   = wantAll()
	wantServer       = wantTable(wire.MsgReadyForQuery, wire.MsgBackendKeyData, wire.MsgParameterStatus, wire.MsgCopyInResponse)
	wantServerPoison = wantTable(wire.MsgReadyForQuery, wire.MsgBackendKeyData, wire.MsgParameterStatus, wire.MsgCopyInResponse, wire.MsgErrorResponse, wire.MsgParseComplete, wire.MsgCloseComplete)
)

func wantTable(types ...byte) *[256]bool {
	var t [256]bool
	for _, c := range types {
		t[c] = true
	}
	return &t
}

func wantAll() *[256]bool {
	var t [256]bool
	for i := range t {
		t[i] = true
	}
	return &t
}

type session struct {
	// Legs are the client and the server leg: writes counted, the
	// client's serialised, closed once.
	relay.Legs
	env   *relay.Env
	proto *Protocol
	conn  *relay.Conn
	id    uint64
	sess  engine.Session
	log   *slog.Logger
	// tlsInfo describes the client's and the server's leg (Info);
	// clientCert is the subject of the client's certificate.
	tlsInfo    [2]string
	clientCert string
	// obs hears the session's verdicts once it is registered; meter times
	// its statements and responses.
	obs   relay.SessionObserver
	meter relay.Meter
	// nonce prefixes every poison of this session; the client cannot guess
	// it, so it cannot make sqlfw rewrite one of the server's own errors.
	nonce []byte

	mu sync.Mutex
	// outstanding counts sync points (Query, Sync, FunctionCall) sent to
	// the server whose ReadyForQuery has not come back; the startup phase
	// counts as one.
	outstanding int
	draining    bool
	// drainSet mirrors draining for toClient, and relaying is set by
	// toClient from a read from the server to the write that forwards it:
	// a drain that finds the session idle while a batch is between the two
	// (its ReadyForQuery counted, not yet written) leaves the close to
	// toClient after the write, so the client always gets the batch.
	drainSet, relaying atomic.Bool
	closed             bool
	// poisons sent and not yet answered, oldest first.
	poisons []poison
	// syncsSent and readySeen number the sync points and the
	// ReadyForQuery messages after startup.
	syncsSent, readySeen uint64
	nextPoison           uint64
	started              bool
	havePoison           atomic.Bool
	txStatus             atomic.Uint32
	cancelKey            string
	pv                   protoVersion // toClient's after start (protover.go)

	// begun is when the session started (its startup message read); auth
	// is the authentication phase's state (auth.go); idle is the
	// idle-timeout state (guard.go).
	begun time.Time
	auth  authPhase
	idle  relay.IdleTimer

	// fast is the kernel fast path of the server-to-client direction
	// (fast.go), nil when off.
	fast relay.FastLeg
	// skipping is toServer's: after a blocked Parse, drop client messages
	// until Sync, as the server does after an error.
	skipping bool
	// leaveOpen is set by toServer when it stops after a deny_and_close
	// verdict: toClient delivers the error, then closes the session.
	leaveOpen bool
	// statements and portals the server holds, for re-judging their use
	// (prepared.go)
	memo memo
	// parseCat, parsePath: the catalog in force and the search_path the
	// last Parse was judged with (its record's, prepared.go).
	parseCat  *engine.Catalog
	parsePath string
	// ddlBatch is 1 + the batch of the last DDL let through while its
	// transaction has not ended (0: none): the session's statements are
	// judged with engine.Session.SchemaPending, and its end unsettles the
	// catalog (the DDL is committed, the catalog has not read it).
	ddlBatch atomic.Uint64

	// lex follows the settings the server lexes with (lexstate.go).
	lex lexTracker
	// pathSet: the startup message set search_path; pathLost: the session
	// prepared or called something that changes it in a way not followed
	// (searchpath.go), for the rest of the session.
	pathSet, pathLost bool
	// app is application_name as the server last reported it in a
	// ParameterStatus (toClient's), nil before the first: a SET
	// application_name (pgjdbc's setClientInfo), RESET or DISCARD ALL
	// changes what a rule's applications scope sees, as it changes what
	// the server says the client's application_name is.
	app atomic.Pointer[string]
}

// poison is a blocked message replaced by a failing statement.
type poison struct {
	seq uint64
	// answeredBy is the number of the ReadyForQuery that ends the batch
	// the poison is in; once it has come, the poison is settled (the
	// server may have skipped it after an earlier error).
	answeredBy uint64
	verdict    engine.Verdict
	// closeAfter: the verdict was deny_and_close; the session ends once
	// the client has the error.
	closeAfter bool
}

// newSession is a session of c, before its startup.
func (p *Protocol) newSession(env *relay.Env, c *relay.Conn) *session {
	s := &session{Legs: relay.Legs{Client: c.Client, Obs: env.Observer}, env: env, proto: p, conn: c, id: c.ID, outstanding: 1}
	s.auth.moved.L = &s.mu
	s.meter = env.Meter(s.id)
	s.lex.init()
	return s
}

// Serve runs one session: the encryption phase (SSLRequest, GSSENCRequest,
// TLS), the startup packet, the dial, then the two relay loops, which
// carry the authentication exchange first.
func (p *Protocol) Serve(env *relay.Env, c *relay.Conn) {
	defer c.Client.Close()
	s := p.newSession(env, c)
	s.log = c.Logger(env.Log)
	startup, ok := s.negotiate()
	if !ok {
		return
	}
	release, ok := s.start(startup)
	if !ok {
		return
	}
	defer release()
	defer s.obs.Close()
	s.log.Debug("session started", "application", s.sess.Application)
	relay.RunLoops(s.toServer, s.toClient)
	if s.cancelKey != "" {
		p.cancels.remove(s.cancelKey)
	}
	s.log.Debug("session ended")
}

// negotiate is the encryption phase: it answers SSLRequest (with TLS when
// the database has a certificate) and GSSENCRequest, runs a direct TLS
// handshake, forwards a CancelRequest, and returns the startup message. It
// reports false when the session ends here.
func (s *session) negotiate() (wire.Startup, bool) {
	env, conn, log := s.env, s.Client, s.log
	lim := &env.Limits
	_ = conn.SetReadDeadline(time.Now().Add(lim.StartupTimeout))
	var startup wire.Startup
	buf := make([]byte, 0, 512)
	// A TLS record first is TLS without an SSLRequest (tls.go); otherwise
	// the four bytes read to tell are the startup packet's length.
	var first io.Reader = conn
	var head [4]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return startup, false
	}
	isTLS := false
	if head[0] == tlsRecordByte {
		cfg := env.ClientTLS()
		if cfg == nil {
			env.Observer.Count(relay.ProtocolErrors, 1)
			log.Warn("closing connection: a TLS handshake, but no tls.cert is configured for this database")
			return startup, false
		}
		tc, err := acceptTLS(&peekConn{Conn: conn, head: head[:]}, cfg, lim.StartupTimeout)
		if err != nil || tc.ConnectionState().NegotiatedProtocol != "postgresql" {
			env.Observer.Count(relay.TLSClientFail, 1)
			if err != nil {
				env.Observer.Count(relay.TLSFailCounter(false, err), 1)
			} else {
				env.Observer.Count(relay.TLSClientFailBy+relay.Counter(relay.TLSFailProtocol), 1) // no ALPN postgresql
			}
			env.Observer.Count(relay.ProtocolErrors, 1)
			log.Warn("closing connection: direct TLS negotiation failed (it needs ALPN postgresql)", "err", err)
			return startup, false
		}
		env.Observer.Count(relay.TLSClientOK, 1)
		conn, first, isTLS = tc, tc, true
		_ = conn.SetReadDeadline(time.Now().Add(lim.StartupTimeout))
	} else {
		first = io.MultiReader(bytes.NewReader(head[:]), conn)
	}
	// the session's client is the TLS connection from here on
	defer func() { s.Client, s.log = conn, log }()
	for attempt := 0; ; attempt++ {
		src := first // the bytes read ahead, once; then conn, which TLS may have replaced
		if src == nil {
			src = conn
		}
		first = nil
		st, err := wire.ReadStartup(src, buf)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				env.Observer.Count(relay.ProtocolErrors, 1)
				log.Warn("closing connection: bad startup packet", "err", err)
				if errors.Is(err, wire.ErrFrame) {
					writeFatal(conn, sqlstateProtocolViolation, "sqlfw: invalid startup packet")
				}
			}
			return startup, false
		}
		switch {
		case st.Code == wire.CodeSSLRequest && !isTLS && env.ClientTLS() != nil:
			if _, err := conn.Write([]byte{'S'}); err != nil {
				return startup, false
			}
			tc, err := acceptTLS(conn, env.ClientTLS(), lim.StartupTimeout)
			if err != nil {
				env.Observer.Count(relay.TLSClientFail, 1)
				env.Observer.Count(relay.TLSFailCounter(false, err), 1)
				env.Observer.Count(relay.ProtocolErrors, 1)
				log.Warn("closing connection: TLS handshake failed", "err", err)
				return startup, false
			}
			env.Observer.Count(relay.TLSClientOK, 1)
			conn, isTLS = tc, true
			_ = conn.SetReadDeadline(time.Now().Add(lim.StartupTimeout))
			log = log.With("client_tls", relay.TLSInfo(conn))
			continue
		case st.Code == wire.CodeSSLRequest || st.Code == wire.CodeGSSENCRequest:
			// No TLS configured (or GSS encryption, never): 'N' makes
			// sslmode=prefer clients go on in clear and sslmode=require
			// clients stop with their own clear message.
			if attempt >= 2 || isTLS {
				env.Observer.Count(relay.ProtocolErrors, 1)
				log.Warn("closing connection: too many encryption requests")
				return startup, false
			}
			if _, err := conn.Write([]byte{'N'}); err != nil {
				return startup, false
			}
			continue
		case st.Code == wire.CodeCancelRequest:
			s.proto.forwardCancel(env, st, log)
			return startup, false
		case st.IsStartupMessage():
			startup = st
		default:
			env.Observer.Count(relay.ProtocolErrors, 1)
			log.Warn("closing connection: unsupported protocol", "code", st.Code)
			writeFatal(conn, sqlstateProtocolViolation, fmt.Sprintf("sqlfw: unsupported frontend protocol %d.%d", st.Code>>16, st.Code&0xffff))
			return startup, false
		}
		break
	}
	_ = conn.SetReadDeadline(time.Time{})
	if lim.RequireTLS && !isTLS {
		log.Warn("refusing connection: tls.require and the client did not ask for TLS")
		writeFatal(conn, sqlstateInvalidAuthorization, "sqlfw: this database accepts TLS connections only (set sslmode=require or stronger)")
		return startup, false
	}
	return startup, true
}

// start reads the startup message's parameters and judges them, admits
// the client, dials the server (with TLS when the upstream asks for it),
// forwards the startup message and registers the session. When it reports
// false the client has its error.
func (s *session) start(startup wire.Startup) (release func(), ok bool) {
	env, conn, c := s.env, s.Client, s.conn
	s.begun = time.Now()
	var params [][2]string // judged as the SET statements they amount to (engine/pgsql/startup.go)
	var names []string
	optPath := false
	if err := wire.StartupParams(startup, func(name, value []byte) {
		params = append(params, [2]string{string(name), string(value)})
		names = append(names, string(name))
		switch string(name) {
		case "user":
			s.sess.User = string(value)
		case "database":
			s.sess.Database = string(value)
		case "application_name":
			s.sess.Application = string(value)
		case "search_path":
			s.sess.SearchPath, s.pathSet = string(value), true
		case "options":
			if strings.Contains(strings.ToLower(string(value)), "search_path") {
				optPath = true // -c search_path=...: not read here
			}
		}
	}); err != nil {
		env.Observer.Count(relay.ProtocolErrors, 1)
		s.log.Warn("closing connection: bad startup message", "err", err)
		writeFatal(conn, sqlstateProtocolViolation, "sqlfw: invalid startup packet layout")
		return nil, false
	}
	if s.sess.Database == "" {
		s.sess.Database = s.sess.User
	}
	switch {
	case optPath:
		s.sess.SearchPath = ""
	case !s.pathSet:
		s.sess.SearchPath = engine.SearchPathDefault
	}
	if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil {
		s.sess.ClientAddr = ap.Addr().Unmap()
	}
	s.sess.Process = c.Process // what the policy's process scopes match
	s.log = s.log.With("user", s.sess.User, "db", s.sess.Database)
	if v := env.Engine().JudgeStartup(params, &s.sess); v.Action.Denies() {
		// Parameters in the startup packet (options=-c log_statement=none)
		// take effect before any statement.
		if env.Enforces(v.Mode) {
			s.log.Warn("connection blocked: startup parameters", "rule", v.RuleID, "reason", v.Reason)
			writeFatal(conn, sqlstateBlocked, "sqlfw: startup parameters blocked by rule "+v.RuleID+": "+v.Reason)
			return nil, false
		}
		s.log.Warn("startup parameters match a deny rule (not enforced)", "rule", v.RuleID, "reason", v.Reason)
	}
	release, err := env.Admit() // max_connections
	if err != nil {
		var r *relay.Refusal
		if errors.As(err, &r) {
			s.log.Warn("refusing connection: " + strings.TrimPrefix(r.Msg, "sqlfw: "))
			s.proto.Refuse(conn, r)
		}
		return nil, false
	}
	lim := &env.Limits
	s.idle.On = lim.IdleTimeout > 0 || lim.IdleInTransactionTimeout > 0
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	s.nonce = []byte("sqlfw_blocked_" + hex.EncodeToString(nonce[:]) + "_")

	up := &c.Upstream
	server, err := up.Connect(env, s.log)
	if err != nil {
		writeFatal(conn, sqlstateConnectionFailure, "sqlfw: cannot reach the database server")
		release()
		return nil, false
	}
	if up.TLS != nil && up.Network == "tcp" { // PostgreSQL has no TLS on unix sockets
		tc, err := dialTLS(server, up.TLS, up.TLSMode, lim.ServerReplyTimeout)
		if err != nil {
			server.Close()
			env.Observer.Count(relay.TLSServerFail, 1)
			env.Observer.Count(relay.TLSFailCounter(true, err), 1)
			env.Observer.Count(relay.ConnRefused, 1)
			s.log.Error("cannot reach the database server over TLS", "upstream", up.Addr, "err", err)
			writeFatal(conn, sqlstateConnectionFailure, "sqlfw: cannot reach the database server over TLS (upstream_tls)")
			release()
			return nil, false
		}
		server = tc
		if info := relay.TLSInfo(server); info != "" {
			env.Observer.Count(relay.TLSServerOK, 1)
			s.log = s.log.With("server_tls", info)
		}
	}
	s.Server = server
	// Info is read for every audit record: the legs' TLS is described once
	s.tlsInfo = [2]string{relay.TLSInfo(conn), relay.TLSInfo(server)}
	s.clientCert = relay.PeerName(conn)
	s.auth.binding = authBindingImpossible(conn, server, env.ClientTLS())
	s.auth.clear = up.RefuseClearPassword && relay.TLSInfo(conn) != "" && relay.TLSInfo(server) == ""
	// The relay loops read and write plain sockets with raw system calls,
	// the client's with its receive times (relay.IO); a TLS leg's IO is under its crypto/tls (tls.go).
	s.Client, s.Server = relay.NewIO(conn, true), relay.NewIO(server, false)
	if c.Fast != nil && up.TLS == nil {
		_, plainC := conn.(*net.TCPConn)
		if _, plainS := server.(*net.TCPConn); plainC && plainS {
			if leg, err := c.Fast.Attach(server, conn); err != nil {
				s.log.Warn("fast path not available for this session", "err", err)
			} else {
				s.fast = leg
				s.Client = &fastClient{Conn: s.Client, s: s}
			}
		}
	}
	if _, err := server.Write(s.protoStartup(startup, names)); err != nil {
		s.log.Error("upstream write failed", "err", err)
		s.closeBoth()
		release()
		return nil, false
	}
	obs, no := env.Observer.Open(s, s.log)
	if no != nil {
		server.Close()
		s.proto.Refuse(conn, no)
		release()
		return nil, false
	}
	s.obs = obs
	return release, true
}

// Info describes the session for fwctl connections and the audit trail.
func (s *session) Info() relay.Info {
	return relay.Info{ID: s.id, Database: s.env.Database, Client: s.Client.RemoteAddr().String(), Via: s.conn.Via,
		Process: s.conn.Process, User: s.sess.User, DBName: s.sess.Database, Application: s.sess.Application,
		Since: s.begun, ClientTLS: s.tlsInfo[0], ServerTLS: s.tlsInfo[1], ClientCert: s.clientCert}
}

func writeFatal(conn net.Conn, sqlstate, msg string) {
	relay.WriteLast(conn, fatal(sqlstate, msg))
}

// fatal is a FATAL ErrorResponse.
func fatal(sqlstate, msg string) []byte {
	return wire.AppendError(nil, wire.SeverityFatal, sqlstate, msg, "", "")
}

// forwardCancel sends a CancelRequest to the server that issued its key.
// As PostgreSQL does, it answers nothing either way.
func (p *Protocol) forwardCancel(env *relay.Env, st wire.Startup, log *slog.Logger) {
	env.Observer.Count(relay.CancelRequests, 1)
	key, err := wire.CancelKey(st)
	if err != nil {
		log.Warn("bad cancel request", "err", err)
		return
	}
	up, ok := p.cancels.lookup(key)
	if !ok {
		log.Info("cancel request for an unknown backend key")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), env.Limits.ConnectTimeout)
	c, err := env.Dial(ctx, up.net, up.addr)
	cancel()
	if err != nil {
		log.Warn("cancel request: cannot reach the database server", "upstream", up.addr, "err", err)
		return
	}
	defer c.Close()
	if _, err := c.Write(st.Raw); err != nil {
		log.Warn("cancel request: write failed", "err", err)
		return
	}
	// Wait for the server to close, so the cancel has been read before
	// the client's next step.
	_ = c.SetReadDeadline(time.Now().Add(env.Limits.ConnectTimeout))
	var b [1]byte
	_, _ = c.Read(b[:])
}

// Close closes both connections now.
func (s *session) Close() { s.closeBoth() }

// Drain closes the session now if it is idle, or when it next becomes idle.
func (s *session) Drain() { s.drain() }

func (s *session) closeBoth() { s.CloseBoth(s.markClosed) }

// markClosed is closeBoth's, before the legs close: nothing waits for the
// authentication phase any more, and the fast path lets go.
func (s *session) markClosed() {
	s.mu.Lock()
	s.closed = true
	s.auth.moved.Broadcast()
	s.mu.Unlock()
	if s.fast != nil {
		s.fast.Close()
	}
}

// drain closes the session now if it is idle, or when it next becomes idle.
func (s *session) drain() {
	if s.fast != nil {
		s.fastHalt() // the kernel's ReadyForQuery counts
	}
	s.mu.Lock()
	s.draining = true
	idle := s.outstanding == 0 && byte(s.txStatus.Load()) == wire.TxIdle
	s.mu.Unlock()
	// Stored, then relaying loaded, against toClient's store of relaying,
	// then load of drainSet: one of the two sees the other's store.
	s.drainSet.Store(true)
	if idle && !s.relaying.Load() {
		s.closeBoth()
	}
}

// drainedIdle is toClient's after a write: a drain came while the batch
// was in flight and the session is now idle.
func (s *session) drainedIdle() bool {
	if !s.drainSet.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outstanding == 0 && byte(s.txStatus.Load()) == wire.TxIdle
}

// toServer relays client messages to the server, judging each statement.
func (s *session) toServer() {
	defer func() {
		if !s.leaveOpen {
			s.closeBoth()
		}
	}()
	defer s.meter.HoldAbort() // timing
	// Until the server's first ReadyForQuery the client may send only
	// what PostgreSQL accepts before authentication (auth.go).
	fr := s.authClientFramer()
	fr.SetTypes(wire.FrontendTypes)
	fr.SetBudget(s.env.Budget)
	defer fr.Close()
	var scratch []byte
	for {
		s.meter.HoldWait() // timing
		if err := fr.Fill(); err != nil {
			switch {
			case s.idle.On && relay.IsTimeout(err):
				if !s.idleExpired() {
					continue // not idle for long enough: read on
				}
			case errors.Is(err, io.EOF):
				if s.halfClose() {
					return
				}
			case errors.Is(err, wire.ErrBudget):
				s.outOfMemory(err)
				return
			case !errors.Is(err, net.ErrClosed):
				s.log.Debug("client read ended", "err", err)
			}
			return
		}
		s.authClientRead(fr)
		if s.idle.On {
			s.idle.Disarm(s.Client)
		}
		s.meter.HoldBegin(relay.Arrived(s.Client)) // timing
		syncs := 0
		for {
			want := wantClient
			if s.skipping {
				want = wantClientSkip
			}
			msg, err := fr.Next(want)
			if err != nil {
				s.protocolError(err)
				return
			}
			if msg == nil {
				break
			}
			typ := msg[0]
			if typ == wire.MsgPassword {
				if !s.authAnswer(fr, msg, &syncs) {
					return
				}
				continue
			}
			if !s.skipping || typ == wire.MsgSync {
				s.memoTrack(typ) // prepared.go: a Query the server may skip
			}
			if s.skipping {
				if typ == wire.MsgSync {
					s.skipping = false
					syncs++
					continue // the Sync itself goes to the server
				}
				// dropped, as the server would skip it
				if err := s.writeServer(fr.TakeBefore(msg)); err != nil {
					return
				}
				continue
			}
			var v engine.Verdict
			var blocked bool
			batch := s.syncsSent + uint64(syncs) // sync points sent before this message
			switch typ {
			case wire.MsgSync:
				if err := wire.CheckBody(msg); err != nil {
					s.protocolError(err)
					return
				}
				syncs++
				continue
			case wire.MsgDescribe, wire.MsgFlush, wire.MsgTerminate, wire.MsgCopyDone:
				if err := wire.CheckBody(msg); err != nil {
					s.protocolError(err)
					return
				}
				continue
			case wire.MsgClose:
				if err := s.memoClose(msg, batch); err != nil {
					s.protocolError(err)
					return
				}
				continue
			case wire.MsgBind, wire.MsgExecute:
				if typ == wire.MsgExecute {
					if err := wire.CheckBody(msg); err != nil {
						s.protocolError(err)
						return
					}
				}
				s.lex.sent(s.syncsSent + uint64(syncs)) // planning may run functions
				var known bool
				if typ == wire.MsgBind {
					v, known, blocked, err = s.memoBind(msg, batch)
				} else {
					v, known, blocked, err = s.memoExecute(msg, batch)
				}
				if err != nil {
					s.protocolError(err)
					return
				}
				if !known {
					continue
				}
			default: // Query, Parse, FunctionCall
				var eng *engine.Engine
				v, eng, err = s.judge(msg)
				if err != nil {
					s.protocolError(err)
					return
				}
				settled := typ == wire.MsgQuery && v.ChangesPath && syncs == 0 && s.settled()
				if typ != wire.MsgParse {
					s.lex.sent(s.syncsSent + uint64(syncs))
					syncs++
				}
				if typ == wire.MsgParse || (typ == wire.MsgQuery && (v.SessionOps || v.Action.Denies() || v.ParseError)) {
					v, blocked = s.memoJudged(msg, v, eng, batch)
				} else {
					blocked = s.enforced(&v)
				}
				if v.ChangesPath || typ == wire.MsgFunctionCall {
					s.followPath(msg, v, eng, blocked, settled)
				}
			}
			if v.ChangesSchema && !blocked {
				// until its transaction ends (memoReady), the catalog
				// cannot see what it does
				s.ddlBatch.Store(batch + 1)
			}
			s.meter.HoldStatement() // timing
			if !blocked {
				continue // stays pending: forwarded as it came
			}
			// Blocked: send what came before it, then the poison in its
			// place. A poison Query takes the place of a Query or a
			// FunctionCall (one ReadyForQuery each); a poison Parse keeps
			// the statement name, so the name stays undefined on the server.
			before := fr.TakeBefore(msg)
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				return
			}
			s.nextPoison++
			seq := s.nextPoison
			answeredBy := s.syncsSent + uint64(syncs)
			if typ == wire.MsgParse || typ == wire.MsgBind || typ == wire.MsgExecute {
				answeredBy++ // by the Sync that ends this batch
			}
			hostile := v.Action == engine.ActionDenyClose
			s.poisons = append(s.poisons, poison{seq: seq, answeredBy: answeredBy, verdict: v, closeAfter: hostile})
			s.havePoison.Store(true)
			s.outstanding += syncs
			s.syncsSent += uint64(syncs)
			s.mu.Unlock()
			syncs = 0
			poisonSQL := string(strconv.AppendUint(append([]byte(nil), s.nonce...), seq, 10))
			switch typ {
			case wire.MsgParse:
				name, _, _ := wire.ParseFields(msg)
				scratch = wire.AppendParse(append(scratch[:0], before...), string(name), poisonSQL)
				s.skipping = true
			case wire.MsgBind:
				// binding a statement that does not exist fails before the
				// portal is touched
				scratch = wire.AppendBind(append(scratch[:0], before...), "", poisonSQL)
				s.skipping = true
			case wire.MsgExecute:
				// executing a portal that does not exist fails (34000)
				scratch = wire.AppendExecute(append(scratch[:0], before...), poisonSQL)
				s.skipping = true
			default:
				scratch = wire.AppendQuery(append(scratch[:0], before...), poisonSQL)
			}
			if err := s.writeServer(scratch); err != nil {
				return
			}
			if hostile {
				// Read nothing more from this client. toClient closes the
				// session once the blocked error is delivered; the deadline
				// bounds the wait for the server's answer to the poison.
				s.log.Warn("closing the session after a deny_and_close rule", "rule", v.RuleID)
				_ = s.Server.SetReadDeadline(time.Now().Add(10 * time.Second))
				s.leaveOpen = true
				return
			}
		}
		out := fr.Take()
		if syncs > 0 {
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				return
			}
			s.outstanding += syncs
			s.syncsSent += uint64(syncs)
			s.mu.Unlock()
		}
		if err := s.writeServer(out); err != nil {
			return
		}
		s.meter.HoldEnd() // timing
	}
}

func (s *session) writeServer(b []byte) error {
	if s.fast != nil && len(b) > 0 && (s.havePoison.Load() || s.memo.active.Load()) {
		s.fastHalt() // the replies to b are for toClient to see
	}
	return s.WriteServer(b)
}

// judge asks the engine about a Query, Parse or FunctionCall message and
// counts and logs the verdict.
func (s *session) judge(msg []byte) (engine.Verdict, *engine.Engine, error) {
	var v engine.Verdict
	eng := s.env.Engine()
	j := relay.StartJudging(eng, s.meter, &s.sess)
	s.sess.Lex = s.lex.state()
	s.sess.SchemaPending = s.ddlBatch.Load() != 0
	s.followApp()
	switch msg[0] {
	case wire.MsgQuery:
		sql, err := wire.QueryText(msg)
		if err != nil {
			return v, eng, err
		}
		v = eng.Judge(sql, &s.sess)
	case wire.MsgParse:
		_, sql, err := wire.ParseFields(msg)
		if err != nil {
			return v, eng, err
		}
		// what the statement's record is judged with (prepared.go)
		s.parseCat, s.parsePath = eng.Catalog(), s.sess.SearchPath
		v = eng.Judge(sql, &s.sess)
	case wire.MsgFunctionCall:
		oid, err := wire.FunctionCallOID(msg)
		if err != nil {
			return v, eng, err
		}
		v = eng.JudgeFastpath(oid, &s.sess)
	}
	j.End(s.meter, s.obs, &v, msg[0])
	return v, eng, nil
}

// appStatus records the application_name of a ParameterStatus (toClient).
// The string is made only when the name changed.
func (s *session) appStatus(msg []byte) {
	name, value, err := wire.ParameterStatusFields(msg)
	if err != nil || string(name) != "application_name" {
		return
	}
	if p := s.app.Load(); p != nil && *p == string(value) {
		return
	}
	v := string(value)
	s.app.Store(&v)
}

// followApp gives the session the application_name the server reported
// last (toServer, before judging).
func (s *session) followApp() {
	if p := s.app.Load(); p != nil {
		s.sess.Application = *p
	}
}

// protocolError closes the session after a malformed client message, with a
// FATAL error the client can read (as PostgreSQL does).
func (s *session) protocolError(err error) {
	s.ClientViolation(s.log, err)
	s.Tell(fatal(sqlstateProtocolViolation, "sqlfw: invalid frontend message: "+err.Error()))
}

// toClient relays server messages to the client.
func (s *session) toClient() {
	defer s.closeBoth()
	var src io.Reader = s.Server
	var fast *fastReader
	if s.fast != nil {
		fast = &fastReader{s: s}
		src = fast
	}
	fr := wire.NewFramer(src, s.env.Limits.BufferBytes, s.env.Limits.MaxMessageBytes, 0)
	var scratch []byte
	// The authentication phase is bounded (auth.go): the first reply, then
	// the end of authentication.
	s.authServerStart()
	for {
		if err := fr.Fill(); err != nil {
			switch {
			case s.authTimedOut(err, fr.MidMessage()):
			case !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
				s.log.Debug("server read ended", "err", err)
			}
			return
		}
		s.relaying.Store(true)
		s.authServerRead()
		s.meter.ResponseArrived() // timing
		closeAfter := false
		for {
			want := wantServer
			if s.havePoison.Load() || s.memo.active.Load() {
				want = wantServerPoison
			}
			want = s.authServerWant(want)
			msg, err := fr.Next(want)
			if err != nil {
				s.ServerMalformed(s.log, "message", err)
				return
			}
			if msg == nil {
				break
			}
			if !s.pv.settled {
				var ok bool
				if scratch, ok = s.protoServer(fr, msg, scratch); !ok {
					return
				}
			}
			switch msg[0] {
			case wire.MsgParameterStatus:
				s.lex.parameterStatus(msg)
				s.appStatus(msg)
			case wire.MsgReadyForQuery:
				st, err := wire.ReadyStatus(msg)
				if err != nil {
					s.log.Error("closing connection: malformed message from the server", "err", err)
					return
				}
				s.lex.readyForQuery()
				s.txStatus.Store(uint32(st))
				s.authReady()
				s.meter.ResponseReady() // timing
				if s.ready(st) {
					closeAfter = true
				}
				if s.idle.On {
					s.armIdle(st)
				}
				s.memoReady(st)
			case wire.MsgParseComplete, wire.MsgCloseComplete:
				s.memoComplete(msg[0])
			case wire.MsgCopyInResponse:
				s.memoCopyIn()
			case wire.MsgAuthentication:
				var ok bool
				if scratch, ok = s.authRequest(fr, msg, scratch); !ok {
					return
				}
			case wire.MsgBackendKeyData:
				if s.cancelKey == "" {
					s.cancelKey = string(msg[wire.HeaderLen:])
					s.proto.cancels.add(s.cancelKey, upstream{s.conn.Upstream.Network, s.conn.Upstream.Addr})
				}
			case wire.MsgErrorResponse:
				s.memoError()
				p, ok := s.matchPoison(msg)
				if !ok {
					continue
				}
				before := fr.TakeBefore(msg)
				scratch = append(scratch[:0], before...)
				scratch = s.appendBlocked(scratch, p.verdict, p.closeAfter)
				if err := s.WriteClient(scratch); err != nil {
					return
				}
				if p.closeAfter {
					return
				}
			}
		}
		if err := s.WriteClient(fr.Take()); err != nil {
			return
		}
		s.meter.ResponseForwarded() // timing
		s.relaying.Store(false)
		if closeAfter || s.drainedIdle() {
			s.log.Info("session closed by drain")
			return
		}
		if fast != nil {
			s.fastResume(fast, fr)
		}
	}
}

// ready records a ReadyForQuery and reports whether a draining session is
// now idle and must close.
func (s *session) ready(status byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outstanding > 0 {
		s.outstanding--
	}
	if s.started {
		s.readySeen++
	} else {
		s.started = true // the ReadyForQuery that ends the startup phase
	}
	for len(s.poisons) > 0 && s.poisons[0].answeredBy <= s.readySeen {
		s.poisons = s.poisons[1:]
	}
	if len(s.poisons) == 0 {
		s.havePoison.Store(false)
	}
	return s.draining && s.outstanding == 0 && status == wire.TxIdle
}

// matchPoison reports whether an ErrorResponse is the server's answer to
// one of our poisons, and removes that poison (and any the server skipped
// before it).
func (s *session) matchPoison(msg []byte) (poison, bool) {
	// a poison Query or Parse fails to parse (42601); a poison Bind names
	// a statement that does not exist (26000), a poison Execute a portal
	// (34000)
	if c := wire.ErrorField(msg, 'C'); !bytes.Equal(c, []byte(sqlstateSyntaxError)) && !bytes.Equal(c, []byte(sqlstateNoStatement)) && !bytes.Equal(c, []byte(sqlstateNoPortal)) {
		return poison{}, false
	}
	m := wire.ErrorField(msg, 'M')
	i := bytes.Index(m, s.nonce)
	if i < 0 {
		return poison{}, false
	}
	digits := m[i+len(s.nonce):]
	n := 0
	for n < len(digits) && digits[n] >= '0' && digits[n] <= '9' {
		n++
	}
	seq, err := strconv.ParseUint(string(digits[:n]), 10, 64)
	if err != nil {
		return poison{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.poisons {
		if p.seq == seq {
			s.poisons = s.poisons[i+1:]
			if len(s.poisons) == 0 {
				s.havePoison.Store(false)
			}
			return p, true
		}
	}
	return poison{}, false
}

// appendBlocked appends the ErrorResponse a client gets for a blocked
// message. It names the rule and never the statement's text.
func (s *session) appendBlocked(dst []byte, v engine.Verdict, closing bool) []byte {
	rule := v.RuleID
	if rule == "" {
		rule = "unnamed"
	}
	msg := "sqlfw: statement blocked by rule " + rule
	if v.Statements > 1 {
		msg += fmt.Sprintf(" (none of the %d statements in this query was run)", v.Statements)
	}
	severity := wire.SeverityError
	if closing {
		// FATAL is how a server says the session ends; clients report it
		// as the statement's error and expect the connection to close.
		severity = wire.SeverityFatal
		msg += "; closing the connection"
	}
	detail := v.Reason
	hint := "The statement did not reach the database. If it should be allowed, ask the operator to review rule " + rule + " of the sqlfw policy (fwctl check shows the verdict)."
	return wire.AppendError(dst, severity, sqlstateBlocked, msg, detail, hint)
}
