package e2e

// Transparent interception: clients that know nothing of sqlfw connect to
// the database's own address (or unix socket) and still pass through it.
// These tests need root and eBPF; each attaches to its own child cgroup2 or
// network namespace and removes it afterwards.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqlfw/sqlfw/bpf"
	"github.com/sqlfw/sqlfw/cgroupstats"
	sqlfwd "github.com/sqlfw/sqlfw/daemon"
)

// needKernel skips, saying why, unless this process may load the
// interception programs.
func needKernel(t *testing.T) {
	t.Helper()
	needSqlfwd(t)
	if os.Geteuid() != 0 {
		t.Skip("skipping: interception tests need root (CAP_BPF and CAP_NET_ADMIN)")
	}
	if err := bpf.Probe(); err != nil {
		t.Skipf("skipping: eBPF interception unavailable here: %v", err)
	}
}

// childCgroup creates a cgroup2 directory for one test. Cleanup moves any
// process left in it back to the root and removes it.
func childCgroup(t *testing.T) string {
	t.Helper()
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	root, err := cgroupstats.Cgroup2Mount(mi)
	mi.Close()
	if err != nil {
		t.Skipf("skipping: no cgroup2 mount: %v", err)
	}
	return makeCgroup(t, root, filepath.Join(root, fmt.Sprintf("sqlfw-e2e-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_"))))
}

// makeCgroup creates the cgroup2 directory dir under root; cleanup moves
// any process left in it to root and removes it.
func makeCgroup(t *testing.T, root, dir string) string {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 100; i++ {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, pid := range strings.Fields(string(b)) {
				_ = os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(pid), 0)
			}
			if err := os.Remove(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("could not remove %s", dir)
	})
	return dir
}

// inCgroup is a command prefix that runs the rest of the command line in
// cgroup dir.
func inCgroup(dir string) []string {
	return []string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}
}

// enterCgroup moves this whole test process into dir until the test ends,
// so that its own connections (pgx, net.Dial) are intercepted.
func enterCgroup(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		root := filepath.Dir(dir)
		if err := os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			t.Errorf("leaving %s: %v", dir, err)
		}
	})
}

// startIntercepting runs sqlfwd inside cg (so that the sockmap sees both
// local legs) intercepting the test PostgreSQL's address and unix socket.
func startIntercepting(t *testing.T, cg string, extra ...string) *daemon {
	t.Helper()
	return startInterceptingWrapped(t, cg, nil, extra...)
}

