package mysql

// The start both legs share, before the relay loops: the dial, the
// greeting with the capabilities the relay cannot follow stripped, the
// client's SSL request and TLS handshake (tls.go), its handshake response
// as the server reads it, admission, the server leg's own TLS, and the
// response forwarded.

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// ambiguousResponse says why a handshake response (parsed with caps, the
// client's flags within what the greeting offered, as the server reads
// it: wire.ParseHandshakeResponseFor) could be read by the server with a
// different user, database, plugin or attributes than sqlfw's, or "" when
// it cannot. Such a response is refused: the engine would judge the
// session as someone else's.
//
// CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA without CLIENT_SECURE_CONNECTION:
// MySQL reads a length-encoded auth response, MariaDB a zero-terminated
// one (parse_client_handshake_packet, sql/sql_acl.cc), so the database
// after it differs. No client sends that combination.
func ambiguousResponse(caps wire.Caps) string {
	if caps.Has(wire.CapPluginAuthLenencData) && !caps.Has(wire.CapSecureConnection) {
		return "CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA without CLIENT_SECURE_CONNECTION"
	}
	return ""
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
		s.ServerMalformed(s.log, "greeting", err)
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
	s.user, s.schema = string(wire.LoginUser(r.User)), env.Engine().DatabaseName(r.Database)
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
	obs, no := env.Observer.Open(s, s.log)
	if no != nil {
		code, state := refusalCode(no)
		writeErr(s.Client, seq, code, state, no.Msg)
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
