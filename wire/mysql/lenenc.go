package mysql

// Length-encoded integers ("int<lenenc>") take one to nine bytes:
//
//	fa                       250
//	fc fb 00                 251 (0xfc: two bytes follow)
//	fd 00 00 01              65536 (0xfd: three bytes follow)
//	fe 00 00 00 01 00 00 00 00  4294967296 (0xfe: eight bytes follow)
//
// 0xfb is NULL in a text-protocol row and 0xff never starts one (it is an
// ERR packet's header). A length-encoded string is such an integer, then that
// many bytes. See "Protocol Basics: Integer Types" in MySQL's client/server
// protocol documentation and "Protocol Data Types" in MariaDB's.

import "encoding/binary"

// LenNull is the byte that stands for NULL where a length-encoded string is
// expected in a text-protocol row.
const LenNull = 0xfb

// ReadLenInt decodes the length-encoded integer at the start of b and
// returns it with the rest of b. ok is false when b is too short or starts
// with 0xfb or 0xff, which are not integers.
func ReadLenInt(b []byte) (v uint64, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	switch c := b[0]; {
	case c < 0xfb:
		return uint64(c), b[1:], true
	case c == 0xfc:
		if len(b) < 3 {
			return 0, nil, false
		}
		return uint64(binary.LittleEndian.Uint16(b[1:])), b[3:], true
	case c == 0xfd:
		if len(b) < 4 {
			return 0, nil, false
		}
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, b[4:], true
	case c == 0xfe:
		if len(b) < 9 {
			return 0, nil, false
		}
		return binary.LittleEndian.Uint64(b[1:]), b[9:], true
	}
	return 0, nil, false
}

// ReadLenString decodes a length-encoded string at the start of b; s
// aliases b.
func ReadLenString(b []byte) (s, rest []byte, ok bool) {
	n, rest, ok := ReadLenInt(b)
	if !ok || n > uint64(len(rest)) {
		return nil, nil, false
	}
	return rest[:n], rest[n:], true
}

// AppendLenInt appends v as a length-encoded integer (in its shortest form).
func AppendLenInt(dst []byte, v uint64) []byte {
	switch {
	case v < 0xfb:
		return append(dst, byte(v))
	case v <= 0xffff:
		return append(dst, 0xfc, byte(v), byte(v>>8))
	case v <= 0xffffff:
		return append(dst, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	return binary.LittleEndian.AppendUint64(append(dst, 0xfe), v)
}

// AppendLenString appends s as a length-encoded string.
func AppendLenString(dst []byte, s []byte) []byte {
	return append(AppendLenInt(dst, uint64(len(s))), s...)
}

// LenIntSize is the number of bytes AppendLenInt writes for v.
func LenIntSize(v uint64) int {
	switch {
	case v < 0xfb:
		return 1
	case v <= 0xffff:
		return 3
	case v <= 0xffffff:
		return 4
	}
	return 9
}

// cstring splits b at its first zero byte (a "string<NUL>").
func cstring(b []byte) (s, rest []byte, ok bool) {
	for i, c := range b {
		if c == 0 {
			return b[:i], b[i+1:], true
		}
	}
	return nil, nil, false
}
