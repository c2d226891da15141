package mysql

// Command packets: a command byte, then a body that depends on it.
//
//	03 "select 1"                                COM_QUERY
//	03 00 01 "select 1"                          COM_QUERY with CLIENT_QUERY_ATTRIBUTES, no attributes
//	16 "select ?"                                COM_STMT_PREPARE
//	17 01 00 00 00  00  01 00 00 00 …            COM_STMT_EXECUTE of statement 1
//	02 "sbtest"                                  COM_INIT_DB
//
// The decoders take a payload (Payload or FirstFragment of what the Framer
// returned) whose first byte is the command, and alias it. See "Text
// Protocol" and "Prepared Statements" in MySQL's protocol documentation and
// "2 - Text Protocol" and "3 - Binary Protocol" in MariaDB's.

import (
	"encoding/binary"
	"fmt"
)

// StmtLastPrepared is the statement id MariaDB reads as "the statement this
// connection prepared last" (MariaDB 10.2+): a client may send
// COM_STMT_PREPARE and COM_STMT_EXECUTE of it together without waiting for
// PREPARE_OK.
const StmtLastPrepared = 0xffffffff

// Field types of the binary protocol (enum_field_types,
// include/field_types.h) that query attributes and bound parameters use.
const (
	TypeDecimal    = 0x00
	TypeTiny       = 0x01
	TypeShort      = 0x02
	TypeLong       = 0x03
	TypeFloat      = 0x04
	TypeDouble     = 0x05
	TypeNull       = 0x06
	TypeTimestamp  = 0x07
	TypeLongLong   = 0x08
	TypeInt24      = 0x09
	TypeDate       = 0x0a
	TypeTime       = 0x0b
	TypeDateTime   = 0x0c
	TypeYear       = 0x0d
	TypeNewDate    = 0x0e
	TypeVarchar    = 0x0f
	TypeBit        = 0x10
	TypeTimestamp2 = 0x11
	TypeDateTime2  = 0x12
	TypeTime2      = 0x13
	TypeJSON       = 0xf5
	TypeNewDecimal = 0xf6
	TypeEnum       = 0xf7
	TypeSet        = 0xf8
	TypeTinyBlob   = 0xf9
	TypeMediumBlob = 0xfa
	TypeLongBlob   = 0xfb
	TypeBlob       = 0xfc
	TypeVarString  = 0xfd
	TypeString     = 0xfe
	TypeGeometry   = 0xff
)

func badCommand(cmd byte, what string) error {
	return fmt.Errorf("%w: %s: %s", ErrFrame, CommandName(cmd), what)
}

// QueryText returns the SQL of a COM_QUERY payload. With
// CLIENT_QUERY_ATTRIBUTES negotiated (caps), the attributes before it are
// skipped; their values are not decoded. The text runs to the end of the
// packet (string<EOF>).
func QueryText(p []byte, caps Caps) ([]byte, error) {
	if len(p) == 0 || p[0] != ComQuery {
		return nil, badCommand(ComQuery, "not a COM_QUERY")
	}
	b := p[1:]
	if !caps.Has(CapQueryAttributes) {
		return b, nil
	}
	n, rest, ok := ReadLenInt(b)
	if !ok {
		return nil, badCommand(ComQuery, "no parameter count")
	}
	sets, rest, ok := ReadLenInt(rest)
	if !ok || sets != 1 {
		return nil, badCommand(ComQuery, "parameter set count is not 1")
	}
	if n == 0 {
		return rest, nil
	}
	if n > uint64(len(rest)) {
		return nil, badCommand(ComQuery, "more attributes than bytes")
	}
	rest, err := skipParams(rest, int(n), true)
	if err != nil {
		return nil, badCommand(ComQuery, err.Error())
	}
	return rest, nil
}

// skipParams skips a block of n binary-protocol parameters: the null bitmap,
// the new-params-bound flag, the types (each followed by a name, for query
// attributes), and the values of the parameters that are not NULL.
func skipParams(b []byte, n int, named bool) ([]byte, error) {
	nb := (n + 7) / 8
	if len(b) < nb+1 {
		return nil, fmt.Errorf("truncated null bitmap")
	}
	nulls := b[:nb]
	if b[nb] != 1 {
		return nil, fmt.Errorf("attributes without their types")
	}
	types := b[nb+1:]
	// values starts after the types (and names)
	values := types
	for i := 0; i < n; i++ {
		if len(values) < 2 {
			return nil, fmt.Errorf("truncated parameter types")
		}
		if !paramType(values[0], values[1]) {
			return nil, fmt.Errorf("parameter %d of a type the server reads otherwise", i)
		}
		values = values[2:]
		if named {
			var ok bool
			if _, values, ok = ReadLenString(values); !ok {
				return nil, fmt.Errorf("truncated attribute name")
			}
		}
	}
	for i := 0; i < n; i++ {
		typ := types[0]
		types = types[2:]
		if named {
			_, types, _ = ReadLenString(types)
		}
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		sz, ok := binaryValueLen(typ, values)
		if !ok {
			return nil, fmt.Errorf("truncated value of parameter %d", i)
		}
		values = values[sz:]
	}
	return values, nil
}

