package mysql

// The server speaks first. Its greeting (HandshakeV10) and the client's
// answer (HandshakeResponse41, or the short SSLRequest before a TLS
// handshake) are:
//
//	0a  "5.5.5-10.11.6-MariaDB" 00  conn-id(4)  auth-data-1(8)  00
//	caps-lower(2)  charset(1)  status(2)  caps-upper(2)  auth-data-len(1)
//	reserved(6)  mariadb-ext-caps(4) | reserved(10)
//	auth-data-2(max(13, len-8))  auth-plugin-name 00
//
//	caps(4)  max-packet(4)  charset(1)  filler(19)  mariadb-ext-caps(4) | filler(23)
//	user 00  auth-response  database 00  auth-plugin-name 00  connect-attrs
//
// MariaDB sends its extended capabilities in the last four reserved bytes
// when it clears CLIENT_LONG_PASSWORD (which it calls CLIENT_MYSQL), and a
// MariaDB client answers in kind. MariaDB before 11 prefixes its version
// with "5.5.5-" so that old MySQL replicas accept it. See "Connection Phase
// Packets" in MySQL's protocol documentation and "1 - Connecting" in
// MariaDB's.

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

const (
	// ProtocolVersion10 is the only greeting a server since MySQL 3.21
	// sends (PROTOCOL_VERSION, include/mysql_version.h.in).
	ProtocolVersion10 = 10
	// ScrambleLength is the length of the nonce in the greeting
	// (SCRAMBLE_LENGTH, include/mysql_com.h), 8 bytes in part 1 and the
	// rest (and a terminating zero) in part 2.
	ScrambleLength = 20
	// SSLRequestLen is the payload length of an SSLRequest: a
	// HandshakeResponse41 cut after its filler.
	SSLRequestLen = 32
	// MaxConnectAttrs bounds the connection attributes of a handshake
	// response. libmysqlclient sends at most 64 KiB of them (MySQL
	// Reference Manual, "Performance Schema Connection Attribute Tables");
	// a longer block is refused rather than walked.
	MaxConnectAttrs = 64 << 10
	// mariaDBVersionPrefix is RPL_VERSION_HACK (sql/sql_class.h in
	// MariaDB before 11.0).
	mariaDBVersionPrefix = "5.5.5-"
)

// Handshake is a server's greeting. Its byte slices alias the payload it was
// parsed from, which SetCaps rewrites in place.
type Handshake struct {
	ProtocolVersion byte
	// ServerVersion is the version as sent, "5.5.5-" prefix included.
	ServerVersion []byte
	ConnectionID  uint32
	// AuthData1 and AuthData2 are the two parts of the scramble; AuthData2
	// keeps its terminating zero when the server sent one.
	AuthData1, AuthData2 []byte
	// Caps holds the capability flags, with MariaDB's extended ones in the
	// high half when the server sent them (MariaDB).
	Caps    Caps
	Charset byte
	Status  uint16
	// AuthPlugin is the default authentication plugin's name
	// ("mysql_native_password", "caching_sha2_password", …) when
	// CLIENT_PLUGIN_AUTH is set.
	AuthPlugin []byte
	// MariaDB: the server sent extended capabilities.
	MariaDB bool

	raw                     []byte
	lowerAt, upperAt, extAt int // offsets of the capability parts (0: absent)
}

// Version returns the server's version without MariaDB's "5.5.5-" prefix.
func (h *Handshake) Version() []byte {
	return bytes.TrimPrefix(h.ServerVersion, []byte(mariaDBVersionPrefix))
}

// ParseHandshake parses a HandshakeV10 payload.
func ParseHandshake(p []byte) (Handshake, error) {
	bad := func(what string) (Handshake, error) {
		return Handshake{}, fmt.Errorf("%w: greeting: %s", ErrFrame, what)
	}
	if len(p) == 0 {
		return bad("empty")
	}
	h := Handshake{ProtocolVersion: p[0], raw: p}
	if p[0] != ProtocolVersion10 {
		// An ERR (0xff) here is the server refusing the connection
		// (too many connections, host blocked): the caller forwards it.
		return bad(fmt.Sprintf("protocol version %d", p[0]))
	}
	ver, rest, ok := cstring(p[1:])
	if !ok {
		return bad("unterminated server version")
	}
	h.ServerVersion = ver
	at := len(p) - len(rest)
	if len(rest) < 15 {
		return bad("too short")
	}
	h.ConnectionID = binary.LittleEndian.Uint32(rest)
	h.AuthData1 = rest[4:12]
	if rest[12] != 0 {
		return bad("no filler after the scramble")
	}
	h.lowerAt = at + 13
	h.Caps = Caps(binary.LittleEndian.Uint16(rest[13:]))
	rest = rest[15:]
	if len(rest) == 0 {
		return h, nil // a pre-4.1 greeting ends here
	}
	if len(rest) < 16 {
		return bad("truncated after the capability flags")
	}
	h.Charset = rest[0]
	h.Status = binary.LittleEndian.Uint16(rest[1:])
	h.upperAt = h.lowerAt + 5
	h.Caps |= Caps(binary.LittleEndian.Uint16(rest[3:])) << 16
	authLen := int(rest[5])
	if !h.Caps.Has(CapLongPassword) {
		h.MariaDB = true
		h.extAt = h.upperAt + 9
		h.Caps |= Caps(binary.LittleEndian.Uint32(rest[12:])) << 32
	}
	rest = rest[16:]
	if h.Caps.Has(CapSecureConnection) {
		n := max(13, authLen-8)
		if len(rest) < n {
			return bad("truncated scramble")
		}
		h.AuthData2, rest = rest[:n], rest[n:]
	}
	if h.Caps.Has(CapPluginAuth) {
		name, _, ok := cstring(rest)
		if !ok {
			// MySQL 5.5.7-5.5.9 sent the name without its zero
			name = rest
		}
		h.AuthPlugin = name
	}
	return h, nil
}