// startInterceptingWrapped is startIntercepting with a command prefix after
// the cgroup's (unitWrap: as the unit runs it, its control socket in a
// directory its user may write).
func startInterceptingWrapped(t *testing.T, cg string, wrap []string, extra ...string) *daemon {
	t.Helper()
	args := append([]string{"--intercept", "--cgroup", cg}, extra...)
	if pg.SockDir != "" {
		args = append(args, "--unix-socket", filepath.Join(pg.SockDir, fmt.Sprintf(".s.PGSQL.%d", pg.Port)))
	}
	var control string
	if wrap != nil {
		control = unitControlSocket(t)
		args = append(args, "--control-socket", control)
	}
	d, err := startDaemonWrapped(append(inCgroup(cg), wrap...), args...)
	if err != nil {
		t.Fatal(err)
	}
	if control != "" {
		d.control = control
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 40))
		}
		_ = d.stop()
	})
	// The explicit listener answers first; the programs attach just after.
	for i := 0; !strings.Contains(d.log(), `"msg":"sqlfwd started"`); i++ {
		if i > 100 {
			t.Fatalf("sqlfwd did not finish starting; its log:\n%s", d.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(d.log(), `"msg":"intercepting"`) {
		t.Fatalf("sqlfwd did not intercept; its log:\n%s", d.log())
	}
	return d
}

// unitControlSocket is a control socket path in a directory the unit's
// user may write (a later --control-socket wins over startDaemonWrapped's).
func unitControlSocket(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sqlfwd-unit-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	return filepath.Join(dir, "control.sock")
}

// stats reads the daemon's counters through fwctl.
func stats(t *testing.T, d *daemon) sqlfwd.Stats {
	t.Helper()
	res := runToolPath(t, filepath.Join(binDir, "fwctl"), "stats", "--json", "--control-socket", d.control)
	var st sqlfwd.Stats
	if res.Exit != 0 || json.Unmarshal([]byte(res.Stdout), &st) != nil {
		t.Fatalf("fwctl stats --json: %s", res)
	}
	return st
}

// psqlIn runs psql inside cgroup cg against host (an address or a socket
// directory) and the test PostgreSQL's port.
func psqlIn(t *testing.T, cg, host string, sql string) psqlResult {
	t.Helper()
	args := append(inCgroup(cg)[1:], tool(t, "psql"), "-X", "-h", host, "-p", strconv.Itoa(pg.Port), "-U", pg.User,
		"-d", pg.Database, "-v", "VERBOSITY=verbose", "-Atc", sql)
	return runCmd(t, time.Minute, "", nil, "sh", args...)
}

// psqlJudged runs psql from cgroup cg to host: a count of table's 3 rows
// is answered, a DELETE without WHERE is blocked by sqlfw.
func psqlJudged(t *testing.T, cg, host, table string) {
	t.Helper()
	if res := psqlIn(t, cg, host, "select count(*) from "+table); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
		t.Fatalf("psql -h %s 'select count(*) from %s'\ngot %s\nwant 3", host, table, res)
	}
	res := psqlIn(t, cg, host, "delete from "+table)
	if res.Exit == 0 || !strings.Contains(res.Stderr, codeBlocked) || !strings.Contains(res.Stderr, blockedPrefix) {
		t.Fatalf("psql -h %s 'delete from %s'\ngot %s\nwant ERROR %s from sqlfw", host, table, res, codeBlocked)
	}
}

func TestInterceptAppHost(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	d := startIntercepting(t, cg)
	freshTable(t, "icept", 1, 2, 3)

	hosts := []string{"127.0.0.1", "::1", "::ffff:127.0.0.1"}
	if pg.SockDir != "" {
		hosts = append(hosts, pg.SockDir)
	}
	for _, h := range hosts {
		t.Run(strings.ReplaceAll(h, "/", "_"), func(t *testing.T) { psqlJudged(t, cg, h, "icept") })
	}
	if got := directInts(t, "select count(*) from icept"); len(got) != 1 || got[0] != 3 {
		t.Errorf("rows after the blocked deletes: got %v, want [3]", got)
	}
	st := stats(t, d)
	ic := st.Interception
	if !ic.Active || ic.Redirected < 6 || ic.SkippedOwn == 0 || (pg.SockDir != "" && ic.UnixRedirected < 2) {
		t.Errorf("interception counters %+v: want active, ≥ 6 redirected, own upstream sockets skipped (not looped), ≥ 2 unix", ic)
	}
	if n := st.Databases[0].Denied; n < uint64(len(hosts)) {
		t.Errorf("denied = %d, want ≥ %d", n, len(hosts))
	}
}

// TestInterceptInProcess: a pgx client in an intercepted process gets
// sqlfw's verdicts, and getpeername shows it the database's address.
func TestInterceptInProcess(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	d := startIntercepting(t, cg)
	freshTable(t, "icept_pgx", 1)
	enterCgroup(t, cg)

	dbAddr := net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port))
	c, err := net.DialTimeout("tcp", dbAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.RemoteAddr().String(); got != dbAddr {
		t.Errorf("getpeername of an intercepted connection: got %s, want the database's %s", got, dbAddr)
	}
	c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, ""))
	var n int
	if err := conn.QueryRow(ctx, "select count(*) from icept_pgx").Scan(&n); err != nil || n != 1 {
		t.Fatalf("select through interception: got %d, %v; want 1", n, err)
	}
	_, err = conn.Exec(ctx, "delete from icept_pgx")
	checkDenied(t, "delete from icept_pgx", err)
	if st := stats(t, d); st.Interception.Redirected == 0 {
		t.Errorf("redirected = 0: the pgx connection did not go through sqlfwd")
	}
}

