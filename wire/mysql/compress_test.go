package mysql

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// compressAll is what a Compressor writes for the parts, from id seq.
func compressAll(seq int, parts ...[]byte) []byte {
	var out bytes.Buffer
	c := NewCompressor(&out)
	c.SetSeq(seq)
	for _, p := range parts {
		_, _ = c.Write(p)
	}
	return out.Bytes()
}

// Round trips: stored below the threshold and when compressing does not
// shrink, deflated otherwise, ids consecutive, read back whole through a
// reader that returns one byte at a time.
func TestCompressRoundTrip(t *testing.T) {
	short := []byte("\x09\x00\x00\x00\x03select 1")
	long := bytes.Repeat([]byte("select 1; "), 100)
	random := make([]byte, 200)
	for i := range random {
		random[i] = byte(i*151 + i*i*7)
	}
	for _, tc := range []struct {
		name     string
		parts    [][]byte
		deflated []bool
	}{
		{"below the threshold", [][]byte{short}, []bool{false}},
		{"compressible", [][]byte{long}, []bool{true}},
		{"incompressible", [][]byte{random}, []bool{false}},
		{"several", [][]byte{short, long, random, long}, []bool{false, true, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := compressAll(250, tc.parts...)
			var want []byte
			at := 0
			for i, p := range tc.parts {
				want = append(want, p...)
				clen, seq, ulen := le24(b[at:]), int(b[at+3]), le24(b[at+4:])
				if seq != (250+i)&0xff {
					t.Errorf("packet %d: id %d, want %d", i, seq, (250+i)&0xff)
				}
				if (ulen != 0) != tc.deflated[i] || ulen != 0 && ulen != len(p) || ulen == 0 && clen != len(p) {
					t.Errorf("packet %d: compressed length %d, uncompressed %d, for %d bytes (deflated: want %v)", i, clen, ulen, len(p), tc.deflated[i])
				}
				at += CompHeaderLen + clen
			}
			d := NewDecompressor(iotest.OneByteReader(bytes.NewReader(b)), nil)
			got, err := io.ReadAll(d)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes, %v; want %d", len(got), err, len(want))
			}
			if d.Packets() != uint64(len(tc.parts)) || d.Seq() != (250+len(tc.parts))&0xff {
				t.Errorf("Packets %d, Seq %d", d.Packets(), d.Seq())
			}
		})
	}
}

// A prefix (bytes read off the connection before compression began) is
// read first.
func TestDecompressorPrefix(t *testing.T) {
	b := compressAll(0, bytes.Repeat([]byte("x"), 300), []byte("tail"))
	d := NewDecompressor(bytes.NewReader(b[5:]), b[:5])
	got, err := io.ReadAll(d)
	if err != nil || string(got) != strings.Repeat("x", 300)+"tail" {
		t.Fatalf("%q, %v", got, err)
	}
}

// Malformed packets are ErrCompressed; a connection cut inside one is
// io.ErrUnexpectedEOF.
func TestDecompressorMalformed(t *testing.T) {
	good := compressAll(0, bytes.Repeat([]byte("abc"), 100))
	short := bytes.Clone(good)
	short[4]++ // one byte more than it inflates to
	long := bytes.Clone(good)
	long[4]-- // one byte less
	trailing := append(bytes.Clone(good), 0)
	trailing[0]++
	bad := bytes.Clone(good)
	bad[CompHeaderLen+5] ^= 0xff
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"inflates short", short, ErrCompressed},
		{"inflates long", long, ErrCompressed},
		{"data after the stream", trailing, ErrCompressed},
		{"corrupt", bad, ErrCompressed},
		{"not zlib", append([]byte{3, 0, 0, 0, 60, 0, 0}, 1, 2, 3), ErrCompressed},
		{"cut in the header", good[:4], io.ErrUnexpectedEOF},
		{"cut in the payload", good[:20], io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := io.ReadAll(NewDecompressor(bytes.NewReader(tc.in), nil))
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzDecompressor: any input is read or refused, never a panic, and what
// a Compressor wrote is read back.
func FuzzDecompressor(f *testing.F) {
	f.Add(compressAll(0, bytes.Repeat([]byte("select 1; "), 20)))
	f.Add(compressAll(7, []byte("\x01\x00\x00\x00\x0e")))
	f.Add([]byte{5, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDecompressor(iotest.HalfReader(bytes.NewReader(b)), nil)
		_, _ = io.ReadAll(d)
		if len(b) < 1<<12 {
			rt, err := io.ReadAll(NewDecompressor(bytes.NewReader(compressAll(0, b)), nil))
			if err != nil || !bytes.Equal(rt, b) {
				t.Fatalf("round trip of %d bytes: %d, %v", len(b), len(rt), err)
			}
		}
	})
}

// countingBudget refuses beyond limit and counts what is held.
type countingBudget struct{ held, limit int }

func (b *countingBudget) Reserve(n int) error {
	if b.held+n > b.limit {
		return errors.New("over the limit")
	}
	b.held += n
	return nil
}
func (b *countingBudget) Release(n int) { b.held -= n }

// The buffers' growth is charged to the Budget: a packet that does not fit
// is ErrBudget, and what was held is given back once the big packet is
// read and on Close.
func TestDecompressorBudget(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB, compresses well
	b := &countingBudget{limit: 1 << 20}
	d := NewDecompressor(bytes.NewReader(compressAll(0, big)), nil)
	d.SetBudget(b)
	if _, err := io.ReadAll(d); !errors.Is(err, ErrBudget) {
		t.Errorf("2 MiB under a 1 MiB budget: %v, want ErrBudget", err)
	}
	d.Close()
	if b.held != 0 {
		t.Errorf("after Close the budget holds %d", b.held)
	}
	b = &countingBudget{limit: 8 << 20}
	d = NewDecompressor(bytes.NewReader(compressAll(0, big, []byte("next"))), nil)
	d.SetBudget(b)
	got, err := io.ReadAll(d)
	if err != nil || len(got) != len(big)+4 {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if b.held != 0 {
		t.Errorf("after the big packet was read the budget holds %d, want 0 (shrunk)", b.held)
	}
	d.Close()
}

// BenchmarkCompressedRelay: a 100-row text result (5.9 kB) compressed by
// one leg's Compressor and inflated by the other's Decompressor, what a
// compressed session adds per result on each leg.
func BenchmarkCompressedRelay(b *testing.B) {
	var rows []byte
	for i := range 100 {
		row := append([]byte{byte(len("42"))}, "42"...)
		row = append(append(row, 50), bytes.Repeat([]byte{'x'}, 50)...)
		rows, _ = AppendPacket(rows, i+1, row)
	}
	var wire bytes.Buffer
	c := NewCompressor(&wire)
	src := bytes.NewReader(nil)
	d := NewDecompressor(src, nil)
	out := make([]byte, DefaultBufferSize)
	b.SetBytes(int64(len(rows)))
	b.ReportAllocs()
	for b.Loop() {
		wire.Reset()
		_, _ = c.Write(rows)
		src.Reset(wire.Bytes())
		for got := 0; got < len(rows); {
			n, err := d.Read(out)
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
}
