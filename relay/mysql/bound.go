package mysql

// A bare parameter's condition (DELETE FROM t WHERE ?) is decided by the
// value bound when the statement runs (engine JudgeBound): for
// COM_STMT_EXECUTE, the value in its parameter block, read as the server
// reads a value in a condition; for EXECUTE ... USING, user variables or
// expressions whose values sqlfw does not know, so either may hold.

import (
	"encoding/binary"
	"math"

	"github.com/sqlfw/sqlfw/engine"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// boundTruth is the engine.ParamTruth of a parameter block.
func boundTruth(e *wire.ExecuteParams) engine.ParamTruth {
	return func(i int) (bool, bool) {
		typ, v, null, long := e.Param(i)
		switch {
		case null:
			return false, false
		case long:
			return true, true
		}
		return valueTruth(typ, e.Types[2*i+1]&0x80 != 0, v)
	}
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
