package pg

// TLS on both legs of a PostgreSQL session (crypto/tls, Go's defaults,
// TLS 1.2 or later).
//
// Client leg: with tls.cert and tls.key set, an SSLRequest is answered 'S'
// and the client's TLS handshake runs on the accepted connection; a client
// that opens with a TLS record straight away (PostgreSQL 17's
// sslnegotiation=direct, ALPN "postgresql") is served the same way. The
// session then reads the startup packet through TLS. With tls.require a
// client that does not ask for TLS is refused (28000). With tls.client_ca a
// client certificate signed by that CA is required. The certificate is
// re-read on every reload: new handshakes get the new one, open sessions
// keep theirs.
//
// Server leg: upstream_tls.mode follows libpq's sslmode (disable, prefer,
// require, verify-ca, verify-full): sqlfwd sends its own SSLRequest before
// the client's startup packet and runs its own handshake.
//
// What a terminating proxy cannot do: SCRAM channel binding
// (tls-server-end-point) binds the client's proof to the certificate of the
// TLS session the client sees, sqlfwd's, while the server checks it against
// the certificate of its own session with sqlfwd. It succeeds only when
// sqlfwd presents the server's own certificate; otherwise PLUS is not
// offered to the client and a client that asks for binding is told why
// (auth.go; docs/config.md, "TLS").

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/sqlfw/sqlfw/relay"
)

// tlsHandshakeTimeout bounds a leg's handshake when no startup or server
// reply timeout does.
const tlsHandshakeTimeout = 10 * time.Second

// acceptTLS runs the client's handshake on conn, bounded by timeout (0:
// tlsHandshakeTimeout; the session gives it startup_timeout, as MySQL's
// does). crypto/tls reads and writes the socket through relay.IO, with its
// receive times (rawio.go).
func acceptTLS(conn net.Conn, cfg *tls.Config, timeout time.Duration) (*tls.Conn, error) {
	if timeout <= 0 {
		timeout = tlsHandshakeTimeout
	}
	var under net.Conn
	if p, ok := conn.(*peekConn); ok {
		p.Conn = relay.NewIO(p.Conn, true)
		under = p
	} else {
		under = relay.NewIO(conn, true)
	}
	tc := tls.Server(under, cfg)
	_ = conn.SetDeadline(time.Now().Add(timeout))
	err := tc.Handshake()
	_ = conn.SetDeadline(time.Time{})
	if err != nil {
		return nil, fmt.Errorf("client TLS handshake: %w", err)
	}
	return tc, nil
}

// sslRequest is the 8-byte SSLRequest packet (length 8, code 80877103).
var sslRequest = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

// dialTLS asks the server for TLS on a fresh connection, as libpq does,
// and runs the handshake. It returns server unchanged when the server
// declines and the mode allows plaintext (prefer).
func dialTLS(server net.Conn, cfg *tls.Config, mode string) (net.Conn, error) {
	_ = server.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	defer server.SetDeadline(time.Time{})
	if _, err := server.Write(sslRequest); err != nil {
		return nil, err
	}
	var b [1]byte
	if _, err := server.Read(b[:]); err != nil {
		return nil, fmt.Errorf("reading the answer to SSLRequest: %w", err)
	}
	switch b[0] {
	case 'S':
	case 'N':
		if mode == "prefer" {
			return server, nil
		}
		return nil, fmt.Errorf("%w (upstream_tls.mode %s)", relay.ErrTLSRefused, mode)
	default:
		return nil, fmt.Errorf("the database server answered SSLRequest with %q", b[0])
	}
	tc := tls.Client(relay.NewIO(server, false), cfg) // raw socket calls under TLS (rawio.go)
	if err := tc.Handshake(); err != nil {
		return nil, fmt.Errorf("server TLS handshake: %w", err)
	}
	return tc, nil
}

// tlsRecordByte opens every TLS record of a handshake: a client that sends
// it first negotiates TLS directly (sslnegotiation=direct).
const tlsRecordByte = 0x16

// peekConn replays bytes read ahead before the rest of the connection.
type peekConn struct {
	net.Conn
	head []byte
}

func (p *peekConn) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// NetConn is the connection under the bytes read ahead (relay.Arrived
// looks through it).
func (p *peekConn) NetConn() net.Conn { return p.Conn }

// tlsInfo describes a leg's TLS for logs and connections.
func tlsInfo(c net.Conn) string {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return ""
	}
	st := tc.ConnectionState()
	return tls.VersionName(st.Version) + " " + tls.CipherSuiteName(st.CipherSuite)
}

// peerName is the subject of the client's certificate, when it sent one
// (tls.client_ca), for the audit trail.
func peerName(c net.Conn) string {
	if tc, ok := c.(*tls.Conn); ok {
		if pc := tc.ConnectionState().PeerCertificates; len(pc) > 0 {
			return pc[0].Subject.String()
		}
	}
	return ""
}
