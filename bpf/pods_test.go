package bpf

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"
)

// testPod is a network namespace standing for a pod on a Kubernetes node:
// a veth pair joins it to the test's namespace (the node), host side
// Host/24 and Host6/64, pod side Addr/24 and Addr6/64, default routes via
// the host side.
type testPod struct {
	Netns       string // name, for ip netns exec
	Host, Host6 netip.Addr
	Addr, Addr6 netip.Addr
}

var podSeq atomic.Int64

// newTestPod creates a pod namespace and removes it (and its veth) when the
// test ends, also after a failure half-way. Subnets 10.231.x.0/24 differ
// per pod of this process (e2e uses 10.232.x).
func newTestPod(tb testing.TB) testPod {
	tb.Helper()
	n := podSeq.Add(1)
	name := fmt.Sprintf("sqlfw-pod-%d-%d", os.Getpid(), n)
	hostIf := fmt.Sprintf("sqp%d-%d", os.Getpid()%100000, n)
	podIf := fmt.Sprintf("sqq%d-%d", os.Getpid()%100000, n)
	octet := (os.Getpid()*7+int(n))%250 + 1
	p := testPod{
		Netns: name,
		Host:  netip.MustParseAddr(fmt.Sprintf("10.231.%d.1", octet)),
		Addr:  netip.MustParseAddr(fmt.Sprintf("10.231.%d.2", octet)),
		Host6: netip.MustParseAddr(fmt.Sprintf("fd00:231:%x::1", octet)),
		Addr6: netip.MustParseAddr(fmt.Sprintf("fd00:231:%x::2", octet)),
	}
	// Registered before creating: a failed step still removes what exists.
	tb.Cleanup(func() {
		exec.Command("ip", "link", "del", hostIf).Run() // takes the pod end too
		exec.Command("ip", "netns", "del", name).Run()
	})
	run(tb, "ip", "netns", "add", name)
	run(tb, "ip", "link", "add", hostIf, "type", "veth", "peer", "name", podIf)
	run(tb, "ip", "link", "set", podIf, "netns", name)
	run(tb, "ip", "addr", "add", p.Host.String()+"/24", "dev", hostIf)
	run(tb, "ip", "-6", "addr", "add", p.Host6.String()+"/64", "dev", hostIf, "nodad")
	run(tb, "ip", "link", "set", hostIf, "up")
	run(tb, "ip", "-n", name, "addr", "add", p.Addr.String()+"/24", "dev", podIf)
	run(tb, "ip", "-n", name, "link", "set", podIf, "up")
	run(tb, "ip", "-n", name, "link", "set", "lo", "up")
	run(tb, "ip", "-n", name, "route", "add", "default", "via", p.Host.String())
	run(tb, "ip", "-n", name, "-6", "addr", "add", p.Addr6.String()+"/64", "dev", podIf, "nodad")
	run(tb, "ip", "-n", name, "-6", "route", "add", "default", "via", p.Host6.String())
	return p
}

// podEnv is a redirectEnv (loopback database and listeners) plus a node
// with pods: a "database" on the node address answering "db" and a pod
// listener on the node address answering "daemon-pod".
type podEnv struct {
	*redirectEnv
	pods            []testPod
	nodeDB, nodeDB6 netip.AddrPort // protected, not loopback
	podLn, podLn6   netip.AddrPort
}

