package mysql

// Response packets, by their first byte:
//
//	00 affected(lenenc) last-id(lenenc) status(2) warnings(2) info…   OK
//	fe warnings(2) status(2)                                          EOF (less than 9 bytes)
//	fe affected(lenenc) last-id(lenenc) status(2) warnings(2) …        OK ending a result set (CLIENT_DEPRECATE_EOF)
//	ff code(2) '#' sqlstate(5) message                                ERR
//	fb filename                                                       LOCAL INFILE request
//	01..fa, fc, fd                                                    column count (lenenc)
//
// For example the OK after "insert into t values (1)" with autocommit on:
//
//	07 00 00 01  00 01 00 02 00 00 00
//
// See "Generic Response Packets" and "COM_QUERY Response" in MySQL's
// protocol documentation and "4 - Server Response Packets" in MariaDB's.

import (
	"encoding/binary"
	"fmt"
)

// Response packet headers.
const (
	HeaderOK     = 0x00
	HeaderInfile = 0xfb
	HeaderEOF    = 0xfe
	HeaderERR    = 0xff
	// eofMaxLen: an EOF packet is shorter than 9 bytes, which tells it
	// from a text row starting with an 8-byte length.
	eofMaxLen = 9
)

// OK is an OK packet (or the OK-form 0xfe packet that ends a result set
// under CLIENT_DEPRECATE_EOF). Info and SessionState alias the payload.
type OK struct {
	AffectedRows, LastInsertID uint64
	Status, Warnings           uint16
	Info                       []byte
	// SessionState holds the session-state changes (read with
	// NewSessionState) when CLIENT_SESSION_TRACK is on and the status has
	// StatusSessionStateChanged.
	SessionState []byte
}

// ParseOK parses an OK payload (header 0x00 or 0xfe); caps are the
// connection's negotiated capabilities.
func ParseOK(p []byte, caps Caps) (OK, error) {
	var ok OK
	bad := func(what string) (OK, error) { return OK{}, fmt.Errorf("%w: OK packet: %s", ErrFrame, what) }
	if len(p) == 0 || (p[0] != HeaderOK && p[0] != HeaderEOF) {
		return bad("wrong header")
	}
	var good bool
	rest := p[1:]
	if ok.AffectedRows, rest, good = ReadLenInt(rest); !good {
		return bad("truncated affected rows")
	}
	if ok.LastInsertID, rest, good = ReadLenInt(rest); !good {
		return bad("truncated last insert id")
	}
	if caps.Has(CapProtocol41) {
		if len(rest) < 4 {
			return bad("truncated status")
		}
		ok.Status, ok.Warnings, rest = binary.LittleEndian.Uint16(rest), binary.LittleEndian.Uint16(rest[2:]), rest[4:]
	} else if caps.Has(CapTransactions) {
		if len(rest) < 2 {
			return bad("truncated status")
		}
		ok.Status, rest = binary.LittleEndian.Uint16(rest), rest[2:]
	}
	if !caps.Has(CapSessionTrack) {
		ok.Info = rest
		return ok, nil
	}
	if len(rest) == 0 {
		return ok, nil // servers omit an empty info string at the end
	}
	if ok.Info, rest, good = ReadLenString(rest); !good {
		return bad("truncated info")
	}
	if ok.Status&StatusSessionStateChanged != 0 && len(rest) > 0 {
		if ok.SessionState, _, good = ReadLenString(rest); !good {
			return bad("truncated session state")
		}
	}
	return ok, nil
}

// Session-state change types (enum_session_state_type,
// include/mysql_com.h).
const (
	TrackSystemVariables            = 0 // SESSION_TRACK_SYSTEM_VARIABLES: name, value
	TrackSchema                     = 1 // SESSION_TRACK_SCHEMA: the new default schema
	TrackStateChange                = 2 // SESSION_TRACK_STATE_CHANGE: "1"
	TrackGTIDs                      = 3 // SESSION_TRACK_GTIDS
	TrackTransactionCharacteristics = 4 // SESSION_TRACK_TRANSACTION_CHARACTERISTICS
	TrackTransactionState           = 5 // SESSION_TRACK_TRANSACTION_STATE
)

// SessionState iterates over the changes of OK.SessionState without
// allocating:
//
//	for it := NewSessionState(ok.SessionState); it.Next(); { it.Type, it.Data }
type SessionState struct {
	b    []byte
	Type byte
	// Data is the change's data, whose layout depends on Type (Variable,
	// Schema read the common ones).
	Data []byte
	bad  bool
}

// NewSessionState returns an iterator over a session-state block.
func NewSessionState(b []byte) SessionState { return SessionState{b: b} }

// Next moves to the next change; false at the end or on a malformed one.
func (s *SessionState) Next() bool {
	if len(s.b) == 0 || s.bad {
		return false
	}
	typ := s.b[0]
	data, rest, ok := ReadLenString(s.b[1:])
	if !ok {
		s.bad, s.b = true, nil
		return false
	}
	s.Type, s.Data, s.b = typ, data, rest
	return true
}

// Err reports whether the block ended inside a change.
func (s *SessionState) Err() bool { return s.bad }

// Variable returns the name and value of a TrackSystemVariables change
// (such as "sql_mode", "character_set_client").
func (s *SessionState) Variable() (name, value []byte, ok bool) {
	name, rest, ok := ReadLenString(s.Data)
	if !ok {
		return nil, nil, false
	}
	value, _, ok = ReadLenString(rest)
	return name, value, ok
}

