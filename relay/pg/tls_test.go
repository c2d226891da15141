package pg

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/relay"
)

// tlsConfigs is a self-signed certificate's server and client configs.
func tlsConfigs(t *testing.T) (srv, cli *tls.Config) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "db.test"},
		DNSNames: []string{"db.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"postgresql"}},
		&tls.Config{RootCAs: pool, ServerName: "db.test", NextProtos: []string{"postgresql"}}
}

// loopback is a connected pair of TCP sockets.
func loopback(t *testing.T) (accepted, dialed net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialed, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	accepted, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { accepted.Close(); dialed.Close() })
	return accepted, dialed
}

// TestTLSUnderIO: both legs' crypto/tls read and write the socket through
// relay.IO's raw calls (relay/rawio.go): the client's after an SSLRequest
// and with direct negotiation (the bytes read ahead replayed first), the
// server's after sqlfwd's SSLRequest; and the bytes go through.
func TestTLSUnderIO(t *testing.T) {
	srvCfg, cliCfg := tlsConfigs(t)
	check := func(name string, tc *tls.Conn, peer *tls.Conn) {
		t.Helper()
		under := tc.NetConn()
		if p, ok := under.(*peekConn); ok {
			under = p.Conn
		}
		if _, ok := under.(*relay.IO); !ok {
			t.Errorf("%s: TLS over a %T, want over a *relay.IO", name, under)
		}
		go peer.Write([]byte("ping"))
		buf := make([]byte, 4)
		if _, err := io.ReadFull(tc, buf); err != nil || string(buf) != "ping" {
			t.Errorf("%s: read %q, %v", name, buf, err)
		}
		if _, err := tc.Write([]byte("pong")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "pong" {
			t.Errorf("%s: peer read %q, %v", name, buf, err)
		}
	}

	// client leg, after an SSLRequest: the handshake on the accepted socket
	a, d := loopback(t)
	cli := tls.Client(d, cliCfg)
	go cli.Handshake()
	tc, err := acceptTLS(a, srvCfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	check("client leg", tc, cli)

	// client leg, direct: the session read 4 bytes to tell
	a, d = loopback(t)
	cli = tls.Client(d, cliCfg)
	go cli.Handshake()
	var head [4]byte
	if _, err := io.ReadFull(a, head[:]); err != nil {
		t.Fatal(err)
	}
	tc, err = acceptTLS(&peekConn{Conn: a, head: head[:]}, srvCfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	check("client leg, direct", tc, cli)
	if tc.ConnectionState().NegotiatedProtocol != "postgresql" {
		t.Errorf("direct: ALPN %q", tc.ConnectionState().NegotiatedProtocol)
	}

	// server leg: SSLRequest, 'S', the handshake
	a, d = loopback(t)
	srvDone := make(chan *tls.Conn, 1)
	go func() {
		var req [8]byte
		if _, err := io.ReadFull(a, req[:]); err != nil {
			srvDone <- nil
			return
		}
		a.Write([]byte{'S'})
		s := tls.Server(a, srvCfg)
		if s.Handshake() != nil {
			srvDone <- nil
			return
		}
		srvDone <- s
	}()
	c, err := dialTLS(d, cliCfg, "require", 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := <-srvDone
	if srv == nil {
		t.Fatal("the server's side failed")
	}
	check("server leg", c.(*tls.Conn), srv)
}
