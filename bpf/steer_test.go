package bpf

import (
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Two network namespaces joined by a veth pair: "dbhost" (10.99.0.1) runs
// the database on 0.0.0.0 and the daemon's listener on loopback; "client"
// (10.99.0.2) connects to the database's address. Nothing leaves the
// machine.
func TestSteer(t *testing.T) {
	requireKernel(t, ebpf.SkLookup)
	const dbPort = 15432
	dbhost := testNetns(t, "dbhost")
	client := testNetns(t, "client")
	run(t, "ip", "-n", nsName(dbhost), "link", "add", "sqfw0", "type", "veth", "peer", "name", "sqfw1", "netns", nsName(client))
	run(t, "ip", "-n", nsName(dbhost), "addr", "add", "10.99.0.1/24", "dev", "sqfw0")
	run(t, "ip", "-n", nsName(client), "addr", "add", "10.99.0.2/24", "dev", "sqfw1")
	run(t, "ip", "-n", nsName(dbhost), "link", "set", "sqfw0", "up")
	run(t, "ip", "-n", nsName(client), "link", "set", "sqfw1", "up")

	var daemon *net.TCPListener
	accepted := make(chan netip.AddrPort, 4)
	inNetns(t, dbhost, func() {
		serveLines(t, listenTCP(t, "0.0.0.0:15432"), "db", nil)
		daemon = listenTCP(t, "127.0.0.1:0")
	})
	serveLines(t, daemon, "daemon", func(c net.Conn) { accepted <- addrPort(c.LocalAddr()) })

	dial := func(ns, addr string) string {
		t.Helper()
		var c net.Conn
		var err error
		inNetns(t, ns, func() { c, err = net.DialTimeout("tcp", addr, 5*time.Second) })
		if err != nil {
			t.Fatalf("dial %s in %s: %v", addr, ns, err)
		}
		defer c.Close()
		return roundTrip(t, c)
	}

	s, err := LoadSteer(SteerConfig{Netns: dbhost, Ports: []uint16{dbPort}, Listener: daemon})
	if err != nil {
		t.Fatalf("LoadSteer: %v", err)
	}
	defer s.Close()

	if got := dial(client, "10.99.0.1:15432"); got != "daemon" {
		t.Fatalf("remote client: reply %q, want \"daemon\"", got)
	}
	if dst := <-accepted; dst != netip.MustParseAddrPort("10.99.0.1:15432") {
		t.Errorf("original destination (getsockname) = %s, want 10.99.0.1:15432", dst)
	}
	if got := dial(dbhost, "127.0.0.1:15432"); got != "db" {
		t.Errorf("loopback on the db host: reply %q, want \"db\" (the daemon's own path)", got)
	}
	if c, err := s.Counters(); err != nil || c.Steered != 1 {
		t.Errorf("Counters() = %+v, %v; want Steered 1", c, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := dial(client, "10.99.0.1:15432"); got != "db" {
		t.Errorf("after Close: reply %q, want \"db\"", got)
	}
}

func nsName(path string) string { return path[len("/var/run/netns/"):] }

// Go ≥ 1.24 listeners are MPTCP by default; a SOCKMAP refuses them with a
// bare "operation not supported", so LoadSteer says what to do instead.
func TestSteerRejectsMPTCPListener(t *testing.T) {
	requireKernel(t, ebpf.SkLookup)
	var lc net.ListenConfig
	lc.SetMultipathTCP(true)
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var proto int
	control(ln.(*net.TCPListener), func(fd int) (err error) {
		proto, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
		return err
	})
	if proto != unix.IPPROTO_MPTCP {
		t.Skipf("skipping: kernel gave no MPTCP listener (protocol %d)", proto)
	}
	s, err := LoadSteer(SteerConfig{Netns: "/proc/self/ns/net", Ports: []uint16{1}, Listener: ln.(*net.TCPListener)})
	if err == nil {
		s.Close()
		t.Fatal("LoadSteer accepted an MPTCP listener")
	}
	if !errors.Is(err, errMPTCP) {
		t.Errorf("error %q does not explain MPTCP", err)
	}
}
