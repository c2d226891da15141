package daemon

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
)

func TestUpstreamAndProtect(t *testing.T) {
	local := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("::1"), netip.MustParseAddr("fd00::5")}
	ap := netip.MustParseAddrPort
	for _, tc := range []struct {
		name      string
		listeners []netip.AddrPort
		up        string
		protect   string
	}{
		{"loopback only", []netip.AddrPort{ap("127.0.0.1:5432")}, "127.0.0.1:5432", "[127.0.0.1:5432]"},
		{"v4 wildcard", []netip.AddrPort{ap("0.0.0.0:5432")}, "127.0.0.1:5432", "[127.0.0.1:5432 10.1.2.3:5432]"},
		{"v6 wildcard takes v4 too", []netip.AddrPort{ap("[::]:5433")}, "127.0.0.1:5433", "[127.0.0.1:5433 [::1]:5433 10.1.2.3:5433 [fd00::5]:5433]"},
		{"specific address then loopback", []netip.AddrPort{ap("10.1.2.3:5432"), ap("127.0.0.1:5432")}, "127.0.0.1:5432", "[10.1.2.3:5432 127.0.0.1:5432]"},
		{"v6 loopback only", []netip.AddrPort{ap("[::1]:5432")}, "[::1]:5432", "[[::1]:5432]"},
	} {
		up, protect := upstreamAndProtect(tc.listeners, local)
		if up.String() != tc.up || fmt.Sprint(protect) != tc.protect {
			t.Errorf("%s: got upstream %v, protect %v; want %s, %s", tc.name, up, protect, tc.up, tc.protect)
		}
	}
}

// procServer is one server process of a /proc fixture: its listening TCP
// addresses and unix sockets.
type procServer struct {
	pid  int
	comm string
	tcp  []string
	unix []string
	// root: the process and its sockets are root's and its fd links
	// cannot be read (sqlfwd as the unit's user); cmdline its command line
	root    bool
	cmdline []string
}

// writeProc (re)writes a /proc tree under root holding exactly servers (and
// a non-server process): comm, status, ns/net, fd links to the listening
// sockets' inodes, and the namespace's net/tcp, tcp6 and unix tables (under
// self/net and each process's net/, as the kernel shows them).
func writeProc(t *testing.T, root string, servers []procServer) {
	t.Helper()
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	const tcpHeader = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	const unixHeader = "Num       RefCount Protocol Flags    Type St Inode Path\n"
	tcp, tcp6, unixTab := tcpHeader, tcpHeader, unixHeader
	inodes := map[int][]int{}
	ino := 1000
	for _, s := range servers {
		uid := 101
		if s.root {
			uid = 0
		}
		for _, a := range s.tcp {
			ap := netip.MustParseAddrPort(a)
			ino++
			inodes[s.pid] = append(inodes[s.pid], ino)
			if ap.Addr().Is4() {
				b := ap.Addr().As4()
				tcp += fmt.Sprintf("   0: %02X%02X%02X%02X:%04X 00000000:0000 0A 00000000:00000000 00:00000000 00000000   %d        0 %d 1 0000000000000000 100 0 0 10 0\n", b[3], b[2], b[1], b[0], ap.Port(), uid, ino)
			} else {
				b := ap.Addr().As16()
				h := ""
				for w := 0; w < 4; w++ {
					h += fmt.Sprintf("%02X%02X%02X%02X", b[4*w+3], b[4*w+2], b[4*w+1], b[4*w])
				}
				tcp6 += fmt.Sprintf("   0: %s:%04X 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000   %d        0 %d 1 0000000000000000 100 0 0 10 0\n", h, ap.Port(), uid, ino)
			}
		}
		for _, u := range s.unix {
			ino++
			inodes[s.pid] = append(inodes[s.pid], ino)
			unixTab += fmt.Sprintf("00000000f57af682: 00000002 00000000 00010000 0001 01 %d %s\n", ino, u)
		}
	}
	mk := func(p, data string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	const ns = "net:[4026531833]"
	nets := func(dir string) {
		mk(filepath.Join(dir, "net", "tcp"), tcp)
		mk(filepath.Join(dir, "net", "tcp6"), tcp6)
		mk(filepath.Join(dir, "net", "unix"), unixTab)
	}
	link(ns, filepath.Join(root, "self", "ns", "net"))
	nets(filepath.Join(root, "self"))
	procs := append([]procServer{{pid: 1, comm: "init"}}, servers...)
	for _, s := range procs {
		dir := filepath.Join(root, strconv.Itoa(s.pid))
		mk(filepath.Join(dir, "comm"), s.comm+"\n")
		if s.root {
			mk(filepath.Join(dir, "status"), fmt.Sprintf("Name:\t%s\nUid:\t0\t0\t0\t0\n", s.comm))
			mk(filepath.Join(dir, "cmdline"), strings.Join(s.cmdline, "\x00")+"\x00")
			nets(dir)
			continue // no fd/ or ns/ for sqlfwd as the unit's user
		}
		mk(filepath.Join(dir, "status"), fmt.Sprintf("Name:\t%s\nUid:\t101\t101\t101\t101\n", s.comm))
		link(ns, filepath.Join(dir, "ns", "net"))
		link("/dev/null", filepath.Join(dir, "fd", "0"))
		for i, n := range inodes[s.pid] {
			link(fmt.Sprintf("socket:[%d]", n), filepath.Join(dir, "fd", strconv.Itoa(i+3)))
		}
		nets(dir)
	}
}

// fakeKernel stands for the interceptor: the addresses and sockets it
// would intercept now, by database, and the routes it still holds.
type fakeKernel struct {
	mu        sync.Mutex
	protected map[string]string // address or socket → database
	routes    map[string]*database
	calls     []string
}

func newFakeKernel() *fakeKernel {
	return &fakeKernel{protected: map[string]string{}, routes: map[string]*database{}}
}

func (k *fakeKernel) protectDB(db *database) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, "protect "+db.cfg.Name)
	addrs, err := protectedAddrs(db.cfg)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if other, ok := k.protected[a.String()]; ok && other != db.cfg.Name {
			return fmt.Errorf("%s is already protected for database %s", a, other)
		}
		k.protected[a.String()] = db.cfg.Name
		k.routes[a.String()] = db
	}
	if db.cfg.UnixSocket != "" {
		k.protected[db.cfg.UnixSocket] = db.cfg.Name
	}
	return nil
}

