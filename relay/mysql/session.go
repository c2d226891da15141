package mysql

// A MySQL session is two loops over one client and one server socket, after
// a start that both legs share (start: the greeting, the handshake
// response).
//
// toServer reads the client's packets whole with a wire/mysql Framer and
// decides each command before any of it is sent: a command that passes
// stays pending in the framer and goes to the server with the rest of the
// read in one write; a blocked one is cut out (the bytes before it are
// sent) and answered with an ERR. Every command the server will answer is
// queued, in order, before it is written; so is every ERR sqlfw answers
// while the server still owes answers to earlier commands, so that the
// client reads the replies in the order it sent the commands.
//
// toClient reads the server's packets with a Framer that hands over only
// what the current command's Response wants (in a result set: the 0xfe and
// 0xff packets that may end it), feeds them to the Response and forwards
// everything. When a response is complete it settles what the command
// changed (a statement id, the schema, the user, the transaction state),
// writes the response to the client, and then writes the ERR replies queued
// behind it.
//
// Between the loops: the queue and the statement memo under mu; the client
// leg's framing phase (command, authentication rounds, LOCAL INFILE upload)
// in phase, which toClient moves on before the client can see the packet
// that moves it.

import (
	"bytes"
	"crypto/tls"
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
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// Error numbers and SQLSTATEs sqlfw answers with: the server's own for the
// same situation (include/mysqld_error.h), so that clients classify them
// as they would the server's.
const (
	// errBlocked is ER_SPECIFIC_ACCESS_DENIED_ERROR: a statement or
	// command the policy blocks. Clients treat it as a permission error:
	// not retried, the connection kept.
	errBlocked      = 1227
	sqlstateBlocked = "42000"
	// errUnknownStmt is ER_UNKNOWN_STMT_HANDLER: a statement id the
	// client never prepared through sqlfw (or whose prepare was blocked).
	errUnknownStmt = 1243
	// errHandshake is ER_HANDSHAKE_ERROR: a handshake sqlfw cannot relay
	// (TLS where none is configured, compression, a malformed packet, a
	// failed server-leg TLS handshake).
	errHandshake      = 1043
	sqlstateHandshake = "08S01"
	errMalformed      = 1835 // ER_MALFORMED_PACKET
	// errPacketTooLarge is ER_NET_PACKET_TOO_LARGE, what the server
	// answers a packet longer than max_allowed_packet with (before login
	// too, as soon as the header claims it), in its words; it then closes.
	errPacketTooLarge = 1153
	msgPacketTooLarge = "sqlfw: Got a packet bigger than 'max_allowed_packet' bytes"
	// errWrongArguments is ER_WRONG_ARGUMENTS, MariaDB's answer to a
	// COM_STMT_EXECUTE whose parameter block it reads past the end of
	// (insert_params); the connection stays usable.
	errWrongArguments = 1210
	// errUnsupportedPS is ER_UNSUPPORTED_PS, the server's answer to a
	// COM_STMT_PREPARE of PREPARE, EXECUTE or DEALLOCATE PREPARE.
	errUnsupportedPS  = 1295
	msgUnsupportedPS  = "sqlfw: This command is not supported in the prepared statement protocol yet"
	msgWrongArguments = "sqlfw: incorrect arguments to mysqld_stmt_execute: the parameter block does not hold the prepared statement's parameters"
	errOutOfResources = 1041 // ER_OUT_OF_RESOURCES
	errUnknown        = 1105 // ER_UNKNOWN_ERROR: the server cannot be reached
	errConCount       = 1040 // ER_CON_COUNT_ERROR: a relay.Refusal
	sqlstateConCount  = "08004"
	errServerShutdown = 1053 // ER_SERVER_SHUTDOWN
	sqlstateShutdown  = "08S01"
	sqlstateGeneral   = "HY000"
	preAuthMaxPacket  = 64<<10 + 1024 // connection attributes (wire.MaxConnectAttrs) and the rest of a handshake response
	ruleCommand       = "mysql-command"
	reasonCommand     = "a command applications never send (replication, server administration) is not relayed"
	ruleUnknownStmt   = "mysql-statement-id"
	reasonUnknownStmt = "the statement id was not prepared through sqlfw"
	msgUnknownStmt    = "sqlfw: unknown prepared statement handler: it was not prepared through sqlfw, or its prepare was blocked"
	observeQuery      = 'Q'
	observePrepare    = 'P'
	observeExecute    = 'E'
	observeCommand    = 'C'
	phaseCommand      = 0
	phaseAuth         = 1
	phaseInfile       = 2 // + the sequence id the upload starts at
)

var (
	// wantNothing passes every packet over (a LOCAL INFILE upload, which
	// the server asked for: only its empty last packet matters, and the
	// Framer always returns empty packets).
	wantNothing = new([256]bool)
	wantAll     = wire.WantAll
)

// pending is a command the server will answer, or a reply sqlfw owes the
// client, in the order the client sent them.
type pending struct {
	// local: sqlfw answers (reply), the server never saw the command.
	local bool
	cmd   byte
	// seq is the sequence id the answer starts at.
	seq int
	// slot and gen are the statement memo slot of a COM_STMT_PREPARE.
	slot int
	gen  uint32
	// user and schema are what a COM_INIT_DB or COM_CHANGE_USER sets
	// when the server accepts it; schema also a USE's (useSchema).
	user, schema string
	// schemaChange: the command changes the session's database; the
	// commands after it wait for its answer (schemaInFlight).
	schemaChange bool
	// lex: the statement may change the lexing state (lexstate.go);
	// charset is the character set it sets by its text, grant what it
	// leaves NO_AUTO_CREATE_USER at.
	lex     bool
	charset string
	grant   grantMode
	// nameOps: what a COM_QUERY does to SQL-level prepared statements
	// once the server has run it (sqlprepare.go).
	nameOps []nameOp
	// a local reply: its error and whether the session closes after it.
	code       uint16
	sqlstate   string
	msg        string
	closeAfter bool
}

type session struct {
	// Legs are the client and the server leg: writes counted, the
	// client's serialised, closed once.
	relay.Legs
	env   *relay.Env
	conn  *relay.Conn
	id    uint64
	log   *slog.Logger
	obs   relay.SessionObserver
	meter relay.Meter
	begun time.Time
	// caps are the negotiated capabilities (the client's, within what the
	// greeting offered); set before the loops start.
	caps wire.Caps
	// sess is toServer's: what the engine knows of the connection.
	sess engine.Session
	// cfr is the client's framer, made at the start and used by toServer;
	// cfrShift is what it adds to the client's ids until authentication
	// ends (tls.go).
	cfr      *wire.Framer
	cfrShift int
	sfr      *wire.Framer
	// ccomp and scomp are the legs' compression when the session is
	// compressed (compress.go; nil otherwise); regionCmd is toServer's:
	// what it writes next to the server begins with a command.
	ccomp, scomp *compConn
	regionCmd    bool

	// phase is the client leg's framing: phaseCommand, phaseAuth, or
	// phaseInfile plus the upload's first sequence id.
	phase atomic.Uint32
	// loginChanged: user, schema or the lexing state (under mu) changed
	// since toServer last copied them into sess.
	loginChanged atomic.Bool
	// lexInFlight counts the commands sent that may change the lexing
	// state and are not answered yet.
	lexInFlight atomic.Int32
	// schemaInFlight counts the commands sent that change the session's
	// database and are not answered yet: a command read meanwhile waits
	// (on authEnded) so that it is judged in the database it runs in.
	schemaInFlight atomic.Int32
	// authEnded (on mu) is signalled when an authentication exchange ends
	// (the phase leaves phaseAuth), when schemaInFlight drops, or when the
	// session closes: toServer waits on it with a command the client sent
	// before.
	authEnded sync.Cond

	mu sync.Mutex
	// queue[head:] is what is owed to the client, oldest first.
	queue []pending
	head  int
	// reply is the buffer local replies are built in.
	reply []byte
	// fieldSQL is toServer's buffer for the statements a COM_FIELD_LIST
	// or COM_REFRESH amounts to.
	fieldSQL []byte
	// user, schema and app are the login as the server last accepted it.
	user, schema, app string
	// tlsInfo describes the client's and the server's leg, clientCert
	// the client's certificate (Info).
	tlsInfo          [2]string
	clientCert       string
	inTx             bool
	draining, closed bool
	lex              lexState
	// reading: toServer has read from the client and not yet written what
	// it read; a drain then leaves the close to it.
	reading bool
	memo    memo

	idle relay.IdleTimer
	// leaveOpen is set by toServer when it stops after a deny_and_close
	// verdict whose reply is queued: toClient closes the session once the
	// client has it.
	leaveOpen bool
	// authPlugin is the authentication plugin in use (clearpw.go): the
	// greeting's, the client's, the last AuthSwitchRequest's.
	authPlugin []byte
}

// Serve runs one session: the dial, the greeting, the handshake response
// and admission, then the two relay loops, which carry the authentication
// exchange first.
func (p *Protocol) Serve(env *relay.Env, c *relay.Conn) {
	defer c.Client.Close()
	s := &session{Legs: relay.Legs{Client: c.Client, Obs: env.Observer}, env: env, conn: c, id: c.ID, begun: time.Now()}
	s.meter = env.Meter(s.id)
	s.log = c.Logger(env.Log)
	s.memo.last = -1
	s.authEnded.L = &s.mu
	release, ok := s.start()
	if !ok {
		if s.Server != nil {
			s.Server.Close()
		}
		for _, fr := range []*wire.Framer{s.cfr, s.sfr} {
			if fr != nil {
				fr.Close()
			}
		}
		return
	}
	defer release()
	defer s.obs.Close()
	defer s.cfr.Close()
	defer s.sfr.Close()
	if s.ccomp != nil {
		defer s.ccomp.release()
		defer s.scomp.release()
	}
	s.log.Debug("session started", "application", s.app)
	relay.RunLoops(s.toServer, s.toClient)
	s.log.Debug("session ended")
}

// readPacket reads fr's next packet whole (headers included), wanting any.
func readPacket(fr *wire.Framer) ([]byte, error) {
	for {
		fr.Expect(wire.SeqAny)
		m, err := fr.Next(wantAll)
		if err != nil || m != nil {
			return m, err
		}
		if err := fr.Fill(); err != nil {
			return nil, err
		}
	}
}

// start dials the server, relays its greeting with the capabilities the
// relay cannot follow stripped, reads the client's handshake response,
// admits the client against the connection limits (only then: a health
// probe that closes after the greeting holds no slot), forwards the
// response and registers the session. When it reports false the client
// has its error; otherwise release must be called when the session ends.
func (s *session) start() (release func(), ok bool) {
	env, c, lim := s.env, s.conn, &s.env.Limits
	up := &c.Upstream
	server, err := up.Connect(env, s.log)
	if err != nil {
		writeErr(s.Client, 0, errUnknown, sqlstateGeneral, "sqlfw: cannot reach the database server")
		return nil, false
	}
	s.Server = server

	// The greeting, read up to its end only: TLS may follow it.
	if lim.ServerReplyTimeout > 0 {
		_ = server.SetReadDeadline(time.Now().Add(lim.ServerReplyTimeout))
	}
	m, err := readHandshakePacket(server, false)
	if err != nil {
		env.Observer.Count(relay.ConnRefused, 1)
		s.log.Error("the database server sent no greeting", "upstream", up.Addr, "err", err)
		writeErr(s.Client, 0, errUnknown, sqlstateGeneral, "sqlfw: the database server did not greet")
		return nil, false
	}
	p := m[wire.HeaderLen:]
	if len(p) > 0 && p[0] == wire.HeaderERR {
		// the server refuses the connection (too many, host blocked)
		env.Observer.Count(relay.ConnRefused, 1)
		e, _ := wire.ParseErr(p)
		s.log.Warn("the database server refused the connection", "code", e.Code)
		_, _ = s.Client.Write(m)
		return nil, false
	}
	h, err := wire.ParseHandshake(p)
	if err != nil {
		env.Observer.Count(relay.ProtocolErrors, 1)
		s.log.Error("closing connection: malformed greeting from the server", "err", err)
		writeErr(s.Client, 0, errHandshake, sqlstateHandshake, "sqlfw: malformed greeting from the database server")
		return nil, false
	}
	serverCaps := h.Strip(wire.DefaultStrip) // in place, in m
	s.authPlugin = append(s.authPlugin[:0], h.AuthPlugin...)
	// CLIENT_SSL is the client leg's: sqlfw's own certificate (tls.go).
	cliTLS := env.ClientTLS()
	if cliTLS != nil {
		h.SetCaps(h.Caps | wire.CapSSL)
	}
	offered := h.Caps
	_ = server.SetReadDeadline(time.Time{})
	if _, err := s.Client.Write(m); err != nil {
		return nil, false
	}

	// The client's handshake response, after TLS when it asks for it.
	if lim.StartupTimeout > 0 {
		_ = s.Client.SetReadDeadline(time.Now().Add(lim.StartupTimeout))
	}
	m, r, ok := s.readResponse(cliTLS, offered)
	if !ok {
		return nil, false
	}
	_ = s.Client.SetReadDeadline(time.Time{})
	seq := wire.LastSeq(m) + 1
	if lim.RequireTLS && !s.clientTLS() {
		s.log.Warn("refusing connection: tls.require and the client did not ask for TLS")
		writeErr(s.Client, seq, errSecureTransport, sqlstateGeneral, msgSecureTransport)
		return nil, false
	}
	if r.Caps.Has(wire.CapZstdCompression) || r.Caps.Has(wire.CapCompress) && !offered.Has(wire.CapCompress) {
		// zstd is never offered (DefaultStrip), zlib only when the server
		// offers it: a client asking for either anyway is refused
		s.log.Warn("refusing connection: the client asks for a compression the greeting did not offer")
		writeErr(s.Client, seq, errHandshake, sqlstateHandshake, "sqlfw: this compression is not offered; connect with zlib compression (CLIENT_COMPRESS) or none")
		return nil, false
	}
	s.caps = r.Caps & offered
	if s.caps.Has(wire.CapPluginAuth) && r.AuthPlugin == nil {
		// a client that claims CLIENT_PLUGIN_AUTH and names no plugin:
		// the server goes on without the flag ("Some clients lie",
		// parse_client_handshake_packet), and so does COM_CHANGE_USER
		s.caps &^= wire.CapPluginAuth
	}
	if why := ambiguousResponse(s.caps); why != "" {
		env.Observer.Count(relay.ProtocolErrors, 1)
		s.log.Warn("closing connection: a handshake response the server may read otherwise than sqlfw: " + why)
		writeErr(s.Client, seq, errHandshake, sqlstateHandshake, "sqlfw: malformed handshake response")
		return nil, false
	}
	s.user, s.schema = string(wire.LoginUser(r.User)), schemaName(r.Database)
	for it := wire.NewAttrs(r.ConnectAttrs); it.Next(); {
		if string(it.Key) == "program_name" {
			s.app = string(it.Value)
		}
	}
	s.lex.mariadb, s.lex.greeting = h.MariaDB, h.Charset
	// Executable comments are read as this server reads them (engine/mysql
	// lex.go serverRuns).
	s.sess.Lex.ServerVersion, s.sess.Lex.MariaDB = versionID(h.Version()), h.MariaDB || bytes.Contains(h.Version(), []byte("MariaDB"))
	s.lex.charset = s.lex.clientCharset(uint16(r.Charset))
	s.lex.login = s.lex.charset
	s.sess.User, s.sess.Database, s.sess.Application = s.user, s.schema, s.app
	s.sess.Lex.ClientEncoding = s.lex.charset
	if ap, err := netip.ParseAddrPort(s.Client.RemoteAddr().String()); err == nil {
		s.sess.ClientAddr = ap.Addr().Unmap()
	}
	s.sess.Process = c.Process
	s.log = s.log.With("user", s.user, "db", s.schema)

	// Admission: a client that got this far is a session.
	rel, err := env.Admit() // max_connections
	if err != nil {
		var rf *relay.Refusal
		if errors.As(err, &rf) {
			s.log.Warn("refusing connection: " + strings.TrimPrefix(rf.Msg, "sqlfw: "))
			code, state := refusalCode(rf)
			writeErr(s.Client, seq, code, state, rf.Msg)
		}
		return nil, false
	}
	defer func() {
		if !ok {
			rel()
		}
	}()

	// The server leg: sqlfw's own SSL request and handshake when
	// upstream_tls asks for them, then the client's response.
	srvSeq := 1 // after the greeting; the response is one packet (preAuthMaxPacket)
	if up.TLS != nil && up.Network == "tcp" {
		if !s.upstreamTLS(serverCaps, m, seq) {
			return nil, false
		}
		if s.serverTLS() {
			srvSeq = 2 // after sqlfw's SSL request
		}
	}
	setSSLCap(m, s.serverTLS())
	cliSeq := wire.Seq(m)
	m[3] = byte(srvSeq)
	s.tlsInfo = [2]string{relay.TLSInfo(s.Client), relay.TLSInfo(s.Server)}
	if len(r.AuthPlugin) > 0 {
		s.authPlugin = append(s.authPlugin[:0], r.AuthPlugin...)
	}
	if clearPlugin(s.authPlugin) && len(r.AuthResponse) > 0 && s.clearRefused() {
		s.refuseClear(s.authPlugin)
		writeErr(s.Client, seq, errAccessDenied, sqlstateAccessDenied, msgClearPassword)
		return nil, false
	}

	// The relay loops read and write plain sockets with raw system calls,
	// the client's with its receive times (relay.IO); a TLS leg's IO is under its crypto/tls (tls.go).
	s.Client, s.Server = relay.NewIO(s.Client, true), relay.NewIO(s.Server, false)
	if compressed(s.caps) {
		// inflated and compressed under the framers after the login
		// (compress.go)
		var b wire.Budget
		if env.Budget != nil {
			b = env.Budget
		}
		s.ccomp, s.scomp = newCompConn(s.Client, b), newCompConn(s.Server, b)
		s.Client, s.Server = s.ccomp, s.scomp
	}
	s.cfr = wire.NewFramer(s.Client, lim.BufferBytes, preAuthMaxPacket, 0)
	s.cfr.SetBudget(env.Budget)
	s.sfr = wire.NewFramer(s.Server, lim.BufferBytes, 0, 0)
	s.sfr.SetWantLong(false)
	s.sfr.SetBudget(env.Budget)
	// Until the end of authentication each leg keeps its own numbering:
	// sqlfw's SSL request moved one of them on (auth rounds continue the
	// handshake's ids).
	if d := srvSeq - cliSeq; d != 0 {
		s.cfr.Renumber(d)
		s.cfrShift = d
		s.sfr.Renumber(-d)
	}
	obs, ok := env.Observer.Open(s, s.log)
	if !ok {
		writeErr(s.Client, seq, errServerShutdown, sqlstateShutdown, "sqlfw: the firewall is shutting down")
		return nil, false
	}
	s.obs = obs
	s.phase.Store(phaseAuth)
	s.idle.On = lim.IdleTimeout > 0 || lim.IdleInTransactionTimeout > 0
	if lim.AuthTimeout > 0 {
		_ = s.Server.SetReadDeadline(s.begun.Add(lim.AuthTimeout))
	}
	if err := s.writeServer(m); err != nil {
		s.obs.Close()
		return nil, false
	}
	return rel, true
}

// readResponse reads the client's handshake response, running the TLS
// handshake first when the client sends an SSL request. When it reports
// false the client has its error (where the protocol allows one) and the
// log its line.
func (s *session) readResponse(cliTLS *tls.Config, offered wire.Caps) ([]byte, wire.HandshakeResponse, bool) {
	env := s.env
	fail := func(seq int, msg, logMsg string, err error) ([]byte, wire.HandshakeResponse, bool) {
		env.Observer.Count(relay.ProtocolErrors, 1)
		s.log.Warn("closing connection: "+logMsg, "err", err)
		if seq >= 0 {
			writeErr(s.Client, seq, errHandshake, sqlstateHandshake, msg)
		}
		return nil, wire.HandshakeResponse{}, false
	}
	m, err := readHandshakePacket(s.Client, true)
	var big *packetTooLarge
	switch {
	case errors.As(err, &big):
		return s.tooLarge(big)
	case errors.Is(err, errTLSRecord):
		// MySQL has no TLS without an SSL request first
		env.Observer.Count(relay.TLSClientFail, 1)
		env.Observer.Count(relay.TLSClientFailBy+relay.Counter(relay.TLSFailProtocol), 1)
		return fail(-1, "", "a TLS handshake where the handshake response belongs (MySQL clients send an SSL request first)", nil)
	case errors.Is(err, io.EOF):
		return nil, wire.HandshakeResponse{}, false // a probe: connected, read the greeting, closed
	case err != nil:
		return fail(-1, "", "no handshake response", err)
	}
	seq := wire.LastSeq(m) + 1
	r, err := wire.ParseHandshakeResponseFor(m[wire.HeaderLen:], offered)
	if err != nil {
		return fail(seq, "sqlfw: malformed handshake response", "malformed handshake response", err)
	}
	if r.SSLRequest {
		if cliTLS == nil {
			return fail(seq, "sqlfw: this database offers no TLS through sqlfw (no tls.cert configured); connect without TLS", "the client asks for TLS, and no tls.cert is configured for this database", nil)
		}
		tc, err := relay.AcceptTLS(s.Client, cliTLS, s.env.Limits.StartupTimeout)
		if err != nil {
			env.Observer.Count(relay.TLSClientFail, 1)
			env.Observer.Count(relay.TLSFailCounter(false, err), 1)
			env.Observer.Count(relay.ProtocolErrors, 1)
			s.log.Warn("closing connection: TLS handshake failed", "err", err)
			var rh tls.RecordHeaderError
			if errors.As(err, &rh) {
				// plaintext where TLS belongs: a client that did not
				// mean it can read an ERR in clear
				writeErr(s.Client, seq, errHandshake, sqlstateHandshake, "sqlfw: expected a TLS handshake after the SSL request")
			}
			return nil, wire.HandshakeResponse{}, false
		}
		env.Observer.Count(relay.TLSClientOK, 1)
		s.Client = tc
		s.log = s.log.With("client_tls", relay.TLSInfo(tc))
		if s.clientCert = relay.PeerName(tc); s.clientCert != "" {
			s.log = s.log.With("client_cert", s.clientCert)
		}
		// the handshake cleared the deadline; the response is still bound
		if t := s.env.Limits.StartupTimeout; t > 0 {
			_ = tc.SetReadDeadline(time.Now().Add(t))
		}
		m, err = readHandshakePacket(tc, false)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, wire.HandshakeResponse{}, false
			}
			if errors.As(err, &big) {
				return s.tooLarge(big)
			}
			return fail(-1, "", "no handshake response after TLS", err)
		}
		seq = wire.LastSeq(m) + 1
		if r, err = wire.ParseHandshakeResponseFor(m[wire.HeaderLen:], offered); err != nil || r.SSLRequest {
			if err == nil {
				err = errors.New("a second SSL request")
			}
			return fail(seq, "sqlfw: malformed handshake response", "malformed handshake response", err)
		}
		return m, r, true
	}
	if r.Caps.Has(wire.CapSSL) {
		// a whole response claiming TLS that never ran: the server would
		// take it for an SSL request
		return fail(seq, "sqlfw: CLIENT_SSL in a handshake response without TLS", "CLIENT_SSL without an SSL request", nil)
	}
	return m, r, true
}