// SetCaps writes caps into the greeting the Handshake was parsed from, in
// place, and records them in h.Caps. Only the parts the greeting has are
// written: a greeting without extended capabilities keeps none.
func (h *Handshake) SetCaps(caps Caps) {
	binary.LittleEndian.PutUint16(h.raw[h.lowerAt:], caps.Lower())
	if h.upperAt == 0 {
		caps &= 0xffff
	} else {
		binary.LittleEndian.PutUint16(h.raw[h.upperAt:], caps.Upper())
	}
	if h.extAt == 0 {
		caps &= 0xffffffff
	} else {
		binary.LittleEndian.PutUint32(h.raw[h.extAt:], caps.Extended())
	}
	h.Caps = caps
}

// Strip clears caps from the greeting in place (SetCaps) and returns what
// the server had offered.
func (h *Handshake) Strip(caps Caps) (offered Caps) {
	offered = h.Caps
	h.SetCaps(h.Caps &^ caps)
	return offered
}

// HandshakeResponse is a client's HandshakeResponse41 or SSLRequest. Its
// byte slices alias the payload it was parsed from.
type HandshakeResponse struct {
	// Caps holds the client's flags, MariaDB's extended ones in the high
	// half when the client sent them.
	Caps      Caps
	MaxPacket uint32
	Charset   byte
	// SSLRequest: the packet ends after the filler and asks for TLS; the
	// fields below are empty.
	SSLRequest bool
	User       []byte
	// AuthResponse is the authentication plugin's first answer, however
	// it was encoded (length-encoded, one-byte length, or zero-terminated).
	AuthResponse []byte
	Database     []byte
	AuthPlugin   []byte
	// ConnectAttrs is the block of connection attributes (length-encoded
	// key/value pairs), without its total length; read it with
	// NewAttrs.
	ConnectAttrs []byte
}

// ParseHandshakeResponse parses a HandshakeResponse41 or an SSLRequest
// with the flags the client sent. A pre-4.1 response
// (HandshakeResponse320) is an error: no server the firewall protects
// accepts one.
func ParseHandshakeResponse(p []byte) (HandshakeResponse, error) {
	return ParseHandshakeResponseFor(p, ^Caps(0))
}

// ParseHandshakeResponseFor parses a response as a server whose greeting
// offered offered reads it: the fields a flag brings in (the database,
// the plugin name, the connection attributes, how the auth response's
// length is encoded) are read only when the client set the flag and the
// server offered it. MariaDB (parse_client_handshake_packet in
// sql/sql_acl.cc: thd->client_capabilities &= client_capabilities) and
// MySQL (sql/auth/sql_authentication.cc) both read it so: a client that
// claims a flag it was not offered must not make the relay read a
// different user, database or attributes than the server. Caps keeps
// what the client sent.
func ParseHandshakeResponseFor(p []byte, offered Caps) (HandshakeResponse, error) {
	bad := func(what string) (HandshakeResponse, error) {
		return HandshakeResponse{}, fmt.Errorf("%w: handshake response: %s", ErrFrame, what)
	}
	if len(p) < SSLRequestLen {
		return bad("too short")
	}
	r := HandshakeResponse{
		Caps:      Caps(binary.LittleEndian.Uint32(p)),
		MaxPacket: binary.LittleEndian.Uint32(p[4:]),
		Charset:   p[8],
	}
	if !r.Caps.Has(CapProtocol41) {
		return bad("not protocol 4.1")
	}
	if !r.Caps.Has(CapLongPassword) {
		r.Caps |= Caps(binary.LittleEndian.Uint32(p[28:])) << 32
	}
	if len(p) == SSLRequestLen {
		if !r.Caps.Has(CapSSL) {
			return bad("ends after the filler without CLIENT_SSL")
		}
		r.SSLRequest = true
		return r, nil
	}
	rest := p[SSLRequestLen:]
	caps := r.Caps & offered // what the server reads with
	var ok bool
	if r.User, rest, ok = cstring(rest); !ok {
		return bad("unterminated user")
	}
	switch {
	case caps.Has(CapPluginAuthLenencData):
		// (MariaDB reads a one-byte length without
		// CLIENT_SECURE_CONNECTION, MySQL a length-encoded one: no
		// client sends that, a relay should refuse it)
		r.AuthResponse, rest, ok = ReadLenString(rest)
	case caps.Has(CapSecureConnection):
		if ok = len(rest) > 0 && int(rest[0]) < len(rest); ok {
			r.AuthResponse, rest = rest[1:1+int(rest[0])], rest[1+int(rest[0]):]
		}
	default:
		r.AuthResponse, rest, ok = cstring(rest)
	}
	if !ok {
		return bad("malformed auth response")
	}
	if caps.Has(CapConnectWithDB) && len(rest) > 0 {
		r.Database, rest = cstringOrRest(rest)
	}
	if caps.Has(CapPluginAuth) && len(rest) > 0 {
		r.AuthPlugin, rest = cstringOrRest(rest)
	}
	if caps.Has(CapConnectAttrs) && len(rest) > 0 {
		attrs, _, err := connectAttrs(rest)
		if err != nil {
			return bad(err.Error())
		}
		r.ConnectAttrs = attrs
	}
	// What may follow (MySQL 8's zstd compression level) is not read.
	return r, nil
}