func newPodEnv(t *testing.T, pods int, mutate func(*RedirectConfig)) *podEnv {
	requireKernel(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("skipping: needs ip(8) for network namespaces standing for pods")
	}
	pe := &podEnv{}
	for range pods {
		pe.pods = append(pe.pods, newTestPod(t))
	}
	// The node address: the host side of the first pod's veth. Every pod
	// routes to it (directly or by its default route).
	node := pe.pods[0].Host
	db := listenTCP(t, net.JoinHostPort(node.String(), "0"))
	serveLines(t, db, "db", nil)
	pe.nodeDB = addrPort(db.Addr())
	podLn := listenTCP(t, net.JoinHostPort(node.String(), "0"))
	pe.podLn = addrPort(podLn.Addr())
	node6 := pe.pods[0].Host6
	db6 := listenTCP(t, net.JoinHostPort(node6.String(), "0"))
	serveLines(t, db6, "db", nil)
	pe.nodeDB6 = addrPort(db6.Addr())
	podLn6 := listenTCP(t, net.JoinHostPort(node6.String(), "0"))
	pe.podLn6 = addrPort(podLn6.Addr())
	pe.redirectEnv = newRedirectEnv(t, func(c *RedirectConfig) {
		c.PodListen4, c.PodListen6 = pe.podLn, pe.podLn6
		if mutate != nil {
			mutate(c)
		}
	})
	serveLines(t, podLn, "daemon-pod", pe.record)
	serveLines(t, podLn6, "daemon-pod6", pe.record)
	for _, a := range []netip.AddrPort{pe.nodeDB, pe.nodeDB6} {
		if err := pe.r.Protect(a); err != nil {
			t.Fatal(err)
		}
	}
	return pe
}

// Pods on the node connecting to a protected node address go to the pod
// listener; the daemon finds their origin by the peer address it sees
// (the pod's address: the sockops key is taken in the pod's namespace),
// and the pod's client sees the database's address as its peer.
func TestPodRedirect(t *testing.T) {
	pe := newPodEnv(t, 2, func(c *RedirectConfig) { c.Sockmap = true })
	own := ownNetnsCookie(t)
	seen := 0
	for i, pod := range pe.pods {
		t.Run(fmt.Sprintf("pod%d", i), func(t *testing.T) {
			res, pid := runHelper(t, helperOpts{Cgroup: pe.cg, Netns: pod.Netns, Dial: pe.nodeDB.String()})
			if res.Err != "" || res.Reply != "daemon-pod" {
				t.Fatalf("pod %s dials %s: reply %q err %q, want \"daemon-pod\"", pod.Addr, pe.nodeDB, res.Reply, res.Err)
			}
			seen++
			if res.Peer != pe.nodeDB.String() {
				t.Errorf("getpeername in the pod = %s, want the database's %s", res.Peer, pe.nodeDB)
			}
			a := pe.lastAccept(t, seen)
			if !a.ok {
				t.Fatalf("Origin(%s): not found", a.peer)
			}
			if local := netip.MustParseAddrPort(res.Local); a.peer != local || local.Addr() != pod.Addr {
				t.Errorf("daemon peer %s, pod client local %s, want both %s:port", a.peer, local, pod.Addr)
			}
			if a.origin.Dst != pe.nodeDB {
				t.Errorf("Origin.Dst = %s, want %s", a.origin.Dst, pe.nodeDB)
			}
			c := a.origin.Client
			if c.Tgid != uint32(pid) || c.NetnsCookie == 0 || c.NetnsCookie == own {
				t.Errorf("ClientInfo = %+v, want tgid %d and the pod's netns cookie (not 0, not the node's %d)", c, pid, own)
			}
		})
	}
	// An IPv6 socket to the IPv4-mapped form goes through connect6.
	mapped := netip.AddrPortFrom(netip.AddrFrom16(pe.nodeDB.Addr().As16()), pe.nodeDB.Port())
	res, _ := runHelper(t, helperOpts{Cgroup: pe.cg, Netns: pe.pods[1].Netns, Dial: mapped.String()})
	if res.Reply != "daemon-pod" || res.Peer != mapped.String() {
		t.Errorf("pod dials %s: reply %q peer %s err %q, want \"daemon-pod\" and peer %s", mapped, res.Reply, res.Peer, res.Err, mapped)
	}
	if a := pe.lastAccept(t, seen+1); !a.ok || a.origin.Dst != pe.nodeDB {
		t.Errorf("mapped: Origin %+v ok %v, want Dst %s", a.origin, a.ok, pe.nodeDB)
	}
	// The node's own processes keep going to the node listener.
	res, _ = runHelper(t, helperOpts{Cgroup: pe.cg, Dial: pe.nodeDB.String()})
	if res.Reply != "daemon" {
		t.Fatalf("node client dials %s: reply %q err %q, want \"daemon\" (the node listener)", pe.nodeDB, res.Reply, res.Err)
	}
	ctr, err := pe.r.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if ctr.Redirected != 4 || ctr.PodRedirected != 3 || ctr.SkippedNetns != 0 {
		t.Errorf("counters %+v, want Redirected 4, PodRedirected 3, SkippedNetns 0", ctr)
	}
	// Every client has exited: the pods' sockets closed in their own
	// namespaces, and their by-cookie entries went with them.
	deadline := time.Now().Add(5 * time.Second)
	for countEntries(t, pe.r.objs.OriginByCookie) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("origin_by_cookie holds %d entries after every client closed", countEntries(t, pe.r.objs.OriginByCookie))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Only the node client's leg: pod connections cross their veth and are
	// never spliced (the daemon's accepted legs are outside the cgroup here).
	if ctr.SockmapAdded != 1 {
		t.Errorf("SockmapAdded = %d, want 1 (the node client only, never a pod's socket)", ctr.SockmapAdded)
	}
}

