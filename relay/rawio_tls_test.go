package relay

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"testing"
	"time"
)

// tlsPair is a TLS session over loopback whose both ends read and write
// through IO, as the sessions' legs do (the accepting end with stamps).
func tlsPair(t *testing.T) (srv, cli *tls.Conn) {
	t.Helper()
	a, b := tcpPair(t)
	ua, ub := NewIO(a, true), NewIO(b, false)
	if _, ok := ua.(*IO); !ok {
		t.Fatalf("a %T was not wrapped", a)
	}
	cert, pool := testCert(t, "localhost")
	srv = tls.Server(ua, &tls.Config{Certificates: []tls.Certificate{cert}})
	cli = tls.Client(ub, &tls.Config{RootCAs: pool, ServerName: "localhost"})
	done := make(chan error, 1)
	go func() { done <- srv.Handshake() }()
	if err := cli.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); cli.Close() })
	return srv, cli
}

// TestIOUnderTLS: crypto/tls over IO moves every byte both ways, and its
// deadlines, Close and CloseWrite behave as over a net.Conn.
func TestIOUnderTLS(t *testing.T) {
	srv, cli := tlsPair(t)
	if NewIO(srv, true) != net.Conn(srv) {
		t.Fatal("NewIO wrapped a *tls.Conn")
	}
	// 8 MiB each way: many records, writes that wait for room (EAGAIN).
	want := bytes.Repeat([]byte("0123456789abcdef"), 512<<10)
	got := make([]byte, len(want))
	for _, dir := range []struct {
		name string
		w, r *tls.Conn
	}{{"server to client", srv, cli}, {"client to server", cli, srv}} {
		done := make(chan error, 1)
		go func() {
			_, err := dir.w.Write(want)
			done <- err
		}()
		time.Sleep(50 * time.Millisecond) // let the writer fill the buffers
		if _, err := io.ReadFull(dir.r, got); err != nil {
			t.Fatalf("%s: %v", dir.name, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("%s: write: %v", dir.name, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the bytes differ", dir.name)
		}
	}

	// A read deadline ends the wait with a timeout, and the session goes
	// on after it (a timeout is not fatal to a tls.Conn over a net.Conn).
	buf := make([]byte, 64)
	srv.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := srv.Read(buf)
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	srv.SetReadDeadline(time.Time{})
	if _, err := cli.Write([]byte("after")); err != nil {
		t.Fatal(err)
	}
	if n, err := srv.Read(buf); err != nil || string(buf[:n]) != "after" {
		t.Fatalf("read after a timeout: %q, %v; want after", buf[:n], err)
	}

	// CloseWrite sends close_notify: the peer reads EOF and can still
	// write, and what it writes arrives.
	if err := cli.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer's CloseWrite: %v, want EOF", err)
	}
	if _, err := srv.Write([]byte("rest")); err != nil {
		t.Fatal(err)
	}
	if n, err := cli.Read(buf); err != nil || string(buf[:n]) != "rest" {
		t.Fatalf("half-closed peer read %q, %v; want rest", buf[:n], err)
	}

	// Close from another goroutine ends a blocked read with net.ErrClosed.
	srv2, _ := tlsPair(t)
	go func() { time.Sleep(20 * time.Millisecond); srv2.Close() }()
	if _, err := srv2.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed conn: %v, want net.ErrClosed", err)
	}
}

// TestArrivedThroughTLS: the receive time of a TLS leg is its socket's,
// between the peer's write and the read, as for a plain leg.
func TestArrivedThroughTLS(t *testing.T) {
	srv, cli := tlsPair(t)
	buf := make([]byte, 64)
	// as in TestIOArrived: wait, bounded, for the first stamped read
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, err := cli.Write([]byte("warm")); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Read(buf); err != nil {
			t.Fatal(err)
		}
		if Arrived(srv) != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no read was stamped in 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 3 {
		before := time.Now().UnixNano()
		if _, err := cli.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		sent := time.Now().UnixNano()
		time.Sleep(30 * time.Millisecond) // the record waits in the socket
		readAt := time.Now().UnixNano()
		if n, err := srv.Read(buf); err != nil || string(buf[:n]) != "ping" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
		got := Arrived(srv)
		if got < before || got > sent || got >= readAt {
			t.Fatalf("round %d: arrived %d; want within the write [%d, %d], before the read at %d", i, got, before, sent, readAt)
		}
	}
	if Arrived(cli) != 0 {
		t.Fatalf("the unstamped end has an arrival: %d", Arrived(cli))
	}
}

// BenchmarkIOUnderTLS: a 64-byte record each way per round trip, both
// ends over IO. IO allocates nothing; crypto/tls allocates one
// atLeastReader (24 B) per record it reads from the socket
// (Conn.readFromUntil), over a net.Conn as over an IO: 2 allocs/op here.
func BenchmarkIOUnderTLS(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	a, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	key, cert := benchCert(b)
	srv := tls.Server(NewIO(a, true), &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{cert}, PrivateKey: key}}})
	cli := tls.Client(NewIO(d, false), &tls.Config{InsecureSkipVerify: true})
	defer srv.Close()
	defer cli.Close()
	go srv.Handshake()
	if err := cli.Handshake(); err != nil {
		b.Fatal(err)
	}
	msg := make([]byte, 64)
	buf := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cli.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(srv, buf[:len(msg)]); err != nil {
			b.Fatal(err)
		}
		if _, err := srv.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(cli, buf[:len(msg)]); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCert is a self-signed certificate (the client does not check it).
func benchCert(b *testing.B) (crypto.PrivateKey, []byte) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	return key, der
}
