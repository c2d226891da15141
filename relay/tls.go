package relay

// The TLS legs every protocol opens after its own preamble (PostgreSQL's
// SSLRequest and 'S', MySQL's SSL request inside the handshake): the
// handshakes, their bounds, and how a leg is described.

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// TLSHandshakeTimeout bounds a leg's handshake when no startup_timeout
// (client leg) or server_reply_timeout (server leg) does.
const TLSHandshakeTimeout = 10 * time.Second

// AcceptTLS runs the client's handshake on conn, once the protocol's
// preamble has asked for it, bounded by timeout (startup_timeout; 0:
// TLSHandshakeTimeout). crypto/tls reads and writes the socket through IO,
// with its receive times (rawio.go); a conn that is not a plain socket (a
// protocol's reader of bytes read ahead) has wrapped its own with NewIO.
func AcceptTLS(conn net.Conn, cfg *tls.Config, timeout time.Duration) (*tls.Conn, error) {
	if timeout <= 0 {
		timeout = TLSHandshakeTimeout
	}
	tc := tls.Server(NewIO(conn, true), cfg)
	_ = conn.SetDeadline(time.Now().Add(timeout))
	err := tc.Handshake()
	_ = conn.SetDeadline(time.Time{})
	if err != nil {
		return nil, fmt.Errorf("client TLS handshake: %w", err)
	}
	return tc, nil
}

// DialTLS opens the server leg's TLS: ask sends the protocol's request for
// it and reads the server's answer, reporting false when the server
// declines (nil, nil is returned then); then the handshake. Both are
// bounded by timeout (server_reply_timeout; 0: TLSHandshakeTimeout).
func DialTLS(server net.Conn, cfg *tls.Config, timeout time.Duration, ask func(net.Conn) (bool, error)) (*tls.Conn, error) {
	if timeout <= 0 {
		timeout = TLSHandshakeTimeout
	}
	_ = server.SetDeadline(time.Now().Add(timeout))
	defer server.SetDeadline(time.Time{})
	if ok, err := ask(server); err != nil || !ok {
		return nil, err
	}
	tc := tls.Client(NewIO(server, false), cfg) // raw socket calls under TLS (rawio.go)
	if err := tc.Handshake(); err != nil {
		return nil, fmt.Errorf("server TLS handshake: %w", err)
	}
	return tc, nil
}

// TLSInfo describes a leg's TLS for logs, connections and the audit
// trail: version and cipher, "" in clear.
func TLSInfo(c net.Conn) string {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return ""
	}
	st := tc.ConnectionState()
	return tls.VersionName(st.Version) + " " + tls.CipherSuiteName(st.CipherSuite)
}

// PeerName is the subject of the client's certificate, when it sent one
// (tls.client_ca): who the log and the audit trail say connected.
func PeerName(c net.Conn) string {
	if tc, ok := c.(*tls.Conn); ok {
		if pc := tc.ConnectionState().PeerCertificates; len(pc) > 0 {
			return pc[0].Subject.String()
		}
	}
	return ""
}
