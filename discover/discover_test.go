package discover

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// fixture builds a /proc tree: processes with a comm, fd links to socket
// inodes and a netns link; net files per process.
type proc struct {
	pid    int
	comm   string
	inodes []int
	netns  string
	uid    int
	noFDs  bool // fd/ unreadable: the owner fallback
	ppid   int
}

const tcpHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
const unixHeader = "Num       RefCount Protocol Flags    Type St Inode Path\n"

func buildProc(t *testing.T, procs []proc, tcp, tcp6, unix string) string {
	t.Helper()
	root := t.TempDir()
	mk := func(p string, data string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(root, "self", "ns")
	os.MkdirAll(self, 0o755)
	os.Symlink("net:[4026531833]", filepath.Join(self, "net"))
	// our own namespace's tables: the fixture's
	mk(filepath.Join(root, "self", "net", "tcp"), tcpHeader+tcp)
	mk(filepath.Join(root, "self", "net", "tcp6"), tcpHeader+tcp6)
	mk(filepath.Join(root, "self", "net", "unix"), unixHeader+unix)
	for _, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(p.pid))
		mk(filepath.Join(dir, "comm"), p.comm+"\n")
		mk(filepath.Join(dir, "net", "tcp"), tcpHeader+tcp)
		mk(filepath.Join(dir, "net", "tcp6"), tcpHeader+tcp6)
		mk(filepath.Join(dir, "net", "unix"), unixHeader+unix)
		mk(filepath.Join(dir, "status"), fmt.Sprintf("Name:\t%s\nPPid:\t%d\nUid:\t%d\t%d\t%d\t%d\n", p.comm, p.ppid, p.uid, p.uid, p.uid, p.uid))
		if !p.noFDs {
			os.MkdirAll(filepath.Join(dir, "fd"), 0o755)
			os.Symlink("/dev/null", filepath.Join(dir, "fd", "0"))
			for i, ino := range p.inodes {
				os.Symlink(fmt.Sprintf("socket:[%d]", ino), filepath.Join(dir, "fd", strconv.Itoa(i+3)))
			}
		}
		os.MkdirAll(filepath.Join(dir, "ns"), 0o755)
		ns := p.netns
		if ns == "" {
			ns = "net:[4026531833]"
		}
		os.Symlink(ns, filepath.Join(dir, "ns", "net"))
	}
	return root
}

