package pg

import (
	"bytes"
	"testing"
	"testing/iotest"
)

// FuzzFramer feeds arbitrary bytes through the framer, one byte at a time
// and in one piece, and checks that it never panics, that what it forwards
// is a prefix of the input, and that both readers agree.
func FuzzFramer(f *testing.F) {
	for _, c := range loadCaptures(f) {
		f.Add(c.c2s)
		f.Add(c.s2c)
	}
	f.Add([]byte{'Q', 0, 0, 0, 3})
	f.Add([]byte{'d', 0x7f, 0xff, 0xff, 0xff, 1, 2, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		want := table("QPFSZKE")
		a, wa, erra := frameAll(t, bytes.NewReader(in), 16, want)
		b, wb, errb := frameAll(t, iotest.OneByteReader(bytes.NewReader(in)), 5, want)
		if !bytes.HasPrefix(in, a) || !bytes.HasPrefix(in, b) {
			t.Fatalf("forwarded bytes are not a prefix of the input")
		}
		if (erra == nil) != (errb == nil) {
			t.Fatalf("readers disagree: %v vs %v", erra, errb)
		}
		if erra == nil && (!bytes.Equal(a, in) || !bytes.Equal(wa, wb)) {
			t.Fatalf("clean input not forwarded whole")
		}
	})
}

// FuzzMessages runs every body decoder over arbitrary bodies.
func FuzzMessages(f *testing.F) {
	for _, c := range loadCaptures(f) {
		for _, b := range [][]byte{c.c2s, c.s2c} {
			for len(b) >= HeaderLen {
				n := 1 + int(uint32(b[1])<<24|uint32(b[2])<<16|uint32(b[3])<<8|uint32(b[4]))
				if n > len(b) {
					break
				}
				f.Add(b[0], b[HeaderLen:n])
				b = b[n:]
			}
		}
	}
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		m := append(msg(typ, ""), body...)
		m[1], m[2], m[3], m[4] = 0, 0, 0, 0
		n := len(m) - 1
		m[1], m[2], m[3], m[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		QueryText(m)
		ParseFields(m)
		BindNames(m)
		FunctionCallOID(m)
		ReadyStatus(m)
		ErrorField(m, 'C')
		ErrorField(m, 'M')
		st, err := ReadStartup(bytes.NewReader(body), nil)
		if err == nil {
			StartupParams(st, func(n, v []byte) {})
			CancelKey(st)
		}
	})
}
