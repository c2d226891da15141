package bpf

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// relayEnv is a miniature daemon in the test's own child cgroup: clients
// dial the protected "database" address, get redirected to a relay that
// looks up the Origin and forwards to the database over a marked socket.
// The test process is moved into the cgroup so that the relay's listener
// (and so its accepted sockets) are seen by sockops.
type relayEnv struct {
	db      netip.AddrPort
	r       *Redirect
	missing atomic.Int64 // accepted connections without an Origin
	// onUpstream, when set, sees each upstream leg before relaying starts
	// (the floor benchmark splices it).
	onUpstream func(net.Conn)
	// upTCPBytes sums what the upstream legs carried through TCP (TCP_INFO
	// bytes_acked + bytes_received at close): 0 when spliced.
	upTCPBytes atomic.Uint64
	closed     atomic.Int64 // relayed connections finished
	// direct, when valid, is where clients dial (the relay's listener,
	// no redirect) and the relay forwards to db without an Origin: the
	// db-host shape, with UpstreamOnly.
	direct netip.AddrPort
}

// clientAddr is where clients of the environment dial.
func (e *relayEnv) clientAddr() string {
	if e.direct.IsValid() {
		return e.direct.String()
	}
	return e.db.String()
}

// newRelayEnvUpstreamOnly is the db-host shape: clients dial the relay
// itself; its upstream legs to the database (listening in a cgroup of its
// own) are spliced by an UpstreamOnly Redirect, sockops attached to the
// database's cgroup and the relay's only.
func newRelayEnvUpstreamOnly(tb testing.TB, serve func(net.Conn)) *relayEnv {
	tb.Helper()
	mnt := requireKernel(tb, ebpf.SockOps, ebpf.SkMsg)
	cg, dbCg := testCgroup(tb, mnt), testCgroup(tb, mnt)
	enterCgroup(tb, dbCg)
	dbLn := listenTCP(tb, "127.0.0.1:0")
	enterCgroup(tb, cg)
	go acceptLoop(dbLn, serve)
	relayLn := listenTCP(tb, "127.0.0.1:0")
	e := &relayEnv{db: addrPort(dbLn.Addr()), direct: addrPort(relayLn.Addr())}
	r, err := LoadRedirect(RedirectConfig{
		Mark:           testMark,
		Sockmap:        true,
		SpliceUpstream: true,
		UpstreamOnly:   true,
		SpliceCgroups:  []string{dbCg, cg},
		Protected:      []netip.AddrPort{e.db},
	})
	if err != nil {
		tb.Fatalf("LoadRedirect: %v", err)
	}
	tb.Cleanup(func() { r.Close() })
	e.r = r
	go acceptLoop(relayLn, e.relay)
	return e
}

func newRelayEnv(tb testing.TB, sockmap bool, serve func(net.Conn)) *relayEnv {
	return newRelayEnvSplice(tb, sockmap, false, false, serve)
}

// newRelayEnvSplice is newRelayEnv with the upstream leg spliced too
// (splice) and, with dbApart, the database's listener made in a cgroup of
// its own that only SpliceCgroups attaches sockops to.
func newRelayEnvSplice(tb testing.TB, sockmap, splice, dbApart bool, serve func(net.Conn)) *relayEnv {
	tb.Helper()
	mnt := requireKernel(tb, ebpf.CGroupSockAddr, ebpf.SockOps, ebpf.SkMsg)
	cg := testCgroup(tb, mnt)
	cookie := ownNetnsCookie(tb)
	var spliceCgroups []string
	var dbLn *net.TCPListener
	if dbApart {
		dbCg := testCgroup(tb, mnt)
		enterCgroup(tb, dbCg)
		dbLn = listenTCP(tb, "127.0.0.1:0") // its sockets belong to dbCg
		spliceCgroups = []string{dbCg}
	}
	enterCgroup(tb, cg)
	if dbLn == nil {
		dbLn = listenTCP(tb, "127.0.0.1:0")
	}
	go acceptLoop(dbLn, serve)
	relayLn := listenTCP(tb, "127.0.0.1:0")

	e := &relayEnv{db: addrPort(dbLn.Addr())}
	r, err := LoadRedirect(RedirectConfig{
		Cgroup:         cg,
		Listen4:        addrPort(relayLn.Addr()),
		Mark:           testMark,
		NetnsCookie:    cookie,
		Sockmap:        sockmap,
		SpliceUpstream: splice,
		SpliceCgroups:  spliceCgroups,
	})
	if err != nil {
		tb.Fatalf("LoadRedirect: %v", err)
	}
	tb.Cleanup(func() { r.Close() })
	e.r = r
	if err := r.Protect(e.db); err != nil {
		tb.Fatal(err)
	}
	go acceptLoop(relayLn, e.relay)
	return e
}

