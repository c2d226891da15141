package daemon

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

func TestRawIO(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := newRawIO(accepted)
	if _, ok := c.(*rawIO); !ok {
		t.Fatalf("a TCP conn was not wrapped: %T", c)
	}
	defer c.Close()

	// 8 MiB is far more than the socket buffers: the write must wait for
	// room (EAGAIN) and continue after partial writes.
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
		t.Fatalf("write: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("bytes differ")
	}

	// Reads wait for data; a deadline ends the wait as on a net.Conn.
	go peer.Write([]byte("hello"))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want a deadline error", err)
	}
	c.SetReadDeadline(time.Time{})
	peer.Close()
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want EOF", err)
	}
	// Close from another goroutine ends a blocked read with net.ErrClosed.
	p2, _ := net.Dial("tcp", ln.Addr().String())
	defer p2.Close()
	a2, _ := ln.Accept()
	c2 := newRawIO(a2)
	go func() { time.Sleep(20 * time.Millisecond); c2.Close() }()
	if _, err := c2.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed conn: %v, want net.ErrClosed", err)
	}
}