// tooLarge refuses a handshake response longer than sqlfw holds before
// login with the server's own answer to a packet too large (the server
// sends it once the header claims the length, before the rest arrives).
func (s *session) tooLarge(e *packetTooLarge) ([]byte, wire.HandshakeResponse, bool) {
	s.env.Observer.Count(relay.ProtocolErrors, 1)
	s.log.Warn("closing connection: a packet before login larger than sqlfw accepts", "length", e.n, "limit", preAuthMaxPacket)
	writeErr(s.Client, e.seq+1, errPacketTooLarge, sqlstateHandshake, msgPacketTooLarge)
	return nil, wire.HandshakeResponse{}, false
}

// upstreamTLS opens the server leg's TLS (upstream_tls): sqlfw's own SSL
// request, made of the client's response (m) cut after its filler, then the
// handshake. When the server offers no TLS, prefer goes on in clear. When it
// reports false the client has its error (seq) and the log its line.
func (s *session) upstreamTLS(serverCaps wire.Caps, m []byte, seq int) bool {
	env, up := s.env, &s.conn.Upstream
	var err error
	if !serverCaps.Has(wire.CapSSL) {
		if up.TLSMode == upstreamTLSPrefer {
			return true
		}
		err = fmt.Errorf("%w: its greeting has no CLIENT_SSL (upstream_tls.mode %s)", relay.ErrTLSRefused, up.TLSMode)
	} else {
		req := make([]byte, wire.HeaderLen+wire.SSLRequestLen)
		copy(req, m)
		req[0], req[1], req[2], req[3] = wire.SSLRequestLen, 0, 0, 1
		setSSLCap(req, true)
		timeout := s.env.Limits.ServerReplyTimeout
		var tc *tls.Conn
		sendReq := func(c net.Conn) (bool, error) {
			if _, err := c.Write(req); err != nil {
				return false, fmt.Errorf("sending the SSL request: %w", err)
			}
			return true, nil // CLIENT_SSL in the greeting: no answer comes
		}
		if tc, err = relay.DialTLS(s.Server, up.TLS, timeout, sendReq); err == nil {
			s.Server = tc
			env.Observer.Count(relay.TLSServerOK, 1)
			s.log = s.log.With("server_tls", relay.TLSInfo(tc))
			return true
		}
	}
	env.Observer.Count(relay.TLSServerFail, 1)
	env.Observer.Count(relay.TLSFailCounter(true, err), 1)
	env.Observer.Count(relay.ConnRefused, 1)
	s.log.Error("cannot reach the database server over TLS", "upstream", up.Addr, "err", err)
	writeErr(s.Client, seq, errHandshake, sqlstateHandshake, "sqlfw: cannot reach the database server over TLS (upstream_tls)")
	return false
}

