package pg

// The first message on a connection has no type byte: an int32 length that
// counts itself, then an int32 code, then a body that depends on the code:
//
//	00 00 00 08  04 d2 16 2f                       SSLRequest
//	00 00 00 29  00 03 00 00  u s e r 00 a 00 ... 00  StartupMessage 3.0
//
// See "Message Formats" (StartupMessage, SSLRequest, GSSENCRequest,
// CancelRequest) in the PostgreSQL documentation.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Startup codes (src/include/libpq/pqcomm.h).
const (
	CodeSSLRequest    = 80877103 // 1234<<16 | 5679
	CodeGSSENCRequest = 80877104 // 1234<<16 | 5680
	CodeCancelRequest = 80877102 // 1234<<16 | 5678
	// ProtocolMajor3 is any StartupMessage of protocol version 3.x.
	ProtocolMajor3 = 3
)

const (
	// MaxStartupPacket is MAX_STARTUP_PACKET_LENGTH (pqcomm.h).
	MaxStartupPacket = 10000
	minStartupPacket = 8
)

// Startup is one packet of the startup phase. Raw holds the whole packet,
// length included, ready to forward; it aliases the buffer passed in.
type Startup struct {
	Code uint32
	Raw  []byte
}

// IsStartupMessage reports whether the packet opens a session (protocol 3.x).
func (s Startup) IsStartupMessage() bool { return s.Code>>16 == ProtocolMajor3 }

// ReadStartup reads one startup-phase packet into buf (grown if needed) and
// returns it. A length outside [8, MaxStartupPacket] is an error.
func ReadStartup(r io.Reader, buf []byte) (Startup, error) {
	if cap(buf) < minStartupPacket {
		buf = make([]byte, 0, 256)
	}
	buf = buf[:4]
	if _, err := io.ReadFull(r, buf); err != nil {
		return Startup{}, err
	}
	n := binary.BigEndian.Uint32(buf)
	if n < minStartupPacket || n > MaxStartupPacket {
		return Startup{}, fmt.Errorf("%w: startup packet length %d outside [%d, %d]", ErrFrame, n, minStartupPacket, MaxStartupPacket)
	}
	if cap(buf) < int(n) {
		nb := make([]byte, n)
		copy(nb, buf)
		buf = nb
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf[4:]); err != nil {
		return Startup{}, err
	}
	return Startup{Code: binary.BigEndian.Uint32(buf[4:]), Raw: buf}, nil
}

// StartupParams calls fn for each name/value pair of a StartupMessage.
func StartupParams(s Startup, fn func(name, value []byte)) error {
	if !s.IsStartupMessage() {
		return fmt.Errorf("%w: not a StartupMessage (code %d)", ErrFrame, s.Code)
	}
	b := s.Raw[8:]
	for {
		name, rest, ok := cstring(b)
		if !ok {
			return fmt.Errorf("%w: unterminated startup parameter", ErrFrame)
		}
		if len(name) == 0 {
			if len(rest) != 0 {
				return fmt.Errorf("%w: bytes after the startup parameters", ErrFrame)
			}
			return nil
		}
		value, rest2, ok := cstring(rest)
		if !ok {
			return fmt.Errorf("%w: unterminated startup parameter value", ErrFrame)
		}
		fn(name, value)
		b = rest2
	}
}

// CancelKey returns the process id and secret key of a CancelRequest as
// one byte string, in the same form as BackendKeyData's body.
func CancelKey(s Startup) ([]byte, error) {
	if s.Code != CodeCancelRequest || len(s.Raw) < 16 {
		return nil, fmt.Errorf("%w: not a CancelRequest", ErrFrame)
	}
	return s.Raw[8:], nil
}

func cstring(b []byte) (s, rest []byte, ok bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}
