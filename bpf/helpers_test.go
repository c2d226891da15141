package bpf

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/cgroupstats"
)

// The test binary doubles as the client process that tests place in their
// own cgroup or network namespace: with SQLFW_BPF_HELPER set it runs
// helperMain instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("SQLFW_BPF_HELPER") != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

// requireKernel skips the test, saying why, unless it runs as root on a
// kernel with cgroup2 and the given program types. It returns the cgroup2
// mount point.
func requireKernel(tb testing.TB, types ...ebpf.ProgramType) string {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("skipping: needs root (CAP_BPF + CAP_NET_ADMIN)")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		tb.Skipf("skipping: %v", err)
	}
	defer f.Close()
	mnt, err := cgroupstats.Cgroup2Mount(f)
	if err != nil {
		tb.Skipf("skipping: %v", err)
	}
	for _, pt := range types {
		if err := features.HaveProgramType(pt); err != nil {
			tb.Skipf("skipping: program type %s: %v", pt, err)
		}
	}
	return mnt
}

var cgroupSeq atomic.Int64

// testCgroup makes a fresh child cgroup under the cgroup2 mount and removes
// it when the test ends (after any helper processes in it have exited).
func testCgroup(tb testing.TB, mnt string) string {
	tb.Helper()
	dir := filepath.Join(mnt, fmt.Sprintf("sqlfw-test-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Skipf("skipping: cannot create child cgroup: %v", err)
	}
	tb.Cleanup(func() {
		var err error
		for i := 0; i < 50; i++ {
			if err = os.Remove(dir); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		tb.Errorf("removing %s: %v", dir, err)
	})
	return dir
}

// enterCgroup moves the whole test process into dir until the test ends.
// Sockets keep the cgroup they were created in, so whatever the test opens
// meanwhile (listeners included, and the connections they accept) is seen
// by programs attached to dir.
func enterCgroup(tb testing.TB, dir string) {
	tb.Helper()
	orig := ownCgroup2(tb)
	pid := []byte(strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), pid, 0); err != nil {
		tb.Fatalf("entering %s: %v", dir, err)
	}
	tb.Cleanup(func() {
		if err := os.WriteFile(filepath.Join(orig, "cgroup.procs"), pid, 0); err != nil {
			tb.Errorf("leaving %s: %v", dir, err)
		}
	})
}

// ownCgroup2 returns the directory of this process's cgroup2 ("0::/path").
func ownCgroup2(tb testing.TB) string {
	tb.Helper()
	mnt := requireKernel(tb)
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(mnt, p)
		}
	}
	return mnt
}

// ownNetnsCookie is the cookie of the test's network namespace.
func ownNetnsCookie(tb testing.TB) uint64 {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	c, err := NetnsCookie(ln.(*net.TCPListener))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// listenTCP opens a non-MPTCP listener (MPTCP sockets cannot go into a
// SOCKMAP, and a plain TCP one is what the daemon uses).
func listenTCP(tb testing.TB, addr string) *net.TCPListener {
	tb.Helper()
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	ln, err := lc.Listen(tb.Context(), "tcp", addr)
	if err != nil {
		tb.Fatalf("listen %s: %v", addr, err)
	}
	tb.Cleanup(func() { ln.Close() })
	return ln.(*net.TCPListener)
}

func addrPort(a net.Addr) netip.AddrPort {
	ap := a.(*net.TCPAddr).AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// serveLines accepts connections on ln; each gets one line read and reply
// written back, and is passed to onAccept first if set.
func serveLines(tb testing.TB, ln net.Listener, reply string, onAccept func(net.Conn)) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if onAccept != nil {
					onAccept(c)
				}
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
					return
				}
				c.Write([]byte(reply + "\n"))
			}()
		}
	}()
}

// helperResult is what a helper process reports on stdout.
type helperResult struct {
	Local string // getsockname
	Peer  string // getpeername
	Reply string // the line the server answered
	Err   string
}

// helperOpts configures one client run in a child process.
type helperOpts struct {
	Cgroup   string // cgroup2 directory to start in ("" keeps the test's)
	Dial     string // address to connect to ("unix:NAME" for a relative socket name)
	Dir      string // working directory ("" keeps the test's)
	Mark     int    // SO_MARK on the socket, if non-zero
	NewNetns bool   // run in a fresh network namespace with only lo up...
	Netns    string // ...or in this named one (ip netns exec), e.g. a testPod's
	NSListen string // ...where this address serves "nslocal"
}

