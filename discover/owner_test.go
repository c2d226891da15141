package discover

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// procWithCmdline makes procRoot/PID/cmdline for each server.
func procWithCmdline(t *testing.T, cmdlines map[int][]string) string {
	t.Helper()
	root := t.TempDir()
	for pid, args := range cmdlines {
		dir := filepath.Join(root, strconv.Itoa(pid))
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestAttribute: without fd links a socket is a server's only with a
// proof (its user runs only servers, its cgroup holds only servers and the
// socket was made there, or its configuration names it), never because
// root owns both; what might be its is said.
func TestAttribute(t *testing.T) {
	const (
		rootCg  = "/"
		unitCg  = "/system.slice/mariadb.service"
		otherCg = "/system.slice/other.service"
	)
	ids := map[string]uint64{rootCg: 1, unitCg: 50, otherCg: 60, "/system.slice/none.service": 80}
	ap := netip.MustParseAddrPort
	own := &nsSockets{
		tcp: map[uint64]tcpListener{
			1: {addr: ap("127.0.0.1:3306"), uid: 0, cgroup: 50},
			2: {addr: ap("0.0.0.0:2024"), uid: 0, cgroup: 1},
			3: {addr: ap("127.0.0.1:3307"), uid: 0, cgroup: 1},
			4: {addr: ap("127.0.0.1:3308"), uid: 102, cgroup: 1},
			5: {addr: ap("127.0.0.1:8080"), uid: 0, cgroup: 60},
			6: {addr: ap("127.0.0.1:5432"), uid: 101, cgroup: 70},
		},
		unix: map[uint64]unixListener{
			11: {path: "/run/mysqld/mysqld.sock", uid: 102, uidKnown: true},
			12: {path: "/tmp/root.sock", uid: 0, uidKnown: true},
			13: {path: "/run/other.sock", uid: 0, uidKnown: true},
			14: {path: "/var/run/postgresql/.s.PGSQL.5432", uid: 101, uidKnown: true},
			15: {path: "/tmp/.s.PGSQL.5432", uid: 0, uidKnown: true}, // root's, named like PostgreSQL's
		},
	}
	cen := census{
		byUID:    map[uint32]Protocol{0: other, 101: Postgres, 102: MySQL},
		byCgroup: map[string]Protocol{rootCg: other, unitCg: MySQL, otherCg: other},
		// pids 1-4 are MySQL servers (1 in unitCg, 2-3 root's, 4 mysql's)
		serversByUID:    map[uint32]int{0: 3, 101: 1, 102: 1},
		serversByCgroup: map[string]int{rootCg: 3, unitCg: 1},
	}
	cmd := map[int][]string{
		1: {"/usr/sbin/mariadbd"},                                                  // config unknown (no --no-defaults; /etc may differ): nothing from it
		2: {"mariadbd", "--no-defaults", "--port=3307", "--socket=/tmp/root.sock"}, // config names 3307 and the socket
		3: {"mariadbd", "--no-defaults", "--port", "9999"},
		4: {"mariadbd", "--user=mysql"},
		5: {"postgres", "-D", "/nonexistent/data"},
	}
	for _, tc := range []struct {
		name    string
		pid     int
		uid     uint32
		cg      string
		proto   Protocol
		want    []portListeners
		wantWhy string // a part of the reason, "" for none
	}{
		{"root unit of its own: by cgroup, not 2024", 1, 0, unitCg, MySQL,
			[]portListeners{{tcp: []netip.AddrPort{ap("127.0.0.1:3306")}}}, ""},
		{"root in the root cgroup: by its command line only", 2, 0, rootCg, MySQL,
			[]portListeners{{tcp: []netip.AddrPort{ap("127.0.0.1:3307")}, unix: []string{"/tmp/root.sock"}}}, ""},
		{"root, configured port not listening: nothing, 2024 said", 3, 0, rootCg, MySQL, nil, "0.0.0.0:2024"},
		{"mysql user: by user", 4, 102, rootCg, MySQL,
			[]portListeners{{tcp: []netip.AddrPort{ap("127.0.0.1:3308")}, unix: []string{"/run/mysqld/mysqld.sock"}}}, ""},
		{"postgres user, socket of root named like it not taken", 5, 101, "/system.slice/postgresql.service", Postgres,
			[]portListeners{{tcp: []netip.AddrPort{ap("127.0.0.1:5432")}, unix: []string{"/var/run/postgresql/.s.PGSQL.5432"}}}, ""},
		{"root in another unit with no socket of its cgroup", 1, 0, "/system.slice/none.service", MySQL, nil, "none of sqlfwd's network namespace is proven its"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &ownerCtx{procRoot: procWithCmdline(t, cmd), census: cen, cgroupID: func(p string) uint64 { return ids[p] }}
			if tc.cg == "/system.slice/postgresql.service" {
				x.cgroupID = func(p string) uint64 {
					if p == tc.cg {
						return 70
					}
					return ids[p]
				}
			}
			taken := map[uint64]bool{}
			got, maybe := attribute(x, Server{Protocol: tc.proto, PID: tc.pid}, tc.uid, tc.cg, own, taken)
			why := unproven(tc.uid, len(got) > 0, maybe, taken)
			if (len(got) != 0 || len(tc.want) != 0) && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if (tc.wantWhy == "") != (len(why) == 0) || !strings.Contains(strings.Join(why, "\n"), tc.wantWhy) {
				t.Errorf("why %q, want one with %q", why, tc.wantWhy)
			}
			for _, g := range got {
				for _, a := range g.tcp {
					if a.Port() == 2024 || a.Port() == 8080 {
						t.Errorf("%v given to %s", a, tc.proto)
					}
				}
			}
		})
	}
}

// TestFindUnprivileged: a tree whose servers' fd links cannot be read:
// the root mariadbd gets the port its command line names, not the other
// root listener (port 2024, the "mysql-2024"), and the postgres
// user's server its user's sockets.
func TestFindUnprivileged(t *testing.T) {
	tcp := "   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 200 1 0000000000000000 100 0 0 10 0\n" +
		"   1: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 300 1 0000000000000000 100 0 0 10 0\n" +
		"   2: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   101        0 100 1 0000000000000000 100 0 0 10 0\n"
	unix := "00000000f57af682: 00000002 00000000 00010000 0001 01 103 /run/postgresql/.s.PGSQL.5432\n" +
		"00000000f57af684: 00000002 00000000 00010000 0001 01 201 /run/mysqld/mysqld.sock\n"
	root := buildProc(t, []proc{
		{pid: 20, comm: "mariadbd", uid: 0, noFDs: true},
		{pid: 30, comm: "python3", uid: 0, noFDs: true},
		{pid: 40, comm: "postgres", uid: 101, noFDs: true},
	}, tcp, "", unix)
	os.WriteFile(filepath.Join(root, "20", "cmdline"), []byte("mariadbd\x00--no-defaults\x00--port=3306\x00"), 0o644)
	got, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{
		// net/unix has no owner: root's socket is not proven its
		{Protocol: MySQL, PID: 20, Comm: "mariadbd", TCP: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:3306")}},
		{Protocol: Postgres, PID: 40, Comm: "postgres", TCP: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:5432")}, Unix: []string{"/run/postgresql/.s.PGSQL.5432"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

// TestFindNetnsUnreadable: fd links readable but no ns/net link: the
// process's own net/ tables are not taken for ours; only sockets our
// namespace lists are its, and a server with none is said.
func TestFindNetnsUnreadable(t *testing.T) {
	tcp := "   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 200 1 0000000000000000 100 0 0 10 0\n"
	root := buildProc(t, []proc{{pid: 20, comm: "mariadbd", inodes: []int{200}}, {pid: 21, comm: "mariadbd", inodes: []int{900}}}, tcp, "", "")
	for _, pid := range []string{"20", "21"} {
		os.Remove(filepath.Join(root, pid, "ns", "net"))
	}
	// pid 21's own table (another namespace's) lists 900; ours does not
	other := tcpHeader + "   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 900 1 0000000000000000 100 0 0 10 0\n"
	os.WriteFile(filepath.Join(root, "21", "net", "tcp"), []byte(other), 0o644)
	got, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0].TCP) != 1 || got[0].PID != 20 || got[1].PID != 21 || len(got[1].TCP) != 0 || len(got[1].Unproven) == 0 {
		t.Fatalf("got %+v, want pid 20 on 3306 and pid 21 unproven", got)
	}
}

func TestServerConfig(t *testing.T) {
	dir := t.TempDir()
	w := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	inc := w("my.d/50-server.cnf", "[mysqld]\nport = 3310 # comment\n[client]\nsocket=/wrong.sock\n")
	_ = inc
	my := w("my.cnf", "[client-server]\nsocket = /run/x/mysqld.sock\n!includedir "+filepath.Join(dir, "my.d")+"\n")
	pgInc := w("conf.d/port.conf", "port = 5440\n")
	_ = pgInc
	pg := w("postgresql.conf", "unix_socket_directories = '/var/run/postgresql, /tmp'\t# list\ninclude_dir = 'conf.d'\n")
	secret := w("secret.cnf", "[mysqld]\nport=1\n")
	os.Chmod(secret, 0)
	for _, tc := range []struct {
		name  string
		proto Protocol
		args  []string
		want  serverConfig
	}{
		{"my.cnf with includes", MySQL, []string{"--defaults-file=" + my},
			serverConfig{ports: []uint16{3310}, sockets: []string{"/run/x/mysqld.sock"}, complete: true}},
		{"command line wins", MySQL, []string{"--defaults-file=" + my, "-P", "3999", "--socket=/s"},
			serverConfig{ports: []uint16{3999}, sockets: []string{"/s"}, complete: true}},
		{"no defaults: built-in", MySQL, []string{"--no-defaults"},
			serverConfig{ports: []uint16{3306}, sockets: []string{"/run/mysqld/mysqld.sock"}, complete: true}},
		{"postgresql.conf", Postgres, []string{"-c", "config_file=" + pg},
			serverConfig{ports: []uint16{5440}, sockets: []string{"/tmp/.s.PGSQL.5440", "/var/run/postgresql/.s.PGSQL.5440"}, complete: true}},
		{"postgres -p -k, data dir unreadable", Postgres, []string{"-D", "/nonexistent", "-p", "6000", "-k", "/sock"},
			serverConfig{ports: []uint16{6000}, sockets: []string{"/sock/.s.PGSQL.6000"}}},
		{"postgres data dir unreadable: no default", Postgres, []string{"-D", "/nonexistent"}, serverConfig{}},
	} {
		var got serverConfig
		if tc.proto == MySQL {
			got = mysqlConfig(tc.args)
		} else {
			got = pgConfig(tc.args)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if os.Geteuid() != 0 {
		if got := mysqlConfig([]string{"--defaults-file=" + secret}); got.complete || len(got.ports) != 0 {
			t.Errorf("unreadable my.cnf: %+v, want incomplete without the default port", got)
		}
	}
}

// Two PostgreSQL clusters of the postgres user in units of their own: the
// first to be read takes neither the other's port (made in another
// cgroup) nor its socket (named for the other's port).
func TestAttributeTwoClusters(t *testing.T) {
	ap := netip.MustParseAddrPort
	own := &nsSockets{
		tcp: map[uint64]tcpListener{
			1: {addr: ap("127.0.0.1:5432"), uid: 101, cgroup: 70},
			2: {addr: ap("127.0.0.1:5433"), uid: 101, cgroup: 71},
		},
		unix: map[uint64]unixListener{
			11: {path: "/var/run/postgresql/.s.PGSQL.5432", uid: 101, uidKnown: true},
			12: {path: "/var/run/postgresql/.s.PGSQL.5433", uid: 101, uidKnown: true},
		},
	}
	ids := map[string]uint64{"/a": 70, "/b": 71}
	x := &ownerCtx{procRoot: procWithCmdline(t, map[int][]string{1: {"postgres"}, 2: {"postgres"}}),
		census: census{byUID: map[uint32]Protocol{101: Postgres}, byCgroup: map[string]Protocol{"/a": Postgres, "/b": Postgres},
			serversByUID: map[uint32]int{101: 2}, serversByCgroup: map[string]int{"/a": 1, "/b": 1}},
		cgroupID: func(p string) uint64 { return ids[p] }}
	taken := map[uint64]bool{}
	for i, want := range []string{"5432", "5433"} {
		got, _ := attribute(x, Server{Protocol: Postgres, PID: i + 1}, 101, []string{"/a", "/b"}[i], own, taken)
		if len(got) != 1 || len(got[0].tcp) != 1 || got[0].tcp[0].Port() != ap("0.0.0.0:"+want).Port() ||
			len(got[0].unix) != 1 || !strings.HasSuffix(got[0].unix[0], want) {
			t.Errorf("cluster %d: got %+v, want port %s with its socket", i+1, got, want)
		}
	}
}

// TestAttributeTwoServersOneUser: two MariaDB servers run by mysql in one
// cgroup, as sqlfwd without ptrace sees them. Before, the lower pid took
// every port and socket of the user (the second socket was then dropped:
// a database has one); now a port or socket goes to the server whose
// configuration names it, and one neither names goes to neither and is
// said, whatever the pid order.
func TestAttributeTwoServersOneUser(t *testing.T) {
	ap := netip.MustParseAddrPort
	own := func() *nsSockets {
		return &nsSockets{
			tcp: map[uint64]tcpListener{
				1: {addr: ap("127.0.0.1:3306"), uid: 102, cgroup: 1},
				2: {addr: ap("127.0.0.1:3307"), uid: 102, cgroup: 1},
				3: {addr: ap("127.0.0.1:3310"), uid: 102, cgroup: 1}, // neither's configuration
			},
			unix: map[uint64]unixListener{
				11: {path: "/run/mysqld/a.sock", uid: 102, uidKnown: true},
				12: {path: "/run/mysqld/b.sock", uid: 102, uidKnown: true},
				13: {path: "/run/mysqld/c.sock", uid: 102, uidKnown: true}, // neither's
			},
		}
	}
	cen := census{byUID: map[uint32]Protocol{102: MySQL}, byCgroup: map[string]Protocol{"/": MySQL},
		serversByUID: map[uint32]int{102: 2}, serversByCgroup: map[string]int{"/": 2}}
	cmd := map[int][]string{
		7: {"mariadbd", "--no-defaults", "--port=3307", "--socket=/run/mysqld/b.sock"},
		9: {"mariadbd", "--no-defaults", "--port=3306", "--socket=/run/mysqld/a.sock"},
	}
	want := map[int]portListeners{
		7: {tcp: []netip.AddrPort{ap("127.0.0.1:3307")}, unix: []string{"/run/mysqld/b.sock"}},
		9: {tcp: []netip.AddrPort{ap("127.0.0.1:3306")}, unix: []string{"/run/mysqld/a.sock"}},
	}
	for _, order := range [][]int{{7, 9}, {9, 7}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			x := &ownerCtx{procRoot: procWithCmdline(t, cmd), census: cen, cgroupID: func(string) uint64 { return 1 }}
			sockets, taken := own(), map[uint64]bool{}
			maybes := map[int]map[uint64]string{}
			for _, pid := range order {
				got, maybe := attribute(x, Server{Protocol: MySQL, PID: pid}, 102, "/", sockets, taken)
				maybes[pid] = maybe
				if len(got) != 1 || !reflect.DeepEqual(got[0], want[pid]) {
					t.Errorf("pid %d: got %+v, want %+v", pid, got, want[pid])
				}
			}
			for _, pid := range order {
				why := strings.Join(unproven(102, true, maybes[pid], taken), "\n")
				for _, m := range []string{"127.0.0.1:3310", "/run/mysqld/c.sock"} {
					if !strings.Contains(why, m) {
						t.Errorf("pid %d: %s not said: %q", pid, m, why)
					}
				}
				if strings.Contains(why, "3306") || strings.Contains(why, "3307") {
					t.Errorf("pid %d: a port proven a server's is said unproven: %q", pid, why)
				}
			}
		})
	}

	// One server of the user: its user's sockets are its (the proof the
	// tie took away from two).
	one := census{byUID: cen.byUID, byCgroup: cen.byCgroup,
		serversByUID: map[uint32]int{102: 1}, serversByCgroup: map[string]int{"/": 1}}
	x := &ownerCtx{procRoot: procWithCmdline(t, map[int][]string{9: {"mariadbd"}}), census: one, cgroupID: func(string) uint64 { return 1 }}
	got, _ := attribute(x, Server{Protocol: MySQL, PID: 9}, 102, "/", own(), map[uint64]bool{})
	if len(got) != 3 {
		t.Errorf("the one server of mysql: got %+v, want its three ports", got)
	}
}

// TestCensusCountsServers: a postmaster and its backends are one server;
// two mariadbd of one user are two.
func TestCensusCountsServers(t *testing.T) {
	root := t.TempDir()
	procs := []struct {
		pid, ppid int
		comm      string
		uid       int
	}{
		{10, 1, "postgres", 101}, {11, 10, "postgres", 101}, {12, 10, "postgres", 101},
		{20, 1, "mariadbd", 102}, {21, 1, "mariadbd", 102},
	}
	comms := map[int]string{}
	for _, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(p.pid))
		os.MkdirAll(dir, 0o755)
		status := fmt.Sprintf("Name:\t%s\nPPid:\t%d\nUid:\t%d\t%d\t%d\t%d\n", p.comm, p.ppid, p.uid, p.uid, p.uid, p.uid)
		os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644)
		os.WriteFile(filepath.Join(dir, "cgroup"), []byte("0::/\n"), 0o644)
		comms[p.pid] = p.comm
	}
	c := takeCensus(root, comms)
	if c.serversByUID[101] != 1 || c.serversByUID[102] != 2 || c.serversByCgroup["/"] != 3 {
		t.Errorf("servers by uid %v, by cgroup %v; want 101:1 102:2, /:3", c.serversByUID, c.serversByCgroup)
	}
	if !c.soleByUser(101, Postgres) || c.soleByUser(102, MySQL) {
		t.Errorf("soleByUser(101, postgres) = %v, soleByUser(102, mysql) = %v; want true, false", c.soleByUser(101, Postgres), c.soleByUser(102, MySQL))
	}
}
