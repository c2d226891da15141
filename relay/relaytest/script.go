package relaytest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// Step is one step of a Script. Tests may add their own (to order two
// scripts' steps, say).
type Step interface {
	// Play plays the step on c.
	Play(c net.Conn) error
}

// StepFunc is a Step made of a function.
type StepFunc func(c net.Conn) error

// Play calls f.
func (f StepFunc) Play(c net.Conn) error { return f(c) }

// Framing reads one whole message of a protocol (header and body) from r.
type Framing func(r io.Reader) ([]byte, error)

// Script is a peer's part in a session, step by step.
type Script struct {
	Steps []Step
	// Timeout bounds each read (default 5 s): a step that waits for a
	// message the session never sends fails instead of hanging.
	Timeout time.Duration
}

// Run plays the script on c and reports the first step that failed. The
// steps see c through a *Conn, which StartTLS replaces with its TLS
// connection.
func (s *Script) Run(c net.Conn) error {
	t := s.Timeout
	if t == 0 {
		t = 5 * time.Second
	}
	box, ok := c.(*Conn)
	if !ok {
		box = &Conn{Conn: c}
	}
	for i, st := range s.Steps {
		_ = box.SetReadDeadline(time.Now().Add(t))
		if err := st.Play(box); err != nil {
			return fmt.Errorf("step %d (%T): %w", i, st, err)
		}
	}
	return nil
}

// Conn is a script's connection; a TLS step replaces what it holds.
type Conn struct{ net.Conn }

// Raw is the connection under c's boxes.
func Raw(c net.Conn) net.Conn {
	for {
		b, ok := c.(*Conn)
		if !ok {
			return c
		}
		c = b.Conn
	}
}

type send struct{ b func() []byte }

func (s send) Play(c net.Conn) error {
	_, err := c.Write(s.b())
	return err
}

// Send writes msgs in one write.
func Send(msgs ...[]byte) Step {
	b := bytes.Join(msgs, nil)
	return send{func() []byte { return b }}
}

type sendAside []byte

func (s sendAside) Play(c net.Conn) error {
	go func() { _, _ = c.Write(s) }()
	return nil
}

// SendAside writes msgs from another goroutine and goes on at once: the
// other side may answer, and close, before it has read them all (a
// message it refuses by its header), and a write that then fails is no
// failure of the script.
func SendAside(msgs ...[]byte) Step { return sendAside(bytes.Join(msgs, nil)) }

// SendFunc writes what f returns when the step is played: a reply built
// from what an earlier step received.
func SendFunc(f func() []byte) Step { return send{f} }

type sendBytewise []byte

func (s sendBytewise) Play(c net.Conn) error {
	for i := range s {
		if _, err := c.Write(s[i : i+1]); err != nil {
			return err
		}
	}
	return nil
}

// SendBytewise writes msgs one byte per write: the other side's every read
// then returns at most one byte.
func SendBytewise(msgs ...[]byte) Step { return sendBytewise(bytes.Join(msgs, nil)) }

// ExpectFunc reads the next message as f frames it and hands it to check.
func ExpectFunc(f Framing, check func(msg []byte) error) Step {
	return StepFunc(func(c net.Conn) error {
		m, err := f(c)
		if err != nil {
			return err
		}
		return check(m)
	})
}

// Expect reads the messages of want one by one, as f frames them, and
// wants each byte for byte.
func Expect(f Framing, want []byte) Step {
	var msgs [][]byte
	for r := bytes.NewReader(want); r.Len() > 0; {
		m, err := f(r)
		if err != nil {
			panic(fmt.Sprintf("relaytest.Expect: %q does not frame: %v", want, err))
		}
		msgs = append(msgs, m)
	}
	return StepFunc(func(c net.Conn) error {
		for _, w := range msgs {
			got, err := f(c)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, w) {
				return fmt.Errorf("got %q, want %q", got, w)
			}
		}
		return nil
	})
}