// paramType reports whether a parameter of type typ with flags (the two
// bytes a block binds it with) is read by the server as binaryValueLen
// reads it. MariaDB 10.11 (sql_prepare.cc; measured against it by e2e
// TestRound10ExecuteTypes) binds INT24, YEAR, BIT and GEOMETRY as NULL and
// reads none of their bytes, refuses TIMESTAMP2, DATETIME2, TIME2, JSON, a
// type it does not know, a flag other than unsigned (0x80), and NULL with
// its null bit clear; a reader that took their bytes would read the values
// after them from other places than the server. Those are refused here, as
// the server refuses what it can read (ER_WRONG_ARGUMENTS), so that a value
// the relay judges is the value the server binds.
func paramType(typ, flags byte) bool {
	if flags&^0x80 != 0 {
		return false
	}
	switch typ {
	case TypeDecimal, TypeTiny, TypeShort, TypeLong, TypeFloat, TypeDouble, TypeNull, TypeTimestamp,
		TypeLongLong, TypeDate, TypeTime, TypeDateTime, TypeNewDate, TypeVarchar, TypeNewDecimal,
		TypeEnum, TypeSet, TypeTinyBlob, TypeMediumBlob, TypeLongBlob, TypeBlob, TypeVarString, TypeString:
		return true
	}
	return false
}

// binaryValueLen returns the length of a parameter's binary-protocol value
// of type typ at the start of b ("Binary Protocol Value" in the protocol
// docs), as the server reads it; false when it is cut short, of a type
// paramType refuses, NULL (a NULL value has its null bit set instead), or
// a date or time whose length byte is 0xfb or more (the server reads it as
// a length-encoded integer, the reader as one byte; no date is that long).
func binaryValueLen(typ byte, b []byte) (int, bool) {
	n := 0
	switch typ {
	case TypeTiny:
		n = 1
	case TypeShort:
		n = 2
	case TypeLong, TypeFloat:
		n = 4
	case TypeLongLong, TypeDouble:
		n = 8
	case TypeDate, TypeDateTime, TypeTimestamp, TypeTime, TypeNewDate:
		if len(b) < 1 || b[0] >= 0xfb {
			return 0, false
		}
		n = 1 + int(b[0])
	case TypeDecimal, TypeVarchar, TypeNewDecimal, TypeEnum, TypeSet, TypeTinyBlob, TypeMediumBlob,
		TypeLongBlob, TypeBlob, TypeVarString, TypeString:
		v, rest, ok := ReadLenInt(b)
		if !ok || v > uint64(len(rest)) {
			return 0, false
		}
		n = len(b) - len(rest) + int(v)
	default:
		return 0, false
	}
	if n > len(b) {
		return 0, false
	}
	return n, true
}

// PrepareText returns the SQL of a COM_STMT_PREPARE payload.
func PrepareText(p []byte) ([]byte, error) {
	if len(p) == 0 || p[0] != ComStmtPrepare {
		return nil, badCommand(ComStmtPrepare, "not a COM_STMT_PREPARE")
	}
	return p[1:], nil
}

// StmtID returns the statement id of a COM_STMT_EXECUTE, _SEND_LONG_DATA,
// _CLOSE, _RESET, _FETCH or _BULK_EXECUTE payload, all of which put it
// right after the command byte. It may be StmtLastPrepared.
func StmtID(p []byte) (uint32, error) {
	if len(p) == 0 {
		return 0, badCommand(0, "empty")
	}
	min := 5
	switch p[0] {
	case ComStmtExecute:
		min = 10 // id, flags, iteration count
	case ComStmtSendLongData:
		min = 7 // id, parameter number
	case ComStmtFetch:
		min = 9 // id, row count
	case ComStmtBulkExecute:
		min = 7 // id, flags
	case ComStmtClose, ComStmtReset:
	default:
		return 0, badCommand(p[0], "carries no statement id")
	}
	if len(p) < min {
		return 0, badCommand(p[0], "too short")
	}
	return binary.LittleEndian.Uint32(p[1:]), nil
}

// Cursor types in COM_STMT_EXECUTE's flags.
const (
	CursorTypeNoCursor   = 0x00
	CursorTypeReadOnly   = 0x01
	CursorTypeForUpdate  = 0x02
	CursorTypeScrollable = 0x04
)

// ExecuteFlags returns the flags byte of a COM_STMT_EXECUTE payload (its
// cursor type: a cursor changes the response, see Response).
func ExecuteFlags(p []byte) (byte, error) {
	if len(p) < 10 || p[0] != ComStmtExecute {
		return 0, badCommand(ComStmtExecute, "too short")
	}
	return p[5], nil
}