func acceptLoop(ln *net.TCPListener, serve func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go serve(c)
	}
}

var markedDialer = net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, testMark)
	})
	if err != nil {
		return err
	}
	return serr
}}

func (e *relayEnv) relay(c net.Conn) {
	defer c.Close()
	dst := e.db
	if !e.direct.IsValid() {
		o, ok := e.r.Origin(addrPort(c.RemoteAddr()))
		if !ok {
			e.missing.Add(1)
			return
		}
		dst = o.Dst
	}
	up, err := markedDialer.Dial("tcp", dst.String())
	if err != nil {
		return
	}
	defer up.Close()
	if e.onUpstream != nil {
		e.onUpstream(up)
	}
	done := make(chan struct{})
	go func() { pump(up, c); close(done) }()
	pump(c, up)
	<-done
	e.upTCPBytes.Add(tcpBytes(up.(*net.TCPConn)))
	e.closed.Add(1)
}

// tcpBytes is what a socket sent and received through TCP itself.
func tcpBytes(c *net.TCPConn) uint64 {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	var n uint64
	rc.Control(func(fd uintptr) {
		if ti, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			n = ti.Bytes_acked + ti.Bytes_received
		}
	})
	return n
}

// pump copies with explicit Read/Write: io.Copy would use splice(2), which
// never sees data redirected by sk_msg, and hang.
func pump(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.(*net.TCPConn).CloseWrite()
			return
		}
	}
}

// The stress protocol is line based. A request is "REQ conn seq payload";
// the answer is "RSP conn seq len payload+reverse(payload)". With greet set
// the server speaks first ("HELLO"), as PostgreSQL's SSL answer and MySQL's
// handshake do.
func stressServer(greet bool) func(net.Conn) {
	return func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		bw := bufio.NewWriter(c)
		if greet {
			bw.WriteString("HELLO\n")
			bw.Flush()
		}
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			f := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 4)
			if len(f) != 4 || f[0] != "REQ" {
				fmt.Fprintf(bw, "BAD %q\n", line)
				bw.Flush()
				return
			}
			fmt.Fprintf(bw, "RSP %s %s %d %s%s\n", f[1], f[2], len(f[3]), f[3], reverse(f[3]))
			// Flush only when the client has nothing more queued, so replies
			// are both coalesced and split at odd places.
			if br.Buffered() == 0 {
				if bw.Flush() != nil {
					return
				}
			}
		}
	}
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

func payload(conn, seq int) string {
	n := (conn*131+seq*977)%2500 + 1
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + (conn+seq+i)%26)
	}
	return string(b)
}