func (k *fakeKernel) unprotectDB(db *database) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, "unprotect "+db.cfg.Name)
	for a, n := range k.protected {
		if n == db.cfg.Name {
			delete(k.protected, a)
		}
	}
}

func (k *fakeKernel) forgetDB(db *database) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, "forget "+db.cfg.Name)
	for a, x := range k.routes {
		if x == db {
			delete(k.routes, a)
		}
	}
}

// state is what the fake kernel intercepts now, sorted: "addr→db".
func (k *fakeKernel) state() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for a, n := range k.protected {
		out = append(out, a+"→"+n)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func (k *fakeKernel) takeCalls() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := strings.Join(k.calls, ", ")
	k.calls = nil
	return c
}

// discoveryFixture is a daemon with discovery over a /proc fixture, a
// fake kernel, a clock the test moves and a log it reads.
type discoveryFixture struct {
	t      *testing.T
	d      *Daemon
	dc     *discovery
	kernel *fakeKernel
	root   string
	now    time.Time
	log    *syncBuffer
}

// take returns what was logged since the last take.
func (s *syncBuffer) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.b.String()
	s.b.Reset()
	return out
}

func newDiscoveryFixture(t *testing.T, configured ...Database) *discoveryFixture {
	t.Helper()
	f := &discoveryFixture{t: t, kernel: newFakeKernel(), root: t.TempDir(), now: time.Date(2026, 12, 1, 16, 0, 0, 0, time.UTC), log: &syncBuffer{}}
	d, err := New(&Config{ControlSocket: "none", Discovery: Discovery{Enabled: true}, Databases: configured}, slog.New(slog.NewTextHandler(f.log, nil)), "test")
	if err != nil {
		t.Fatal(err)
	}
	d.proc = f.root
	f.d = d
	f.dc = newDiscovery(d)
	f.dc.kernel = f.kernel
	f.dc.local = func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("10.1.2.3")} }
	f.dc.now = func() time.Time { return f.now }
	d.discovery = f.dc
	return f
}