// runHelper runs a client in a child process and returns its report and pid.
func runHelper(tb testing.TB, o helperOpts) (helperResult, int) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if o.Netns != "" {
		// ip netns exec switches and execs without forking: the pid and
		// comm stay the helper's.
		cmd = exec.Command("ip", "netns", "exec", o.Netns, os.Args[0], "-test.run=^$")
	}
	cmd.Env = append(os.Environ(),
		"SQLFW_BPF_HELPER=dial",
		"SQLFW_DIAL="+o.Dial,
		"SQLFW_MARK="+strconv.Itoa(o.Mark),
		"SQLFW_NSLISTEN="+o.NSListen,
	)
	attr := &syscall.SysProcAttr{}
	if o.Cgroup != "" {
		fd, err := unix.Open(o.Cgroup, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			tb.Fatal(err)
		}
		defer unix.Close(fd)
		attr.UseCgroupFD, attr.CgroupFD = true, fd
	}
	if o.NewNetns {
		attr.Cloneflags = syscall.CLONE_NEWNET
	}
	cmd.SysProcAttr = attr
	cmd.Dir = o.Dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("helper %+v: %v\n%s", o, err, stderr.String())
	}
	var res helperResult
	if err := json.Unmarshal(out, &res); err != nil {
		tb.Fatalf("helper output %q: %v", out, err)
	}
	return res, cmd.Process.Pid
}

// helperMain is the child side of runHelper. It uses raw syscalls so that
// the socket family follows the address as written: [::ffff:127.0.0.1] gets
// an AF_INET6 socket, which Go's net.Dial would not create.
func helperMain() int {
	if os.Getenv("SQLFW_BPF_HELPER") == "probe" {
		return probeMain()
	}
	var res helperResult
	if err := helperDial(&res); err != nil {
		res.Err = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

func helperDial(res *helperResult) error {
	if addr := os.Getenv("SQLFW_NSLISTEN"); addr != "" {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			return fmt.Errorf("lo up: %v: %s", err, out)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				bufio.NewReader(c).ReadString('\n')
				c.Write([]byte("nslocal\n"))
				c.Close()
			}
		}()
	}
	target := os.Getenv("SQLFW_DIAL")
	var fd int
	var sa unix.Sockaddr
	var dst netip.AddrPort
	var err error
	if name, ok := strings.CutPrefix(target, "unix:"); ok || strings.HasPrefix(target, "/") {
		if !ok {
			name = target
		}
		fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		sa = &unix.SockaddrUnix{Name: name}
	} else if dst, err = netip.ParseAddrPort(target); err != nil {
		return err
	} else if dst.Addr().Is4() {
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP)
		sa = &unix.SockaddrInet4{Port: int(dst.Port()), Addr: dst.Addr().As4()}
	} else {
		fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP)
		sa = &unix.SockaddrInet6{Port: int(dst.Port()), Addr: dst.Addr().As16()}
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if m, _ := strconv.Atoi(os.Getenv("SQLFW_MARK")); m != 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_MARK, m); err != nil {
			return err
		}
	}
	tv := unix.Timeval{Sec: 5}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Connect(fd, sa); err != nil {
		return fmt.Errorf("connect %s: %w", target, err)
	}
	if ls, err := unix.Getsockname(fd); err == nil {
		res.Local = sockaddrString(ls)
	}
	if ps, err := unix.Getpeername(fd); err == nil {
		res.Peer = sockaddrString(ps)
	}
	if _, err := unix.Write(fd, []byte("hello\n")); err != nil {
		return err
	}
	buf := make([]byte, 256)
	var got []byte
	for !strings.Contains(string(got), "\n") {
		n, err := unix.Read(fd, buf)
		if err != nil || n == 0 {
			return fmt.Errorf("read reply: n=%d %v (got %q)", n, err, got)
		}
		got = append(got, buf[:n]...)
	}
	res.Reply = strings.TrimSpace(string(got))
	return nil
}

func sockaddrString(sa unix.Sockaddr) string {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port)).String()
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), uint16(sa.Port)).String()
	case *unix.SockaddrUnix:
		return sa.Name
	}
	return fmt.Sprint(sa)
}

// inNetns runs fn on a thread switched into the network namespace at path;
// sockets created by fn live there.
func inNetns(tb testing.TB, path string, fn func()) {
	tb.Helper()
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		tb.Fatal(err)
	}
	defer orig.Close()
	target, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		tb.Fatalf("setns %s: %v", path, err)
	}
	defer func() {
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			// Leave the thread locked: the runtime discards it.
			panic(fmt.Sprintf("restoring netns: %v", err))
		}
		runtime.UnlockOSThread()
	}()
	fn()
}

// testNetns creates a named network namespace with lo up and deletes it when
// the test ends. It returns its path.
func testNetns(tb testing.TB, name string) string {
	tb.Helper()
	name = fmt.Sprintf("sqlfw-%s-%d", name, os.Getpid())
	run(tb, "ip", "netns", "add", name)
	tb.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	run(tb, "ip", "-n", name, "link", "set", "lo", "up")
	return "/var/run/netns/" + name
}

func run(tb testing.TB, args ...string) {
	tb.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		tb.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
