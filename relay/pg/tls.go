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

// acceptTLS runs the client's handshake on conn (relay.AcceptTLS), after
// the bytes a peekConn read ahead.
func acceptTLS(conn net.Conn, cfg *tls.Config, timeout time.Duration) (*tls.Conn, error) {
	if p, ok := conn.(*peekConn); ok {
		p.Conn = relay.NewIO(p.Conn, true)
	}
	return relay.AcceptTLS(conn, cfg, timeout)
}

// sslRequest is the 8-byte SSLRequest packet (length 8, code 80877103).
var sslRequest = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

// askTLS sends the server an SSLRequest, as libpq does on a fresh
// connection, and reads its answer: 'S' (go on with TLS) or 'N'.
func askTLS(server net.Conn) (bool, error) {
	if _, err := server.Write(sslRequest); err != nil {
		return false, err
	}
	var b [1]byte
	if _, err := server.Read(b[:]); err != nil {
		return false, fmt.Errorf("reading the answer to SSLRequest: %w", err)
	}
	switch b[0] {
	case 'S':
		return true, nil
	case 'N':
		return false, nil
	}
	return false, fmt.Errorf("the database server answered SSLRequest with %q", b[0])
}

// dialTLS opens the server leg's TLS, bounded by timeout
// (server_reply_timeout). It returns server unchanged when the server
// declines and the mode allows plaintext (prefer).
func dialTLS(server net.Conn, cfg *tls.Config, mode string, timeout time.Duration) (net.Conn, error) {
	tc, err := relay.DialTLS(server, cfg, timeout, askTLS)
	switch {
	case err != nil:
		return nil, err
	case tc != nil:
		return tc, nil
	case mode == "prefer":
		return server, nil
	}
	return nil, fmt.Errorf("%w (upstream_tls.mode %s)", relay.ErrTLSRefused, mode)
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
