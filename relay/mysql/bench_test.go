package mysql

import (
	"io"
	"net"
	"testing"

	"github.com/sqlfw/sqlfw/relay"
)

// BenchmarkSessionQuery relays one allowed COM_QUERY and its one-row result
// per iteration through a session: it reports the relay path's allocations
// (0 allocs/op is the aim; the engine's cached verdict included).
func BenchmarkSessionQuery(b *testing.B) {
	h := newHarness(&testing.T{})
	q, res := query("select 1"), resultSet(autocommit)
	srvOurs, srvTheirs := net.Pipe()
	cliOurs, cliTheirs := net.Pipe()
	defer srvOurs.Close()
	defer cliOurs.Close()
	h.dials <- srvTheirs
	go h.proto.Serve(&h.env, &relay.Conn{Client: cliTheirs, ID: 1, Via: relay.ViaListen, Upstream: relay.Upstream{Network: "tcp", Addr: "db"}})
	hello := handshakeResponse(clientCaps, "app", "shop")
	go func() {
		_, _ = srvOurs.Write(greeting(serverCaps))
		buf := make([]byte, len(hello))
		_, _ = io.ReadFull(srvOurs, buf)
		_, _ = srvOurs.Write(ok(2, autocommit))
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
	g := make([]byte, len(greeting(serverCaps)))
	_, _ = io.ReadFull(cliOurs, g)
	_, _ = cliOurs.Write(hello)
	okb := make([]byte, len(ok(2, autocommit)))
	_, _ = io.ReadFull(cliOurs, okb)
	rb := make([]byte, len(res))
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
}