// An IPv6 pod connection goes to the IPv6 pod listener, found by the pod's
// IPv6 address.
func TestPodRedirectIPv6(t *testing.T) {
	pe := newPodEnv(t, 1, nil)
	pod := pe.pods[0]
	res, _ := runHelper(t, helperOpts{Cgroup: pe.cg, Netns: pod.Netns, Dial: pe.nodeDB6.String()})
	if res.Err != "" || res.Reply != "daemon-pod6" || res.Peer != pe.nodeDB6.String() {
		t.Fatalf("pod dials %s: reply %q peer %s err %q, want \"daemon-pod6\" and peer %s", pe.nodeDB6, res.Reply, res.Peer, res.Err, pe.nodeDB6)
	}
	a := pe.lastAccept(t, 1)
	if local := netip.MustParseAddrPort(res.Local); !a.ok || a.peer != local || local.Addr() != pod.Addr6 || a.origin.Dst != pe.nodeDB6 {
		t.Errorf("accepted peer %s (origin %+v, found %v), pod local %s: want the pod's %s and Dst %s", a.peer, a.origin, a.ok, local, pod.Addr6, pe.nodeDB6)
	}
	if c, _ := pe.r.Counters(); c.PodRedirected != 1 {
		t.Errorf("counters %+v, want PodRedirected 1", c)
	}
}

// A pod's loopback is its own: a connect to a protected loopback address
// reaches the pod's listener, and is counted.
func TestPodLoopbackNotRedirected(t *testing.T) {
	pe := newPodEnv(t, 1, nil)
	pod := pe.pods[0]
	for _, dst := range []netip.AddrPort{pe.db4, pe.db6} {
		res, _ := runHelper(t, helperOpts{Cgroup: pe.cg, Netns: pod.Netns, Dial: dst.String(), NSListen: dst.String()})
		if res.Reply != "nslocal" {
			t.Fatalf("pod dials its loopback %s: reply %q err %q, want \"nslocal\"", dst, res.Reply, res.Err)
		}
	}
	if c, _ := pe.r.Counters(); c.SkippedNetns != 2 || c.Redirected != 0 {
		t.Errorf("counters %+v, want SkippedNetns 2 Redirected 0", c)
	}
}

// Without a pod listener, pods are left alone as before (counted).
func TestPodWithoutPodListen(t *testing.T) {
	pe := newPodEnv(t, 1, func(c *RedirectConfig) { c.PodListen4, c.PodListen6 = netip.AddrPort{}, netip.AddrPort{} })
	for _, dst := range []netip.AddrPort{pe.nodeDB, pe.nodeDB6} {
		res, _ := runHelper(t, helperOpts{Cgroup: pe.cg, Netns: pe.pods[0].Netns, Dial: dst.String()})
		if res.Reply != "db" {
			t.Fatalf("pod dials %s with no pod listener: reply %q err %q, want \"db\" (direct)", dst, res.Reply, res.Err)
		}
	}
	if c, _ := pe.r.Counters(); c.SkippedNetns != 2 || c.Redirected != 0 {
		t.Errorf("counters %+v, want SkippedNetns 2 Redirected 0", c)
	}
}