func (s *session) clientTLS() bool { return isTLS(s.Client) }
func (s *session) serverTLS() bool { return isTLS(s.Server) }

func isTLS(c net.Conn) bool {
	if cc, ok := c.(*compConn); ok {
		c = cc.Conn
	}
	_, ok := c.(*tls.Conn)
	return ok
}

// refusalCode is the error a server sends for the same refusal.
func refusalCode(r *relay.Refusal) (uint16, string) {
	if r.Reason == relay.ShuttingDown {
		return errServerShutdown, sqlstateShutdown
	}
	return errConCount, sqlstateConCount
}

// Info describes the session for fwctl connections and the audit trail.
func (s *session) Info() relay.Info {
	s.mu.Lock()
	user, schema := s.user, s.schema
	s.mu.Unlock()
	return relay.Info{ID: s.id, Database: s.env.Database, Client: s.Client.RemoteAddr().String(), Via: s.conn.Via,
		Process: s.conn.Process, User: user, DBName: schema, Application: s.app, Since: s.begun,
		ClientTLS: s.tlsInfo[0], ServerTLS: s.tlsInfo[1], ClientCert: s.clientCert}
}

// Close closes both connections now.
func (s *session) Close() { s.closeBoth() }

// Drain closes the session now if it is idle (no command outstanding, no
// transaction open), or when it next becomes idle.
func (s *session) Drain() {
	s.mu.Lock()
	s.draining = true
	idle := s.idleLocked()
	s.mu.Unlock()
	if idle {
		s.log.Info("session closed by drain")
		s.closeBoth()
	}
}

