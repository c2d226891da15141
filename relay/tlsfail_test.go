package relay

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"
)

// testCert is a self-signed certificate for localhost, and its pool.
func testCert(t *testing.T, name string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: c}, pool
}

// tcpPair is a connected pair of loopback TCP sockets (kernel-buffered,
// unlike net.Pipe: a side may write an alert nobody reads).
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// handshake runs a real handshake over loopback and returns each side's error.
func handshake(t *testing.T, srv, cli *tls.Config) (serverErr, clientErr error) {
	a, b := tcpPair(t)
	defer a.Close()
	defer b.Close()
	done := make(chan error, 1)
	go func() {
		s := tls.Server(a, srv)
		err := s.Handshake()
		if err != nil {
			a.Close()
		}
		done <- err
	}()
	c := tls.Client(b, cli)
	clientErr = c.Handshake()
	if clientErr != nil {
		b.Close()
	}
	return <-done, clientErr
}

func TestClassifyTLSError(t *testing.T) {
	cert, pool := testCert(t, "server")
	_, otherPool := testCert(t, "other")
	clientCert, clientPool := testCert(t, "client")

	// the client does not trust the server's certificate
	_, cerr := handshake(t, &tls.Config{Certificates: []tls.Certificate{cert}}, &tls.Config{RootCAs: otherPool, ServerName: "localhost"})
	if got := ClassifyTLSError(cerr); got != TLSFailCertificate {
		t.Errorf("unknown authority, client side (%v): %v, want certificate", cerr, got)
	}
	// the server wants a client certificate the client does not have
	serr, _ := handshake(t, &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientPool},
		&tls.Config{RootCAs: pool, ServerName: "localhost"})
	if got := ClassifyTLSError(serr); got != TLSFailCertificate {
		t.Errorf("no client certificate, server side (%v): %v, want certificate", serr, got)
	}
	// a client certificate from an unknown authority
	serr, _ = handshake(t, &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: otherPool},
		&tls.Config{RootCAs: pool, ServerName: "localhost", Certificates: []tls.Certificate{clientCert}})
	if got := ClassifyTLSError(serr); got != TLSFailCertificate {
		t.Errorf("rogue client certificate, server side (%v): %v, want certificate", serr, got)
	}
	// no common version
	serr, cerr = handshake(t, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13},
		&tls.Config{RootCAs: pool, ServerName: "localhost", MaxVersion: tls.VersionTLS12})
	if got := ClassifyTLSError(serr); got != TLSFailProtocol {
		t.Errorf("version mismatch, server side (%v): %v, want protocol", serr, got)
	}
	if got := ClassifyTLSError(cerr); got != TLSFailProtocol {
		t.Errorf("version mismatch, client side (%v): %v, want protocol", cerr, got)
	}
	// plaintext where a handshake belongs
	a, b := tcpPair(t)
	go func() { b.Write([]byte("GET / HTTP/1.1\r\n\r\n")) }()
	err := tls.Server(a, &tls.Config{Certificates: []tls.Certificate{cert}}).Handshake()
	if got := ClassifyTLSError(err); got != TLSFailProtocol {
		t.Errorf("not TLS (%v): %v, want protocol", err, got)
	}
	// the peer goes away, or says nothing in time
	a, b = tcpPair(t)
	b.Close()
	err = tls.Server(a, &tls.Config{Certificates: []tls.Certificate{cert}}).Handshake()
	if got := ClassifyTLSError(err); got != TLSFailClosed {
		t.Errorf("closed (%v): %v, want closed", err, got)
	}
	a, _ = tcpPair(t)
	a.SetDeadline(time.Now().Add(20 * time.Millisecond))
	err = tls.Server(a, &tls.Config{Certificates: []tls.Certificate{cert}}).Handshake()
	if got := ClassifyTLSError(err); got != TLSFailTimeout {
		t.Errorf("silent peer (%v): %v, want timeout", err, got)
	}
	if got := ClassifyTLSError(fmt.Errorf("%w (upstream_tls.mode require)", ErrTLSRefused)); got != TLSFailRefused {
		t.Errorf("declined: %v, want refused", got)
	}
	if TLSFailCounter(true, ErrTLSRefused) != TLSServerFailBy+Counter(TLSFailRefused) || TLSFailCounter(false, err) != TLSClientFailBy+Counter(TLSFailTimeout) {
		t.Error("TLSFailCounter does not name the leg's counter of the cause")
	}
}
