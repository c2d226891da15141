package pgtest

// PostgreSQL's words for relaytest's scripted peer: its steps read the
// protocol's messages (a type byte and a length) and startup packets (a
// length and a code).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/sqlfw/sqlfw/relay/relaytest"
	"github.com/sqlfw/sqlfw/wire/pg"
)

// Step, Script and the steps that know no protocol are relaytest's.
type (
	Step   = relaytest.Step
	Script = relaytest.Script
)

var (
	Send         = relaytest.Send
	SendBytewise = relaytest.SendBytewise
	SendFunc     = relaytest.SendFunc
	ExpectByte   = relaytest.ExpectByte
	ExpectClosed = relaytest.ExpectClosed
)

// Expect reads the next message and wants it to be want, byte for byte.
func Expect(want []byte) Step {
	return ExpectFunc(func(msg []byte) error {
		if !bytes.Equal(msg, want) {
			return fmt.Errorf("got %q, want %q", msg, want)
		}
		return nil
	})
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
func ExpectFunc(check func(msg []byte) error) Step { return relaytest.ExpectFunc(ReadMessage, check) }

// ExpectStartup reads a startup-phase packet (length, code, body: a
// StartupMessage, SSLRequest or CancelRequest) and hands it to check (nil:
// any).
func ExpectStartup(check func(pkt []byte) error) Step {
	if check == nil {
		check = func([]byte) error { return nil }
	}
	return relaytest.ExpectFunc(readStartup, check)
}

// ExpectAll expects the messages of b one by one, each byte for byte.
func ExpectAll(b []byte) Step { return relaytest.Expect(ReadMessage, b) }

// ReadMessage reads one message whole (relaytest.Framing).
func ReadMessage(c io.Reader) ([]byte, error) {
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

func readStartup(c io.Reader) ([]byte, error) {
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
