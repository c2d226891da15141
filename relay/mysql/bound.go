package mysql

// A bare parameter's condition (DELETE FROM t WHERE ?), and a write whose
// rows a condition of its parameters decides (DELETE FROM t WHERE ? = 1,
// engine ParamWrite), are decided by the values bound when the statement
// runs (engine JudgeBound): for COM_STMT_EXECUTE, the values in its
// parameter block, read as the server reads them; for EXECUTE ... USING,
// the literals it names, and user variables or expressions whose values
// sqlfw does not know (usingValues).

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// paramSource is where an execution's values are: a COM_STMT_EXECUTE
// block or one row of a COM_STMT_BULK_EXECUTE.
type paramSource interface {
	Len() int
	// param is value i as the protocol encodes it; unknown when it is not
	// in the block (long data, DEFAULT, IGNORE).
	param(i int) (typ byte, unsigned bool, v []byte, null, unknown bool)
}

type execSource struct{ e wire.ExecuteParams }

func (s *execSource) Len() int { return s.e.Len() }

func (s *execSource) param(i int) (byte, bool, []byte, bool, bool) {
	typ, b, null, long := s.e.Param(i)
	return typ, i < s.e.Len() && s.e.Types[2*i+1]&0x80 != 0, b, null, long
}

type rowSource struct{ r wire.BulkRow }

func (s *rowSource) Len() int { return s.r.Len() }

func (s *rowSource) param(i int) (byte, bool, []byte, bool, bool) {
	return s.r.Param(i)
}

// boundValues are the engine.ParamValues of a paramSource.
type boundValues struct{ src paramSource }

func (v boundValues) Count() int { return v.src.Len() }

func (v boundValues) Truth(i int) (bool, bool) {
	typ, unsigned, b, null, unknown := v.src.param(i)
	switch {
	case null:
		return false, false
	case unknown:
		return true, true
	}
	return valueTruth(typ, unsigned, b)
}

// AppendSQL writes a value as a literal the server reads as the value it
// binds: integers in their signedness, floating-point numbers as doubles
// with every digit (an exponent makes the literal a DOUBLE, as the bound
// value is), decimals as decimals, strings of printable ASCII without a
// backslash quoted (” for '). Dates, times, bits, other bytes and long
// data are not written (not known: the engine takes them as any value).
func (v boundValues) AppendSQL(dst []byte, i int) ([]byte, bool) {
	typ, unsigned, b, null, unknown := v.src.param(i)
	switch {
	case null:
		return append(dst, "NULL"...), true
	case unknown:
		return dst, false
	}
	integer := func(n uint64, bits int) ([]byte, bool) {
		if unsigned {
			return strconv.AppendUint(dst, n, 10), true
		}
		return strconv.AppendInt(dst, int64(n<<(64-bits))>>(64-bits), 10), true
	}
	switch typ {
	case wire.TypeTiny:
		if len(b) == 1 {
			return integer(uint64(b[0]), 8)
		}
	case wire.TypeShort, wire.TypeYear:
		if len(b) == 2 {
			return integer(uint64(binary.LittleEndian.Uint16(b)), 16)
		}
	case wire.TypeLong, wire.TypeInt24:
		if len(b) == 4 {
			return integer(uint64(binary.LittleEndian.Uint32(b)), 32)
		}
	case wire.TypeLongLong:
		if len(b) == 8 {
			return integer(binary.LittleEndian.Uint64(b), 64)
		}
	case wire.TypeFloat, wire.TypeDouble:
		var f float64
		switch {
		case typ == wire.TypeFloat && len(b) == 4:
			f = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case typ == wire.TypeDouble && len(b) == 8:
			f = math.Float64frombits(binary.LittleEndian.Uint64(b))
		default:
			return dst, false
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return dst, false
		}
		return strconv.AppendFloat(dst, f, 'e', -1, 64), true
	case wire.TypeNull:
		return append(dst, "NULL"...), true
	case wire.TypeDecimal, wire.TypeNewDecimal:
		s, _, ok := wire.ReadLenString(b)
		if ok && decimalText(s) {
			return append(dst, s...), true
		}
	case wire.TypeVarchar, wire.TypeVarString, wire.TypeString, wire.TypeTinyBlob, wire.TypeMediumBlob,
		wire.TypeLongBlob, wire.TypeBlob, wire.TypeEnum, wire.TypeSet, wire.TypeJSON:
		s, _, ok := wire.ReadLenString(b)
		if !ok {
			return dst, false
		}
		return quotedASCII(dst, s)
	}
	return dst, false
}

// decimalText: s is [-]digits[.digits].
func decimalText(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	d := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			d++
		}
	}
	return d > 0 && i == len(s)
}

