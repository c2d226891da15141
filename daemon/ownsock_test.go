package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/bpf"
	"github.com/sqlfw/sqlfw/cgroupstats"
	"github.com/sqlfw/sqlfw/relay"
)

// fakeExempter records what the dialer exempts, and checks that the socket
// is exempt when it connects: the listener's accept sees every cookie that
// was in the set at connect time.
type fakeExempter struct {
	mu     sync.Mutex
	now    map[uint64]bool
	events []string
}

func (f *fakeExempter) ExemptCookie(c uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now[c] = true
	f.events = append(f.events, fmt.Sprintf("+%d", c))
	return nil
}

func (f *fakeExempter) UnexemptCookie(c uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.now, c)
	f.events = append(f.events, fmt.Sprintf("-%d", c))
	return nil
}

func connCookie(t *testing.T, c net.Conn) uint64 {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	cookie, err := bpf.SocketCookie(rc)
	if err != nil {
		t.Fatal(err)
	}
	return cookie
}

// The upstream dialer exempts each socket it connects, by its cookie, for
// exactly the dial, and the loop guard knows it afterwards.
func TestOwnSocketsDialExemptsForTheDial(t *testing.T) {
	d := &Daemon{own: newOwnSockets()}
	d.dialer.ControlContext = d.upstreamControl(0)
	f := &fakeExempter{now: map[uint64]bool{}}
	d.own.add(f)

	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	sock := filepath.Join(t.TempDir(), "s")
	ux, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	for _, tc := range []struct {
		network, addr string
		ln            net.Listener
	}{{"tcp", tcp.Addr().String(), tcp}, {"unix", sock, ux}} {
		f.events = nil
		c, err := d.dial(context.Background(), tc.network, tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		cookie := connCookie(t, c)
		want := []string{fmt.Sprintf("+%d", cookie), fmt.Sprintf("-%d", cookie)}
		if strings.Join(f.events, " ") != strings.Join(want, " ") {
			t.Errorf("%s dial: exemptions %v, want %v (exempt before connect, removed after)", tc.network, f.events, want)
		}
		if len(f.now) != 0 {
			t.Errorf("%s dial: still exempt after the dial: %v", tc.network, f.now)
		}
		if !d.own.isOwn(cookie) {
			t.Errorf("%s dial: isOwn(%d) false for the dialer's own socket", tc.network, cookie)
		}
		a, err := tc.ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if d.own.isOwn(connCookie(t, a)) {
			t.Errorf("%s: isOwn true for the accepted (not dialed) socket", tc.network)
		}
		a.Close()
		c.Close()
	}
	if d.own.isOwn(0) {
		t.Error("isOwn(0) true")
	}
}

// The guard forgets the oldest cookies past ownRecent, and only those.
func TestOwnSocketsRecentBounded(t *testing.T) {
	o := newOwnSockets()
	for c := uint64(1); c <= ownRecent+10; c++ {
		o.mu.Lock()
		if old := o.ring[o.next]; old != 0 {
			delete(o.recent, old)
		}
		o.ring[o.next] = c
		o.next = (o.next + 1) % len(o.ring)
		o.recent[c] = struct{}{}
		o.mu.Unlock()
	}
	if len(o.recent) != ownRecent {
		t.Errorf("%d cookies remembered, want %d", len(o.recent), ownRecent)
	}
	if o.isOwn(10) || !o.isOwn(11) || !o.isOwn(ownRecent+10) {
		t.Errorf("isOwn(10, 11, last) = %v %v %v, want false true true", o.isOwn(10), o.isOwn(11), o.isOwn(ownRecent+10))
	}
}

// loopListener hands out n connections, then reports closed.
type loopListener struct {
	conns []net.Conn
}

func (l *loopListener) Accept() (net.Conn, error) {
	if len(l.conns) == 0 {
		return nil, net.ErrClosed
	}
	c := l.conns[0]
	l.conns = l.conns[1:]
	return c, nil
}
func (l *loopListener) Close() error   { return nil }
func (l *loopListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// A burst of loops is closed, counted, and logged once (not once each).
func TestOwnLoopClosedAndLoggedSparingly(t *testing.T) {
	var logBuf bytes.Buffer
	d := &Daemon{log: slog.New(slog.NewTextHandler(&logBuf, nil)), sessions: map[relay.Session]*sessionObserver{}, own: newOwnSockets()}
	ln := &loopListener{}
	var peers []net.Conn
	for i := 0; i < 500; i++ {
		a, b := net.Pipe()
		ln.conns = append(ln.conns, a)
		peers = append(peers, b)
	}
	d.wg.Add(1)
	d.acceptLoop(ln, func(c net.Conn) (arrival, error) {
		return arrival{}, fmt.Errorf("%w: test", errOwnLoop)
	})
	for _, p := range peers {
		p.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := p.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("a loop connection was not closed: read %v", err)
		}
	}
	if n := d.own.loopCount(); n != 500 {
		t.Errorf("loops counted %d, want 500", n)
	}
	if n := strings.Count(logBuf.String(), "connection from sqlfwd to itself"); n != 1 {
		t.Errorf("%d log lines for 500 loops at once, want 1:\n%s", n, logBuf.String())
	}
	if d.refused.Load() != 0 {
		t.Errorf("refused = %d: loops are counted apart from connections without an origin", d.refused.Load())
	}
	// Later lines say how many were refused since the last one.
	t0 := time.Now()
	o := newOwnSockets()
	if log, n := o.loop(t0); !log || n != 1 {
		t.Errorf("first loop: log %v n %d, want true 1", log, n)
	}
	for i := 1; i < 5; i++ {
		if log, _ := o.loop(t0.Add(time.Duration(i) * time.Second)); log {
			t.Errorf("loop %d s after the logged one was logged", i)
		}
	}
	if log, n := o.loop(t0.Add(ownLoopLogEvery)); !log || n != 5 {
		t.Errorf("loop one interval later: log %v n %d, want true 5", log, n)
	}
}

// A unix-socket client that is sqlfwd itself is a loop; another process is
// not (SO_PEERCRED, in sqlfwd's PID namespace).
func TestFromUnixRefusesSelf(t *testing.T) {
	it := &interceptor{d: &Daemon{proc: "/proc", own: newOwnSockets()}}
	db := &database{cfg: Database{UnixSocket: "/run/db.sock"}}
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := it.fromUnix(db, a); !errors.Is(err, errOwnLoop) {
		t.Errorf("fromUnix of sqlfwd's own connection: %v, want errOwnLoop", err)
	}
	a.Close()

	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("skipping the other-process half: no python3")
	}
	cmd := exec.Command(py, "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.recv(1)", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	a, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	got, err := it.fromUnix(db, a)
	if err != nil {
		t.Fatalf("fromUnix of another process's connection: %v", err)
	}
	if got.conn.Process.Tgid != uint32(cmd.Process.Pid) {
		t.Errorf("client tgid %d, want the other process's %d", got.conn.Process.Tgid, cmd.Process.Pid)
	}
}

// With a redirect program sqlfwd does not know of (its exemption cannot
// hold there), sqlfwd's own dial comes back to its listener: fromRedirect
// names it a loop by the client socket's cookie; a client's is served.
func TestFromRedirectRefusesOwnDial(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root (eBPF)")
	}
	if err := bpf.Probe(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mnt, err := cgroupstats.Cgroup2Mount(mi)
	mi.Close()
	if err != nil {
		t.Skipf("skipping: no cgroup2: %v", err)
	}
	cg := filepath.Join(mnt, fmt.Sprintf("sqlfw-ownsock-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	self := []byte(strconv.Itoa(os.Getpid()))
	orig := ownCgroup(t, mnt)
	if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), self, 0); err != nil {
		t.Fatal(err)
	}
	defer func() {
		os.WriteFile(filepath.Join(orig, "cgroup.procs"), self, 0)
		os.Remove(cg)
	}()

	dbLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dbLn.Close()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dst := dbLn.Addr().(*net.TCPAddr).AddrPort()
	cookie, err := bpf.NetnsCookie(ln.(*net.TCPListener))
	if err != nil {
		t.Fatal(err)
	}
	r, err := bpf.LoadRedirect(bpf.RedirectConfig{Cgroup: cg, Listen4: ln.Addr().(*net.TCPAddr).AddrPort(),
		NetnsCookie: cookie, Protected: []netip.AddrPort{dst}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	d := &Daemon{proc: "/proc", own: newOwnSockets()}
	d.dialer.ControlContext = d.upstreamControl(0) // r is not among d.own's: no exemption
	it := &interceptor{d: d, redirect: r}
	db := &database{cfg: Database{Upstream: dst.String()}}
	routes := map[netip.AddrPort]*database{dst: db}
	it.routes.Store(&routes)

	own, err := d.dial(context.Background(), "tcp", dst.String())
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := it.fromRedirect(a); !errors.Is(err, errOwnLoop) {
		t.Errorf("fromRedirect of sqlfwd's own redirected dial: %v, want errOwnLoop", err)
	}
	a.Close()

	client, err := net.Dial("tcp", dst.String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	a, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got, err := it.fromRedirect(a); err != nil || got.db != db {
		t.Errorf("fromRedirect of a client's connection: %v, %v; want it served for the database", got.db, err)
	}
}

func ownCgroup(t *testing.T, mnt string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			return filepath.Join(mnt, p)
		}
	}
	t.Fatal("no cgroup2 line in /proc/self/cgroup")
	return ""
}
