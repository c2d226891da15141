package mysql

// The rows of MariaDB's COM_STMT_BULK_EXECUTE (the protocol docs'
// "COM_STMT_BULK_EXECUTE"; MariaDB's sql_prepare.cc
// mysql_stmt_execute_bulk):
//
//	0xfa | stmt_id<4> | bulk_flags<2>
//	[ bulk_flags&0x80 SEND_TYPES_TO_SERVER: n × (type<1> flags<1>) ]
//	rows, to the end of the payload: n × (indicator<1> [ value ])
//
// indicator 0 (NONE) is followed by the value as its type says; 1 (NULL),
// 2 (DEFAULT) and 3 (IGNORE) carry none. Example, two rows of one LONGLONG
// parameter, 1 and NULL: fa 07000000 8000 0800 00 0100000000000000 01.
//
// Without SEND_TYPES_TO_SERVER the types are those the statement was last
// executed with. A block whose rows do not end at the payload's end, with
// an indicator the protocol does not have, without a row, or for a
// statement without parameters is an error here.

import (
	"encoding/binary"
	"errors"
)

// ErrBulkParams is a COM_STMT_BULK_EXECUTE block that does not hold whole
// rows of the statement's parameters.
var ErrBulkParams = errors.New("malformed COM_STMT_BULK_EXECUTE parameter rows")

const bulkSendTypes = 0x80

// Parameter indicators of a bulk row.
const (
	IndicatorNone    = 0
	IndicatorNull    = 1
	IndicatorDefault = 2
	IndicatorIgnore  = 3
)

// BulkParams is a COM_STMT_BULK_EXECUTE's rows, read by ParseBulk. Its
// slices are the payload's and the caller's.
type BulkParams struct {
	// Types are the parameters' types, two bytes each: the block's when
	// NewTypes, else those passed to ParseBulk.
	Types    []byte
	NewTypes bool
	// Rows is the number of rows.
	Rows int
	n    int
	rows []byte
}

// ParseBulk reads the rows of COM_STMT_BULK_EXECUTE payload p for a
// statement of params parameters; bound are the types of its last
// execution (nil when none bound them). It checks that every row is whole.
func ParseBulk(p []byte, params int, bound []byte) (BulkParams, error) {
	var bk BulkParams
	if len(p) < 7 || p[0] != ComStmtBulkExecute || params <= 0 {
		return bk, ErrBulkParams
	}
	flags := binary.LittleEndian.Uint16(p[5:7])
	b := p[7:]
	if flags&bulkSendTypes != 0 {
		if len(b) < 2*params {
			return bk, ErrBulkParams
		}
		bk.Types, bk.NewTypes, b = b[:2*params], true, b[2*params:]
	} else {
		if len(bound) != 2*params {
			return bk, ErrBulkParams
		}
		bk.Types = bound
	}
	for i := 0; i < params; i++ {
		if !paramType(bk.Types[2*i], bk.Types[2*i+1]) {
			return bk, ErrBulkParams
		}
	}
	bk.n, bk.rows = params, b
	for len(b) > 0 {
		var ok bool
		if _, b, ok = bk.row(b); !ok {
			return bk, ErrBulkParams
		}
		bk.Rows++
	}
	if bk.Rows == 0 {
		return bk, ErrBulkParams
	}
	return bk, nil
}

// row splits the first row off b.
func (bk *BulkParams) row(b []byte) (BulkRow, []byte, bool) {
	start := b
	for i := 0; i < bk.n; i++ {
		if len(b) < 1 {
			return BulkRow{}, nil, false
		}
		ind := b[0]
		b = b[1:]
		switch ind {
		case IndicatorNone:
			sz, ok := binaryValueLen(bk.Types[2*i], b)
			if !ok {
				return BulkRow{}, nil, false
			}
			b = b[sz:]
		case IndicatorNull, IndicatorDefault, IndicatorIgnore:
		default:
			return BulkRow{}, nil, false
		}
	}
	return BulkRow{types: bk.Types, data: start[:len(start)-len(b)], n: bk.n}, b, true
}

// Each calls f with each row in order until f returns false; bk must
// come from a successful ParseBulk.
func (bk *BulkParams) Each(f func(BulkRow) bool) {
	for b := bk.rows; len(b) > 0; {
		r, rest, ok := bk.row(b)
		if !ok || !f(r) {
			return
		}
		b = rest
	}
}

// BulkRow is one row of a COM_STMT_BULK_EXECUTE.
type BulkRow struct {
	types, data []byte
	n           int
}

// Len is the number of the statement's parameters.
func (r BulkRow) Len() int { return r.n }

// Param returns parameter i's type, unsigned flag and value as the row
// encodes it; null for NULL, def for DEFAULT or IGNORE (the column's
// default, or nothing).
func (r BulkRow) Param(i int) (typ byte, unsigned bool, v []byte, null, def bool) {
	if i < 0 || i >= r.n {
		return 0, false, nil, true, false
	}
	b := r.data
	for j := 0; j <= i; j++ {
		ind := b[0]
		b = b[1:]
		var sz int
		if ind == IndicatorNone {
			sz, _ = binaryValueLen(r.types[2*j], b)
		}
		if j == i {
			typ, unsigned = r.types[2*i], r.types[2*i+1]&0x80 != 0
			switch ind {
			case IndicatorNone:
				return typ, unsigned, b[:sz], false, false
			case IndicatorNull:
				return typ, unsigned, nil, true, false
			}
			return typ, unsigned, nil, false, true
		}
		b = b[sz:]
	}
	return 0, false, nil, true, false
}