// scan writes the servers into the fixture and rescans.
func (f *discoveryFixture) scan(servers ...procServer) {
	f.t.Helper()
	writeProc(f.t, f.root, servers)
	f.dc.rescan()
}

// databases is the status's databases as "name state server".
func (f *discoveryFixture) databases() string {
	var out []string
	for _, db := range f.d.Status().Databases {
		s := db.Name
		if db.Discovered {
			s += " " + db.State + " " + db.Server
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func (f *discoveryFixture) entry(name string) *database {
	for _, db := range f.d.databases() {
		if db.cfg.Name == name {
			return db
		}
	}
	return nil
}

var (
	pg5433 = procServer{pid: 100, comm: "postgres", tcp: []string{"127.0.0.1:5433"}, unix: []string{"/tmp/pg/.s.PGSQL.5433"}}
	my3307 = procServer{pid: 300, comm: "mariadbd", tcp: []string{"0.0.0.0:3307"}, unix: []string{"/tmp/my/mysqld.sock"}}
)

// A server that starts while sqlfwd runs becomes a database at the next
// scan; one that stops loses its interception and shows as gone; one that
// comes back on the same addresses takes its old entry again.
func TestRediscoveryAddRemoveRestart(t *testing.T) {
	f := newDiscoveryFixture(t)
	f.scan()
	if got := f.databases(); got != "" {
		t.Fatalf("no servers: databases %q, want none", got)
	}
	f.scan(pg5433)
	if got, want := f.databases(), "postgres-5433 protected postgres pid 100"; got != want {
		t.Fatalf("after a server started: databases %q, want %q", got, want)
	}
	if got, want := f.kernel.state(), "/tmp/pg/.s.PGSQL.5433→postgres-5433 127.0.0.1:5433→postgres-5433"; got != want {
		t.Fatalf("intercepted %q, want %q", got, want)
	}
	if l := f.log.take(); !strings.Contains(l, `msg="discovery: found and protecting" database=postgres-5433`) {
		t.Errorf("log does not say what was found:\n%s", l)
	}
	db := f.entry("postgres-5433")
	if c := db.cfg; c.BufferBytes == 0 || c.StartupTimeout == 0 || c.ConnectTimeout == 0 || c.AuthTimeout == 0 || c.MaxMessageBytes == 0 || c.Mode != ModeEnforce {
		t.Errorf("the discovered database lacks a configured one's defaults: %+v", c)
	}
	db.stats.statements.Add(7)
	if eng := db.engine.Load(); eng == nil || eng.Policy() == nil {
		t.Fatal("no engine for the discovered database")
	}

	// a MariaDB starting beside it: its own entry, the v4 wildcard
	// covering loopback and the host's address
	f.scan(pg5433, my3307)
	if got, want := f.databases(), "postgres-5433 protected postgres pid 100; mysql-3307 protected mariadbd pid 300"; got != want {
		t.Fatalf("databases %q, want %q", got, want)
	}
	if got, want := f.kernel.state(), "/tmp/my/mysqld.sock→mysql-3307 /tmp/pg/.s.PGSQL.5433→postgres-5433 10.1.2.3:3307→mysql-3307 127.0.0.1:3307→mysql-3307 127.0.0.1:5433→postgres-5433"; got != want {
		t.Fatalf("intercepted %q, want %q", got, want)
	}
	if c := f.kernel.takeCalls(); c != "protect postgres-5433, protect mysql-3307" {
		t.Errorf("kernel calls %q", c)
	}
	f.log.take()

	// PostgreSQL stops: its addresses are no longer intercepted, the
	// entry stays (gone), the other server is untouched
	f.now = f.now.Add(5 * time.Second)
	f.scan(my3307)
	if got, want := f.databases(), "postgres-5433 gone postgres pid 100; mysql-3307 protected mariadbd pid 300"; got != want {
		t.Fatalf("after the server stopped: databases %q, want %q", got, want)
	}
	if got, want := f.kernel.state(), "/tmp/my/mysqld.sock→mysql-3307 10.1.2.3:3307→mysql-3307 127.0.0.1:3307→mysql-3307"; got != want {
		t.Fatalf("intercepted %q, want %q", got, want)
	}
	if l := f.log.take(); !strings.Contains(l, `msg="discovery: server gone: no longer intercepting its addresses; open sessions end on their own" database=postgres-5433`) {
		t.Errorf("log does not say the server went away:\n%s", l)
	}
	if st := f.d.Status().Databases[0]; st.Since == nil || !st.Since.Equal(f.now) {
		t.Errorf("gone since %v, want %v", st.Since, f.now)
	}

	// it starts again (a new pid) on the same port and socket: the same
	// entry, its counters kept
	f.now = f.now.Add(5 * time.Second)
	f.scan(procServer{pid: 200, comm: "postgres", tcp: pg5433.tcp, unix: pg5433.unix}, my3307)
	if got, want := f.databases(), "postgres-5433 protected postgres pid 200; mysql-3307 protected mariadbd pid 300"; got != want {
		t.Fatalf("after a restart: databases %q, want %q", got, want)
	}
	if f.entry("postgres-5433") != db || db.stats.statements.Load() != 7 {
		t.Errorf("the restarted server got a new entry (or lost its counters): statements %d", f.entry("postgres-5433").stats.statements.Load())
	}
	if got, want := f.kernel.state(), "/tmp/my/mysqld.sock→mysql-3307 /tmp/pg/.s.PGSQL.5433→postgres-5433 10.1.2.3:3307→mysql-3307 127.0.0.1:3307→mysql-3307 127.0.0.1:5433→postgres-5433"; got != want {
		t.Fatalf("intercepted %q, want %q", got, want)
	}
	if c := f.kernel.takeCalls(); c != "unprotect postgres-5433, protect postgres-5433" {
		t.Errorf("kernel calls %q", c)
	}
	if l := f.log.take(); !strings.Contains(l, `msg="discovery: server back: protecting it again" database=postgres-5433`) {
		t.Errorf("log does not say the server came back:\n%s", l)
	}
}

// Scans that find the same servers change nothing and log nothing; a
// restart between two scans keeps the entry and its interception.
func TestRediscoveryNoFlapping(t *testing.T) {
	f := newDiscoveryFixture(t)
	f.scan(pg5433)
	db := f.entry("postgres-5433")
	f.kernel.takeCalls()
	f.log.take()
	for i := 0; i < 3; i++ {
		f.now = f.now.Add(5 * time.Second)
		f.scan(pg5433)
	}
	if c, l := f.kernel.takeCalls(), f.log.take(); c != "" || l != "" {
		t.Errorf("unchanged servers: kernel calls %q, log %q; want none", c, l)
	}
	// restarted between two scans: a new pid, nothing unprotected
	f.scan(procServer{pid: 101, comm: "postgres", tcp: pg5433.tcp, unix: pg5433.unix})
	if c := f.kernel.takeCalls(); c != "" {
		t.Errorf("restart between scans: kernel calls %q, want none", c)
	}
	if got, want := f.databases(), "postgres-5433 protected postgres pid 101"; got != want || f.entry("postgres-5433") != db {
		t.Errorf("databases %q (same entry %v), want %q", got, f.entry("postgres-5433") == db, want)
	}
	if n := f.d.Status().Discovery.Scans; n != 5 {
		t.Errorf("status counts %d scans, want 5", n)
	}
}

// A server that comes back reached another way (here: on every address
// instead of loopback) is a new entry under the same name; the old one's
// routes are released.
func TestRediscoveryServerMoved(t *testing.T) {
	f := newDiscoveryFixture(t)
	f.scan(pg5433)
	old := f.entry("postgres-5433")
	f.kernel.takeCalls()
	f.scan(procServer{pid: 200, comm: "postgres", tcp: []string{"0.0.0.0:5433"}, unix: pg5433.unix})
	nu := f.entry("postgres-5433")
	if nu == nil || nu == old || len(f.d.databases()) != 1 {
		t.Fatalf("databases %q: want one new entry", f.databases())
	}
	if c := f.kernel.takeCalls(); c != "unprotect postgres-5433, forget postgres-5433, protect postgres-5433" {
		t.Errorf("kernel calls %q", c)
	}
	if got, want := f.kernel.state(), "/tmp/pg/.s.PGSQL.5433→postgres-5433 10.1.2.3:5433→postgres-5433 127.0.0.1:5433→postgres-5433"; got != want {
		t.Errorf("intercepted %q, want %q", got, want)
	}
}

// An entry gone for forgetGoneAfter is dropped, unless sessions are still
// open on it.
func TestRediscoveryForgetsGone(t *testing.T) {
	f := newDiscoveryFixture(t)
	f.scan(pg5433)
	db := f.entry("postgres-5433")
	f.scan()
	db.stats.connActive.Add(1) // a session still running
	f.now = f.now.Add(forgetGoneAfter + time.Second)
	f.scan()
	if f.entry("postgres-5433") == nil {
		t.Fatal("an entry with an open session was forgotten")
	}
	db.stats.connActive.Add(-1)
	f.scan()
	if got := f.databases(); got != "" {
		t.Errorf("databases %q, want the gone entry forgotten", got)
	}
	if c := f.kernel.takeCalls(); !strings.HasSuffix(c, "forget postgres-5433") {
		t.Errorf("kernel calls %q: want its routes released", c)
	}
}

// Configured databases are never touched by discovery, and a server one of
// them covers is left to it (said in the status).
func TestRediscoveryLeavesConfigured(t *testing.T) {
	f := newDiscoveryFixture(t, Database{Name: "app", Protocol: "postgres", Upstream: "127.0.0.1:5433", Listen: "127.0.0.1:0"})
	f.scan(pg5433, my3307)
	if got, want := f.databases(), "app; mysql-3307 protected mariadbd pid 300"; got != want {
		t.Fatalf("databases %q, want %q", got, want)
	}
	notes := f.d.Status().Discovery.NotProtected
	if len(notes) != 1 || !strings.Contains(notes[0], "configured as database app") {
		t.Errorf("not protected: %q, want the covered server named", notes)
	}
	f.log.take()
	f.scan(my3307)
	f.scan()
	if got, want := f.databases(), "app; mysql-3307 gone mariadbd pid 300"; got != want {
		t.Fatalf("databases %q, want %q", got, want)
	}
	if strings.Contains(f.log.take(), "database=app") {
		t.Error("discovery logged about the configured database")
	}
}

// Status, metrics and stats read the list while scans add and drop
// databases (run with -race).
func TestRediscoveryConcurrentReaders(t *testing.T) {
	f := newDiscoveryFixture(t)
	// the stats loop is the one owner of rotateWindow (a second caller
	// would race it for the shards' spare timings): a short window makes
	// it rotate all through the test
	f.d.cfg.StatsWindow = time.Millisecond
	f.d.startStats(f.root, t.TempDir())
	defer f.d.stopStats()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reg := prometheus.NewRegistry()
			reg.MustRegister(&metricsCollector{d: f.d})
			for {
				select {
				case <-stop:
					return
				default:
				}
				f.d.Status()
				f.d.Snapshot()
				if _, err := reg.Gather(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := 0; i < 30; i++ {
		if i%2 == 0 {
			f.scan(pg5433, my3307)
		} else {
			f.now = f.now.Add(forgetGoneAfter + time.Second)
			f.scan(my3307)
			f.scan(my3307) // forgets postgres-5433
		}
	}
	close(stop)
	wg.Wait()
}

// BenchmarkFindServers is one discovery scan of this host's /proc: what
// sqlfwd pays every discovery.interval.
func BenchmarkFindServers(b *testing.B) {
	for b.Loop() {
		if _, _, err := findServers("/proc", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// A server's unix socket appearing or going in a watched directory starts
// a scan at once, long before the interval.
func TestRediscoveryOnSocketEvent(t *testing.T) {
	f := newDiscoveryFixture(t)
	f.now = time.Now()
	f.dc.now = time.Now
	f.dc.interval = time.Hour
	sockDir := t.TempDir()
	f.dc.sockDirs = []string{sockDir}
	f.dc.startWatch()
	if f.dc.watch == nil {
		t.Skip("skipping: no inotify")
	}
	f.dc.running = true
	go f.dc.run()
	defer f.dc.close()
	scans := func() uint64 { return f.d.Status().Discovery.Scans }
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5 s (interval 1h); databases %q", what, f.databases())
			}
		}
	}
	srv := procServer{pid: 100, comm: "postgres", tcp: []string{"127.0.0.1:5433"}, unix: []string{filepath.Join(sockDir, ".s.PGSQL.5433")}}
	writeProc(t, f.root, []procServer{srv})
	// other files in the directory start no scan
	if err := os.WriteFile(filepath.Join(sockDir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * sockSettle)
	if n := scans(); n != 0 || f.entry("postgres-5433") != nil {
		t.Fatalf("a file that is no socket started %d scans", n)
	}
	if err := os.WriteFile(srv.unix[0], nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("found after its socket appeared", func() bool { return f.entry("postgres-5433") != nil })
	writeProc(t, f.root, nil)
	if err := os.Remove(srv.unix[0]); err != nil {
		t.Fatal(err)
	}
	waitFor("gone after its socket went", func() bool {
		return strings.Contains(f.databases(), "postgres-5433 gone")
	})
	if got := f.kernel.state(); got != "" {
		t.Errorf("still intercepted: %s", got)
	}
}

func TestServerSocketName(t *testing.T) {
	for name, want := range map[string]bool{
		".s.PGSQL.5432": true, "mysqld.sock": true, "s.sock": true, ".s.PGSQL.5432.lock": false,
		"sqlfw-postgres-5432-.s.PGSQL.5432": false, "notes.txt": false, "control.sock.tmp": false,
	} {
		if got := serverSocketName(name); got != want {
			t.Errorf("%q: got %v, want %v", name, got, want)
		}
	}
}

// The inotify events the socket watch reads: a server's socket created or
// removed is a hit, other names are not, an overflowed queue (events lost)
// is, and a dropped watch is forgotten.
func TestSockEvents(t *testing.T) {
	event := func(wd int32, mask uint32, name string) []byte {
		l := 0
		if name != "" {
			l = (len(name) + 1 + 15) &^ 15 // NUL-padded, as the kernel pads
		}
		b := binary.NativeEndian.AppendUint32(nil, uint32(wd))
		b = binary.NativeEndian.AppendUint32(b, mask)
		b = binary.NativeEndian.AppendUint32(b, 0) // cookie
		b = binary.NativeEndian.AppendUint32(b, uint32(l))
		return append(b, append([]byte(name), make([]byte, l-len(name))...)...)
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, tc := range []struct {
		name    string
		buf     []byte
		hit     bool
		forgets []int32
	}{
		{"a PostgreSQL socket created", event(1, unix.IN_CREATE, ".s.PGSQL.5433"), true, nil},
		{"another file", cat(event(1, unix.IN_CREATE, "notes.txt"), event(1, unix.IN_DELETE, ".s.PGSQL.5433.lock")), false, nil},
		{"a socket among others", cat(event(1, unix.IN_CREATE, "notes.txt"), event(2, unix.IN_DELETE, "mysqld.sock")), true, nil},
		{"the queue overflowed", event(-1, unix.IN_Q_OVERFLOW, ""), true, nil},
		{"a watch dropped", event(3, unix.IN_IGNORED, ""), false, []int32{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var forgot []int32
			if hit := sockEvents(tc.buf, func(wd int32) { forgot = append(forgot, wd) }); hit != tc.hit || !slices.Equal(forgot, tc.forgets) {
				t.Errorf("sockEvents(%q) = %v, forgot %v; want %v, %v", tc.buf, hit, forgot, tc.hit, tc.forgets)
			}
		})
	}
}

// A reload (SIGHUP) rebuilds the policies of configured and discovered
// databases alike, keeps what discovery found, and asks for a scan.
func TestRediscoveryKeptByReload(t *testing.T) {
	f := newDiscoveryFixture(t, Database{Name: "app", Protocol: "postgres", Upstream: "127.0.0.1:6000", Listen: "127.0.0.1:0"})
	f.scan(pg5433)
	f.scan() // gone: kept all the same
	f.scan(pg5433, my3307)
	before := slices.Clone(f.d.databases())
	engines := map[*database]any{}
	for _, db := range before {
		engines[db] = db.engine.Load()
	}
	f.dc.running = true // as after Start; no loop: the kick stays queued
	if err := f.d.Reload(); err != nil {
		t.Fatal(err)
	}
	after := f.d.databases()
	if !slices.Equal(before, after) {
		t.Fatalf("databases after the reload: %q, want the same entries", f.databases())
	}
	for _, db := range after {
		if any(db.engine.Load()) == engines[db] {
			t.Errorf("%s: the reload did not rebuild its engine", db.cfg.Name)
		}
	}
	if len(f.dc.kick) != 1 {
		t.Error("the reload did not ask for a scan")
	}
	if got, want := f.databases(), "app; postgres-5433 protected postgres pid 100; mysql-3307 protected mariadbd pid 300"; got != want {
		t.Errorf("databases %q, want %q", got, want)
	}
}

// The metrics show each discovered database's server as up or gone, and
// the scans.
func TestRediscoveryMetrics(t *testing.T) {
	f := newDiscoveryFixture(t)
	f.d.startStats(f.root, t.TempDir())
	defer f.d.stopStats()
	f.scan(pg5433, my3307)
	f.scan(my3307)
	reg := prometheus.NewRegistry()
	reg.MustRegister(&metricsCollector{d: f.d})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch mf.GetName() {
			case "sqlfw_discovered_server_up":
				got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			case "sqlfw_discovery_scans_total":
				got["scans"] = m.GetCounter().GetValue()
			case "sqlfw_held_seconds":
				// there before the database's first stats window
				got["held "+m.GetLabel()[0].GetValue()] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	want := map[string]float64{"postgres-5433": 0, "mysql-3307": 1, "scans": 2, "held postgres-5433": 0, "held mysql-3307": 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("metrics %v, want %v", got, want)
	}
}

// A zero-config install learns its applications from the start
// (docs/learn.md); discovery.no_learn turns it off. Nothing is promoted.
func TestDiscoveredDatabasesLearn(t *testing.T) {
	f := newDiscoveryFixture(t)
	f.scan(pg5433)
	db := f.entry("postgres-5433")
	if db.engine.Load().Learner() == nil || db.learner.Load() == nil {
		t.Fatal("a discovered database does not learn")
	}
	if st, err := f.d.LearnStatus("postgres-5433"); err != nil || !st.Learning || st.Promoted != nil {
		t.Errorf("learn status of a discovered database: %+v, %v; want learning, nothing promoted", st, err)
	}
	g := newDiscoveryFixture(t)
	g.d.cfg.Discovery.NoLearn = true
	g.scan(my3307)
	if g.entry("mysql-3307").engine.Load().Learner() != nil {
		t.Error("discovery.no_learn: the discovered database learns")
	}
}

// As the unit's user sqlfwd cannot read root's servers' fd links: a root
// mariadbd gets the port its command line names, never another root
// listener (the "mysql-2024"); a root mariadbd nothing proves a
// socket of is a WARN line, a "not protected" line of status, the
// sqlfw_unprotected_paths gauge and a call of the STATUS hook.
func TestDiscoveryUnprivileged(t *testing.T) {
	f := newDiscoveryFixture(t)
	calls := 0
	f.d.OnProtectionChange(func() { calls++ })
	my := procServer{pid: 300, comm: "mariadbd", root: true, tcp: []string{"127.0.0.1:3307"}, cmdline: []string{"mariadbd", "--no-defaults", "--port=3307"}}
	other := procServer{pid: 400, comm: "python3", root: true, tcp: []string{"0.0.0.0:2024"}}
	lost := procServer{pid: 301, comm: "mariadbd", root: true, cmdline: []string{"mariadbd", "--no-defaults", "--port=3400"}}
	f.scan(my, other, lost)
	if got, want := f.databases(), "mysql-3307 protected mariadbd pid 300"; got != want {
		t.Fatalf("databases %q, want %q", got, want)
	}
	log := f.log.take()
	if !strings.Contains(log, `level=WARN msg="discovery: not protected: mysql (pid 301, mariadbd): its listeners because none of sqlfwd's network namespace is proven its`) {
		t.Errorf("no WARN line for the server nothing protects:\n%s", log)
	}
	if strings.Contains(log, "2024") {
		t.Errorf("the log names the root listener 2024:\n%s", log)
	}
	st := f.d.Status().Discovery
	if st.Unprotected != 1 || len(st.NotProtected) != 1 || !strings.HasPrefix(st.NotProtected[0], "not protected: mysql (pid 301") {
		t.Errorf("status: %d unprotected, %q", st.Unprotected, st.NotProtected)
	}
	if calls != 1 || !strings.Contains(f.d.ProtectionSummary(), "1 path(s) to servers NOT protected") {
		t.Errorf("hook called %d times, summary %q", calls, f.d.ProtectionSummary())
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&metricsCollector{d: f.d})
	if v := gaugeValue(t, reg, "sqlfw_unprotected_paths"); v != 1 {
		t.Errorf("sqlfw_unprotected_paths %v, want 1", v)
	}
	// the same scan again says nothing new; once the server is gone the
	// count falls and the hook hears it
	f.scan(my, other, lost)
	if l := f.log.take(); strings.Contains(l, "WARN") {
		t.Errorf("a second scan warned again:\n%s", l)
	}
	f.scan(my, other)
	if st := f.d.Status().Discovery; st.Unprotected != 0 || calls != 2 {
		t.Errorf("after the server left: %d unprotected, hook called %d times", st.Unprotected, calls)
	}
}

func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.Metric) == 1 {
			return mf.Metric[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// A server with a unix socket and no TCP listener is a database reached by
// that socket alone (unix interception needs no TCP port), named by it;
// two of one socket name get told apart; a configured database of the
// same socket covers it.
func TestRediscoveryUnixOnly(t *testing.T) {
	pgUnix := procServer{pid: 110, comm: "postgres", unix: []string{"/tmp/pg/.s.PGSQL.5433"}}
	myUnix := procServer{pid: 310, comm: "mariadbd", unix: []string{"/tmp/my/mysqld.sock"}}
	myUnix2 := procServer{pid: 320, comm: "mariadbd", unix: []string{"/tmp/my2/mysqld.sock"}}
	f := newDiscoveryFixture(t)
	f.scan(pgUnix, myUnix, myUnix2)
	if got, want := f.databases(), "mysql-unix-mysqld protected mariadbd pid 310; mysql-unix-mysqld-2 protected mariadbd pid 320; postgres-unix-5433 protected postgres pid 110"; got != want {
		t.Fatalf("databases %q, want %q", got, want)
	}
	for _, db := range f.d.databases() {
		if db.cfg.Upstream != "" || len(db.cfg.Protect) != 0 || !db.cfg.UnixOnly() {
			t.Errorf("database %s: upstream %q protect %v unix %q: want the unix socket alone", db.cfg.Name, db.cfg.Upstream, db.cfg.Protect, db.cfg.UnixSocket)
		}
	}
	if notes := f.d.Status().Discovery.NotProtected; len(notes) != 0 {
		t.Errorf("not protected: %q, want none", notes)
	}

	// a server with two sockets (unix_socket_directories): each is a
	// database, the second of its own, none left out
	pgTwo := procServer{pid: 130, comm: "postgres", tcp: []string{"127.0.0.1:5434"}, unix: []string{"/tmp/pga/.s.PGSQL.5434", "/tmp/pgb/.s.PGSQL.5434"}}
	two := newDiscoveryFixture(t)
	two.scan(pgTwo)
	if got, want := two.databases(), "postgres-5434 protected postgres pid 130; postgres-unix-5434 protected postgres pid 130"; got != want {
		t.Fatalf("a server with two sockets: databases %q, want %q", got, want)
	}
	socks := map[string]bool{}
	for _, db := range two.d.databases() {
		socks[db.cfg.UnixSocket] = true
	}
	if !socks["/tmp/pga/.s.PGSQL.5434"] || !socks["/tmp/pgb/.s.PGSQL.5434"] {
		t.Errorf("a server with two sockets: sockets %v, want both", socks)
	}

	c := newDiscoveryFixture(t, Database{Name: "app", Protocol: "mysql", Intercept: InterceptAppHost, UnixSocket: "/tmp/my/mysqld.sock"})
	c.scan(myUnix)
	if got, want := c.databases(), "app"; got != want {
		t.Fatalf("with a configured database of the socket: databases %q, want %q", got, want)
	}
	if notes := c.d.Status().Discovery.NotProtected; len(notes) != 1 || !strings.Contains(notes[0], "configured as database app") {
		t.Errorf("not protected: %q, want the covered server named", notes)
	}
}
