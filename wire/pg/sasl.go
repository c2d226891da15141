package pg

// SASL authentication (SCRAM), as far as a relay that terminates the
// client's TLS must read it: which mechanisms the server offers, and which
// one the client picked with which channel-binding flag. See "SASL
// Authentication" in the PostgreSQL documentation and RFC 5802 §7 (the
// gs2-header: "n" the client does not support channel binding, "y" it does
// but thinks the server does not, "p=NAME" it binds to channel NAME).

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// MsgAuthentication is the backend Authentication* message type.
const MsgAuthentication = 'R'

// Authentication request codes (src/include/libpq/protocol.h, pqcomm.h).
const (
	AuthOK = 0
	// AuthCleartextPassword asks for the password in clear (the password
	// method, and PAM, LDAP and RADIUS, which need it).
	AuthCleartextPassword = 3
	AuthSASL              = 10
	AuthSASLContinue      = 11
	AuthSASLFinal         = 12
)

// SCRAM mechanism names.
const (
	SCRAMSHA256     = "SCRAM-SHA-256"
	SCRAMSHA256Plus = "SCRAM-SHA-256-PLUS"
)

// AuthCode returns the request code of an Authentication message.
func AuthCode(msg []byte) (int32, error) {
	if len(msg) < HeaderLen+4 || msg[0] != MsgAuthentication {
		return 0, fmt.Errorf("%w: Authentication message shorter than its code", ErrFrame)
	}
	return int32(binary.BigEndian.Uint32(msg[HeaderLen:])), nil
}

// SASLMechanisms calls fn for each mechanism an AuthenticationSASL message
// offers (the names alias msg).
func SASLMechanisms(msg []byte, fn func(name []byte)) error {
	if code, err := AuthCode(msg); err != nil || code != AuthSASL {
		return fmt.Errorf("%w: not an AuthenticationSASL message", ErrFrame)
	}
	rest := msg[HeaderLen+4:]
	for {
		name, r, ok := cstring(rest)
		if !ok {
			return fmt.Errorf("%w: AuthenticationSASL has an unterminated mechanism list", ErrFrame)
		}
		if len(name) == 0 {
			if len(r) != 0 {
				return fmt.Errorf("%w: AuthenticationSASL has bytes after its list", ErrFrame)
			}
			return nil
		}
		fn(name)
		rest = r
	}
}

// AppendSASLWithout appends the AuthenticationSASL message msg without the
// mechanism drop, and reports whether msg offered it.
func AppendSASLWithout(dst, msg []byte, drop string) ([]byte, bool, error) {
	start := len(dst)
	dst = append(dst, MsgAuthentication, 0, 0, 0, 0, 0, 0, 0, AuthSASL)
	dropped := false
	err := SASLMechanisms(msg, func(name []byte) {
		if string(name) == drop {
			dropped = true
			return
		}
		dst = append(dst, name...)
		dst = append(dst, 0)
	})
	if err != nil {
		return dst[:start], false, err
	}
	dst = append(dst, 0)
	binary.BigEndian.PutUint32(dst[start+1:], uint32(len(dst)-start-1))
	return dst, dropped, nil
}

// SASLInitial is what a SASLInitialResponse says: the mechanism chosen and
// the gs2 channel-binding flag of its client-first-message ('n', 'y' or
// 'p'; 0 when the message carries no data).
type SASLInitial struct {
	Mechanism []byte // aliases the message
	Binding   byte
}

// ParseSASLInitial reads a SASLInitialResponse ('p' sent in answer to
// AuthenticationSASL).
func ParseSASLInitial(msg []byte) (SASLInitial, error) {
	var si SASLInitial
	if len(msg) < HeaderLen || msg[0] != MsgPassword {
		return si, fmt.Errorf("%w: not a SASLInitialResponse", ErrFrame)
	}
	mech, rest, ok := cstring(msg[HeaderLen:])
	if !ok || len(mech) == 0 || len(rest) < 4 {
		return si, fmt.Errorf("%w: SASLInitialResponse lacks its mechanism or data length", ErrFrame)
	}
	si.Mechanism = mech
	n := int32(binary.BigEndian.Uint32(rest))
	data := rest[4:]
	switch {
	case n == -1 && len(data) == 0:
		return si, nil
	case n < 0 || int(n) != len(data):
		return si, fmt.Errorf("%w: SASLInitialResponse data length %d does not match its %d bytes", ErrFrame, n, len(data))
	}
	if len(data) > 0 {
		si.Binding = data[0]
	}
	switch si.Binding {
	case 'n', 'y':
		if !bytes.HasPrefix(data[1:], []byte(",")) {
			return si, fmt.Errorf("%w: SASLInitialResponse gs2 header is malformed", ErrFrame)
		}
	case 'p':
		if !bytes.HasPrefix(data[1:], []byte("=")) {
			return si, fmt.Errorf("%w: SASLInitialResponse gs2 header is malformed", ErrFrame)
		}
	case 0:
	default:
		// Not SCRAM's gs2 header: another mechanism's data. Leave it to
		// the server.
		si.Binding = 0
	}
	return si, nil
}
