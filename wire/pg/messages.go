package pg

import (
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Frontend (client to server) message types the firewall reads.
const (
	MsgQuery        = 'Q'
	MsgParse        = 'P'
	MsgBind         = 'B'
	MsgExecute      = 'E'
	MsgSync         = 'S'
	MsgFlush        = 'H'
	MsgFunctionCall = 'F'
	MsgTerminate    = 'X'
	MsgDescribe     = 'D'
	MsgCopyData     = 'd'
	MsgCopyDone     = 'c'
	MsgCopyFail     = 'f'
	// MsgPassword carries PasswordMessage, SASLInitialResponse,
	// SASLResponse and GSSResponse.
	MsgPassword = 'p'
)

// FrontendTypes is every message type a protocol 3.0 client may send after
// its startup packet (PostgreSQL 15: the switch in PostgresMain,
// src/backend/tcop/postgres.c, plus 'p' during authentication and the COPY
// messages of src/backend/commands/copyfromparse.c). Anything else is
// garbage: the server would reject it too, but sqlfwd does not relay it.
var FrontendTypes = func() *[256]bool {
	var t [256]bool
	for _, c := range []byte{MsgQuery, MsgParse, MsgBind, MsgExecute, MsgSync, MsgFlush, MsgFunctionCall,
		MsgTerminate, MsgDescribe, MsgClose, MsgCopyData, MsgCopyDone, MsgCopyFail, MsgPassword} {
		t[c] = true
	}
	return &t
}()

// CheckBody validates the body of the small frontend messages sqlfwd
// relays without reading them otherwise: Describe and Close ('S' or 'P',
// then a name), Execute (a portal name, then an int32 row limit), and the
// empty Sync, Flush, Terminate and CopyDone. Other types are not checked.
func CheckBody(msg []byte) error {
	body := msg[HeaderLen:]
	switch msg[0] {
	case MsgDescribe, MsgClose:
		if len(body) < 2 || (body[0] != 'S' && body[0] != 'P') {
			return fmt.Errorf("%w: malformed %s", ErrFrame, frontendName(msg[0]))
		}
		if _, rest, ok := cstring(body[1:]); !ok || len(rest) != 0 {
			return fmt.Errorf("%w: malformed %s", ErrFrame, frontendName(msg[0]))
		}
	case MsgExecute:
		if _, rest, ok := cstring(body); !ok || len(rest) != 4 {
			return fmt.Errorf("%w: malformed Execute", ErrFrame)
		}
	case MsgSync, MsgFlush, MsgTerminate, MsgCopyDone:
		if len(body) != 0 {
			return fmt.Errorf("%w: %s with a body", ErrFrame, frontendName(msg[0]))
		}
	}
	return nil
}

func frontendName(t byte) string {
	switch t {
	case MsgDescribe:
		return "Describe"
	case MsgClose:
		return "Close"
	case MsgSync:
		return "Sync"
	case MsgFlush:
		return "Flush"
	case MsgTerminate:
		return "Terminate"
	case MsgCopyDone:
		return "CopyDone"
	}
	return fmt.Sprintf("message %q", t)
}

// Backend (server to client) message types the firewall reads.
const (
	MsgReadyForQuery  = 'Z'
	MsgErrorResponse  = 'E'
	MsgBackendKeyData = 'K'
)

// Transaction status in ReadyForQuery.
const (
	TxIdle   = 'I'
	TxActive = 'T'
	TxFailed = 'E'
)

// QueryText returns the SQL of a Query message (header included), without
// its terminating zero. It aliases msg.
func QueryText(msg []byte) ([]byte, error) {
	body := msg[HeaderLen:]
	s, rest, ok := cstring(body)
	if !ok || len(rest) != 0 {
		return nil, fmt.Errorf("%w: Query is not one zero-terminated string", ErrFrame)
	}
	return s, nil
}

// ParseFields returns the statement name and SQL of a Parse message. They
// alias msg.
func ParseFields(msg []byte) (name, query []byte, err error) {
	body := msg[HeaderLen:]
	name, rest, ok := cstring(body)
	if !ok {
		return nil, nil, fmt.Errorf("%w: Parse has an unterminated statement name", ErrFrame)
	}
	query, rest, ok = cstring(rest)
	if !ok {
		return nil, nil, fmt.Errorf("%w: Parse has an unterminated query", ErrFrame)
	}
	if len(rest) < 2 {
		return nil, nil, fmt.Errorf("%w: Parse lacks its parameter count", ErrFrame)
	}
	n := int(binary.BigEndian.Uint16(rest))
	if len(rest) != 2+4*n {
		return nil, nil, fmt.Errorf("%w: Parse parameter types do not match their count", ErrFrame)
	}
	return name, query, nil
}

// BindNames returns the portal and statement names of a Bind message.
func BindNames(msg []byte) (portal, stmt []byte, err error) {
	portal, rest, ok := cstring(msg[HeaderLen:])
	if !ok {
		return nil, nil, fmt.Errorf("%w: Bind has an unterminated portal name", ErrFrame)
	}
	stmt, _, ok = cstring(rest)
	if !ok {
		return nil, nil, fmt.Errorf("%w: Bind has an unterminated statement name", ErrFrame)
	}
	return portal, stmt, nil
}

// FunctionCallOID returns the function object id of a FunctionCall message.
func FunctionCallOID(msg []byte) (uint32, error) {
	if len(msg) < HeaderLen+4 {
		return 0, fmt.Errorf("%w: FunctionCall too short", ErrFrame)
	}
	return binary.BigEndian.Uint32(msg[HeaderLen:]), nil
}

// ReadyStatus returns the transaction status byte of a ReadyForQuery.
func ReadyStatus(msg []byte) (byte, error) {
	if len(msg) != HeaderLen+1 {
		return 0, fmt.Errorf("%w: ReadyForQuery of length %d", ErrFrame, len(msg))
	}
	return msg[HeaderLen], nil
}

// ErrorField returns the value of one field (such as 'C' for the SQLSTATE
// or 'M' for the message) of an ErrorResponse or NoticeResponse, aliasing
// msg, or nil when it is absent.
func ErrorField(msg []byte, code byte) []byte {
	b := msg[HeaderLen:]
	for len(b) > 0 && b[0] != 0 {
		c := b[0]
		v, rest, ok := cstring(b[1:])
		if !ok {
			return nil
		}
		if c == code {
			return v
		}
		b = rest
	}
	return nil
}

// Severities of an ErrorResponse: ERROR ends the statement, FATAL the
// session.
const (
	SeverityError = "ERROR"
	SeverityFatal = "FATAL"
)

// AppendError appends an ErrorResponse. detail and hint may be empty.
func AppendError(dst []byte, severity, sqlstate, message, detail, hint string) []byte {
	e := pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                sqlstate,
		Message:             message,
		Detail:              detail,
		Hint:                hint,
	}
	out, err := e.Encode(dst)
	if err != nil {
		// only possible past 1 GiB; our texts are short
		panic(err)
	}
	return out
}