func (s *session) idleLocked() bool {
	return !s.reading && s.head == len(s.queue) && !s.inTx && s.phase.Load() == phaseCommand
}

func (s *session) closeBoth() { s.CloseBoth(s.markClosed) }

// markClosed is closeBoth's, before the legs close: toServer stops waiting
// (authEnded).
func (s *session) markClosed() {
	s.mu.Lock()
	s.closed = true
	s.authEnded.Broadcast()
	s.mu.Unlock()
}

func (s *session) writeServer(b []byte) error {
	if s.scomp != nil && len(b) > 0 {
		s.scomp.beginCommand(s.regionCmd)
	}
	return s.WriteServer(b)
}

// expect queues a command the server will answer; it is called before the
// command is written.
func (s *session) expect(p pending) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.queue = append(s.queue, p)
	if p.lex {
		s.lexInFlight.Add(1)
	}
	if p.schemaChange {
		s.schemaInFlight.Add(1)
	}
	return true
}

// answer sends the client a reply of sqlfw's in the command's place: at
// once when the server owes nothing, else queued behind what it owes. It
// reports false when the session is over.
func (s *session) answer(p pending) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	p.local = true
	if s.head < len(s.queue) {
		s.queue = append(s.queue, p)
		return true
	}
	return s.writeLocalLocked(&p)
}

