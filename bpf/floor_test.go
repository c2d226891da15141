package bpf

import (
	"bytes"
	"net"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// The floors under an intercepted round trip (issue 26 item 1): what a
// 100-byte request and answer cost with no relay at all, over TCP and
// spliced by the same sk_msg program the relay's client leg uses, and
// through a Read/Write relay with no leg, the client leg, or both legs
// spliced. "Both legs" splices the upstream leg too, which only works
// when the database's own socket is local and in relay_socks: a
// measurement of what that design could win, not a deployable path.
// Timings only; nothing is asserted. Run alone to count wake-ups:
//
//	go test -c -o /tmp/bpf.test ./bpf && perf stat -e context-switches \
//	  /tmp/bpf.test -test.run '^$' -test.bench 'RoundTripFloor/relay-client-leg' -test.benchtime 20000x
func BenchmarkRoundTripFloor(b *testing.B) {
	echo := func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 100)
		for {
			if _, err := readFull(c, buf); err != nil {
				return
			}
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}
	cases := []struct {
		name    string
		relay   bool // through the relay (redirected connect)
		sockmap bool // client leg spliced
		splice  bool // the db's sockets put in relay_socks too
	}{
		{"direct-tcp", false, false, false},
		{"direct-spliced", false, false, true},
		{"relay-tcp", true, false, false},
		{"relay-client-leg", true, true, false},
		{"relay-both-legs", true, true, true},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			e := newRelayEnv(b, tc.sockmap || tc.splice, echo)
			insert := func(c net.Conn) {
				if err := insertSock(e.r.objs.RelaySocks, c.(*net.TCPConn)); err != nil {
					b.Errorf("inserting %v: %v", c.LocalAddr(), err)
				}
			}
			// The env's db server is replaced by our own so that its
			// accepted sockets can be put in the map.
			dbLn := listenTCP(b, "127.0.0.1:0")
			dbReady := make(chan struct{}, 1)
			go acceptLoop(dbLn, func(c net.Conn) {
				if tc.splice {
					insert(c)
				}
				dbReady <- struct{}{}
				echo(c)
			})
			db := addrPort(dbLn.Addr())
			if tc.relay {
				if err := e.r.Protect(db); err != nil {
					b.Fatal(err)
				}
				// Both ends of the upstream leg are in the map before
				// its first byte, or the leg falls back to TCP for good.
				e.onUpstream = func(c net.Conn) {
					if tc.splice {
						insert(c)
					}
					<-dbReady
				}
			}
			var c net.Conn
			var err error
			if tc.relay {
				c, err = net.Dial("tcp", db.String())
			} else {
				c, err = markedDialer.Dial("tcp", db.String())
			}
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if !tc.relay {
				if tc.splice {
					insert(c)
				}
				<-dbReady
			}
			msg := bytes.Repeat([]byte("x"), 100)
			buf := make([]byte, 100)
			// One warm-up round trip: the server side's insert happens
			// in its accept goroutine.
			if _, err := c.Write(msg); err != nil {
				b.Fatal(err)
			}
			if _, err := readFull(c, buf); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := readFull(c, buf); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if ctr, err := e.r.Counters(); err != nil {
				b.Fatal(err)
			} else if ctr.SockmapFallback != 0 {
				b.Fatalf("a leg fell back to TCP: %+v", ctr)
			}
		})
	}
}

// insertSock puts an established IPv4 TCP socket into relay_socks under
// its own 4-tuple, as the sockops program does.
func insertSock(m *ebpf.Map, c *net.TCPConn) error {
	l, r := addrPort(c.LocalAddr()), addrPort(c.RemoteAddr())
	k := redirectTupleKey{Family: unix.AF_INET, LocalPort: uint32(l.Port()), RemotePort: uint32(r.Port())}
	k.LocalIp[0] = ip4Word(l.Addr())
	k.RemoteIp[0] = ip4Word(r.Addr())
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var uerr error
	if err := rc.Control(func(fd uintptr) {
		uerr = m.Update(k, uint64(fd), 0)
	}); err != nil {
		return err
	}
	return uerr
}