// TestInterceptOtherNetnsUntouched: cgroup programs see every namespace;
// a client in another network namespace must reach its own 127.0.0.1,
// never the host's database through sqlfwd.
func TestInterceptOtherNetnsUntouched(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	d := startIntercepting(t, cg)
	ns := netns(t, "o")
	ip(t, "netns", "exec", ns, "ip", "link", "set", "lo", "up")
	// cgroup first: ip netns exec mounts the namespace's own /sys
	args := append(inCgroup(cg)[1:], "ip", "netns", "exec", ns,
		tool(t, "psql"), "-X", "-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-U", pg.User, "-Atc", "select 1")
	res := runCmd(t, time.Minute, "", nil, "sh", args...)
	if res.Exit == 0 || !strings.Contains(res.Stderr, "refused") {
		t.Fatalf("psql in another netns to 127.0.0.1:%d\ngot %s\nwant connection refused (nothing listens there)", pg.Port, res)
	}
	if ic := stats(t, d).Interception; ic.SkippedNetns == 0 || ic.Redirected != 0 {
		t.Errorf("counters %+v: want skipped_netns > 0 and nothing redirected", ic)
	}
}

// TestInterceptSIGTERMFailsOpen: after SIGTERM the programs are detached,
// so new connections go directly to the database.
func TestInterceptSIGTERMFailsOpen(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	d := startIntercepting(t, cg)
	freshTable(t, "icept_open", 1, 2)
	if res := psqlIn(t, cg, "127.0.0.1", "delete from icept_open"); !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("while sqlfwd runs: got %s, want %s", res, codeBlocked)
	}
	if code, err := d.signal(os.Interrupt, 15*time.Second); err != nil || code != 0 {
		t.Fatalf("SIGINT: exit %d, %v; want 0", code, err)
	}
	if res := psqlIn(t, cg, "127.0.0.1", "delete from icept_open"); res.Exit != 0 {
		t.Fatalf("after sqlfwd stopped: got %s, want the statement to reach PostgreSQL directly", res)
	}
	if got := directInts(t, "select count(*) from icept_open"); got[0] != 0 {
		t.Errorf("rows after the direct delete: %v, want 0 (the statement went direct)", got)
	}
}

