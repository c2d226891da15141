package bpf

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// redirectEnv is one child cgroup with the redirect programs attached, a
// "database" answering "db" and a "daemon" answering "daemon" that records
// the Origin of every connection it accepts.
type redirectEnv struct {
	cg     string
	r      *Redirect
	db4    netip.AddrPort
	db6    netip.AddrPort
	mu     sync.Mutex
	seen   []acceptRecord
	listen netip.AddrPort
}

type acceptRecord struct {
	peer   netip.AddrPort
	origin Origin
	ok     bool
}

const testMark = 0x5a17

func newRedirectEnv(t *testing.T, mutate func(*RedirectConfig)) *redirectEnv {
	mnt := requireKernel(t, ebpf.CGroupSockAddr, ebpf.SockOps)
	e := &redirectEnv{cg: testCgroup(t, mnt)}

	db4 := listenTCP(t, "127.0.0.1:0")
	db6 := listenTCP(t, "[::1]:0")
	e.db4, e.db6 = addrPort(db4.Addr()), addrPort(db6.Addr())
	serveLines(t, db4, "db", nil)
	serveLines(t, db6, "db", nil)

	d4 := listenTCP(t, "127.0.0.1:0")
	d6 := listenTCP(t, "[::1]:0")
	cfg := RedirectConfig{
		Cgroup:      e.cg,
		Listen4:     addrPort(d4.Addr()),
		Listen6:     addrPort(d6.Addr()),
		Mark:        testMark,
		NetnsCookie: ownNetnsCookie(t),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	e.listen = cfg.Listen4
	r, err := LoadRedirect(cfg)
	if err != nil {
		t.Fatalf("LoadRedirect: %v", err)
	}
	e.r = r
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	// Serve only now: record reads e.r.
	serveLines(t, d4, "daemon", e.record)
	serveLines(t, d6, "daemon", e.record)
	for _, db := range []netip.AddrPort{e.db4, e.db6} {
		if err := r.Protect(db); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// record is the daemon's accept: it looks the connection's Origin up by
// the peer address, as the daemon does.
func (e *redirectEnv) record(c net.Conn) {
	peer := addrPort(c.RemoteAddr())
	o, ok := e.r.Origin(peer)
	e.mu.Lock()
	e.seen = append(e.seen, acceptRecord{peer, o, ok})
	e.mu.Unlock()
}

// lastAccept waits for the daemon to have handled n connections and returns
// the latest.
func (e *redirectEnv) lastAccept(t *testing.T, n int) acceptRecord {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.mu.Lock()
		if len(e.seen) >= n {
			a := e.seen[len(e.seen)-1]
			e.mu.Unlock()
			return a
		}
		e.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("daemon saw %d connections, want %d", len(e.seen), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRedirectConnect(t *testing.T) {
	e := newRedirectEnv(t, nil)
	mapped := netip.AddrPortFrom(netip.AddrFrom16(e.db4.Addr().As16()), e.db4.Port())
	wantComm := filepath.Base(os.Args[0])
	if len(wantComm) > 15 {
		wantComm = wantComm[:15]
	}

	tests := []struct {
		name     string
		dial     netip.AddrPort
		wantDst  netip.AddrPort // what Origin reports
		wantPeer netip.AddrPort // what getpeername shows the client
	}{
		{"ipv4", e.db4, e.db4, e.db4},
		{"ipv6 loopback", e.db6, e.db6, e.db6},
		{"ipv4-mapped ipv6", mapped, e.db4, mapped},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, pid := runHelper(t, helperOpts{Cgroup: e.cg, Dial: tt.dial.String()})
			if res.Err != "" || res.Reply != "daemon" {
				t.Fatalf("dial %s: reply %q err %q, want reply \"daemon\"", tt.dial, res.Reply, res.Err)
			}
			if res.Peer != tt.wantPeer.String() {
				t.Errorf("getpeername = %s, want %s", res.Peer, tt.wantPeer)
			}
			a := e.lastAccept(t, i+1)
			if !a.ok {
				t.Fatalf("Origin(%s): not found", a.peer)
			}
			local := netip.MustParseAddrPort(res.Local)
			if want := netip.AddrPortFrom(local.Addr().Unmap(), local.Port()); a.peer != want {
				t.Errorf("daemon peer %s, client local %s", a.peer, want)
			}
			if a.origin.Dst != tt.wantDst {
				t.Errorf("Origin.Dst = %s, want %s", a.origin.Dst, tt.wantDst)
			}
			c := a.origin.Client
			if c.Tgid != uint32(pid) || c.Comm != wantComm || c.Uid != uint32(os.Getuid()) || c.CgroupID == 0 {
				t.Errorf("ClientInfo = %+v, want tgid %d comm %q uid %d and a cgroup id", c, pid, wantComm, os.Getuid())
			}
			if _, again := e.r.Origin(a.peer); again {
				t.Errorf("Origin(%s) found twice; LookupAndDelete expected", a.peer)
			}
		})
	}
	ctr, err := e.r.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if ctr.Redirected != uint64(len(tests)) {
		t.Errorf("Counters().Redirected = %d, want %d", ctr.Redirected, len(tests))
	}
}

// The daemon's own connections to the database must not loop back to it.
func TestRedirectSkipsOwnSockets(t *testing.T) {
	t.Run("mark", func(t *testing.T) {
		e := newRedirectEnv(t, nil)
		res, _ := runHelper(t, helperOpts{Cgroup: e.cg, Dial: e.db4.String(), Mark: testMark})
		if res.Reply != "db" {
			t.Fatalf("marked socket: reply %q err %q, want \"db\"", res.Reply, res.Err)
		}
		if c, _ := e.r.Counters(); c.SkippedOwn != 1 || c.Redirected != 0 {
			t.Errorf("counters %+v, want SkippedOwn 1 Redirected 0", c)
		}
	})
	// By cookie: only the socket given to ExemptCookie, not the process
	// (a tgid is not the daemon's identity in a PID namespace), and only
	// until UnexemptCookie.
	t.Run("cookie", func(t *testing.T) {
		e := newRedirectEnv(t, nil)
		enterCgroup(t, e.cg)
		for _, dst := range []string{e.db4.String(), e.db6.String(), "[::ffff:" + e.db4.Addr().String() + "]:" + strconv.Itoa(int(e.db4.Port()))} {
			var cookie uint64
			d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
				var err error
				if cookie, err = SocketCookie(rc); err != nil {
					return err
				}
				return e.r.ExemptCookie(cookie)
			}}
			c, err := d.Dial("tcp", dst)
			if err != nil {
				t.Fatal(err)
			}
			if got := roundTrip(t, c); got != "db" {
				t.Errorf("exempt socket to %s: reply %q, want \"db\"", dst, got)
			}
			c.Close()
			if err := e.r.UnexemptCookie(cookie); err != nil {
				t.Fatal(err)
			}
			if err := e.r.UnexemptCookie(cookie); err != nil {
				t.Errorf("second UnexemptCookie: %v, want nil", err)
			}
			// The same process, another socket: redirected.
			c, err = net.DialTimeout("tcp", dst, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if got := roundTrip(t, c); got != "daemon" {
				t.Errorf("socket not exempt to %s: reply %q, want \"daemon\"", dst, got)
			}
			c.Close()
		}
		if c, _ := e.r.Counters(); c.SkippedOwn != 3 || c.Redirected != 3 {
			t.Errorf("counters %+v, want SkippedOwn 3 Redirected 3", c)
		}
	})
}

func roundTrip(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n-1])
}