// AppendQuery appends a Query message.
func AppendQuery(dst []byte, sql string) []byte {
	out, err := (&pgproto3.Query{String: sql}).Encode(dst)
	if err != nil {
		panic(err)
	}
	return out
}

// AppendParse appends a Parse message with no parameter types.
func AppendParse(dst []byte, name, sql string) []byte {
	out, err := (&pgproto3.Parse{Name: name, Query: sql}).Encode(dst)
	if err != nil {
		panic(err)
	}
	return out
}

// MsgClose is the frontend Close message (of a statement or a portal).
const MsgClose = 'C'

// CloseTarget returns what a Close message closes: 'S' (a prepared
// statement) or 'P' (a portal), and its name.
func CloseTarget(msg []byte) (kind byte, name []byte, err error) {
	body := msg[HeaderLen:]
	if len(body) < 2 {
		return 0, nil, fmt.Errorf("%w: Close too short", ErrFrame)
	}
	name, rest, ok := cstring(body[1:])
	if !ok || len(rest) != 0 || (body[0] != 'S' && body[0] != 'P') {
		return 0, nil, fmt.Errorf("%w: malformed Close", ErrFrame)
	}
	return body[0], name, nil
}

// AppendBind appends a Bind of statement stmt to portal, with no
// parameters and default result formats.
func AppendBind(dst []byte, portal, stmt string) []byte {
	out, err := (&pgproto3.Bind{DestinationPortal: portal, PreparedStatement: stmt}).Encode(dst)
	if err != nil {
		panic(err)
	}
	return out
}

// Backend messages that complete a Parse and a Close, and that start COPY
// FROM STDIN.
const (
	MsgParseComplete  = '1'
	MsgCloseComplete  = '3'
	MsgCopyInResponse = 'G'
)

// ExecutePortal returns the portal name of an Execute message. It aliases
// msg.
func ExecutePortal(msg []byte) ([]byte, error) {
	portal, rest, ok := cstring(msg[HeaderLen:])
	if !ok || len(rest) != 4 {
		return nil, fmt.Errorf("%w: malformed Execute", ErrFrame)
	}
	return portal, nil
}

// AppendExecute appends an Execute of portal with no row limit.
func AppendExecute(dst []byte, portal string) []byte {
	out, err := (&pgproto3.Execute{Portal: portal}).Encode(dst)
	if err != nil {
		panic(err)
	}
	return out
}
