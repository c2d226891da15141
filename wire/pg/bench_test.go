package pg

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// result encodes what PostgreSQL sends for a SELECT of n rows of two
// columns (an int and a 50-character text), ending with ReadyForQuery.
func result(tb testing.TB, n int) []byte {
	var b []byte
	var err error
	b, err = (&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{
		{Name: []byte("x"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1},
		{Name: []byte("repeat"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1},
	}}).Encode(b)
	if err != nil {
		tb.Fatal(err)
	}
	text := bytes.Repeat([]byte("a"), 50)
	for i := 0; i < n; i++ {
		b, _ = (&pgproto3.DataRow{Values: [][]byte{[]byte(fmt.Sprint(i)), text}}).Encode(b)
	}
	b, _ = (&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("SELECT %d", n))}).Encode(b)
	b, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(b)
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

// benchRelay measures the server-to-client relay: frame one result (looking
// at ReadyForQuery, BackendKeyData and ErrorResponse, as the daemon does)
// and forward it. It must not allocate.
func benchRelay(b *testing.B, rows int) {
	res := result(b, rows)
	src := &loopReader{b: res}
	fr := NewFramer(src, DefaultBufferSize, DefaultMaxMessage, 0)
	want := table("ZKE")
	b.SetBytes(int64(len(res)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ready := false
		for !ready {
			if err := fr.Fill(); err != nil {
				b.Fatal(err)
			}
			for {
				m, err := fr.Next(want)
				if err != nil {
					b.Fatal(err)
				}
				if m == nil {
					break
				}
				if m[0] == MsgReadyForQuery {
					ready = true
				}
			}
			io.Discard.Write(fr.Take())
		}
	}
}

func BenchmarkRelay1Row(b *testing.B)    { benchRelay(b, 1) }
func BenchmarkRelay100Rows(b *testing.B) { benchRelay(b, 100) }
