package mysql

// The parameter block of COM_STMT_EXECUTE ("COM_STMT_EXECUTE" in the
// protocol docs; MariaDB's sql_prepare.cc insert_params):
//
//	0x17 | stmt_id<4> | flags<1> | iteration_count<4>
//	[ CLIENT_QUERY_ATTRIBUTES, when params > 0 or flags&0x08: parameter_count<lenenc> ]
//	when there are parameters:
//	  null_bitmap<(n+7)/8> | new_params_bound_flag<1>
//	  [ flag 1: n × (type<1> flags<1> [ query attributes: name<lenenc> ]) ]
//	  values of the parameters that are neither NULL nor sent by
//	  COM_STMT_SEND_LONG_DATA, each as its type says
//
// Example, one parameter of type LONGLONG, 42: 17 07000000 00 01000000 00
// 01 0800 2a00000000000000.
//
// The types are those of the block when it binds new ones, else those of
// the last execution that did: the server remembers them, and so must the
// reader. A block the server would read past its end (MariaDB answers
// ER_WRONG_ARGUMENTS), or one that binds a type the server reads otherwise
// than this reader (paramType), is an error here.

import "errors"

// ErrParams is a parameter block that does not hold what the statement's
// parameters need.
var ErrParams = errors.New("malformed COM_STMT_EXECUTE parameter block")

// executeParameterCountAvailable is MySQL 8's PARAMETER_COUNT_AVAILABLE
// execute flag.
const executeParameterCountAvailable = 0x08

// ExecuteParams is a COM_STMT_EXECUTE's parameter block, read by
// ParseExecute. Its slices are the payload's and the caller's.
type ExecuteParams struct {
	// Types are the parameters' types, two bytes each (the type and its
	// flags, 0x80 unsigned): the block's when NewTypes, else those passed
	// to ParseExecute. With query attributes, only the statement's
	// parameters' (not the attributes').
	Types    []byte
	NewTypes bool
	n        int
	nulls    []byte
	values   []byte
	long     []byte
}

// ParseExecute reads the parameter block of COM_STMT_EXECUTE payload p for
// a statement of params parameters: bound are the types of the last
// execution that bound them (nil when none did), long a bitmap of the
// parameters whose value came with COM_STMT_SEND_LONG_DATA since (nil:
// none). It checks that the block holds every value the server will read.
func ParseExecute(p []byte, params int, bound, long []byte, caps Caps) (ExecuteParams, error) {
	var e ExecuteParams
	if len(p) < 10 || p[0] != ComStmtExecute {
		return e, ErrParams
	}
	flags := p[5]
	b := p[10:]
	n, named := params, false
	if caps.Has(CapQueryAttributes) && (params > 0 || flags&executeParameterCountAvailable != 0) {
		c, rest, ok := ReadLenInt(b)
		if !ok || c < uint64(params) || c > uint64(len(rest)) {
			return e, ErrParams
		}
		b, n, named = rest, int(c), true
	}
	if n == 0 {
		return e, nil
	}
	nb := (n + 7) / 8
	if len(b) < nb+1 || b[nb] > 1 {
		return e, ErrParams
	}
	e.n, e.nulls, e.long = params, b[:nb], long
	e.NewTypes = b[nb] == 1
	b = b[nb+1:]
	var attrTypes []byte // query attributes' types, in the order of the values
	if e.NewTypes {
		if !named {
			if len(b) < 2*n {
				return e, ErrParams
			}
			e.Types, b = b[:2*n], b[2*n:]
		} else {
			types := make([]byte, 0, 2*n)
			for i := 0; i < n; i++ {
				if len(b) < 2 {
					return e, ErrParams
				}
				types = append(types, b[0], b[1])
				var ok bool
				if _, b, ok = ReadLenString(b[2:]); !ok {
					return e, ErrParams
				}
			}
			e.Types, attrTypes = types[:2*params], types[2*params:]
		}
	} else {
		if len(bound) != 2*params || n != params {
			// no types bound yet, or attributes without their types
			return e, ErrParams
		}
		e.Types = bound
	}
	e.values = b
	for i := 0; i < n; i++ {
		var typ byte
		if i < params {
			typ = e.Types[2*i]
			if !paramType(typ, e.Types[2*i+1]) {
				return e, ErrParams
			}
		} else {
			typ = attrTypes[2*(i-params)]
			if !paramType(typ, attrTypes[2*(i-params)+1]) {
				return e, ErrParams
			}
		}
		if e.nulls[i/8]&(1<<(i%8)) != 0 || i < params && e.isLong(i) {
			continue
		}
		sz, ok := binaryValueLen(typ, b)
		if !ok {
			return e, ErrParams
		}
		b = b[sz:]
	}
	return e, nil
}

// Len is the number of the statement's parameters.
func (e *ExecuteParams) Len() int { return e.n }

func (e *ExecuteParams) isLong(i int) bool {
	return i/8 < len(e.long) && e.long[i/8]&(1<<(i%8)) != 0
}

// Param returns parameter i's type and value as the block encodes it (a
// string with its length, a date with its length byte, an integer in
// little-endian order):
// null when it is NULL, long when its value came with
// COM_STMT_SEND_LONG_DATA (v is then nil). It walks the values before it;
// e must come from a successful ParseExecute.
func (e *ExecuteParams) Param(i int) (typ byte, v []byte, null, long bool) {
	if i < 0 || i >= e.n {
		return 0, nil, true, false
	}
	typ = e.Types[2*i]
	b := e.values
	for j := 0; j <= i; j++ {
		t := e.Types[2*j]
		if e.nulls[j/8]&(1<<(j%8)) != 0 {
			if j == i {
				return typ, nil, true, false
			}
			continue
		}
		if e.isLong(j) {
			if j == i {
				return typ, nil, false, true
			}
			continue
		}
		sz, _ := binaryValueLen(t, b)
		if j == i {
			return typ, b[:sz], false, false
		}
		b = b[sz:]
	}
	return typ, nil, true, false
}