// A process in another network namespace has its own loopback: its
// connection to "127.0.0.1:port" must reach its own listener.
func TestRedirectIgnoresOtherNetns(t *testing.T) {
	e := newRedirectEnv(t, nil)
	res, _ := runHelper(t, helperOpts{Cgroup: e.cg, Dial: e.db4.String(), NewNetns: true, NSListen: e.db4.String()})
	if res.Reply != "nslocal" {
		t.Fatalf("client in other netns: reply %q err %q, want \"nslocal\"", res.Reply, res.Err)
	}
	if c, _ := e.r.Counters(); c.SkippedNetns != 1 || c.Redirected != 0 {
		t.Errorf("counters %+v, want SkippedNetns 1 Redirected 0", c)
	}
}

func TestRedirectUnprotect(t *testing.T) {
	e := newRedirectEnv(t, nil)
	if res, _ := runHelper(t, helperOpts{Cgroup: e.cg, Dial: e.db4.String()}); res.Reply != "daemon" {
		t.Fatalf("before Unprotect: reply %q err %q, want \"daemon\"", res.Reply, res.Err)
	}
	if err := e.r.Unprotect(e.db4); err != nil {
		t.Fatal(err)
	}
	if err := e.r.Unprotect(e.db4); err != nil {
		t.Errorf("second Unprotect: %v", err)
	}
	if res, _ := runHelper(t, helperOpts{Cgroup: e.cg, Dial: e.db4.String()}); res.Reply != "db" {
		t.Fatalf("after Unprotect: reply %q err %q, want \"db\"", res.Reply, res.Err)
	}
}