// stressClient pipelines msgs requests on one connection and checks every
// answer; it returns a digest of everything it received.
func stressClient(addr string, conn, msgs int, greet bool) ([32]byte, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return [32]byte{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	h := sha256.New()
	if greet {
		line, err := br.ReadString('\n')
		if err != nil || line != "HELLO\n" {
			return [32]byte{}, fmt.Errorf("conn %d: greeting %q, %v", conn, line, err)
		}
		h.Write([]byte(line))
	}
	werr := make(chan error, 1)
	go func() {
		bw := bufio.NewWriterSize(c, 8<<10)
		for seq := 0; seq < msgs; seq++ {
			fmt.Fprintf(bw, "REQ %d %d %s\n", conn, seq, payload(conn, seq))
		}
		werr <- bw.Flush()
	}()
	for seq := 0; seq < msgs; seq++ {
		line, err := br.ReadString('\n')
		if err != nil {
			return [32]byte{}, fmt.Errorf("conn %d seq %d: %v", conn, seq, err)
		}
		p := payload(conn, seq)
		want := "RSP " + strconv.Itoa(conn) + " " + strconv.Itoa(seq) + " " + strconv.Itoa(len(p)) + " " + p + reverse(p) + "\n"
		if line != want {
			return [32]byte{}, fmt.Errorf("conn %d seq %d: got %.60q…, want %.60q…", conn, seq, line, want)
		}
		h.Write([]byte(line))
	}
	if err := <-werr; err != nil {
		return [32]byte{}, err
	}
	return [32]byte(h.Sum(nil)), nil
}

// Sockmap on and off must give byte-identical results under a pipelined
// load of a few hundred concurrent connections, for protocols where either
// side speaks first.
func TestSockmapStress(t *testing.T) {
	const conns, msgs = 300, 40
	// off: both legs TCP; on: the client leg spliced; upstream: the
	// upstream leg too, the database's listener in a cgroup of its own;
	// upstream-only: clients dial the relay itself (no redirect, the
	// db-host shape) and only the upstream leg is spliced (UpstreamOnly).
	modes := []string{"off", "on", "upstream", "upstream-only"}
	for _, greet := range []bool{false, true} {
		results := map[string][32]byte{}
		for _, mode := range modes {
			sockmap, splice := mode != "off", mode == "upstream"
			name := fmt.Sprintf("serverfirst=%v/sockmap=%s", greet, mode)
			t.Run(name, func(t *testing.T) {
				var e *relayEnv
				if mode == "upstream-only" {
					e = newRelayEnvUpstreamOnly(t, stressServer(greet))
				} else {
					e = newRelayEnvSplice(t, sockmap, splice, splice, stressServer(greet))
				}
				digests := make([][32]byte, conns)
				errs := make(chan error, conns)
				var wg sync.WaitGroup
				for i := range conns {
					wg.Add(1)
					go func() {
						defer wg.Done()
						d, err := stressClient(e.clientAddr(), i, msgs, greet)
						digests[i] = d
						if err != nil {
							errs <- err
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
				if n := e.missing.Load(); n != 0 {
					t.Errorf("%d accepted connections had no Origin", n)
				}
				ctr, err := e.r.Counters()
				if err != nil {
					t.Fatal(err)
				}
				wantRedirected := uint64(conns)
				if mode == "upstream-only" {
					wantRedirected = 0
				}
				if ctr.Redirected != wantRedirected {
					t.Errorf("Redirected = %d, want %d", ctr.Redirected, wantRedirected)
				}
				// Both legs of every connection (all four with the
				// upstream splice, the upstream two alone with
				// upstream-only), or none.
				want := map[string]uint64{"off": 0, "on": 2 * conns, "upstream": 4 * conns, "upstream-only": 2 * conns}[mode]
				if ctr.SockmapAdded != want {
					t.Errorf("SockmapAdded = %d with sockmap=%s, want %d", ctr.SockmapAdded, mode, want)
				}
				// The relay closes its upstream legs after the clients are
				// done: wait for the byte counts.
				deadline := time.Now().Add(5 * time.Second)
				for e.closed.Load() < conns && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				up := e.upTCPBytes.Load()
				t.Logf("counters: %+v, upstream legs' TCP bytes %d", ctr, up)
				switch {
				case !strings.HasPrefix(mode, "upstream") && up == 0:
					t.Errorf("upstream legs carried no TCP bytes with sockmap=%s", mode)
				case strings.HasPrefix(mode, "upstream") && ctr.SockmapFallback == 0 && up > 4*conns:
					// A FIN and its ACK still move TCP's sequence numbers
					// (3 per connection here); payload would be far more.
					t.Errorf("upstream legs carried %d TCP bytes though spliced with no fallback", up)
				}
				all := sha256.New()
				for _, d := range digests {
					all.Write(d[:])
				}
				results[mode] = [32]byte(all.Sum(nil))
			})
		}
		for _, mode := range modes[1:] {
			if got, off := results[mode], results["off"]; !bytes.Equal(got[:], off[:]) {
				t.Errorf("serverfirst=%v: results differ with sockmap %s (%x) and off (%x)", greet, mode, got[:6], off[:6])
			}
		}
	}
}

// BenchmarkRelayRoundTrip: one client, 100-byte request and 100-byte
// answer through the relay, with the local legs spliced in the kernel or
// not. Timings only; nothing is asserted.
func BenchmarkRelayRoundTrip(b *testing.B) {
	for _, sockmap := range []bool{false, true} {
		b.Run(fmt.Sprintf("sockmap=%v", sockmap), func(b *testing.B) {
			e := newRelayEnv(b, sockmap, func(c net.Conn) {
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
			})
			c, err := net.Dial("tcp", e.db.String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			msg := bytes.Repeat([]byte("x"), 100)
			buf := make([]byte, 100)
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
		})
	}
}

func readFull(c net.Conn, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestSockmapHalfClose: a client sends 256 KiB, shuts its side down, and
// reads the server's echo of all of it, which the server sends only after
// it has read to EOF. The FIN travels by TCP while the bytes before it may
// be spliced: the EOF must come after them, in every mode, on many
// connections at once.
func TestSockmapHalfClose(t *testing.T) {
	const conns, size = 50, 256 << 10
	for _, mode := range []string{"off", "on", "upstream", "upstream-only"} {
		t.Run("sockmap="+mode, func(t *testing.T) {
			echoAfterEOF := func(c net.Conn) {
				defer c.Close()
				b, err := io.ReadAll(c)
				if err != nil {
					return
				}
				c.Write(b)
			}
			var e *relayEnv
			if mode == "upstream-only" {
				e = newRelayEnvUpstreamOnly(t, echoAfterEOF)
			} else {
				e = newRelayEnvSplice(t, mode != "off", mode == "upstream", mode == "upstream", echoAfterEOF)
			}
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			for i := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := net.Dial("tcp", e.clientAddr())
					if err != nil {
						errs <- err
						return
					}
					defer c.Close()
					_ = c.SetDeadline(time.Now().Add(30 * time.Second))
					msg := bytes.Repeat([]byte(fmt.Sprintf("c%03d-", i)), size/5)
					for off := 0; off < len(msg); off += 16 << 10 {
						if _, err := c.Write(msg[off:min(off+16<<10, len(msg))]); err != nil {
							errs <- fmt.Errorf("connection %d: write: %v", i, err)
							return
						}
					}
					if err := c.(*net.TCPConn).CloseWrite(); err != nil {
						errs <- fmt.Errorf("connection %d: shutdown: %v", i, err)
						return
					}
					got, err := io.ReadAll(c)
					if err != nil || !bytes.Equal(got, msg) {
						errs <- fmt.Errorf("connection %d: read %d bytes of %d after the half-close (equal %v), %v", i, len(got), len(msg), bytes.Equal(got, msg), err)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			ctr, err := e.r.Counters()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]uint64{"off": 0, "on": 2 * conns, "upstream": 4 * conns, "upstream-only": 2 * conns}[mode]
			if ctr.SockmapAdded != want {
				t.Errorf("SockmapAdded = %d with sockmap=%s, want %d", ctr.SockmapAdded, mode, want)
			}
			t.Logf("counters: %+v", ctr)
		})
	}
}