// TestInterceptPgbench runs pgbench, which knows nothing of sqlfw, against
// the database's address with sockmap on and off.
func TestInterceptPgbench(t *testing.T) {
	needKernel(t)
	conn := []string{"-h", pg.Host, "-p", strconv.Itoa(pg.Port), "-U", pg.User}
	if res := runTool(t, 3*time.Minute, "", nil, "pgbench", append(append([]string{"-i", "-s", "1", "-q"}, conn...), pg.Database)...); res.Exit != 0 {
		t.Fatalf("pgbench -i directly: %s", res)
	}
	t.Cleanup(func() {
		directExec(t, "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
	})
	for _, sm := range []string{"on", "off"} {
		t.Run("sockmap-"+sm, func(t *testing.T) {
			cg := childCgroup(t)
			d := startIntercepting(t, cg, "--sockmap", sm)
			args := append(inCgroup(cg)[1:], tool(t, "pgbench"), "-S", "-n", "-T", "3", "-c", "2", "-j", "2", "-M", "prepared")
			args = append(append(args, conn...), pg.Database)
			res := runCmd(t, 2*time.Minute, "", nil, "sh", args...)
			if res.Exit != 0 || !strings.Contains(res.Stdout, "number of failed transactions: 0 ") {
				t.Fatalf("pgbench through interception: %s", res)
			}
			st := stats(t, d)
			if st.Databases[0].Messages == 0 || st.Interception.Redirected < 2 {
				t.Errorf("stats %+v: pgbench did not go through sqlfwd", st)
			}
			if sm == "on" && st.Interception.SockmapAdded < 4 {
				t.Errorf("sockmap_added = %d, want ≥ 4 (both local legs of 2 connections)", st.Interception.SockmapAdded)
			}
			if sm == "off" && st.Interception.SockmapAdded != 0 {
				t.Errorf("sockmap_added = %d with sockmap off, want 0", st.Interception.SockmapAdded)
			}
		})
	}
}

// TestInterceptSockmapStress: many connections with pipelined,
// sequence-numbered queries give the same answers with sockmap on and off.
func TestInterceptSockmapStress(t *testing.T) {
	needKernel(t)
	const conns, batches, perBatch = 120, 5, 20
	results := map[string]string{}
	for _, sm := range []string{"on", "off"} {
		t.Run("sockmap-"+sm, func(t *testing.T) {
			cg := childCgroup(t)
			d := startIntercepting(t, cg, "--sockmap", sm)
			enterCgroup(t, cg)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			sums := make([]int64, conns)
			for i := 0; i < conns; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					c, err := pgx.Connect(ctx, dsn(pg.Host, pg.Port, pg.User, ""))
					if err != nil {
						errs <- err
						return
					}
					defer c.Close(context.Background())
					for b := 0; b < batches; b++ {
						batch := &pgx.Batch{}
						for k := 0; k < perBatch; k++ {
							batch.Queue("select $1::int8 * 2", int64(i*100000+b*1000+k))
						}
						br := c.SendBatch(ctx, batch)
						for k := 0; k < perBatch; k++ {
							var v int64
							if err := br.QueryRow().Scan(&v); err != nil {
								errs <- err
								br.Close()
								return
							}
							want := int64(i*100000+b*1000+k) * 2
							if v != want {
								errs <- fmt.Errorf("connection %d batch %d item %d: got %d, want %d", i, b, k, v, want)
							}
							sums[i] += v
						}
						if err := br.Close(); err != nil {
							errs <- err
							return
						}
					}
				}(i)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			results[sm] = fmt.Sprint(sums)
			st := stats(t, d)
			if st.Interception.Redirected < conns {
				t.Errorf("redirected = %d, want ≥ %d", st.Interception.Redirected, conns)
			}
			if sm == "on" && st.Interception.SockmapAdded < 2*conns {
				t.Errorf("sockmap_added = %d, want ≥ %d", st.Interception.SockmapAdded, 2*conns)
			}
		})
	}
	if len(results) == 2 && results["on"] != results["off"] {
		t.Errorf("sockmap on and off gave different results")
	}
}