// writeLocalLocked writes a local reply (with mu held, so that it keeps its
// place among the server's answers). It reports false when the session
// ends with it.
func (s *session) writeLocalLocked(p *pending) bool {
	s.reply = wire.AppendErr(s.reply[:0], p.seq, p.code, p.sqlstate, p.msg)
	if err := s.WriteClient(s.reply); err != nil || p.closeAfter {
		go s.closeBoth() // closeBoth takes mu
		return false
	}
	return true
}

// blockedMsg is the message of a blocked statement's ERR. It names the rule
// and never the statement's text.
func blockedMsg(v *engine.Verdict, closing bool) string {
	rule := v.RuleID
	if rule == "" {
		rule = "unnamed"
	}
	msg := "sqlfw: statement blocked by rule " + rule
	if v.Statements > 1 {
		msg += " (none of the " + strconv.Itoa(v.Statements) + " statements in this query was run)"
	}
	if v.Reason != "" {
		msg += ": " + v.Reason
	}
	if closing {
		msg += "; closing the connection"
	}
	return msg
}

// judge asks the engine about a statement's text and reports the verdict.
func (s *session) judge(sql []byte, typ byte) (engine.Verdict, *engine.Engine) {
	eng := s.env.Engine()
	j := relay.StartJudging(eng, s.meter, &s.sess)
	s.sess.Lex.Unconfirmed = s.lexInFlight.Load() > 0
	v := eng.Judge(sql, &s.sess)
	j.End(s.meter, s.obs, &v, typ)
	return v, eng
}

// enforced reports whether v blocks the statement.
func (s *session) enforced(v *engine.Verdict) bool {
	return v.Action.Denies() && s.env.Enforces(v.Mode)
}

// syncLogin copies a login the server accepted into the engine's session.
func (s *session) syncLogin() {
	if !s.loginChanged.Swap(false) {
		return
	}
	s.mu.Lock()
	s.sess.User, s.sess.Database = s.user, s.schema
	s.sess.Lex.SQLMode, s.sess.Lex.ClientEncoding = s.lex.mode, s.lex.charset
	// (MySQL 8.0 never creates an account by GRANT, and its sql_mode has
	// no NO_AUTO_CREATE_USER: a SQL-level EXECUTE is judged again with
	// the server not known, sqlprepare.go)
	s.sess.Lex.AutoCreateUser = s.lex.autoCreate() && (s.sess.Lex.MariaDB || s.sess.Lex.ServerVersion < 80000)
	s.mu.Unlock()
}

// protocolError closes the session after a malformed client packet, with an
// ERR the client can read.
func (s *session) protocolError(err error) {
	s.env.Observer.Count(relay.ProtocolErrors, 1)
	s.log.Warn("closing connection: protocol violation from client", "err", err)
	var fe *wire.FrameError
	if errors.As(err, &fe) && fe.TooLarge() {
		// as the server answers a packet beyond max_allowed_packet (an
		// authentication round's ids continue the handshake's)
		s.Tell(errPacket((fe.Seq+1)&0xff, errPacketTooLarge, sqlstateHandshake, msgPacketTooLarge))
	} else {
		s.Tell(errPacket(1, errMalformed, sqlstateGeneral, "sqlfw: malformed packet from the client"))
	}
}

// toServer relays the client's packets to the server, deciding each
// command.
func (s *session) toServer() {
	defer func() {
		if !s.leaveOpen {
			s.closeBoth()
		}
	}()
	defer s.meter.HoldAbort() // timing
	fr := s.cfr
	lim := &s.env.Limits
	// mode is the framing the loop has set up: the phase it follows.
	mode, lifted := uint32(phaseAuth), false
	// shift is what the framer adds to the ids of the first
	// authentication exchange (start); the packets it returns carry them.
	shift := s.cfrShift
	for first := true; ; first = false {
		s.meter.HoldWait() // timing
		if first && fr.Buffered() > 0 {
			// the client sent more with its handshake response: read
			// it now, not after its next write
		} else if err := fr.Fill(); err != nil {
			switch {
			case s.idle.On && relay.IsTimeout(err):
				if !s.idleExpired() {
					continue // not idle for long enough: read on
				}
			case errors.Is(err, wire.ErrCompressed):
				s.protocolError(err)
			case errors.Is(err, wire.ErrBudget):
				s.log.Warn("closing connection: no memory for its packet", "err", err)
				s.Tell(errPacket(1, errOutOfResources, sqlstateGeneral, "sqlfw: out of memory for statements being judged; try again"))
			case errors.Is(err, io.EOF):
				if s.halfClose() {
					return
				}
			case errors.Is(err, net.ErrClosed):
			default:
				s.log.Debug("client read ended", "err", err)
			}
			return
		}
		s.mu.Lock()
		s.reading = true
		s.mu.Unlock()
		if s.idle.On {
			s.idle.Disarm(s.Client)
		}
		s.meter.HoldBegin(relay.Arrived(s.Client)) // timing
		for {
			ph := s.phase.Load()
			want := wantAll
			switch {
			case ph == phaseCommand:
				if mode != phaseCommand {
					if !lifted {
						fr.SetLimits(lim.MaxMessageBytes, 0)
						fr.Renumber(0) // commands start at 0 on both legs
						shift = 0
						lifted = true
					}
					fr.ExpectCommands()
					fr.SetTypes(wire.CommandTypes)
					mode = phaseCommand
				}
			case ph == phaseAuth:
				// the rounds of an authentication exchange continue the
				// ids of the server's packet; the server checks them
				fr.Expect(wire.SeqAny)
				fr.SetTypes(nil)
				mode = phaseAuth
			default:
				if mode < phaseInfile {
					fr.Expect(int(ph-phaseInfile) & 0xff)
					fr.SetTypes(nil)
					mode = ph
				}
				want = wantNothing
			}
			if fr.Pending() == 0 {
				// what the next write to the server begins with
				s.regionCmd = mode == phaseCommand
			}
			m, err := fr.Next(want)
			if err != nil {
				s.protocolError(err)
				return
			}
			if m == nil {
				break
			}
			if mode != phaseCommand {
				if mode == phaseAuth && (wire.Seq(m)-shift)&0xff == 0 {
					// A command sent before the authentication exchange
					// ended (sequence id 0 is no round of it): the server
					// reads it as a command after its OK, so it waits,
					// unread, for the end and is decided as one.
					fr.Unread(m)
					if s.writeServer(fr.Take()) != nil || !s.awaitAuthEnd() {
						return
					}
					continue
				}
				if mode >= phaseInfile && len(m) == wire.HeaderLen {
					// the empty packet ends the upload; the server answers
					// the command with OK or ERR
					s.phase.CompareAndSwap(mode, phaseCommand)
				}
				continue // authentication and upload: forwarded as it came
			}
			if s.schemaInFlight.Load() > 0 {
				// sent before the answer to a change of database: judged
				// once the database is known
				fr.Unread(m)
				if s.writeServer(fr.Take()) != nil || !s.awaitSchema() {
					return
				}
				continue
			}
			if s.executesUnprepared(m) {
				// MariaDB's last prepared id, sent before the PREPARE_OK:
				// decided once its parameter count is known (execparams.go)
				fr.Unread(m)
				if s.writeServer(fr.Take()) != nil || !s.awaitPrepared() {
					return
				}
				continue
			}
			if !s.command(fr, m) {
				return
			}
		}
		if err := s.writeServer(fr.Take()); err != nil {
			return
		}
		s.meter.HoldEnd() // timing
		s.mu.Lock()
		s.reading = false
		idle := s.draining && s.idleLocked()
		s.mu.Unlock()
		if idle {
			// what was read needs no answer (COM_STMT_CLOSE, say)
			s.log.Info("session closed by drain")
			return
		}
		if s.idle.On {
			// toClient may have found the answer forwarded before this
			// read was done with
			s.armIdle()
		}
	}
}