func TestFindFixture(t *testing.T) {
	tcp := "   0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 100 1 0000000000000000 100 0 0 10 0\n" +
		"   1: 0100007F:1538 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000   101        0 101 1 0000000000000000 20 4 30 10 -1\n" +
		"   2: 00000000:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000   104        0 200 1 0000000000000000 100 0 0 10 0\n" +
		"   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 300 1 0000000000000000 100 0 0 10 0\n" +
		"garbage line\n"
	tcp6 := "   0: 00000000000000000000000001000000:1538 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 102 1 0000000000000000 100 0 0 10 0\n"
	unix := "00000000d57301c7: 00000003 00000000 00000000 0001 03   648\n" +
		"00000000f57af682: 00000002 00000000 00010000 0001 01 103 /run/postgresql/.s.PGSQL.5432\n" +
		"00000000f57af683: 00000002 00000000 00000000 0001 03 104 /run/postgresql/.s.PGSQL.5432\n" +
		"00000000f57af684: 00000002 00000000 00010000 0001 01 201 /run/mysqld/mysqld.sock\n"
	root := buildProc(t, []proc{
		{pid: 10, comm: "postgres", inodes: []int{100, 102, 103}},
		{pid: 11, comm: "postgres", inodes: []int{101, 104}}, // a backend: no listener
		{pid: 20, comm: "mariadbd", inodes: []int{200, 201}},
		{pid: 30, comm: "nginx", inodes: []int{300}},
		{pid: 40, comm: "mysqld", inodes: []int{200}, netns: "net:[4026532000]"},
	}, tcp, tcp6, unix)
	got, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Protocol: MySQL, PID: 20, Comm: "mariadbd", TCP: []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:3306")}, Unix: []string{"/run/mysqld/mysqld.sock"}},
		{Protocol: MySQL, PID: 40, Comm: "mysqld", TCP: []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:3306")}, OtherNetns: true},
		{Protocol: Postgres, PID: 10, Comm: "postgres", TCP: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:5432"), netip.MustParseAddrPort("[::1]:5432")}, Unix: []string{"/run/postgresql/.s.PGSQL.5432"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// A child of a server process of the same protocol (a backend) is not
// read: were it holding the listening socket too, it is the same server.
func TestFindSkipsChildren(t *testing.T) {
	tcp := "   0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 100 1 0000000000000000 100 0 0 10 0\n" +
		"   1: 0100007F:1539 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 110 1 0000000000000000 100 0 0 10 0\n"
	root := buildProc(t, []proc{
		{pid: 10, comm: "postgres", inodes: []int{100}, ppid: 1},
		{pid: 11, comm: "postgres", inodes: []int{100}, ppid: 10}, // a backend with the listener
		{pid: 12, comm: "mariadbd", inodes: []int{110}, ppid: 10}, // another protocol: its own server
	}, tcp, "", "")
	got, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Protocol: MySQL, PID: 12, Comm: "mariadbd", TCP: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:5433")}},
		{Protocol: Postgres, PID: 10, Comm: "postgres", TCP: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:5432")}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// Without fd links (an unprivileged sqlfwd) a server's listeners are those
// its user owns, one server per port, with PostgreSQL's socket of that port.
func TestFindByOwner(t *testing.T) {
	tcp := "   0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 100 1 0000000000000000 100 0 0 10 0\n" +
		"   1: 0100007F:1539 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 110 1 0000000000000000 100 0 0 10 0\n" +
		"   2: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 300 1 0000000000000000 100 0 0 10 0\n"
	unix := "00000000f57af682: 00000002 00000000 00010000 0001 01 103 /run/postgresql/.s.PGSQL.5432\n" +
		"00000000f57af683: 00000002 00000000 00010000 0001 01 113 /run/postgresql/.s.PGSQL.5433\n" +
		"00000000f57af684: 00000002 00000000 00010000 0001 01 114 /tmp/.s.PGSQL.9999\n"
	root := buildProc(t, []proc{
		{pid: 10, comm: "postgres", uid: 101, noFDs: true},
		{pid: 12, ppid: 10, comm: "postgres", uid: 101, noFDs: true}, // a backend of the same user
		{pid: 30, comm: "nginx", uid: 0, noFDs: true},
	}, tcp, "", unix)
	got, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		{Protocol: Postgres, PID: 10, Comm: "postgres", TCP: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:5432")}, Unix: []string{"/run/postgresql/.s.PGSQL.5432"}},
		{Protocol: Postgres, PID: 10, Comm: "postgres", TCP: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:5433")}, Unix: []string{"/run/postgresql/.s.PGSQL.5433"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseHexAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1538":                         "127.0.0.1:5432",
		"00000000:0CEA":                         "0.0.0.0:3306",
		"00000000000000000000000001000000:1538": "[::1]:5432",
		"0000000000000000FFFF00000100007F:1538": "127.0.0.1:5432", // v4-mapped
		"B80D0120000000000000000001000000:0050": "[2001:db8::1]:80",
	} {
		got, err := parseHexAddr(in)
		if err != nil || got.String() != want {
			t.Errorf("%s: got %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0100007F", "zz00007F:1538", "0100007F:zz", "01007F:1538"} {
		if _, err := parseHexAddr(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestFindLive finds the servers scripts/test.sh started on unusual ports,
// in this host's /proc.
func TestFindLive(t *testing.T) {
	pgPort, myPort := os.Getenv("SQLFW_PG_PORT"), os.Getenv("SQLFW_MY_PORT")
	if pgPort == "" && myPort == "" {
		t.Skip("skipping: no SQLFW_PG_PORT or SQLFW_MY_PORT (run through scripts/test.sh)")
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping: reading other users' fd links needs root")
	}
	for _, o := range []Options{{}, {Netlink: true}} {
		t.Run(fmt.Sprintf("netlink=%v", o.Netlink), func(t *testing.T) { findLive(t, o, pgPort, myPort) })
	}
}

func findLive(t *testing.T, o Options, pgPort, myPort string) {
	got, err := FindWith("/proc", o)
	if err != nil {
		t.Fatal(err)
	}
	check := func(proto Protocol, port string) {
		for _, s := range got {
			for _, a := range s.TCP {
				if s.Protocol == proto && strconv.Itoa(int(a.Port())) == port {
					t.Logf("found %s (pid %d, %s) on %v, unix %v", proto, s.PID, s.Comm, s.TCP, s.Unix)
					return
				}
			}
		}
		t.Errorf("no %s server found on port %s; found %+v", proto, port, got)
	}
	if pgPort != "" {
		check(Postgres, pgPort)
		if dir := os.Getenv("SQLFW_PG_SOCKDIR"); dir != "" {
			want := filepath.Join(dir, ".s.PGSQL."+pgPort)
			found := false
			for _, s := range got {
				for _, u := range s.Unix {
					found = found || u == want
				}
			}
			if !found {
				t.Errorf("PostgreSQL's unix socket %s not found", want)
			}
		}
	}
	if myPort != "" {
		check(MySQL, myPort)
	}
}

// The sock_diag reading finds the listening sockets net/tcp and net/tcp6
// show, with the same inode, address and owner, and no socket that is not
// listening.
func TestNetlinkMatchesProc(t *testing.T) {
	var lns []net.Listener
	for _, a := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Logf("skipping %s: %v", a, err)
			continue
		}
		defer ln.Close()
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		t.Skip("skipping: no loopback listener")
	}
	// an established connection, which must not be listed
	c, err := net.Dial("tcp", lns[0].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nl := map[uint64]tcpListener{}
	if err := netlinkTCPListeners(nl); err != nil {
		t.Skipf("skipping: sock_diag unavailable: %v", err)
	}
	files := map[uint64]tcpListener{}
	if !readTCPListeners("/proc/self/net/tcp", files) || !readTCPListeners("/proc/self/net/tcp6", files) {
		t.Skip("skipping: no /proc/self/net/tcp")
	}
	for _, ln := range lns {
		want := ln.Addr().(*net.TCPAddr).AddrPort()
		want = netip.AddrPortFrom(want.Addr().Unmap(), want.Port())
		var found []string
		for ino, l := range files {
			if l.addr == want {
				got, ok := nl[ino]
				if !ok || got.addr != l.addr || got.uid != l.uid {
					t.Errorf("listener %s (inode %d, %+v in net/tcp): sock_diag has %+v, %v", want, ino, l, got, ok)
				}
				found = append(found, fmt.Sprint(ino))
			}
		}
		if len(found) != 1 {
			t.Errorf("listener %s: inodes %v in net/tcp, want one", want, found)
		}
	}
	for ino, l := range nl {
		if f, ok := files[ino]; ok && (f.addr != l.addr || f.uid != l.uid) {
			t.Errorf("inode %d: sock_diag %+v, net/tcp %+v", ino, l, f)
		}
	}
	local := c.LocalAddr().(*net.TCPAddr).AddrPort()
	for _, l := range nl {
		if l.addr.Port() == local.Port() {
			t.Errorf("sock_diag lists the client end %s of an established connection", local)
		}
	}
}

// BenchmarkFindNetlink and BenchmarkFindFiles are one scan of this host's
// /proc with and without sock_diag.
func BenchmarkFindNetlink(b *testing.B) {
	for b.Loop() {
		if _, err := FindWith("/proc", Options{Netlink: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFindFiles(b *testing.B) {
	for b.Loop() {
		if _, err := Find("/proc"); err != nil {
			b.Fatal(err)
		}
	}
}