// TestInterceptDBHost: sqlfwd on the database host steers inbound
// connections to the database's port; the client is in another network
// namespace joined by a veth pair and connects to the host's address.
func TestInterceptDBHost(t *testing.T) {
	needKernel(t)
	dbns, clns, dbIP, clIP := vethPair(t, "", 99)

	// PostgreSQL in the database namespace, on its loopback only.
	root, _ := filepath.Abs("..")
	// the postgres user must reach its directory
	pgdir, err := os.MkdirTemp("", "sqlfw-e2e-dbhost-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(pgdir) })
	if err := os.Chmod(pgdir, 0o755); err != nil {
		t.Fatal(err)
	}
	const dbPort = "5432"
	res := runCmd(t, 2*time.Minute, "", nil, "ip", "netns", "exec", dbns, "bash", filepath.Join(root, "scripts/pg.sh"), "start", "--dir", pgdir+"/pg", "--port", dbPort)
	if res.Exit != 0 {
		t.Fatalf("starting PostgreSQL in %s: %s", dbns, res)
	}
	t.Cleanup(func() {
		runCmd(t, time.Minute, "", nil, "ip", "netns", "exec", dbns, "bash", filepath.Join(root, "scripts/pg.sh"), "stop", "--dir", pgdir+"/pg")
	})

	// sqlfwd in the database namespace, steering that namespace.
	ctl := filepath.Join(t.TempDir(), "control.sock")
	logPath := filepath.Join(t.TempDir(), "sqlfwd.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", dbns, filepath.Join(binDir, "sqlfwd"), "--protocol", "postgres",
		"--upstream", "127.0.0.1:"+dbPort, "--intercept-mode", "db-host", "--control-socket", ctl)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("sqlfwd log:\n%s", tail(string(b), 40))
		}
	})
	d := &daemon{control: ctl}
	for i := 0; ; i++ {
		if _, err := os.Stat(ctl); err == nil {
			break
		}
		if i > 150 {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("sqlfwd did not start; log:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}

	psqlArgs := []string{"netns", "exec", clns, tool(t, "psql"), "-X", "-h", dbIP, "-p", dbPort, "-U", pg.User, "-d", "postgres",
		"-v", "VERBOSITY=verbose", "-Atc"}
	res = runCmd(t, time.Minute, "", nil, "ip", append(psqlArgs, "select host(inet_client_addr())")...)
	if res.Exit != 0 || strings.TrimSpace(res.Stdout) != "127.0.0.1" {
		t.Fatalf("psql from the client namespace to %s:%s\ngot %s\nwant the database to see 127.0.0.1 (sqlfwd's loopback leg)", dbIP, dbPort, res)
	}
	res = runCmd(t, time.Minute, "", nil, "ip", append(psqlArgs, "create table steer_t(a int); insert into steer_t values (1)")...)
	if res.Exit != 0 {
		t.Fatalf("setup through steering: %s", res)
	}
	res = runCmd(t, time.Minute, "", nil, "ip", append(psqlArgs, "delete from steer_t")...)
	if !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("delete without where through steering\ngot %s\nwant %s", res, codeBlocked)
	}
	st := stats(t, d)
	if st.Interception.Steered < 3 || st.Databases[0].Denied != 1 {
		t.Errorf("stats %+v %+v: want ≥ 3 steered, 1 denied", st.Interception, st.Databases)
	}
	b, _ := os.ReadFile(logPath)
	if !strings.Contains(string(b), clIP) {
		t.Errorf("sqlfwd's log does not name the real client %s:\n%s", clIP, tail(string(b), 10))
	}
}

// vethPair makes a database namespace and a client namespace joined by a
// veth pair, addressed 10.N.x.1 (database) and 10.N.x.2 (client), both
// links and loopbacks up; tag tells the names of two tests apart.
func vethPair(t *testing.T, tag string, n int) (dbns, clns, dbIP, clIP string) {
	t.Helper()
	dbns, clns = netns(t, tag+"d"), netns(t, tag+"c")
	suffix := strconv.Itoa(os.Getpid() % 10000)
	vd, vc := "sq"+tag+"d"+suffix, "sq"+tag+"c"+suffix
	subnet := fmt.Sprintf("10.%d.%d", n, os.Getpid()%200+1)
	dbIP, clIP = subnet+".1", subnet+".2"
	ip(t, "link", "add", vd, "type", "veth", "peer", "name", vc)
	ip(t, "link", "set", vd, "netns", dbns)
	ip(t, "link", "set", vc, "netns", clns)
	ip(t, "netns", "exec", dbns, "ip", "addr", "add", dbIP+"/24", "dev", vd)
	ip(t, "netns", "exec", clns, "ip", "addr", "add", clIP+"/24", "dev", vc)
	for _, step := range [][]string{{dbns, vd}, {clns, vc}} {
		ip(t, "netns", "exec", step[0], "ip", "link", "set", step[1], "up")
		ip(t, "netns", "exec", step[0], "ip", "link", "set", "lo", "up")
	}
	return dbns, clns, dbIP, clIP
}

// netns creates a network namespace for one test and deletes it after.
func netns(t *testing.T, tag string) string {
	t.Helper()
	name := fmt.Sprintf("sqlfw-e2e-%s-%d", tag, os.Getpid())
	ip(t, "netns", "add", name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	return name
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestInterceptFailClosed: with --fail-closed the programs are pinned, so
// a daemon that dies (kill -9) or stops cleanly leaves protected connects
// refused, never unjudged; a new daemon takes the pinned hooks over in place;
// sqlfwd --detach-pins removes them. A retrying load runs throughout: every
// attempt sends a denied statement with a unique marker, and none may reach
// PostgreSQL (client result and server statement log).
func TestInterceptFailClosed(t *testing.T) {
	needKernel(t)
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	cg := childCgroup(t)
	pinDir := fmt.Sprintf("/sys/fs/bpf/sqlfw-e2e-%d", os.Getpid())
	t.Cleanup(func() {
		// a failed test may leave pins: detach them
		if err := bpf.UnpinAll(pinDir); err != nil {
			t.Errorf("unpinning %s: %v", pinDir, err)
		}
		os.Remove(pinDir)
	})
	freshTable(t, "icept_closed", 1, 2)
	args := []string{"--fail-closed", "--pin-dir", pinDir}

	d := startIntercepting(t, cg, args...)
	if res := psqlIn(t, cg, "127.0.0.1", "delete from icept_closed"); !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("while sqlfwd runs: got %s, want %s", res, codeBlocked)
	}

	// The retrying load: one psql per attempt, inside the cgroup, each
	// with a denied statement naming a table no one created.
	tag := "iceptmark" + randomHex(t)
	dir := t.TempDir()
	stop := filepath.Join(dir, "stop")
	script := fmt.Sprintf(`i=0; while [ ! -e %q ]; do i=$((i+1)); out=$(%q -X -h 127.0.0.1 -p %d -U %s -d %s -v VERBOSITY=verbose -Atc "delete from %s_$i" 2>&1); echo "attempt $i rc=$? $(echo $out | tr '\n' ' ')"; done`,
		stop, tool(t, "psql"), pg.Port, pg.User, pg.Database, tag)
	load := exec.Command("sh", append(inCgroup(cg)[1:], "sh", "-c", script)...)
	load.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=3")
	var out lockedBuffer
	load.Stdout, load.Stderr = &out, &out
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	stopLoad := func() {
		os.WriteFile(stop, nil, 0o600)
		load.Wait()
	}
	defer stopLoad()
	phase := func(name string, wait time.Duration) {
		time.Sleep(wait)
		t.Logf("%s: %d attempts so far", name, strings.Count(out.String(), "attempt "))
	}
	phase("first daemon", 700*time.Millisecond)
	d.cmd.Process.Kill()
	<-d.done
	phase("killed", 700*time.Millisecond)
	d2 := startIntercepting(t, cg, args...)
	phase("second daemon", 700*time.Millisecond)
	if err := d2.stop(); err != nil {
		t.Fatal(err)
	}
	phase("cleanly stopped", 700*time.Millisecond)
	d3 := startIntercepting(t, cg, args...)
	phase("third daemon", 700*time.Millisecond)
	stopLoad()

	judged, refused := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		switch {
		case strings.Contains(line, codeBlocked):
			judged++
		case strings.Contains(line, " rc=0 "):
			t.Errorf("a denied statement ran through the restarts: %s", line)
		default:
			refused++
		}
	}
	t.Logf("load: %d attempts judged and blocked, %d refused", judged, refused)
	if judged == 0 || refused == 0 {
		t.Errorf("load: %d judged, %d refused: want both (the load must run across the restarts)\n%s", judged, refused, tail(out.String(), 20))
	}
	checkServerLogClean(t, tag)
	if got := directInts(t, "select count(*) from icept_closed"); got[0] != 2 {
		t.Fatalf("rows: %v, want 2 (nothing reached PostgreSQL unjudged)", got)
	}

	if res := psqlIn(t, cg, "127.0.0.1", "delete from icept_closed"); !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("after the restarts: got %s, want %s from the newest daemon", res, codeBlocked)
	}
	if err := d3.stop(); err != nil {
		t.Fatal(err)
	}
	if res := psqlIn(t, cg, "127.0.0.1", "select count(*) from icept_closed"); res.Exit == 0 {
		t.Fatalf("after a clean stop with --fail-closed: got %s, want the connection refused", res)
	}
	res := runToolPath(t, filepath.Join(binDir, "sqlfwd"), "--detach-pins", "--pin-dir", pinDir)
	if res.Exit != 0 {
		t.Fatalf("sqlfwd --detach-pins: %s", res)
	}
	if res := psqlIn(t, cg, "127.0.0.1", "select count(*) from icept_closed"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "2" {
		t.Fatalf("after sqlfwd --detach-pins: got %s, want a direct connection", res)
	}
	if ents, _ := os.ReadDir(pinDir); len(ents) != 0 {
		t.Errorf("pins left after --detach-pins: %v", ents)
	}
}

// lockedBuffer is a bytes.Buffer a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// checkServerLogClean fails on any server log line holding marker.
func checkServerLogClean(t *testing.T, marker string) {
	t.Helper()
	for _, line := range strings.Split(serverLog(t), "\n") {
		if strings.Contains(line, marker) {
			t.Errorf("server log line %q holds the marker of a denied statement: PostgreSQL received it", line)
		}
	}
}

// TestInterceptFallback: without privileges sqlfwd says what is missing in
// one line and falls back to its explicit listener, or exits non-zero when
// it has none.
func TestInterceptFallback(t *testing.T) {
	needSqlfwd(t)
	if os.Geteuid() != 0 {
		t.Skip("skipping: dropping to an unprivileged user needs root")
	}
	// a copy nobody can execute, and a directory nobody can write
	dir, err := os.MkdirTemp("", "sqlfw-e2e-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sqlfwd")
	b, err := os.ReadFile(filepath.Join(binDir, "sqlfwd"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	upstream := net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port))

	nobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	t.Run("no listener: exit non-zero", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--protocol", "postgres", "--upstream", upstream, "--intercept",
			"--control-socket", filepath.Join(dir, "a.sock"), "--log-format", "text")
		cmd.SysProcAttr = nobody
		out, err := cmd.CombinedOutput()
		if err == nil || ctx.Err() != nil || !strings.Contains(string(out), "CAP_BPF") {
			t.Fatalf("sqlfwd --intercept as nobody without --listen\ngot %v\n%s\nwant a non-zero exit naming CAP_BPF", err, out)
		}
	})

	t.Run("fail_closed with a listener: exit non-zero, no fall back", func(t *testing.T) {
		// fail_closed promises no protected connect unjudged: falling back
		// to the listener would leave the clients' own connects open
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--protocol", "postgres", "--upstream", upstream, "--intercept", "--fail-closed",
			"--listen", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			"--control-socket", filepath.Join(dir, "c.sock"), "--log-format", "text")
		cmd.SysProcAttr = nobody
		out, err := cmd.CombinedOutput()
		if err == nil || ctx.Err() != nil || !strings.Contains(string(out), "CAP_BPF") || strings.Contains(string(out), "falling back") {
			t.Fatalf("sqlfwd --intercept --fail-closed --listen as nobody\ngot %v\n%s\nwant a non-zero exit naming CAP_BPF and no fall back", err, out)
		}
	})

	t.Run("listener: fall back", func(t *testing.T) {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		logPath := filepath.Join(dir, "fallback.log")
		logf, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--protocol", "postgres", "--upstream", upstream,
			"--intercept", "--listen", listen, "--control-socket", filepath.Join(dir, "b.sock"), "--log-format", "text")
		cmd.SysProcAttr = nobody
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			logf.Close()
		})
		for i := 0; ; i++ {
			if c, err := net.Dial("tcp", listen); err == nil {
				c.Close()
				break
			}
			if i > 150 {
				b, _ := os.ReadFile(logPath)
				t.Fatalf("sqlfwd did not listen; log:\n%s", b)
			}
			time.Sleep(100 * time.Millisecond)
		}
		res := runTool(t, time.Minute, "", nil, "psql", "-X", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", pg.User,
			"-d", pg.Database, "-v", "VERBOSITY=verbose", "-Atc", "delete from sqlfw_no_such_table")
		if !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("psql through the fallback listener: got %s, want %s", res, codeBlocked)
		}
		log, _ := os.ReadFile(logPath)
		lines := strings.Count(string(log), "interception unavailable")
		if lines != 1 || !strings.Contains(string(log), "CAP_BPF") {
			t.Errorf("log has %d 'interception unavailable' lines, want one naming CAP_BPF:\n%s", lines, log)
		}
	})
}