// Schema returns the new default schema of a TrackSchema change.
func (s *SessionState) Schema() ([]byte, bool) {
	name, _, ok := ReadLenString(s.Data)
	return name, ok
}

// EOF is an EOF packet.
type EOF struct{ Warnings, Status uint16 }

// ParseEOF parses an EOF payload (0xfe, shorter than 9 bytes). A pre-4.1
// EOF is the bare header.
func ParseEOF(p []byte) (EOF, error) {
	if len(p) == 0 || p[0] != HeaderEOF || len(p) >= eofMaxLen {
		return EOF{}, fmt.Errorf("%w: not an EOF packet", ErrFrame)
	}
	if len(p) < 5 {
		return EOF{}, nil
	}
	return EOF{Warnings: binary.LittleEndian.Uint16(p[1:]), Status: binary.LittleEndian.Uint16(p[3:])}, nil
}

// Err is an ERR packet. SQLState and Message alias the payload.
type Err struct {
	Code uint16
	// SQLState is empty when the server did not send one (before the
	// capabilities are agreed, or without CLIENT_PROTOCOL_41).
	SQLState []byte
	Message  []byte
}

// ErrProgress is the error number of a MariaDB progress report
// (CapMariaDBProgress): an ERR packet that does not end the command.
const ErrProgress = 0xffff

// ParseErr parses an ERR payload. The SQLSTATE is read when its '#' marker
// is there, whatever the capabilities, since a server refusing a
// connection sends it before they are agreed.
func ParseErr(p []byte) (Err, error) {
	if len(p) < 3 || p[0] != HeaderERR {
		return Err{}, fmt.Errorf("%w: not an ERR packet", ErrFrame)
	}
	e := Err{Code: binary.LittleEndian.Uint16(p[1:])}
	rest := p[3:]
	if e.Code != ErrProgress && len(rest) >= 6 && rest[0] == '#' {
		e.SQLState, rest = rest[1:6], rest[6:]
	}
	e.Message = rest
	return e, nil
}

// MaxErrMessage bounds the message AppendErr writes (MYSQL_ERRMSG_SIZE,
// include/mysql_com.h): clients copy it into a buffer of that size.
const MaxErrMessage = 512

// AppendErr appends an ERR packet with sequence id seq, error number code,
// a five-character sqlstate (padded or cut to five) and message (cut to
// MaxErrMessage-1 bytes). It allocates only when dst must grow.
func AppendErr(dst []byte, seq int, code uint16, sqlstate, message string) []byte {
	if len(message) > MaxErrMessage-1 {
		message = message[:MaxErrMessage-1]
	}
	n := 1 + 2 + 1 + 5 + len(message)
	dst = AppendHeader(dst, n, seq)
	dst = append(dst, HeaderERR, byte(code), byte(code>>8), '#')
	for i := 0; i < 5; i++ {
		c := byte('0')
		if i < len(sqlstate) {
			c = sqlstate[i]
		}
		dst = append(dst, c)
	}
	return append(dst, message...)
}

// ParseColumnCount parses the packet that starts a result set: its column
// count and whether column definitions follow. MariaDB's
// MARIADB_CLIENT_CACHE_METADATA and MySQL's
// CLIENT_OPTIONAL_RESULTSET_METADATA let a server skip them and say so in
// one byte after the count (after it, not before, so that the packet cannot
// be taken for an OK).
func ParseColumnCount(p []byte, caps Caps) (n uint64, metadata bool, err error) {
	n, rest, ok := ReadLenInt(p)
	if !ok || n == 0 {
		return 0, false, fmt.Errorf("%w: malformed column count", ErrFrame)
	}
	metadata = true
	if caps&(CapMariaDBCacheMetadata|CapOptionalResultsetMetadata) != 0 && len(rest) > 0 {
		metadata = rest[0] != 0
	}
	return n, metadata, nil
}

// InfileName returns the file name of a LOCAL INFILE request payload.
func InfileName(p []byte) ([]byte, error) {
	if len(p) == 0 || p[0] != HeaderInfile {
		return nil, fmt.Errorf("%w: not a LOCAL INFILE request", ErrFrame)
	}
	return p[1:], nil
}

// PrepareOK is COM_STMT_PREPARE's answer.
type PrepareOK struct {
	StmtID          uint32
	Columns, Params uint16
	Warnings        uint16
	// Metadata: definitions of the parameters and columns follow (always,
	// unless CLIENT_OPTIONAL_RESULTSET_METADATA says otherwise).
	Metadata bool
}

// ParsePrepareOK parses a COM_STMT_PREPARE_OK payload.
func ParsePrepareOK(p []byte, caps Caps) (PrepareOK, error) {
	if len(p) < 10 || p[0] != HeaderOK {
		return PrepareOK{}, fmt.Errorf("%w: malformed COM_STMT_PREPARE_OK", ErrFrame)
	}
	r := PrepareOK{
		StmtID:   binary.LittleEndian.Uint32(p[1:]),
		Columns:  binary.LittleEndian.Uint16(p[5:]),
		Params:   binary.LittleEndian.Uint16(p[7:]),
		Metadata: true,
	}
	if len(p) >= 12 {
		r.Warnings = binary.LittleEndian.Uint16(p[10:])
	}
	if caps.Has(CapOptionalResultsetMetadata) && len(p) >= 13 {
		r.Metadata = p[12] != 0
	}
	return r, nil
}