// Processes outside the attached cgroup are not intercepted, and after Close
// nothing is.
func TestRedirectScopeAndClose(t *testing.T) {
	e := newRedirectEnv(t, nil)
	if res, _ := runHelper(t, helperOpts{Dial: e.db4.String()}); res.Reply != "db" {
		t.Fatalf("client outside the cgroup: reply %q err %q, want \"db\"", res.Reply, res.Err)
	}
	if err := e.r.Close(); err != nil {
		t.Fatal(err)
	}
	if res, _ := runHelper(t, helperOpts{Cgroup: e.cg, Dial: e.db4.String()}); res.Reply != "db" {
		t.Fatalf("after Close: reply %q err %q, want \"db\"", res.Reply, res.Err)
	}
}

// A client that closes before the daemon asks leaves nothing behind.
func TestRedirectCleansUpOnClose(t *testing.T) {
	e := newRedirectEnv(t, nil)
	enterCgroup(t, e.cg)
	c, err := net.DialTimeout("tcp", e.db4.String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	local := addrPort(c.LocalAddr())
	if got := roundTrip(t, c); got != "daemon" {
		t.Fatalf("reply %q, want \"daemon\"", got)
	}
	// The daemon has taken the by-client entry; the by-cookie one lives
	// until the client socket closes.
	if n := countEntries(t, e.r.objs.OriginByCookie); n != 1 {
		t.Errorf("origin_by_cookie has %d entries while connected, want 1", n)
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for countEntries(t, e.r.objs.OriginByCookie) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("origin_by_cookie not cleaned after close of %s", local)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func countEntries(t *testing.T, m *ebpf.Map) int {
	t.Helper()
	var n int
	var k, v []byte
	it := m.Iterate()
	for it.Next(&k, &v) {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLoadRedirectRejectsBadConfig(t *testing.T) {
	good := netip.MustParseAddrPort("127.0.0.1:6432")
	tests := []struct {
		name string
		cfg  RedirectConfig
	}{
		{"no cgroup", RedirectConfig{Listen4: good}},
		{"no listener", RedirectConfig{Cgroup: "/x"}},
		{"wildcard listener", RedirectConfig{Cgroup: "/x", Listen4: netip.MustParseAddrPort("0.0.0.0:6432")}},
		{"v6 in Listen4", RedirectConfig{Cgroup: "/x", Listen4: netip.MustParseAddrPort("[::1]:6432")}},
		{"v4 in Listen6", RedirectConfig{Cgroup: "/x", Listen6: good}},
		{"port zero", RedirectConfig{Cgroup: "/x", Listen4: netip.MustParseAddrPort("127.0.0.1:0")}},
		{"loopback pod listener", RedirectConfig{Cgroup: "/x", Listen4: good, PodListen4: netip.MustParseAddrPort("127.0.0.2:6433")}},
		{"wildcard pod listener", RedirectConfig{Cgroup: "/x", Listen4: good, PodListen4: netip.MustParseAddrPort("0.0.0.0:6433")}},
		{"pod listener port zero", RedirectConfig{Cgroup: "/x", Listen4: good, PodListen4: netip.MustParseAddrPort("10.0.0.1:0")}},
		{"v4 in PodListen6", RedirectConfig{Cgroup: "/x", Listen4: good, PodListen6: netip.MustParseAddrPort("10.0.0.1:6433")}},
		{"loopback PodListen6", RedirectConfig{Cgroup: "/x", Listen4: good, PodListen6: netip.MustParseAddrPort("[::1]:6433")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := LoadRedirect(tt.cfg)
			if err == nil {
				r.Close()
				t.Fatalf("LoadRedirect(%+v) = nil error, want one", tt.cfg)
			}
		})
	}
}
