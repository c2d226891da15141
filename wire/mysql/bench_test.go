package mysql

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// result encodes what MariaDB sends for a COM_QUERY SELECT of n rows of two
// columns (an int and a 50-character text) under CLIENT_DEPRECATE_EOF: the
// column count, two definitions, the rows, and the OK that ends them.
func result(n int) []byte {
	var b []byte
	seq := 1
	add := func(p []byte) { b, seq = AppendPacket(b, seq, p) }
	add([]byte{2})
	for _, name := range []string{"x", "repeat"} {
		var d []byte
		for _, s := range []string{"def", "", "", "", name, ""} {
			d = AppendLenString(d, []byte(s))
		}
		d = append(d, 0x0c, 0x21, 0, 0, 1, 0, 0, 0xfd, 0, 0, 0, 0, 0)
		add(d)
	}
	text := strings.Repeat("a", 50)
	for i := 0; i < n; i++ {
		r := AppendLenString(nil, []byte(fmt.Sprint(i)))
		add(AppendLenString(r, []byte(text)))
	}
	add([]byte{0xfe, 0, 0, 0x02, 0, 0, 0})
	return b
}

// loopReader replays the same bytes forever.
type loopReader struct {
	b   []byte
	off int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := copy(p, r.b[r.off:])
	r.off += n
	if r.off == len(r.b) {
		r.off = 0
	}
	return n, nil
}

// benchRelay measures the server-to-client relay: frame one response,
// following it with Response as relay/mysql does, and forward it. It must
// not allocate.
func benchRelay(b *testing.B, rows int) {
	res := result(rows)
	fr := NewFramer(&loopReader{b: res}, DefaultBufferSize, DefaultMaxPacket, 0)
	fr.SetWantLong(false)
	r := NewResponse(capsNew)
	b.SetBytes(int64(len(res)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Begin(ComQuery)
		fr.Expect(1)
		for !r.Done() {
			if err := fr.Fill(); err != nil {
				b.Fatal(err)
			}
			for !r.Done() {
				m, err := fr.Next(r.Want())
				if err != nil {
					b.Fatal(err)
				}
				if m == nil {
					break
				}
				if _, err := r.Feed(m); err != nil {
					b.Fatal(err)
				}
				io.Discard.Write(fr.TakeBefore(m))
				io.Discard.Write(m)
			}
			io.Discard.Write(fr.Take())
		}
	}
}

func BenchmarkRelay1Row(b *testing.B)    { benchRelay(b, 1) }
func BenchmarkRelay100Rows(b *testing.B) { benchRelay(b, 100) }