// InitDBSchema returns the schema of a COM_INIT_DB payload.
func InitDBSchema(p []byte) ([]byte, error) {
	if len(p) == 0 || p[0] != ComInitDB {
		return nil, badCommand(ComInitDB, "not a COM_INIT_DB")
	}
	return p[1:], nil
}

// FieldListTable returns the table of a COM_FIELD_LIST payload (the
// wildcard after it is not returned).
func FieldListTable(p []byte) ([]byte, error) {
	if len(p) == 0 || p[0] != ComFieldList {
		return nil, badCommand(ComFieldList, "not a COM_FIELD_LIST")
	}
	t, _ := cstringOrRest(p[1:])
	return t, nil
}

// COM_REFRESH's sub-command bits (include/mysql_com.h REFRESH_*): one
// byte, of which the server reads each bit as one FLUSH or RESET.
const (
	RefreshGrant   = 0x01 // FLUSH PRIVILEGES
	RefreshLog     = 0x02 // FLUSH LOGS
	RefreshTables  = 0x04 // FLUSH TABLES
	RefreshHosts   = 0x08 // FLUSH HOSTS
	RefreshStatus  = 0x10 // FLUSH STATUS
	RefreshThreads = 0x20 // the thread cache
	RefreshSlave   = 0x40 // RESET SLAVE
	RefreshMaster  = 0x80 // RESET MASTER
)

// RefreshStatements returns the statements a COM_REFRESH amounts to, one
// per bit of its sub-command, appended to dst and separated by "; " (none
// when no bit is set). The thread cache has no statement of its own: it is
// FLUSH THREADS, a text the engine does not parse.
func RefreshStatements(dst, p []byte) ([]byte, error) {
	if len(p) < 2 || p[0] != ComRefresh {
		return nil, badCommand(ComRefresh, "no sub-command")
	}
	for i, stmt := range [8]string{"FLUSH PRIVILEGES", "FLUSH LOGS", "FLUSH TABLES", "FLUSH HOSTS", "FLUSH STATUS", "FLUSH THREADS", "RESET SLAVE", "RESET MASTER"} {
		if p[1]&(1<<i) == 0 {
			continue
		}
		if len(dst) > 0 {
			dst = append(dst, "; "...)
		}
		dst = append(dst, stmt...)
	}
	return dst, nil
}

// Options of COM_SET_OPTION.
const (
	OptionMultiStatementsOn  = 0
	OptionMultiStatementsOff = 1
)

// SetOption returns the option of a COM_SET_OPTION payload.
func SetOption(p []byte) (uint16, error) {
	if len(p) != 3 || p[0] != ComSetOption {
		return 0, badCommand(ComSetOption, "malformed")
	}
	return binary.LittleEndian.Uint16(p[1:]), nil
}

// ChangeUser is a COM_CHANGE_USER. Its slices alias the payload.
type ChangeUser struct {
	User, AuthResponse, Database []byte
	// Charset is 0 when the client did not send one.
	Charset      uint16
	AuthPlugin   []byte
	ConnectAttrs []byte
}

// ParseChangeUser parses a COM_CHANGE_USER payload; caps are the
// connection's negotiated capabilities.
func ParseChangeUser(p []byte, caps Caps) (ChangeUser, error) {
	var c ChangeUser
	if len(p) == 0 || p[0] != ComChangeUser {
		return c, badCommand(ComChangeUser, "not a COM_CHANGE_USER")
	}
	var ok bool
	rest := p[1:]
	if c.User, rest, ok = cstring(rest); !ok {
		return c, badCommand(ComChangeUser, "unterminated user")
	}
	if caps.Has(CapSecureConnection) {
		if len(rest) == 0 || int(rest[0]) >= len(rest) {
			return c, badCommand(ComChangeUser, "truncated auth response")
		}
		c.AuthResponse, rest = rest[1:1+int(rest[0])], rest[1+int(rest[0]):]
	} else if c.AuthResponse, rest, ok = cstring(rest); !ok {
		return c, badCommand(ComChangeUser, "unterminated auth response")
	}
	if c.Database, rest, ok = cstring(rest); !ok {
		return c, badCommand(ComChangeUser, "unterminated database")
	}
	if len(rest) == 0 {
		return c, nil
	}
	if len(rest) < 2 {
		return c, badCommand(ComChangeUser, "truncated character set")
	}
	c.Charset, rest = binary.LittleEndian.Uint16(rest), rest[2:]
	if caps.Has(CapPluginAuth) && len(rest) > 0 {
		c.AuthPlugin, rest = cstringOrRest(rest)
	}
	if caps.Has(CapConnectAttrs) && len(rest) > 0 {
		attrs, _, err := connectAttrs(rest)
		if err != nil {
			return c, badCommand(ComChangeUser, err.Error())
		}
		c.ConnectAttrs = attrs
	}
	return c, nil
}