// command decides one command packet m: it stays pending (forwarded with
// the rest of the read) or is cut out and answered. It reports false when
// the session must end.
func (s *session) command(fr *wire.Framer, m []byte) bool {
	if len(m) == wire.HeaderLen {
		s.protocolError(errors.New("empty command packet"))
		return false
	}
	s.syncLogin()
	// A command of 16 MiB or more is joined in a buffer of its own:
	// rare enough not to keep one per session.
	p := wire.Payload(m, nil)
	cmd := p[0]
	seq := (wire.LastSeq(m) + 1) & 0xff
	next := pending{cmd: cmd, seq: seq, slot: -1}
	switch cmd {
	case wire.ComQuery:
		sql, err := wire.QueryText(p, s.caps)
		if err != nil {
			s.protocolError(err)
			return false
		}
		s.meter.HoldStatement() // timing
		v, eng := s.judge(sql, observeQuery)
		if v.SessionOps {
			// PREPARE, EXECUTE, DEALLOCATE, CALL (sqlprepare.go)
			v, next.nameOps = s.namesJudged(sql, v, eng)
		}
		if s.enforced(&v) {
			return s.block(fr, m, seq, &v)
		}
		next.lex, next.charset, next.grant = s.lex.queryCharset(sql, v.DynamicSQL)
		next.schema, next.schemaChange = useSchema(sql)
	case wire.ComStmtPrepare:
		sql, err := wire.PrepareText(p)
		if err != nil {
			s.protocolError(err)
			return false
		}
		s.meter.HoldStatement() // timing
		v, eng := s.judge(sql, observePrepare)
		calls := false
		if v.SessionOps {
			var unsupported bool
			if calls, unsupported = prepareCalls(eng, sql, &s.sess); unsupported {
				// the server refuses it too, in every mode: answered as it
				// answers, so that a client falls back to COM_QUERY as it
				// would (mysqltest --ps-protocol)
				s.obs.Judged(unsupportedPS, observePrepare, time.Now(), 0)
				s.memoBlocked()
				return s.dropAnswer(fr, m, pending{seq: seq, code: errUnsupportedPS, sqlstate: sqlstateGeneral, msg: msgUnsupportedPS})
			}
		}
		if s.enforced(&v) {
			s.memoBlocked()
			return s.block(fr, m, seq, &v)
		}
		next.slot, next.gen = s.memoPrepare(sql, v, eng, calls)
	case wire.ComStmtExecute, wire.ComStmtBulkExecute, wire.ComStmtFetch, wire.ComStmtReset,
		wire.ComStmtSendLongData, wire.ComStmtClose:
		id, err := wire.StmtID(p)
		if err != nil {
			s.protocolError(err)
			return false
		}
		answered := cmd != wire.ComStmtSendLongData && cmd != wire.ComStmtClose
		slot, ok := s.memoLookup(id)
		if !ok {
			if !answered {
				return s.drop(fr, m) // the server would not answer either
			}
			v := engine.Verdict{Action: engine.ActionDeny, RuleID: ruleUnknownStmt, Reason: reasonUnknownStmt, Statements: 1}
			s.obs.Judged(v, observeExecute, time.Now(), 0)
			return s.dropAnswer(fr, m, pending{seq: seq, code: errUnknownStmt, sqlstate: sqlstateGeneral, msg: msgUnknownStmt})
		}
		if cmd == wire.ComStmtExecute || cmd == wire.ComStmtBulkExecute || cmd == wire.ComStmtFetch {
			s.meter.HoldStatement() // timing
			v, blocked, judged := s.memoUse(slot)
			if !judged && cmd != wire.ComStmtFetch {
				// an execution (a FETCH continues one): counted with the
				// prepare's verdict
				s.obs.Applied(v, observeExecute, time.Now())
			}
			if s.memo.slots[slot].calls && cmd != wire.ComStmtFetch {
				// a prepared CALL may EXECUTE any SQL-level name, and
				// PREPARE any (sqlprepare.go forgetNames)
				if v = s.stronger(v, s.callVerdict(0)); s.enforced(&v) {
					blocked = true
				}
				next.nameOps = forgetNames
			}
			if blocked {
				return s.block(fr, m, seq, &v)
			}
			if cmd == wire.ComStmtBulkExecute {
				bk, ok := s.bulkParams(p, slot)
				if !ok {
					return s.dropAnswer(fr, m, pending{seq: seq, code: errWrongArguments, sqlstate: sqlstateGeneral, msg: msgWrongArguments})
				}
				if v.BareParams {
					// each row's values decide (bound.go)
					if v = s.memoBulk(slot, &bk); s.enforced(&v) {
						return s.block(fr, m, seq, &v)
					}
				}
			}
			if cmd == wire.ComStmtExecute {
				e, ok := s.executeParams(p, slot)
				if !ok {
					return s.dropAnswer(fr, m, pending{seq: seq, code: errWrongArguments, sqlstate: sqlstateGeneral, msg: msgWrongArguments})
				}
				if v.BareParams {
					// a condition that is a parameter on its own: decided
					// by the value bound (bound.go)
					if v = s.memoBound(slot, &e); s.enforced(&v) {
						return s.block(fr, m, seq, &v)
					}
				}
			}
			if sl := &s.memo.slots[slot]; cmd != wire.ComStmtFetch {
				// a prepared SET NAMES or SET sql_mode, a prepared USE
				// (memoPrepare read the text)
				next.lex, next.charset, next.grant = sl.exLex, sl.exCharset, sl.exGrant
				next.schema, next.schemaChange = sl.exSchema, sl.exSchemaChange
			}
		}
		switch cmd {
		case wire.ComStmtClose:
			s.memoClose(slot)
		case wire.ComStmtSendLongData:
			s.longData(p, slot)
		case wire.ComStmtReset:
			s.memo.slots[slot].long = s.memo.slots[slot].long[:0]
		}
		if !answered {
			return true
		}
	case wire.ComInitDB:
		schema, err := wire.InitDBSchema(p)
		if err != nil {
			s.protocolError(err)
			return false
		}
		next.schema, next.schemaChange = schemaName(schema), true
	case wire.ComChangeUser:
		cu, err := wire.ParseChangeUser(p, s.caps)
		if err != nil {
			s.protocolError(err)
			return false
		}
		if clearPlugin(cu.AuthPlugin) && len(cu.AuthResponse) > 0 && s.clearRefused() {
			s.refuseClear(cu.AuthPlugin)
			return s.dropAnswer(fr, m, pending{seq: seq, code: errAccessDenied, sqlstate: sqlstateAccessDenied, msg: msgClearPassword, closeAfter: true})
		}
		if len(cu.AuthPlugin) > 0 {
			s.authPlugin = append(s.authPlugin[:0], cu.AuthPlugin...)
		}
		next.user, next.schema = string(cu.User), schemaName(cu.Database)
		// the server starts the lexing state afresh (lexSettle)
		next.lex, next.charset = true, s.lex.clientCharset(cu.Charset)
		// its authentication rounds follow, up to the server's OK or ERR
		s.phase.Store(phaseAuth)
	case wire.ComQuit:
		return true // no answer: the server closes
	case wire.ComResetConnection:
		next.lex = true // back to the login's character set, the default sql_mode (lexSettle)
	case wire.ComFieldList:
		// the column definitions of a table: judged as the SHOW COLUMNS
		// it amounts to (the wildcard only narrows it)
		table, err := wire.FieldListTable(p)
		if err != nil {
			s.protocolError(err)
			return false
		}
		b := append(s.fieldSQL[:0], "SHOW COLUMNS FROM `"...)
		for _, c := range table {
			if c == '`' {
				b = append(b, '`')
			}
			b = append(b, c)
		}
		s.fieldSQL = append(b, '`')
		s.meter.HoldStatement() // timing
		if v, _ := s.judge(s.fieldSQL, observeQuery); s.enforced(&v) {
			return s.block(fr, m, seq, &v)
		}
	case wire.ComRefresh:
		// mysqladmin's and mariadb-dump -F's FLUSH: judged as the
		// statements its bits amount to; its answer is an OK or ERR.
		sql, err := wire.RefreshStatements(s.fieldSQL[:0], p)
		if err != nil {
			s.protocolError(err)
			return false
		}
		s.fieldSQL = sql
		if len(sql) > 0 {
			s.meter.HoldStatement() // timing
			if v, _ := s.judge(s.fieldSQL, observeQuery); s.enforced(&v) {
				return s.block(fr, m, seq, &v)
			}
		}
	case wire.ComSetOption, wire.ComPing, wire.ComStatistics:
	default:
		if wire.IsReplication(cmd) && s.allowed(cmd) {
			// A replica through sqlfwd (config allow_commands); a dump's
			// events are followed up to its EOF or ERR (wire.Response).
			s.log.Info("replication command relayed (allow_commands)", "command", wire.CommandName(cmd))
			break
		}
		v := engine.Verdict{Action: engine.ActionDeny, RuleID: ruleCommand, Reason: reasonCommand, Statements: 1}
		s.obs.Judged(v, observeCommand, time.Now(), 0)
		s.log.Warn("command refused", "command", wire.CommandName(cmd))
		return s.dropAnswer(fr, m, pending{seq: seq, code: errBlocked, sqlstate: sqlstateBlocked,
			msg: "sqlfw: " + wire.CommandName(cmd) + " is not relayed by the firewall"})
	}
	return s.expect(next)
}