// cstringOrRest reads a string<NUL>, or the rest of b when the zero is
// missing at the end of a packet (as some old clients send it).
func cstringOrRest(b []byte) (s, rest []byte) {
	s, rest, ok := cstring(b)
	if !ok {
		return b, nil
	}
	return s, rest
}

// connectAttrs splits off a length-encoded block of connection attributes
// and checks that it is a whole number of key/value pairs.
func connectAttrs(b []byte) (attrs, rest []byte, err error) {
	n, rest, ok := ReadLenInt(b)
	if !ok || n > uint64(len(rest)) {
		return nil, nil, fmt.Errorf("truncated connection attributes")
	}
	if n > MaxConnectAttrs {
		return nil, nil, fmt.Errorf("connection attributes of %d bytes, limit %d", n, MaxConnectAttrs)
	}
	attrs, rest = rest[:n], rest[n:]
	it := NewAttrs(attrs)
	for it.Next() {
	}
	if it.Err() {
		return nil, nil, fmt.Errorf("malformed connection attributes")
	}
	return attrs, rest, nil
}

// Attrs iterates over a block of connection attributes without
// allocating:
//
//	for it := NewAttrs(r.ConnectAttrs); it.Next(); { use(it.Key, it.Value) }
type Attrs struct {
	b          []byte
	Key, Value []byte
	bad        bool
}

// NewAttrs returns an iterator over the pairs of block.
func NewAttrs(block []byte) Attrs { return Attrs{b: block} }

// Next moves to the next pair; it returns false at the end or on a
// malformed pair (Err).
func (a *Attrs) Next() bool {
	if len(a.b) == 0 || a.bad {
		return false
	}
	k, rest, ok := ReadLenString(a.b)
	if ok {
		a.Value, rest, ok = ReadLenString(rest)
	}
	if !ok {
		a.bad, a.b = true, nil
		return false
	}
	a.Key, a.b = k, rest
	return true
}

// Err reports whether the block ended inside a pair.
func (a *Attrs) Err() bool { return a.bad }

// IsSSLRequest reports whether a client's first packet asks for TLS.
func IsSSLRequest(p []byte) bool {
	return len(p) == SSLRequestLen && Caps(binary.LittleEndian.Uint32(p)).Has(CapSSL|CapProtocol41)
}

// Authentication-phase packets a server sends after the client's response
// (besides OK and ERR), by their first byte.
const (
	// AuthSwitchRequest (0xfe): plugin name, zero, plugin data. It is
	// told from an EOF by its phase: EOF packets are not sent there.
	AuthSwitchRequest = 0xfe
	// AuthMoreData (0x01): plugin data (caching_sha2_password's fast-auth
	// result, an RSA public key, …).
	AuthMoreData = 0x01
)

// ParseAuthSwitch returns the plugin name and data of an AuthSwitchRequest
// payload. They alias p.
func ParseAuthSwitch(p []byte) (plugin, data []byte, err error) {
	if len(p) < 1 || p[0] != AuthSwitchRequest {
		return nil, nil, fmt.Errorf("%w: not an auth switch request", ErrFrame)
	}
	plugin, data, ok := cstring(p[1:])
	if !ok {
		// a bare 0xfe asks for the old (pre-4.1) password scheme
		return p[1:], nil, nil
	}
	return plugin, data, nil
}

// LoginUser is the user a server authenticates for a handshake response's
// user field: MariaDB and MySQL take the quotes off a name that starts and
// ends with one (parse_client_handshake_packet: "If username starts and
// ends in "'", chop them off"), so that 'root' logs in as root. It aliases
// user. (COM_CHANGE_USER's user is taken as sent.)
func LoginUser(user []byte) []byte {
	if len(user) > 1 && user[0] == '\'' && user[len(user)-1] == '\'' {
		return user[1 : len(user)-1]
	}
	return user
}
