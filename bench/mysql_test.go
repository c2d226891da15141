package bench

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA makes a CA and, signed by it, a certificate for name; it writes
// the CA's PEM to dir and returns its path and the server's certificate.
func testCA(t *testing.T, dir, file, name string) (string, tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca " + file},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestMySQLTLS: each sslmode's client TLS against a server whose
// certificate is for "localhost" from one CA: require encrypts without
// checking, verify-ca checks the chain only, verify-full the chain and
// the name; a foreign CA fails both checks.
func TestMySQLTLS(t *testing.T) {
	dir := t.TempDir()
	caPath, cert := testCA(t, dir, "ca.pem", "localhost")
	otherCA, _ := testCA(t, dir, "other.pem", "localhost")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, c := range []struct {
		mode, ca, host string
		ok             bool
	}{
		{"require", "", "127.0.0.1", true},
		{"verify-ca", caPath, "127.0.0.1", true}, // the name is not checked
		{"verify-ca", otherCA, "127.0.0.1", false},
		{"verify-full", caPath, "localhost", true},
		{"verify-full", caPath, "127.0.0.1", false}, // not the certificate's name
		{"verify-full", otherCA, "localhost", false},
	} {
		conf, fallback, err := DBConfig{SSLMode: c.mode, SSLRootCert: c.ca}.mysqlTLS()
		if err != nil || conf == nil || fallback {
			t.Fatalf("%s: %v %v %v", c.mode, conf, fallback, err)
		}
		if !conf.InsecureSkipVerify {
			conf.ServerName = c.host // as go-sql-driver/mysql does from the address
		}
		conn, err := tls.Dial("tcp", net.JoinHostPort(c.host, port), conf)
		if err == nil {
			conn.Close()
		}
		if (err == nil) != c.ok {
			t.Errorf("%s, CA %s, host %s: err %v, want ok %v", c.mode, filepath.Base(c.ca), c.host, err, c.ok)
		}
	}
	for _, m := range []string{"", "disable"} {
		if conf, _, err := (DBConfig{SSLMode: m}).mysqlTLS(); conf != nil || err != nil {
			t.Errorf("sslmode %q: %v %v, want plaintext", m, conf, err)
		}
	}
	if conf, fallback, err := (DBConfig{SSLMode: "prefer"}).mysqlTLS(); conf == nil || !fallback || err != nil {
		t.Errorf("prefer: %v %v %v, want TLS with fallback", conf, fallback, err)
	}
	if _, _, err := (DBConfig{SSLMode: "verify-full"}).mysqlTLS(); err == nil {
		t.Error("verify-full without sslrootcert: no error")
	}
}
