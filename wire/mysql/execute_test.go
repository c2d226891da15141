package mysql

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// exec builds a COM_STMT_EXECUTE payload: header then block.
func execPayload(flags byte, block ...byte) []byte {
	p := binary.LittleEndian.AppendUint32([]byte{ComStmtExecute}, 7)
	p = append(p, flags, 1, 0, 0, 0)
	return append(p, block...)
}

func TestParseExecute(t *testing.T) {
	ll := []byte{TypeLongLong, 0}
	str := []byte{TypeVarString, 0}
	v42 := []byte{42, 0, 0, 0, 0, 0, 0, 0}
	for _, tc := range []struct {
		name         string
		p            []byte
		params       int
		bound, long  []byte
		caps         Caps
		ok           bool
		wantTypes    []byte
		param0       []byte // the value of parameter 0 (nil: NULL or long)
		param0Null   bool
		param0IsLong bool
	}{
		{"no parameters, nothing after", execPayload(0), 0, nil, nil, 0, true, nil, nil, true, false},
		{"one longlong", execPayload(0, append(append([]byte{0, 1}, ll...), v42...)...), 1, nil, nil, 0, true, ll, v42, false, false},
		{"a value cut short", execPayload(0, append(append([]byte{0, 1}, ll...), v42[:7]...)...), 1, nil, nil, 0, false, nil, nil, false, false},
		{"no value at all", execPayload(0, append([]byte{0, 1}, ll...)...), 1, nil, nil, 0, false, nil, nil, false, false},
		{"types cut short", execPayload(0, 0, 1, TypeLongLong), 1, nil, nil, 0, false, nil, nil, false, false},
		{"no null bitmap", execPayload(0), 1, nil, nil, 0, false, nil, nil, false, false},
		{"a bound flag of 2", execPayload(0, 0, 2), 1, ll, nil, 0, false, nil, nil, false, false},
		{"NULL needs no value", execPayload(0, append([]byte{1, 1}, ll...)...), 1, nil, nil, 0, true, ll, nil, true, false},
		{"types bound before", execPayload(0, append([]byte{0, 0}, v42...)...), 1, ll, nil, 0, true, ll, v42, false, false},
		{"no types ever bound", execPayload(0, append([]byte{0, 0}, v42...)...), 1, nil, nil, 0, false, nil, nil, false, false},
		{"a string", execPayload(0, append(append([]byte{0, 1}, str...), 3, 'a', 'b', 'c')...), 1, nil, nil, 0, true, str, []byte("\x03abc"), false, false},
		{"a string longer than the packet", execPayload(0, append(append([]byte{0, 1}, str...), 9, 'a', 'b', 'c')...), 1, nil, nil, 0, false, nil, nil, false, false},
		{"long data is not in the block", execPayload(0, append([]byte{0, 1}, str...)...), 1, nil, []byte{1}, 0, true, str, nil, false, true},
		{"query attributes: count, named types", execPayload(0, append(append([]byte{1, 0, 1}, TypeLongLong, 0, 0), v42...)...), 1, nil, nil, CapQueryAttributes, true, ll, v42, false, false},
		{"query attributes: fewer than the parameters", execPayload(0, 0), 1, nil, nil, CapQueryAttributes, false, nil, nil, false, false},
		// types MariaDB 10.11 reads otherwise (binds NULL, reads none of
		// the bytes) or refuses (e2e TestRound10ExecuteTypes)
		{"INT24", execPayload(0, 0, 1, TypeInt24, 0, 1, 0, 0, 0), 1, nil, nil, 0, false, nil, nil, false, false},
		{"YEAR", execPayload(0, 0, 1, TypeYear, 0, 1, 0), 1, nil, nil, 0, false, nil, nil, false, false},
		{"BIT", execPayload(0, 0, 1, TypeBit, 0, 1, 1), 1, nil, nil, 0, false, nil, nil, false, false},
		{"GEOMETRY", execPayload(0, 0, 1, TypeGeometry, 0, 1, 1), 1, nil, nil, 0, false, nil, nil, false, false},
		{"TIME2", execPayload(0, 0, 1, TypeTime2, 0, 0), 1, nil, nil, 0, false, nil, nil, false, false},
		{"JSON", execPayload(0, 0, 1, TypeJSON, 0, 1, '1'), 1, nil, nil, 0, false, nil, nil, false, false},
		{"a type no server has", execPayload(0, 0, 1, 0x20, 0, 1, '1'), 1, nil, nil, 0, false, nil, nil, false, false},
		{"a flag other than unsigned", execPayload(0, append(append([]byte{0, 1}, TypeLongLong, 0x01), v42...)...), 1, nil, nil, 0, false, nil, nil, false, false},
		{"unsigned", execPayload(0, append(append([]byte{0, 1}, TypeLongLong, 0x80), v42...)...), 1, nil, nil, 0, true, []byte{TypeLongLong, 0x80}, v42, false, false},
		{"NULL by type, its null bit clear", execPayload(0, 0, 1, TypeNull, 0), 1, nil, nil, 0, false, nil, nil, false, false},
		{"NULL by type and null bit", execPayload(0, 1, 1, TypeNull, 0), 1, nil, nil, 0, true, []byte{TypeNull, 0}, nil, true, false},
		{"a type refused even when the value is NULL", execPayload(0, 1, 1, TypeInt24, 0), 1, nil, nil, 0, false, nil, nil, false, false},
		{"a date of 4 bytes", execPayload(0, 0, 1, TypeDate, 0, 4, 0xe8, 7, 1, 2), 1, nil, nil, 0, true, []byte{TypeDate, 0}, []byte{4, 0xe8, 7, 1, 2}, false, false},
		{"a date whose length byte the server reads as a 2-byte length", execPayload(0, append([]byte{0, 1, TypeDate, 0, 0xfc, 0, 0}, make([]byte, 260)...)...), 1, nil, nil, 0, false, nil, nil, false, false},
		{"query attributes: an attribute's value cut", execPayload(0, append(append([]byte{2, 0, 1, TypeLongLong, 0, 0, TypeLongLong, 0, 1, 'a'}, v42...), 1)...), 1, nil, nil, CapQueryAttributes, false, nil, nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseExecute(tc.p, tc.params, tc.bound, tc.long, tc.caps)
			if (err == nil) != tc.ok {
				t.Fatalf("% x: err %v, want ok %v", tc.p, err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, ErrParams) {
					t.Errorf("err %v, want ErrParams", err)
				}
				return
			}
			if !bytes.Equal(e.Types, tc.wantTypes) {
				t.Errorf("types % x, want % x", e.Types, tc.wantTypes)
			}
			if tc.params == 0 {
				return
			}
			_, v, null, long := e.Param(0)
			if !bytes.Equal(v, tc.param0) || null != tc.param0Null || long != tc.param0IsLong {
				t.Errorf("param 0: % x null %v long %v, want % x null %v long %v", v, null, long, tc.param0, tc.param0Null, tc.param0IsLong)
			}
		})
	}
}

func FuzzParseExecute(f *testing.F) {
	f.Add(execPayload(0, 0, 1, TypeLongLong, 0, 1, 2, 3, 4, 5, 6, 7, 8), 1, uint64(0))
	f.Add(execPayload(0, 0, 1, TypeVarString, 0, TypeTime, 0, 3, 'a', 'b', 'c', 8, 1, 2, 3, 4, 5, 6, 7, 8), 2, uint64(CapQueryAttributes))
	f.Fuzz(func(t *testing.T, p []byte, params int, caps uint64) {
		if params < 0 || params > 1000 {
			return
		}
		e, err := ParseExecute(p, params, nil, []byte{2}, Caps(caps))
		if err != nil {
			return
		}
		for i := 0; i < params; i++ {
			e.Param(i)
		}
	})
}
