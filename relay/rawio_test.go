package relay

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pair is an accepted connection of ln, wrapped, and its peer.
func pair(t *testing.T, ln net.Listener, stamp bool) (*IO, net.Conn) {
	t.Helper()
	peer, err := net.Dial(ln.Addr().Network(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c, ok := NewIO(accepted, stamp).(*IO)
	if !ok {
		t.Fatalf("a %T was not wrapped", accepted)
	}
	t.Cleanup(func() { c.Close() })
	return c, peer
}

func TestIO(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, stamp := range []bool{false, true} {
		c, peer := pair(t, ln, stamp)
		// 8 MiB is far more than the socket buffers: the write must wait
		// for room (EAGAIN) and go on after partial writes.
		want := bytes.Repeat([]byte("0123456789abcdef"), 512<<10)
		done := make(chan error, 1)
		go func() {
			_, err := c.Write(want)
			done <- err
		}()
		got := make([]byte, len(want))
		time.Sleep(50 * time.Millisecond) // let the writer fill the buffers
		if _, err := io.ReadFull(peer, got); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("stamp %v: write: %v", stamp, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("stamp %v: the bytes differ", stamp)
		}
		// A large read through EAGAIN too: the reader gets every byte.
		go func() { _, _ = peer.Write(want) }()
		if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("stamp %v: reading 8 MiB: %v, equal %v", stamp, err, bytes.Equal(got, want))
		}

		// Reads wait for data; a deadline ends the wait as on a net.Conn.
		go peer.Write([]byte("hello"))
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("stamp %v: read %q, %v; want hello", stamp, buf[:n], err)
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err = c.Read(buf)
		var ne net.Error
		if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("stamp %v: read past the deadline: %v, want a timeout", stamp, err)
		}
		c.SetReadDeadline(time.Time{})
		peer.Close()
		if _, err := c.Read(buf); err != io.EOF {
			t.Fatalf("stamp %v: read after the peer closed: %v, want EOF", stamp, err)
		}

		// Close from another goroutine ends a blocked read with net.ErrClosed.
		c2, _ := pair(t, ln, stamp)
		go func() { time.Sleep(20 * time.Millisecond); c2.Close() }()
		if _, err := c2.Read(buf); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("stamp %v: read on a closed conn: %v, want net.ErrClosed", stamp, err)
		}
		if _, err := c2.Write(buf); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("stamp %v: write on a closed conn: %v, want net.ErrClosed", stamp, err)
		}
	}
}

// TestIOArrived checks that a stamped read says when its bytes reached the
// socket, not when they were read: between the peer's write and the read.
func TestIOArrived(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, peer := pair(t, ln, true)
	buf := make([]byte, 64)
	// The kernel turns receive timestamps on in deferred work the first
	// time a socket asks for them (net_enable_timestamp): on a host where
	// no socket had them, the first segments after that carry none, and
	// Arrived is 0 for them (the daemon then counts from the read). Wait,
	// bounded, for the first stamped read; then every read must be stamped.
	for deadline := time.Now().Add(5 * time.Second); ; {
		if _, err := peer.Write([]byte("warm")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		if Arrived(c) != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no read was stamped in 5 s: SO_TIMESTAMPNS gives no receive time")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 3 {
		before := time.Now().UnixNano()
		if _, err := peer.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		sent := time.Now().UnixNano()
		time.Sleep(30 * time.Millisecond) // the bytes wait in the socket
		readAt := time.Now().UnixNano()
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		got := Arrived(c)
		if got < before || got > sent || got >= readAt {
			t.Fatalf("round %d: arrived %d; want within the write [%d, %d], before the read at %d", i, got, before, sent, readAt)
		}
	}
	// Without stamps there is no arrival.
	c2, peer2 := pair(t, ln, false)
	peer2.Write([]byte("x"))
	if _, err := c2.Read(buf); err != nil || Arrived(c2) != 0 {
		t.Fatalf("unstamped: read %v, arrived %d; want 0", err, Arrived(c2))
	}
	if Arrived(peer2) != 0 {
		t.Fatalf("Arrived of a plain net.Conn: %d, want 0", Arrived(peer2))
	}
}

// TestIOUnix: unix-socket connections are wrapped, without stamps.
func TestIOUnix(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, peer := pair(t, ln, true)
	go peer.Write([]byte("hello"))
	buf := make([]byte, 8)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "hello" || Arrived(c) != 0 {
		t.Fatalf("read %q, %v, arrived %d; want hello and no arrival", buf[:n], err, Arrived(c))
	}
	if _, err := c.Write([]byte("back")); err != nil {
		t.Fatal(err)
	}
	if n, err := peer.Read(buf); err != nil || string(buf[:n]) != "back" {
		t.Fatalf("peer read %q, %v", buf[:n], err)
	}
}

// TestIOLeavesOthers: what is not a plain socket keeps net's path.
func TestIOLeavesOthers(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := NewIO(a, true); got != a {
		t.Fatalf("a pipe was wrapped: %T", got)
	}
}

func BenchmarkIO(b *testing.B) {
	for _, stamp := range []bool{false, true} {
		name := "read"
		if stamp {
			name = "recvmsg"
		}
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			peer, _ := net.Dial("tcp", ln.Addr().String())
			defer peer.Close()
			a, _ := ln.Accept()
			c := NewIO(a, stamp)
			defer c.Close()
			msg := make([]byte, 64)
			buf := make([]byte, 4096)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := peer.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, buf[:len(msg)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
