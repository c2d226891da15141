package pg

// Protocol versions and extensions. A StartupMessage names protocol 3.N
// and may carry `_pq_.name` options (protocol extensions, never run-time
// settings). A server that supports less answers NegotiateProtocolVersion
// ('v': the newest minor it speaks, then the options it did not recognise)
// before anything else; one that supports all of it says nothing. The
// versions this relay follows are 3.0 and 3.2 (PostgreSQL 18: only the
// cancel key grows, BackendKeyData's secret up to 256 bytes and the
// CancelRequest carrying it, which cancel.go keeps whole); it knows no
// extension. So:
//
//   - a request for 3.0 to 3.2 goes to the server as sent, and a
//     NegotiateProtocolVersion from it (PostgreSQL 14–17 answer 3.2 with
//     newest version 3.0, sent whole as 3<<16 | 0, not as the minor alone
//     as the documentation has it) reaches the client untouched;
//   - a request above 3.2 goes to the server as 3.2 with the same
//     parameters; when the server then says nothing, the client gets the
//     NegotiateProtocolVersion sqlfwd would give as a server (newest minor
//     2, the options unrecognised) before the server's first message, so it
//     never speaks a version the relay cannot read;
//   - an extension the server accepts (a `_pq_.` option the client sent and
//     the server did not list as unrecognised) ends the session with
//     08P01 before the client sees the server accept it: its messages could
//     not be read.

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

const (
	// maxMinor is the newest protocol 3 minor version the relay follows.
	maxMinor = 2
	// msgNegotiateProtocolVersion is the server's 'v'.
	msgNegotiateProtocolVersion = 'v'
	// protoOptionPrefix opens a protocol extension's name (the server's
	// own test, case-sensitive: ProcessStartupPacket).
	protoOptionPrefix = "_pq_."
)

// protoVersion is what the client asked for and what is settled.
type protoVersion struct {
	// minor is the version the client asked for; options its `_pq_.`
	// names. Set by start before the dial.
	minor   uint16
	options []string
	// capped: the startup message went to the server as 3.2.
	capped bool
	// settled is toClient's: the server's first message has been seen
	// (a NegotiateProtocolVersion, or anything else).
	settled bool
}

// protoStartup reads the startup message's version and extensions and
// returns the packet to send to the server: the client's, or a copy that
// asks for 3.2 when the client asked for more.
func (s *session) protoStartup(startup wire.Startup, names []string) []byte {
	s.pv.minor = uint16(startup.Code & 0xffff)
	for _, n := range names {
		if len(n) > len(protoOptionPrefix) && n[:len(protoOptionPrefix)] == protoOptionPrefix {
			s.pv.options = append(s.pv.options, n)
		}
	}
	if s.pv.minor <= maxMinor {
		return startup.Raw
	}
	s.pv.capped = true
	raw := append([]byte(nil), startup.Raw...)
	binary.BigEndian.PutUint32(raw[4:], wire.ProtocolMajor3<<16|maxMinor)
	return raw
}

// protoServer is toClient's for each server message until the version is
// settled. It reports false when the session must end (the client has its
// error); a NegotiateProtocolVersion sqlfwd owes the client is written
// ahead of msg, which stays pending.
func (s *session) protoServer(fr *wire.Framer, msg, scratch []byte) ([]byte, bool) {
	if s.pv.settled {
		return scratch, true
	}
	s.pv.settled = true
	switch msg[0] {
	case msgNegotiateProtocolVersion:
		newest, unrecognised, err := parseNegotiate(msg)
		if err != nil {
			s.ServerMalformed(s.log, "message", err)
			writeFatal(s.Client, sqlstateProtocolViolation, "sqlfw: malformed NegotiateProtocolVersion from the server")
			return scratch, false
		}
		// PostgreSQL sends the whole version (3<<16 | minor) where the
		// documentation says the minor; both are read.
		major, minor := newest>>16, newest&0xffff
		if (major != 0 && major != wire.ProtocolMajor3) || minor > maxMinor || minor > uint32(s.pv.minor) {
			return scratch, s.protoRefuse(fmt.Sprintf("the server offers protocol %d.%d, which sqlfw does not follow (it follows 3.0 to 3.%d)", max(major, wire.ProtocolMajor3), minor, maxMinor))
		}
		for _, o := range s.pv.options {
			if !containsString(unrecognised, o) {
				return scratch, s.protoRefuse("the server accepted protocol extension " + o + ", which sqlfw cannot follow")
			}
		}
		return scratch, true
	case wire.MsgAuthentication:
		// The server took the version it was sent and every option.
		if len(s.pv.options) > 0 {
			return scratch, s.protoRefuse("the server accepted protocol extension " + s.pv.options[0] + ", which sqlfw cannot follow")
		}
		if !s.pv.capped {
			return scratch, true
		}
		// What came before msg, then the NegotiateProtocolVersion; msg
		// stays pending for the rest of toClient's handling.
		scratch = append(scratch[:0], fr.TakeUntil(msg)...)
		scratch = appendNegotiate(scratch, wire.ProtocolMajor3<<16|maxMinor, nil)
		return scratch, s.WriteClient(scratch) == nil
	default:
		// An ErrorResponse: the server refused the startup message.
		return scratch, true
	}
}

// protoRefuse ends a session whose server settled on what the relay cannot
// read: the client gets 08P01 and the server's message is never relayed.
func (s *session) protoRefuse(why string) bool {
	s.env.Observer.Count(relay.ProtocolErrors, 1)
	s.log.Warn("closing connection: " + why)
	writeFatal(s.Client, sqlstateProtocolViolation, "sqlfw: "+why)
	return false
}

// parseNegotiate reads a NegotiateProtocolVersion: Int32 newest version,
// Int32 count, that many option names.
func parseNegotiate(msg []byte) (newest uint32, options []string, err error) {
	b := msg[wire.HeaderLen:]
	if len(b) < 8 {
		return 0, nil, fmt.Errorf("%w: NegotiateProtocolVersion of %d bytes", wire.ErrFrame, len(b))
	}
	newest = binary.BigEndian.Uint32(b)
	n := binary.BigEndian.Uint32(b[4:])
	b = b[8:]
	for i := uint32(0); i < n; i++ {
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			return 0, nil, fmt.Errorf("%w: NegotiateProtocolVersion option %d unterminated", wire.ErrFrame, i)
		}
		options = append(options, string(b[:j]))
		b = b[j+1:]
	}
	if len(b) != 0 {
		return 0, nil, fmt.Errorf("%w: %d bytes after NegotiateProtocolVersion's options", wire.ErrFrame, len(b))
	}
	return newest, options, nil
}

// appendNegotiate appends a NegotiateProtocolVersion.
func appendNegotiate(b []byte, newest uint32, options []string) []byte {
	start := len(b)
	b = append(b, msgNegotiateProtocolVersion, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, newest)
	b = binary.BigEndian.AppendUint32(b, uint32(len(options)))
	for _, o := range options {
		b = append(b, o...)
		b = append(b, 0)
	}
	binary.BigEndian.PutUint32(b[start+1:], uint32(len(b)-start-1))
	return b
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
