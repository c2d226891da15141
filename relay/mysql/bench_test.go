package mysql

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// The session benchmarks relay one command and its answer per iteration
// through a session over in-memory pipes (no system calls): they report the
// relay path's allocations (0 allocs/op is the aim; the engine's cached
// verdict and the observer's report included, the script harness's
// observer records each verdict in a slice, amortised to 0).

// BenchmarkSessionQuery: an allowed COM_QUERY and its one-row text result.
func BenchmarkSessionQuery(b *testing.B) {
	benchSession(b, nil, query("select 1"), resultSet(autocommit))
}

// BenchmarkSession100Rows: an allowed COM_QUERY and a 100-row text result
// of (int, 50-character string), 5.9 KB (the binary one of Execute100Rows: 6.6 KB).
func BenchmarkSession100Rows(b *testing.B) {
	benchSession(b, nil, query("select id, c from t where id between 1 and 100"), rows100(false))
}

// BenchmarkSessionExecute100Rows: COM_STMT_EXECUTE of a statement prepared
// once (its verdict remembered) and a 100-row binary result, the shape of
// sysbench's range selects.
func BenchmarkSessionExecute100Rows(b *testing.B) {
	prep := [2][]byte{prepare("select id, c from t where id between ? and ?"), prepareOK(7)}
	benchSession(b, &prep, execute(7), rows100(true))
}

// BenchmarkSessionExecute1Row: COM_STMT_EXECUTE and a one-row binary result
// (sysbench's point select).
func BenchmarkSessionExecute1Row(b *testing.B) {
	prep := [2][]byte{prepare("select c from t where id = ?"), prepareOK(7)}
	res := append(pkt(1, 1), pkt(2, colDef("c", 0x08, 63)...)...)
	res = append(res, pkt(3, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0)...)
	res = append(res, pkt(4, eofOK(autocommit)...)...)
	benchSession(b, &prep, execute(7), res)
}

// colDef is a column definition payload: name, type and charset.
func colDef(name string, typ byte, charset uint16) []byte {
	p := []byte{3, 'd', 'e', 'f', 0, 0, 0, byte(len(name))}
	p = append(p, name...)
	p = append(p, 0, 0x0c)
	p = binary.LittleEndian.AppendUint16(p, charset)
	p = append(p, 50, 0, 0, 0, typ, 0, 0, 0, 0, 0)
	return p
}

// eofOK is the end of a result under DEPRECATE_EOF.
func eofOK(status uint16) []byte {
	return append(binary.LittleEndian.AppendUint16([]byte{0xfe, 0, 0}, status), 0, 0)
}

// rows100 is a result of 100 rows of (BIGINT id, VARCHAR(50) c) in the
// text or the binary protocol.
func rows100(binaryRows bool) []byte {
	res := append(pkt(1, 2), pkt(2, colDef("id", 0x08, 63)...)...)
	res = append(res, pkt(3, colDef("c", 0xfd, 33)...)...)
	c := strings.Repeat("x", 50)
	for i := range 100 {
		var p []byte
		if binaryRows {
			p = binary.LittleEndian.AppendUint64([]byte{0, 0}, uint64(i+1))
		} else {
			id := strconv.Itoa(i + 1)
			p = append([]byte{byte(len(id))}, id...)
		}
		p = append(append(p, byte(len(c))), c...)
		res = append(res, pkt(4+i, p...)...)
	}
	return append(res, pkt(104, eofOK(autocommit)...)...)
}

func benchSession(b *testing.B, prep *[2][]byte, q, res []byte) {
	h := newHarness(&testing.T{})
	h.Env.Limits.BufferBytes = wire.DefaultBufferSize // as the daemon configures it
	srvOurs, srvTheirs := net.Pipe()
	cliOurs, cliTheirs := net.Pipe()
	defer srvOurs.Close()
	defer cliOurs.Close()
	h.Dials <- srvTheirs
	go h.Proto.Serve(&h.Env, &relay.Conn{Client: cliTheirs, ID: 1, Via: relay.ViaListen, Upstream: relay.Upstream{Network: "tcp", Addr: "db"}})
	hello := handshakeResponse(clientCaps, "app", "shop")
	go func() {
		_, _ = srvOurs.Write(greeting(serverCaps))
		buf := make([]byte, len(hello))
		_, _ = io.ReadFull(srvOurs, buf)
		_, _ = srvOurs.Write(ok(2, autocommit))
		if prep != nil {
			buf = make([]byte, len(prep[0]))
			_, _ = io.ReadFull(srvOurs, buf)
			_, _ = srvOurs.Write(prep[1])
		}
		qb := make([]byte, len(q))
		for {
			if _, err := io.ReadFull(srvOurs, qb); err != nil {
				return
			}
			if _, err := srvOurs.Write(res); err != nil {
				return
			}
		}
	}()
	read := func(n int) {
		if _, err := io.ReadFull(cliOurs, make([]byte, n)); err != nil {
			b.Fatal(err)
		}
	}
	read(len(greeting(serverCaps)))
	_, _ = cliOurs.Write(hello)
	read(len(ok(2, autocommit)))
	if prep != nil {
		_, _ = cliOurs.Write(prep[0])
		read(len(prep[1]))
	}
	rb := make([]byte, len(res))
	b.SetBytes(int64(len(res)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := cliOurs.Write(q); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(cliOurs, rb); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if string(rb) != string(res) {
		b.Fatal("the result reached the client changed")
	}
	h.Mu.Lock()
	defer h.Mu.Unlock()
	if prep != nil && len(h.Executions) < b.N {
		b.Fatalf("%d executions reported, want %d", len(h.Executions), b.N)
	}
}
