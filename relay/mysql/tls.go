package mysql

// TLS on both legs of a MySQL / MariaDB session (crypto/tls, Go's
// defaults, TLS 1.2 or later), as relay/pg/tls.go does for PostgreSQL.
//
// MySQL negotiates TLS inside its handshake. The greeting offers
// CLIENT_SSL; a client that wants TLS answers with an SSL request, its
// handshake response cut after the filler (32 bytes, sequence id 1), runs
// the TLS handshake on the bare connection, and sends the whole response
// through TLS (sequence id 2):
//
//	server                      client
//	greeting (seq 0, CLIENT_SSL)  →
//	                            ←  SSL request (seq 1): caps|CLIENT_SSL, max packet, charset, filler
//	        ⇄ TLS handshake ⇄
//	                            ←  handshake response (seq 2), in TLS
//	auth rounds, OK (seq 3…)   →
//
// Client leg: with tls.cert and tls.key the greeting sqlfw relays offers
// CLIENT_SSL (whether the server offers it or not: the legs are
// independent), and sqlfw runs the client's handshake. With tls.require a
// client that sends its response in clear is refused with MySQL's own
// error for it, ER_SECURE_TRANSPORT_REQUIRED (3159, HY000), the one
// require_secure_transport gives. With tls.client_ca a client certificate
// signed by that CA is required. The certificate is re-read on every
// reload: new handshakes get the new one, open sessions keep theirs.
//
// Server leg: with upstream_tls sqlfw sends the server its own SSL request
// (the client's response cut after the filler) and runs its own handshake
// before it forwards the response; a server whose greeting lacks
// CLIENT_SSL is refused unless the mode is prefer. CLIENT_SSL in the
// response the server gets says what its leg is (MariaDB takes any
// response with it for an SSL request), and while authentication runs the
// two legs' sequence ids differ by the SSL request one of them carried
// (Framer.Renumber).
//
// Authentication passes through unchanged. caching_sha2_password's full
// authentication sends the password in clear when the client's connection
// is TLS and RSA-encrypted when it is not, and the server expects it the
// way its own connection is: it works through sqlfw when both legs are TLS
// or both are clear (its fast path works always). The password is never
// read or logged.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

const (
	// errSecureTransport is ER_SECURE_TRANSPORT_REQUIRED: tls.require and
	// a client in clear.
	errSecureTransport = 3159
	msgSecureTransport = "sqlfw: connections using insecure transport are prohibited: this database accepts TLS connections only (connect with --ssl, ssl-mode=REQUIRED or tls=true)"
	// tlsRecordHandshake and tlsMajor open a TLS handshake record (type
	// 22, version 3.x): what a client that starts TLS at once sends.
	tlsRecordHandshake = 0x16
	tlsMajor           = 3
	upstreamTLSPrefer  = "prefer"
)

// errTLSRecord: TLS where a MySQL packet belongs.
var errTLSRecord = errors.New("a TLS record where a handshake packet belongs")

// packetTooLarge is a handshake packet whose header claims more than
// preAuthMaxPacket bytes; seq is its sequence id.
type packetTooLarge struct{ seq, n int }

func (e *packetTooLarge) Error() string {
	return fmt.Sprintf("%v: a handshake packet of %d bytes, limit %d", wire.ErrFrame, e.n, preAuthMaxPacket)
}

func (e *packetTooLarge) Unwrap() error { return wire.ErrFrame }

// readHandshakePacket reads one packet of the handshake whole and nothing
// past it (a TLS handshake may follow it on the same connection). A packet
// longer than preAuthMaxPacket is an error; the buffer grows with the data,
// not with the length the header claims. fromClient: a TLS record is told
// apart (errTLSRecord).
func readHandshakePacket(c io.Reader, fromClient bool) ([]byte, error) {
	var h [wire.HeaderLen]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: a truncated packet header", wire.ErrFrame)
		}
		return nil, err
	}
	// 16 03 01..03: a record of TLS 1.0-1.2's record layer, which every
	// ClientHello uses; as a packet it would claim 66326 bytes or more.
	if fromClient && h[0] == tlsRecordHandshake && h[1] == tlsMajor && h[2] >= 1 && h[2] <= 3 {
		return nil, errTLSRecord
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if n > preAuthMaxPacket {
		return nil, &packetTooLarge{seq: int(h[3]), n: n}
	}
	b := make([]byte, wire.HeaderLen, wire.HeaderLen+min(n, 512))
	copy(b, h[:])
	for len(b) < wire.HeaderLen+n {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		k, err := c.Read(b[len(b):min(cap(b), wire.HeaderLen+n)])
		b = b[:len(b)+k]
		if err != nil && len(b) < wire.HeaderLen+n {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: a truncated packet", wire.ErrFrame)
			}
			return nil, err
		}
	}
	return b, nil
}

// setSSLCap sets or clears CLIENT_SSL in the handshake response or SSL
// request packet m, in place.
func setSSLCap(m []byte, on bool) {
	caps := wire.Caps(binary.LittleEndian.Uint32(m[wire.HeaderLen:]))
	if on {
		caps |= wire.CapSSL
	} else {
		caps &^= wire.CapSSL | wire.CapSSLVerifyServerCert
	}
	binary.LittleEndian.PutUint32(m[wire.HeaderLen:], uint32(caps))
}