// quotedASCII appends s as a quoted literal when it is printable ASCII
// without a backslash (read the same under every sql_mode and client
// character set).
func quotedASCII(dst, s []byte) ([]byte, bool) {
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return dst, false
		}
	}
	dst = append(dst, '\'')
	for _, c := range s {
		if c == '\'' {
			dst = append(dst, '\'')
		}
		dst = append(dst, c)
	}
	return append(dst, '\''), true
}

// usingValues are the engine.ParamValues of EXECUTE ... USING: each the
// argument's text as the dialect gives it (engine.SQLOp.Using), "" for an
// expression it does not read as a literal or a variable.
type usingValues []string

func (u usingValues) Count() int { return len(u) }

func (u usingValues) AppendSQL(dst []byte, i int) ([]byte, bool) {
	if i >= len(u) || u[i] == "" {
		return dst, false
	}
	return append(dst, u[i]...), true
}

func (u usingValues) Truth(i int) (bool, bool) {
	if i >= len(u) || u[i] == "" || u[i][0] == '@' {
		return true, true
	}
	a := u[i]
	switch strings.ToLower(a) {
	case "null":
		return false, false
	case "true":
		return true, false
	case "false":
		return false, true
	}
	if a[0] == '\'' {
		a = a[1:max(1, len(a)-1)]
	}
	return stringTruth([]byte(a))
}

// valueTruth is what a binary-protocol value is as a condition: its
// number is not 0 (a string is read as the server reads a number in one:
// its leading number, "abc" being 0). What is not certain may be either.
func valueTruth(typ byte, unsigned bool, v []byte) (bool, bool) {
	either := func() (bool, bool) { return true, true }
	nonzero := func(ok bool) (bool, bool) { return ok, !ok }
	_ = unsigned // zero is zero either way
	switch typ {
	case wire.TypeTiny:
		return nonzero(len(v) == 1 && v[0] != 0)
	case wire.TypeShort, wire.TypeYear:
		return nonzero(len(v) == 2 && binary.LittleEndian.Uint16(v) != 0)
	case wire.TypeLong, wire.TypeInt24:
		return nonzero(len(v) == 4 && binary.LittleEndian.Uint32(v) != 0)
	case wire.TypeLongLong:
		return nonzero(len(v) == 8 && binary.LittleEndian.Uint64(v) != 0)
	case wire.TypeFloat:
		if len(v) != 4 {
			return either()
		}
		f := math.Float32frombits(binary.LittleEndian.Uint32(v))
		if f != f {
			return either()
		}
		return nonzero(f != 0)
	case wire.TypeDouble:
		if len(v) != 8 {
			return either()
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64(v))
		if f != f {
			return either()
		}
		return nonzero(f != 0)
	case wire.TypeDate, wire.TypeDateTime, wire.TypeTimestamp, wire.TypeTime, wire.TypeNewDate,
		wire.TypeTimestamp2, wire.TypeDateTime2, wire.TypeTime2:
		if len(v) == 1 && v[0] == 0 {
			return false, true // the zero date or time
		}
		return either()
	case wire.TypeNull:
		return false, false
	case wire.TypeBit:
		s, _, ok := wire.ReadLenString(v)
		if !ok {
			return either()
		}
		for _, c := range s {
			if c != 0 {
				return true, false
			}
		}
		return false, true
	case wire.TypeDecimal, wire.TypeNewDecimal, wire.TypeVarchar, wire.TypeVarString, wire.TypeString,
		wire.TypeTinyBlob, wire.TypeMediumBlob, wire.TypeLongBlob, wire.TypeBlob, wire.TypeEnum, wire.TypeSet, wire.TypeJSON:
		s, _, ok := wire.ReadLenString(v)
		if !ok {
			return either()
		}
		return stringTruth(s)
	}
	return either()
}

// stringTruth reads s as the server reads a string as a number: spaces,
// a sign, digits, a fraction, an exponent; the rest ignored. A byte it
// cannot place (non-ASCII, which another character set may read as a
// digit or space, a NUL) makes it either.
func stringTruth(s []byte) (bool, bool) {
	for _, c := range s {
		if c >= 0x80 || c == 0 {
			return true, true
		}
	}
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' || s[i] == '\f') {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	nonzero := false
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
		nonzero = nonzero || s[i] != '0'
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
			nonzero = nonzero || s[i] != '0'
		}
	}
	// an exponent scales a nonzero mantissa and keeps zero zero, unless
	// it underflows: 1e-400 is 0 to the server
	if nonzero && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && s[j] == '-' {
			return true, true
		}
	}
	if digits == 0 {
		return false, true
	}
	return nonzero, !nonzero
}
