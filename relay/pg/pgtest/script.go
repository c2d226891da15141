package pgtest

// A scripted peer, after pgx's internal/pgmock: a list of steps, each
// sending bytes or expecting the next message, played against one side of
// a session over any net.Conn (net.Pipe in the relay's tests). A script
// plays either side: the server a session dials, or a client.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/sqlfw/sqlfw/wire/pg"
)

// Step is one step of a Script. Tests may add their own (to order two
// scripts' steps, say).
type Step interface {
	// Play plays the step on c.
	Play(c net.Conn) error
}

// Script is a peer's part in a session, step by step.
type Script struct {
	Steps []Step
	// Timeout bounds each read (default 5 s): a step that waits for a
	// message the session never sends fails instead of hanging.
	Timeout time.Duration
}

// Run plays the script on c and reports the first step that failed.
func (s *Script) Run(c net.Conn) error {
	t := s.Timeout
	if t == 0 {
		t = 5 * time.Second
	}
	for i, st := range s.Steps {
		_ = c.SetReadDeadline(time.Now().Add(t))
		if err := st.Play(c); err != nil {
			return fmt.Errorf("step %d (%T): %w", i, st, err)
		}
	}
	return nil
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

type sendBytewise []byte

func (s sendBytewise) Play(c net.Conn) error {
	for i := range s {
		if _, err := c.Write(s[i : i+1]); err != nil {
			return err
		}
	}
	return nil
}

// SendBytewise writes msgs one byte per write: over net.Pipe the other
// side's every read then returns one byte.
func SendBytewise(msgs ...[]byte) Step { return sendBytewise(bytes.Join(msgs, nil)) }

// SendFunc writes what f returns when the step is played: a reply built
// from what an earlier step received.
func SendFunc(f func() []byte) Step { return send{f} }

type expect struct {
	startup bool
	check   func(msg []byte) error
}

func (e expect) Play(c net.Conn) error {
	var msg []byte
	var err error
	if e.startup {
		msg, err = readStartup(c)
	} else {
		msg, err = readMessage(c)
	}
	if err != nil {
		return err
	}
	return e.check(msg)
}

// Expect reads the next message and wants it to be want, byte for byte.
func Expect(want []byte) Step {
	return expect{check: func(msg []byte) error {
		if !bytes.Equal(msg, want) {
			return fmt.Errorf("got %q, want %q", msg, want)
		}
		return nil
	}}
}

// ExpectType reads the next message and wants its type to be typ.
func ExpectType(typ byte) Step {
	return ExpectFunc(func(msg []byte) error {
		if msg[0] != typ {
			return fmt.Errorf("got %q, want a message of type %q", msg, typ)
		}
		return nil
	})
}

// ExpectFunc reads the next message (type, length, body) and hands it to
// check.
func ExpectFunc(check func(msg []byte) error) Step { return expect{check: check} }

// ExpectStartup reads a startup-phase packet (length, code, body: a
// StartupMessage, SSLRequest or CancelRequest) and hands it to check (nil:
// any).
func ExpectStartup(check func(pkt []byte) error) Step {
	if check == nil {
		check = func([]byte) error { return nil }
	}
	return expect{startup: true, check: check}
}

type steps []Step

func (l steps) Play(c net.Conn) error {
	for i, st := range l {
		if err := st.Play(c); err != nil {
			return fmt.Errorf("part %d: %w", i, err)
		}
	}
	return nil
}

// ExpectAll expects the messages of b one by one, each byte for byte.
func ExpectAll(b []byte) Step {
	var l steps
	for len(b) >= pg.HeaderLen {
		n := 1 + int(binary.BigEndian.Uint32(b[1:]))
		l = append(l, Expect(b[:n]))
		b = b[n:]
	}
	return l
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

// ExpectByte reads one byte (the answer to an SSLRequest) and wants it to
// be b.
func ExpectByte(b byte) Step { return expectByte(b) }

type expectClosed struct{}

func (expectClosed) Play(c net.Conn) error {
	var b [1]byte
	n, err := c.Read(b[:])
	if n > 0 {
		return fmt.Errorf("got %q, want the connection closed", b[0])
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return fmt.Errorf("got %v, want the connection closed", err)
}

// ExpectClosed wants the other side to close the connection.
func ExpectClosed() Step { return expectClosed{} }

func readMessage(c net.Conn) ([]byte, error) {
	var hdr [pg.HeaderLen]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 || n > 1<<24 {
		return nil, fmt.Errorf("message %q with length %d", hdr[0], n)
	}
	msg := make([]byte, 1+n)
	copy(msg, hdr[:])
	_, err := io.ReadFull(c, msg[pg.HeaderLen:])
	return msg, err
}

func readStartup(c net.Conn) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 8 || n > 10000 {
		return nil, fmt.Errorf("startup packet with length %d", n)
	}
	pkt := make([]byte, n)
	copy(pkt, hdr[:])
	_, err := io.ReadFull(c, pkt[4:])
	return pkt, err
}
