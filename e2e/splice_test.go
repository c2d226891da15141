package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// TestInterceptSpliceUpstream: with intercept.splice_upstream (experimental)
// the upstream leg to a PostgreSQL on this host is spliced in the kernel
// too, and sessions behave as before: pipelined batches give the right
// answers on many connections, a DELETE between batches is refused by sqlfw and never reaches the server (its own statement log),
// the rows stay, large results come whole, and all four sockets of each
// connection were spliced. Then the same with TLS on the upstream leg
// (PostgreSQL serving TLS, sqlfwd --upstream-tls require): the TLS records
// sqlfwd writes and reads are what the splice carries. The server gets a
// cgroup of its own at start: sockops sees a listener's accepted sockets
// only in the cgroup the listener was made in.
func TestInterceptSpliceUpstream(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	pgcg := makeCgroup(t, filepath.Dir(cg), cg+"-db")
	sp := startSplicePG(t, pgcg)
	work, port := sp.work, sp.port
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct, err := pgx.Connect(ctx, dsn("127.0.0.1", port, "postgres", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Exec(ctx, "create table splice_rows (a int); insert into splice_rows values (1), (2), (3)"); err != nil {
		t.Fatal(err)
	}

	for _, upTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("upstream_tls=%v", upTLS), func(t *testing.T) {
			args := []string{"--sockmap", "on", "--splice-upstream", pgcg, "--upstream", addr}
			if upTLS {
				dir := filepath.Join(work, "tls")
				os.Mkdir(dir, 0o755)
				ca := newTestCA(t, dir, "spliceca")
				cert, key := ca.issue(t, dir, "localhost", false)
				if u, err := userLookup("postgres"); err == nil {
					os.Chown(cert, u, -1)
					os.Chown(key, u, -1)
				}
				for _, q := range []string{"ALTER SYSTEM SET ssl_cert_file = '" + cert + "'", "ALTER SYSTEM SET ssl_key_file = '" + key + "'",
					"ALTER SYSTEM SET ssl = on", "SELECT pg_reload_conf()"} {
					if _, err := direct.Exec(ctx, q); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(500 * time.Millisecond)
				args = append(args, "--upstream-tls", "require")
			}
			d := startIntercepting(t, cg, args...)
			defer d.stop()
			enterCgroup(t, cg)
			if upTLS {
				c, err := pgx.Connect(ctx, dsn("127.0.0.1", port, "postgres", ""))
				if err != nil {
					t.Fatal(err)
				}
				var ssl bool
				err = c.QueryRow(ctx, "select ssl from pg_stat_ssl where pid = pg_backend_pid()").Scan(&ssl)
				c.Close(ctx)
				if err != nil || !ssl {
					t.Fatalf("pg_stat_ssl of a session through sqlfwd: ssl %v, %v; want true (the upstream leg in TLS)", ssl, err)
				}
			}
			const conns, batches = 40, 5
			pipelinedSessions(t, ctx, conns, batches, func() (*pgx.Conn, error) {
				return pgx.Connect(ctx, dsn("127.0.0.1", port, "postgres", ""))
			})
			st := stats(t, d)
			t.Logf("interception: %+v", st.Interception)
			if st.Interception.Redirected < conns {
				t.Errorf("redirected = %d, want ≥ %d", st.Interception.Redirected, conns)
			}
			// Client, accepted, upstream and the server's socket of each connection.
			if st.Interception.SockmapAdded < 4*conns {
				t.Errorf("sockmap_added = %d, want ≥ %d (four sockets a connection)", st.Interception.SockmapAdded, 4*conns)
			}
			var n int
			if err := direct.QueryRow(ctx, "select count(*) from splice_rows").Scan(&n); err != nil || n != 3 {
				t.Errorf("rows after the run: %d, %v; want 3", n, err)
			}
		})
	}
	direct.Close(ctx)
	neverReached(t, sp.log, 2*40*5)
}

// pipelinedSessions runs conns sessions at once, each made by connect:
// batches pipelined batches of 20 parameterised selects whose answers are
// checked, a WHERE-less DELETE between batches that sqlfw must refuse, a
// count that must still be 3 (table splice_rows), and a 2 MB result whose
// every row is checked.
func pipelinedSessions(t *testing.T, ctx context.Context, conns, batches int, connect func() (*pgx.Conn, error)) {
	t.Helper()
	const perBatch = 20
	var wg sync.WaitGroup
	errs := make(chan error, conns*batches)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := connect()
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(context.Background())
			for b := range batches {
				batch := &pgx.Batch{}
				for k := range perBatch {
					batch.Queue("select $1::int8 * 2", int64(i*100000+b*1000+k))
				}
				br := c.SendBatch(ctx, batch)
				for k := range perBatch {
					var v int64
					if err := br.QueryRow().Scan(&v); err != nil {
						errs <- fmt.Errorf("connection %d batch %d item %d: %v", i, b, k, err)
						break
					}
					if want := int64(i*100000+b*1000+k) * 2; v != want {
						errs <- fmt.Errorf("connection %d batch %d item %d: got %d, want %d", i, b, k, v, want)
					}
				}
				if err := br.Close(); err != nil {
					errs <- fmt.Errorf("connection %d batch %d: %v", i, b, err)
				}
				// A blocked statement between batches, then the session
				// goes on.
				del := fmt.Sprintf("delete from splice_rows /* c%d b%d */", i, b)
				if _, err := c.Exec(ctx, del, pgx.QueryExecModeSimpleProtocol); err == nil || !strings.Contains(err.Error(), codeBlocked) {
					errs <- fmt.Errorf("connection %d batch %d: the DELETE got %v, want %s", i, b, err, codeBlocked)
				}
				var n int
				if err := c.QueryRow(ctx, "select count(*) from splice_rows").Scan(&n); err != nil || n != 3 {
					errs <- fmt.Errorf("connection %d after batch %d: count %d, %v; want 3", i, b, n, err)
				}
				// A large result (2 MB), every row checked.
				rows, err := c.Query(ctx, "select i, repeat(chr(65 + i % 26), 400) from generate_series(1, 5000) i")
				if err != nil {
					errs <- fmt.Errorf("connection %d after batch %d: the large result: %v", i, b, err)
					continue
				}
				got := 0
				for rows.Next() {
					var id int
					var v string
					if err := rows.Scan(&id, &v); err != nil || id != got+1 || v != strings.Repeat(string(rune(65+id%26)), 400) {
						errs <- fmt.Errorf("connection %d after batch %d: large result row %d: id %d, %.20q, %v", i, b, got+1, id, v, err)
						break
					}
					got++
				}
				rows.Close()
				if err := rows.Err(); err != nil || got != 5000 {
					errs <- fmt.Errorf("connection %d after batch %d: the large result had %d rows of 5000: %v", i, b, got, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// neverReached reads the server's statement log: no DELETE of splice_rows
// is in it, and at least counts of its counts are (it is the right log).
func neverReached(t *testing.T, path string, counts int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.Contains(line, "delete from splice_rows") {
			t.Errorf("a blocked statement reached the server: %s", line)
		}
		if strings.Contains(line, "select count(*) from splice_rows") {
			seen++
		}
	}
	if seen < counts {
		t.Errorf("the server's log holds %d of the %d counts sent through sqlfwd: is it the right log?", seen, counts)
	}
}

// TestInterceptDBHostSpliceUpstream: intercept.splice_upstream in db-host
// mode. Clients in one network namespace reach the database host (another
// namespace, a veth between) by its address; sk_lookup steers them to
// sqlfwd, which dials PostgreSQL on the host's loopback. That leg and the
// server's socket of it are spliced in the kernel (the clients' legs come
// from the network and stay TCP), and sessions behave as without: the
// pipelined batches, refused DELETEs absent from the statement log, the
// rows kept, large results whole. PostgreSQL and sqlfwd each run in a
// cgroup of their own, both given to --splice-upstream.
func TestInterceptDBHostSpliceUpstream(t *testing.T) {
	needKernel(t)
	dbns, clns, dbIP, _ := vethPair(t, "s", 98)
	cg := childCgroup(t)
	pgcg := makeCgroup(t, filepath.Dir(cg), cg+"-db")

	work, err := os.MkdirTemp("", "sqlfw-dbsplice-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	pgDir := filepath.Join(work, "pg")
	script, _ := filepath.Abs(filepath.Join("..", "scripts", "pg.sh"))
	const dbPort = 5432
	// nsenter, not ip netns exec: that mounts a sysfs of the namespace over
	// /sys, hiding the cgroup2 mount sqlfwd attaches to.
	inDB := append(inCgroup(pgcg)[1:], "nsenter", "--net=/run/netns/"+dbns)
	if res := runCmd(t, 2*time.Minute, "", nil, "sh", append(inDB, "bash", script, "start", "--dir", pgDir, "--port", strconv.Itoa(dbPort), "--log-statements")...); res.Exit != 0 {
		t.Fatalf("starting PostgreSQL in %s, its own cgroup: %s", dbns, res)
	}
	t.Cleanup(func() {
		runCmd(t, time.Minute, "", nil, "ip", "netns", "exec", dbns, "bash", script, "stop", "--dir", pgDir)
	})
	res := runCmd(t, time.Minute, "", nil, "bash", script, "env", "--dir", pgDir)
	logPath := ""
	for _, f := range strings.Fields(res.Stdout) {
		if k, v, ok := strings.Cut(f, "="); ok && k == "SQLFW_PG_LOG" {
			logPath = strings.Trim(v, `'"`)
		}
	}
	if logPath == "" {
		t.Fatalf("pg.sh env: %s", res)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// sqlfwd in the database namespace, in its own cgroup: its upstream
	// sockets are made there.
	ctl := filepath.Join(work, "control.sock")
	sqlfwdLog := filepath.Join(work, "sqlfwd.log")
	logf, err := os.Create(sqlfwdLog)
	if err != nil {
		t.Fatal(err)
	}
	argv := append(inCgroup(cg)[1:], "nsenter", "--net=/run/netns/"+dbns, filepath.Join(binDir, "sqlfwd"), "--protocol", "postgres",
		"--upstream", "127.0.0.1:"+strconv.Itoa(dbPort), "--intercept-mode", "db-host", "--control-socket", ctl,
		"--splice-upstream", pgcg+","+cg)
	cmd := exec.Command("sh", argv...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(sqlfwdLog)
			t.Logf("sqlfwd log:\n%s", tail(string(b), 40))
		}
	})
	d := &daemon{control: ctl}
	for i := 0; ; i++ {
		b, _ := os.ReadFile(sqlfwdLog)
		if strings.Contains(string(b), "db-host upstream legs spliced") {
			break
		}
		if i > 150 {
			t.Fatalf("sqlfwd did not start splicing; log:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(ctl); err == nil {
			break
		}
		if i > 150 {
			t.Fatal("no control socket")
		}
		time.Sleep(100 * time.Millisecond)
	}

	setup, err := pgConnectCfg(ctx, dbIP, dbPort, clns)
	if err != nil {
		t.Fatal(err)
	}
	var who string
	if err := setup.QueryRow(ctx, "select host(inet_client_addr())").Scan(&who); err != nil || who != "127.0.0.1" {
		t.Fatalf("through steering the server sees %q, %v; want 127.0.0.1 (sqlfwd's loopback leg)", who, err)
	}
	if _, err := setup.Exec(ctx, "create table splice_rows (a int); insert into splice_rows values (1), (2), (3)"); err != nil {
		t.Fatal(err)
	}
	const conns, batches = 20, 4
	pipelinedSessions(t, ctx, conns, batches, func() (*pgx.Conn, error) { return pgConnectCfg(ctx, dbIP, dbPort, clns) })
	st := stats(t, d)
	t.Logf("interception: %+v", st.Interception)
	if st.Interception.Steered < conns {
		t.Errorf("steered = %d, want ≥ %d", st.Interception.Steered, conns)
	}
	// sqlfwd's upstream socket and the server's of each connection (a
	// leg that wrote before its peer was in the map stays on TCP:
	// sockmap_fallback, logged above).
	if st.Interception.SockmapAdded < 2*conns {
		t.Errorf("sockmap_added = %d, want ≥ %d (two sockets a connection)", st.Interception.SockmapAdded, 2*conns)
	}
	var n int
	if err := setup.QueryRow(ctx, "select count(*) from splice_rows").Scan(&n); err != nil || n != 3 {
		t.Errorf("rows after the run: %d, %v; want 3", n, err)
	}
	setup.Close(ctx)
	neverReached(t, logPath, conns*batches)
}

// pgConnectCfg connects pgx to host:port from network namespace ns.
func pgConnectCfg(ctx context.Context, host string, port int, ns string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn(host, port, "postgres", ""))
	if err != nil {
		return nil, err
	}
	cfg.DialFunc = dialInNetns("/run/netns/" + ns)
	return pgx.ConnectConfig(ctx, cfg)
}

// dialInNetns dials from the network namespace at path: the socket is made
// on a thread that entered it, and stays there whatever thread uses it
// later. The thread is never unlocked, so it exits with its goroutine
// instead of going back to the runtime in the wrong namespace.
func dialInNetns(path string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			runtime.LockOSThread()
			f, err := os.Open(path)
			if err != nil {
				ch <- result{err: err}
				return
			}
			defer f.Close()
			if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
				ch <- result{err: fmt.Errorf("setns %s: %w", path, err)}
				return
			}
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			ch <- result{c, err}
		}()
		r := <-ch
		return r.c, r.err
	}
}

// splicePG is a PostgreSQL of one test, in a cgroup of its own, with its
// statement log.
type splicePG struct {
	work, dir, log string
	port           int
	cg             string
}

// startSplicePG starts a PostgreSQL in cgroup cg (logging every
// statement) and stops it when the test ends.
func startSplicePG(t *testing.T, cg string) *splicePG {
	t.Helper()
	work, err := os.MkdirTemp("", "sqlfw-splice-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	sp := &splicePG{work: work, dir: filepath.Join(work, "pg"), cg: cg}
	sp.start(t)
	t.Cleanup(func() { runCmd(t, time.Minute, "", nil, "bash", splicePGScript, "stop", "--dir", sp.dir) })
	res := runCmd(t, time.Minute, "", nil, "bash", splicePGScript, "env", "--dir", sp.dir)
	for _, f := range strings.Fields(res.Stdout) {
		k, v, _ := strings.Cut(f, "=")
		switch v = strings.Trim(v, `'"`); k {
		case "SQLFW_PG_PORT":
			sp.port, _ = strconv.Atoi(v)
		case "SQLFW_PG_LOG":
			sp.log = v
		}
	}
	if sp.port == 0 || sp.log == "" {
		t.Fatalf("pg.sh env: %s", res)
	}
	return sp
}

var splicePGScript = filepath.Join("..", "scripts", "pg.sh")

// start starts the server (again, on the same port once it has one).
func (sp *splicePG) start(t *testing.T) {
	t.Helper()
	args := append(inCgroup(sp.cg)[1:], "bash", splicePGScript, "start", "--dir", sp.dir, "--log-statements")
	if sp.port != 0 {
		args = append(args, "--port", strconv.Itoa(sp.port))
	}
	if res := runCmd(t, 2*time.Minute, "", nil, "sh", args...); res.Exit != 0 {
		t.Fatalf("starting a PostgreSQL in its own cgroup: %s", res)
	}
}

// TestInterceptSpliceUpstreamServerRestart: the server restarts under
// spliced sessions. Each old session's next statement fails at once (its
// spliced leg is closed by the server's exit, as a TCP one is), none
// hangs; after the restart new sessions are spliced again and behave:
// pipelined batches, DELETEs refused and absent from the statement log,
// large results whole.
func TestInterceptSpliceUpstreamServerRestart(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	pgcg := makeCgroup(t, filepath.Dir(cg), cg+"-db")
	sp := startSplicePG(t, pgcg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dsnPG := dsn("127.0.0.1", sp.port, "postgres", "")
	direct, err := pgx.Connect(ctx, dsnPG)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Exec(ctx, "create table splice_rows (a int); insert into splice_rows values (1), (2), (3)"); err != nil {
		t.Fatal(err)
	}
	direct.Close(ctx)
	d := startIntercepting(t, cg, "--sockmap", "on", "--splice-upstream", pgcg, "--upstream", net.JoinHostPort("127.0.0.1", strconv.Itoa(sp.port)))
	enterCgroup(t, cg)

	const before = 10
	old := make([]*pgx.Conn, before)
	for i := range old {
		if old[i], err = pgx.Connect(ctx, dsnPG); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := old[i].QueryRow(ctx, "select count(*) from splice_rows").Scan(&n); err != nil || n != 3 {
			t.Fatalf("session %d before the restart: %d, %v", i, n, err)
		}
	}
	added := stats(t, d).Interception.SockmapAdded
	if added < 4*before {
		t.Fatalf("sockmap_added = %d before the restart, want ≥ %d", added, 4*before)
	}
	if res := runCmd(t, time.Minute, "", nil, "bash", splicePGScript, "stop", "--dir", sp.dir); res.Exit != 0 {
		t.Fatalf("stopping the server: %s", res)
	}
	sp.start(t)
	for i, c := range old {
		qctx, qcancel := context.WithTimeout(ctx, 15*time.Second)
		var n int
		err := c.QueryRow(qctx, "select count(*) from splice_rows").Scan(&n)
		if err == nil || qctx.Err() != nil {
			t.Errorf("session %d after the server's restart: %d, %v; want an error at once (the server closed it)", i, n, err)
		}
		qcancel()
		c.Close(context.Background())
	}
	const conns, batches = 10, 2
	pipelinedSessions(t, ctx, conns, batches, func() (*pgx.Conn, error) { return pgx.Connect(ctx, dsnPG) })
	st := stats(t, d)
	t.Logf("interception: %+v", st.Interception)
	if got := st.Interception.SockmapAdded - added; got < 4*conns {
		t.Errorf("sockmap_added grew by %d after the restart, want ≥ %d (four sockets a new connection)", got, 4*conns)
	}
	neverReached(t, sp.log, conns*batches)
}