type expectByte byte

func (e expectByte) Play(c net.Conn) error {
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return err
	}
	if b[0] != byte(e) {
		return fmt.Errorf("got %q, want %q", b[0], byte(e))
	}
	return nil
}

// ExpectByte reads one byte and wants it to be b.
func ExpectByte(b byte) Step { return expectByte(b) }

type expectClosed struct{}

func (expectClosed) Play(c net.Conn) error {
	var b [1]byte
	n, err := c.Read(b[:])
	if n > 0 {
		return fmt.Errorf("got %q, want the connection closed", b[0])
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) {
		return nil
	}
	return fmt.Errorf("got %v, want the connection closed", err)
}

// ExpectClosed wants the other side to close the connection (or its
// writing half: the read ends with EOF, not a timeout).
func ExpectClosed() Step { return expectClosed{} }

type expectEnd struct{}

func (expectEnd) Play(c net.Conn) error {
	_, err := io.Copy(io.Discard, c)
	if err == nil || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) {
		return nil
	}
	return fmt.Errorf("got %v, want the connection closed", err)
}

// ExpectEnd reads whatever comes until the other side closes (what a
// failed TLS handshake leaves in flight, say), and fails when it does
// not close within the read's timeout.
func ExpectEnd() Step { return expectEnd{} }

// CloseWrite half-closes the script's TCP connection.
func CloseWrite() Step {
	return StepFunc(func(c net.Conn) error {
		cw, ok := Raw(c).(interface{ CloseWrite() error })
		if !ok {
			return fmt.Errorf("%T cannot half-close (Harness.TCP)", Raw(c))
		}
		return cw.CloseWrite()
	})
}

type steps []Step

func (l steps) Play(c net.Conn) error {
	for i, st := range l {
		if err := st.Play(c); err != nil {
			return fmt.Errorf("part %d (%T): %w", i, st, err)
		}
	}
	return nil
}

// Steps plays l as one step.
func Steps(l ...Step) Step { return steps(l) }

// Do runs f (to act on the session between two messages, say).
func Do(f func()) Step { return StepFunc(func(net.Conn) error { f(); return nil }) }

// StartTLS runs a TLS handshake on the script's connection, as the client
// or the server, and goes on over it.
func StartTLS(cfg *tls.Config, server bool) Step {
	return StepFunc(func(c net.Conn) error {
		b, ok := c.(*Conn)
		if !ok {
			return fmt.Errorf("StartTLS outside a Script")
		}
		var tc *tls.Conn
		if server {
			tc = tls.Server(b.Conn, cfg)
		} else {
			tc = tls.Client(b.Conn, cfg)
		}
		if err := tc.Handshake(); err != nil {
			return fmt.Errorf("TLS handshake: %w", err)
		}
		b.Conn = tc
		return nil
	})
}

// Play runs script on one end of a new connection pair (loopback TCP with
// tcp, else net.Pipe) and returns the other end and the script's outcome.
// Both ends are closed when the test ends.
func Play(t TB, script *Script, tcp bool) (net.Conn, <-chan error) {
	t.Helper()
	var ours, theirs net.Conn
	if tcp {
		ours, theirs = TCPPair(t)
	} else {
		ours, theirs = net.Pipe()
	}
	t.Cleanup(func() { ours.Close(); theirs.Close() })
	done := make(chan error, 1)
	go func() {
		box := &Conn{Conn: ours}
		err := script.Run(box)
		box.Close()
		done <- err
	}()
	return theirs, done
}

// TB is the part of testing.TB the kit uses.
type TB interface {
	Helper()
	Cleanup(func())
	Fatal(args ...any)
	Errorf(format string, args ...any)
	Log(args ...any)
}

// TCPPair is two ends of a loopback TCP connection.
func TCPPair(t TB) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-acc
	if b == nil {
		t.Fatal("accept failed")
	}
	return a, b
}