// TestInterceptProcessScope: a rule scoped to a client process (here by
// command name) applies to that process only; interception is what tells
// sqlfw who connected.
func TestInterceptProcessScope(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	pol := policyFile(t, `rules:
  - id: only-billing-writes-payments
    action: deny
    reason: only the billing service writes payments
    comms: ["psql"]
    match:
      tables: [proc_payments]
      access: write
`)
	d := startIntercepting(t, cg, "--policy", pol)
	freshTable(t, "proc_payments")

	res := psqlIn(t, cg, "127.0.0.1", "insert into proc_payments values (1)")
	if !strings.Contains(res.Stderr, codeBlocked) || !strings.Contains(res.Stderr, "only-billing-writes-payments") {
		t.Fatalf("psql insert: got %s, want %s from rule only-billing-writes-payments", res, codeBlocked)
	}
	// the same statement from another process (this test binary) passes
	enterCgroup(t, cg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, ""))
	if _, err := c.Exec(ctx, "insert into proc_payments values (2)"); err != nil {
		t.Fatalf("insert from %s: %v; want it allowed (the rule is scoped to psql)", filepath.Base(os.Args[0]), err)
	}
	if got := directInts(t, "select id from proc_payments"); len(got) != 1 || got[0] != 2 {
		t.Errorf("rows: %v, want [2]", got)
	}
	if log := d.log(); !strings.Contains(log, `"comm":"psql"`) {
		t.Errorf("the block is not logged with the client process:\n%s", tail(log, 5))
	}
}