// awaitAuthEnd waits until the authentication exchange under way has ended;
// it reports false when the session closed instead.
func (s *session) awaitAuthEnd() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.phase.Load() == phaseAuth && !s.closed {
		s.authEnded.Wait()
	}
	return !s.closed
}

// allowed reports whether the configuration's allow_commands names cmd.
func (s *session) allowed(cmd byte) bool {
	for _, name := range s.env.AllowCommands {
		if c, ok := wire.CommandByName(name); ok && c == cmd {
			return true
		}
	}
	return false
}

// awaitSchema waits until no change of database is in flight; it reports
// false when the session closed instead.
func (s *session) awaitSchema() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.schemaInFlight.Load() > 0 && !s.closed {
		s.authEnded.Wait()
	}
	return !s.closed
}

// drop cuts m out of what goes to the server.
func (s *session) drop(fr *wire.Framer, m []byte) bool {
	return s.writeServer(fr.TakeBefore(m)) == nil
}

// dropAnswer cuts m out and answers it with p.
func (s *session) dropAnswer(fr *wire.Framer, m []byte, p pending) bool {
	if !s.drop(fr, m) {
		return false
	}
	return s.answer(p)
}

// block cuts a blocked command out and answers it with sqlfw's ERR.
func (s *session) block(fr *wire.Framer, m []byte, seq int, v *engine.Verdict) bool {
	closing := v.Action == engine.ActionDenyClose
	if !s.dropAnswer(fr, m, pending{seq: seq, code: errBlocked, sqlstate: sqlstateBlocked, msg: blockedMsg(v, closing), closeAfter: closing}) {
		return false
	}
	if closing {
		// Read nothing more from this client; the session closes once
		// the client has the error.
		s.log.Warn("closing the session after a deny_and_close rule", "rule", v.RuleID)
		s.leaveOpen = true
		return false
	}
	return true
}

// toClient relays the server's packets to the client, following each
// response.
func (s *session) toClient() {
	defer s.closeBoth()
	fr := s.sfr
	r := wire.NewResponse(s.caps)
	r.BeginAuth()
	var cur pending // the command being answered (cmd 0 while authenticating)
	// owed: cur is queue[head], a command the client sent
	authing, owed := true, false
	for {
		if err := fr.Fill(); err != nil {
			switch {
			case authing && relay.IsTimeout(err):
				s.log.Warn("closing connection: authentication did not finish in time", "timeout", s.env.Limits.AuthTimeout)
				s.Tell(errPacket(0, errUnknown, sqlstateGeneral, "sqlfw: the database server did not finish authentication in time"))
			case errors.Is(err, wire.ErrCompressed):
				s.env.Observer.Count(relay.ProtocolErrors, 1)
				s.log.Error("closing connection: malformed packet from the server", "err", err)
			case !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
				s.log.Debug("server read ended", "err", err)
			}
			return
		}
		s.meter.ResponseArrived() // timing
		for {
			if r.Done() {
				if fr.Buffered() == 0 {
					break
				}
				if cur, owed = s.nextCommand(); owed {
					r.Begin(cur.cmd)
					fr.Expect(cur.seq)
				} else {
					// Nothing is owed: a packet the server sends on its
					// own (an ERR before it closes the connection).
					cur = pending{cmd: wire.ComPing, slot: -1}
					r.Begin(wire.ComPing)
					fr.Expect(wire.SeqAny)
				}
				authing = cur.cmd == wire.ComChangeUser
			}
			if authing || r.Infile() {
				// the client's packets move the ids on
				fr.Expect(wire.SeqAny)
			}
			m, err := fr.Next(r.Want())
			if err != nil {
				s.env.Observer.Count(relay.ProtocolErrors, 1)
				s.log.Error("closing connection: malformed packet from the server", "err", err)
				return
			}
			if m == nil {
				break
			}
			wasInfile := r.Infile()
			done, err := r.Feed(m)
			if err != nil {
				s.env.Observer.Count(relay.ProtocolErrors, 1)
				s.log.Error("closing connection: the server's answer cannot be followed", "command", wire.CommandName(cur.cmd), "err", err)
				return
			}
			if authing && !done && !s.clearAuthRound(fr, m) {
				return
			}
			if r.Infile() {
				if !wasInfile {
					// the file request, before the client can see it;
					// not again on a progress report during the upload
					// (MariaDB's, an ERR 0xffff that ends nothing), which
					// may come after the client's empty packet ended it
					s.phase.Store(phaseInfile + uint32((wire.LastSeq(m)+1)&0xff))
				}
				continue
			}
			if !done {
				continue
			}
			login := false // the login's exchange ends here
			if authing {
				_ = s.Server.SetReadDeadline(time.Time{})
				authing = false
				fr.Renumber(0) // the legs' ids differed by an SSL request (tls.go)
				if cur.cmd == 0 && r.Failed() {
					// authentication failed: the server closes
					_ = s.WriteClient(fr.Take())
					return
				}
				login = cur.cmd == 0
			}
			s.settle(r, &cur, m)
			if login && s.ccomp != nil && !s.startCompression(fr) {
				return
			}
			if err := s.WriteClient(fr.Take()); err != nil {
				return
			}
			if login && s.ccomp != nil {
				s.ccomp.startWrites() // after the OK, which is plain
			}
			if login {
				// Only now may the commands pipelined behind the login be
				// decided: the login is in no queue, so a reply of sqlfw's
				// to one would otherwise go out at once, before its OK.
				s.mu.Lock()
				s.phase.Store(phaseCommand)
				s.authEnded.Broadcast()
				s.mu.Unlock()
			}
			s.meter.ResponseReady() // timing (the first, the end of authentication, is not timed)
			if !s.answered(owed) {
				return
			}
			if s.idle.On {
				s.armIdle()
			}
		}
		if err := s.WriteClient(fr.Take()); err != nil {
			return
		}
		s.meter.ResponseForwarded() // timing
	}
}

// nextCommand returns the oldest command the server owes an answer to.
func (s *session) nextCommand() (pending, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.head < len(s.queue) && !s.queue[s.head].local {
		return s.queue[s.head], true
	}
	return pending{}, false
}

// settle records what a complete response changed, before the client sees
// it: the statement id of a prepare, the login, the transaction state.
func (s *session) settle(r *wire.Response, cur *pending, last []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inTx = r.InTransaction()
	failed := r.Failed()
	switch cur.cmd {
	case wire.ComChangeUser:
		// (the login's end, cmd 0, is toClient's: after its OK is written)
		s.phase.Store(phaseCommand)
		s.authEnded.Broadcast()
		if !failed {
			s.user, s.schema = cur.user, cur.schema
			s.loginChanged.Store(true)
			s.memo.reset()
		}
	case wire.ComStmtPrepare:
		if cur.slot >= 0 {
			if ok, good := r.Prepared(); good {
				s.memo.prepared(cur.slot, cur.gen, ok.StmtID, ok.Params)
			} else {
				s.memo.failed(cur.slot, cur.gen)
			}
			s.authEnded.Broadcast() // an execution of it may wait (awaitPrepared)
		}
	case wire.ComInitDB, wire.ComQuery, wire.ComStmtExecute, wire.ComStmtBulkExecute:
		if len(cur.nameOps) > 0 {
			s.memo.names.apply(cur.nameOps, failed)
			// no longer pending: the command stays queued until answered
			// pops it, and a lookup meanwhile must not take its PREPAREs
			// (candidates)
			cur.nameOps = nil
			if s.head < len(s.queue) {
				s.queue[s.head].nameOps = nil
			}
		}
		if cur.schemaChange && !failed {
			// COM_INIT_DB, USE (useSchema), a prepared USE
			s.schema = cur.schema
			s.loginChanged.Store(true)
		}
	case wire.ComResetConnection:
		if !failed {
			s.memo.reset()
		}
	}
	var tracked []byte
	if !failed && r.Status()&wire.StatusSessionStateChanged != 0 && s.caps.Has(wire.CapSessionTrack) {
		// USE db (and a schema set any other way) under session tracking
		if ok, err := wire.ParseOK(wire.FirstFragment(last), s.caps); err == nil {
			tracked = ok.SessionState
			for it := wire.NewSessionState(ok.SessionState); it.Next(); {
				if it.Type != wire.TrackSchema {
					continue
				}
				if name, ok := it.Schema(); ok && string(name) != s.schema {
					s.schema = string(name)
					s.loginChanged.Store(true)
				}
			}
		}
	}
	s.lexSettle(r, cur, tracked)
	if cur.lex {
		cur.lex = false
		s.lexInFlight.Add(-1)
	}
	if cur.schemaChange {
		cur.schemaChange = false
		s.schemaInFlight.Add(-1)
		s.authEnded.Broadcast()
	}
}

// answered pops the command whose response was just forwarded, writes the
// replies sqlfw queued behind it, and closes a draining session that is
// now idle. It reports false when the session ends.
func (s *session) answered(owed bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if owed {
		s.head++
	}
	for s.head < len(s.queue) && s.queue[s.head].local {
		p := s.queue[s.head]
		s.head++
		if !s.writeLocalLocked(&p) {
			return false
		}
	}
	if s.head == len(s.queue) {
		clear(s.queue) // drop the strings
		s.queue, s.head = s.queue[:0], 0
	}
	if s.draining && s.idleLocked() {
		s.log.Info("session closed by drain")
		return false
	}
	return true
}