// TestInterceptUnprotectAtRuntime: an address removed at run time stops
// being redirected for new connections only; adding it back resumes.
func TestInterceptUnprotectAtRuntime(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	d := startIntercepting(t, cg)
	freshTable(t, "icept_rt", 1, 2)
	enterCgroup(t, cg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, "")) // through sqlfwd

	addr := net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port))
	if res := fwctl(t, d, "protect", "remove", addr); res.Exit != 0 {
		t.Fatalf("fwctl protect remove: %s", res)
	}
	_, err := before.Exec(ctx, "delete from icept_rt")
	checkDenied(t, "delete from icept_rt on a connection opened before the removal", err)

	after := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, "")) // direct now
	if _, err := after.Exec(ctx, "delete from icept_rt where id = 1"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := after.QueryRow(ctx, "select count(*) from sqlfw_no_such_function()").Scan(&n); err == nil {
		t.Fatal("expected an error from PostgreSQL itself")
	} else if strings.Contains(err.Error(), blockedPrefix) {
		t.Fatalf("a new connection after removal still went through sqlfwd: %v", err)
	}

	if res := fwctl(t, d, "protect", "add", addr); res.Exit != 0 {
		t.Fatalf("fwctl protect add: %s", res)
	}
	again := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, ""))
	_, err = again.Exec(ctx, "delete from icept_rt")
	checkDenied(t, "delete from icept_rt after adding the address back", err)
	if res := fwctl(t, d, "protect", "remove", "127.0.0.2:1"); res.Exit == 0 {
		t.Errorf("removing an address that is not protected: %s; want an error", res)
	}
}
