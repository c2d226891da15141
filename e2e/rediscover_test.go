package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/control"
)

// rediscoverInterval is the --discover-interval of the rediscovery test:
// short, so that the test does not wait out the default 5 s each time.
const rediscoverInterval = time.Second

// TestRediscovery starts sqlfwd with no configuration, then a second
// PostgreSQL 15 (and a second MariaDB) on unusual ports: sqlfwd must pick
// each up within the interval and block through interception what the
// default policy blocks, over TCP and the unix socket, with the server's own
// statement log showing that the blocked statement never arrived. When the
// server stops, its interception route and its status entry go (a new
// listener on that port is reached directly); when it starts again on the
// same port it takes its old entry back.
func TestRediscovery(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	d, err := startDiscovering(t, cg, "--discover-interval", rediscoverInterval.String())
	if err != nil {
		t.Fatal(err)
	}
	pg2 := startSecondPG(t)
	name := "postgres-" + strconv.Itoa(pg2.Port)
	found := waitLog(t, d, `"msg":"discovery: found and protecting"`, `"database":"`+name+`"`)
	t.Logf("found %s %s after it was ready", name, found.Round(time.Millisecond))
	if found > rediscoverInterval+2*time.Second {
		t.Errorf("found %s after %s: want within the interval (%s) and a scan's time", name, found, rediscoverInterval)
	}
	ds := statusOf(t, d, name)
	if ds == nil || !ds.Discovered || ds.State != "protected" || ds.UnixSocket != filepath.Join(pg2.SockDir, ".s.PGSQL."+strconv.Itoa(pg2.Port)) {
		t.Fatalf("fwctl status entry %+v: want %s discovered and protected with its unix socket", ds, name)
	}
	res := runToolPath(t, filepath.Join(binDir, "fwctl"), "status", "--control-socket", d.control)
	if !strings.Contains(res.Stdout, "discovery: rescans /proc every 1s") || !strings.Contains(res.Stdout, "found, protected") {
		t.Errorf("fwctl status does not say what discovery does and found:\n%s", res.Stdout)
	}

	psql2 := func(inCg bool, host, sql string) psqlResult {
		args := []string{tool(t, "psql"), "-X", "-h", host, "-p", strconv.Itoa(pg2.Port), "-U", pg.User, "-d", pg.Database, "-v", "VERBOSITY=verbose", "-Atc", sql}
		if inCg {
			args = append(inCgroup(cg), args...)
		}
		return runCmd(t, time.Minute, "", nil, args[0], args[1:]...)
	}
	if res := psql2(false, "127.0.0.1", "create table rediscover_t (id int); insert into rediscover_t values (1), (2)"); res.Exit != 0 {
		t.Fatalf("setting up the second server: %s", res)
	}
	for _, host := range []string{"127.0.0.1", pg2.SockDir} {
		marker := "rediscover_" + randomHex(t)
		if res := psql2(true, host, "select count(*) /* "+marker+"_ok */ from rediscover_t"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "2" {
			t.Errorf("psql -h %s, select through interception: %s, want 2", host, res)
		}
		if res := psql2(true, host, "delete /* "+marker+"_blocked */ from rediscover_t"); !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("psql -h %s, delete through interception: %s, want %s", host, res, codeBlocked)
		}
		log := pgLogAfterSentinel(t, pg2, psql2)
		if !strings.Contains(log, marker+"_ok") {
			t.Errorf("psql -h %s: the allowed select is not in %s: did it go to another server?", host, pg2.Log)
		}
		if strings.Contains(log, marker+"_blocked") {
			t.Errorf("psql -h %s: the blocked delete reached the server (in %s)", host, pg2.Log)
		}
	}
	if res := psql2(false, "127.0.0.1", "select count(*) from rediscover_t"); strings.TrimSpace(res.Stdout) != "2" {
		t.Errorf("rows after the blocked deletes: %s, want 2", res)
	}
	st := stats(t, d)
	denied := uint64(0)
	for _, db := range st.Databases {
		if db.Name == name {
			denied = db.Denied
		}
	}
	if denied != 2 {
		t.Errorf("fwctl stats: %s denied %d, want 2", name, denied)
	}

	// A second MariaDB too, when the suite has MariaDB.
	if os.Getenv("SQLFW_MY_PORT") != "" {
		t.Run("mariadb", func(t *testing.T) { rediscoverMariaDB(t, d, cg) })
	}

	// The server stops: its route goes, and its status entry says gone.
	pg2.stop(t)
	waitLog(t, d, `"msg":"discovery: server gone: no longer intercepting its addresses; open sessions end on their own"`, `"database":"`+name+`"`)
	if ds := statusOf(t, d, name); ds == nil || ds.State != "gone" {
		t.Errorf("fwctl status entry after the server stopped: %+v, want gone", ds)
	}
	res = runToolPath(t, filepath.Join(binDir, "fwctl"), "status", "--control-socket", d.control)
	if !strings.Contains(res.Stdout, "found, gone since") || !strings.Contains(res.Stdout, "open sessions end on their own") {
		t.Errorf("fwctl status does not say the server is gone and what that means:\n%s", res.Stdout)
	}
	// Another process on that port is reached directly: what the client
	// in the intercepted cgroup sends arrives as sent (sqlfwd would have
	// taken it for a startup packet and never passed it on).
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(pg2.Port))
	if err != nil {
		t.Fatalf("listening on the stopped server's port: %v", err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b := make([]byte, 64)
		n, _ := c.Read(b)
		got <- string(b[:n])
	}()
	send := append(inCgroup(cg), "bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d; printf 'hello-direct' >&3; sleep 1", pg2.Port))
	runCmd(t, 30*time.Second, "", nil, send[0], send[1:]...)
	select {
	case g := <-got:
		if g != "hello-direct" {
			t.Errorf("the listener on the stopped server's port got %q, want the client's bytes directly", g)
		}
	case <-time.After(15 * time.Second):
		t.Error("the listener on the stopped server's port got no connection")
	}
	ln.Close()

	// It starts again on the same port: the same entry, protected again.
	pg2.start(t)
	waitLog(t, d, `"msg":"discovery: server back: protecting it again"`, `"database":"`+name+`"`)
	if res := psql2(true, "127.0.0.1", "delete from rediscover_t"); !strings.Contains(res.Stderr, codeBlocked) {
		t.Errorf("delete through interception after the restart: %s, want %s", res, codeBlocked)
	}
	st = stats(t, d)
	for _, db := range st.Databases {
		if db.Name == name && db.Denied != 3 {
			t.Errorf("fwctl stats after the restart: %s denied %d, want 3 (the entry and its counters kept)", name, db.Denied)
		}
	}
}

// rediscoverMariaDB starts a second MariaDB after sqlfwd and checks that a
// statement the default policy blocks is blocked on it, and never reaches
// its general log.
func rediscoverMariaDB(t *testing.T, d *daemon, cg string) {
	dir, err := os.MkdirTemp("", "sqlfw-my2-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	script := scriptPath("mariadb.sh")
	dir = filepath.Join(dir, "my")
	t.Cleanup(func() {
		runCmd(t, time.Minute, "", nil, "bash", script, "stop", "--dir", dir)
		os.RemoveAll(filepath.Dir(dir))
	})
	start := time.Now()
	if res := runCmd(t, 3*time.Minute, "", nil, "bash", script, "start", "--dir", dir, "--log-statements"); res.Exit != 0 {
		t.Fatalf("starting a second MariaDB: %s", res)
	}
	env := scriptEnv(t, "bash", script, "env", "--dir", dir)
	port, sock, glog := env["SQLFW_MY_PORT"], env["SQLFW_MY_SOCKET"], env["SQLFW_MY_LOG"]
	ready := time.Now()
	name := "mysql-" + port
	found := waitLog(t, d, `"msg":"discovery: found and protecting"`, `"database":"`+name+`"`)
	t.Logf("started in %s, found %s after it was ready", ready.Sub(start).Round(time.Millisecond), found.Round(time.Millisecond))
	cli := func(inCg bool, sql string, to ...string) psqlResult {
		a := []string{tool(t, "mariadb"), "--no-defaults", "-u", "root", "--skip-ssl", "-N", "-B"}
		a = append(append(a, to...), "-e", sql)
		if inCg {
			a = append(inCgroup(cg), a...)
		}
		return runCmd(t, time.Minute, "", nil, a[0], a[1:]...)
	}
	tcp := []string{"-h", "127.0.0.1", "-P", port, "--protocol=tcp"}
	if res := cli(false, "create database if not exists sqlfw; create table sqlfw.rd (id int); insert into sqlfw.rd values (1), (2)", tcp...); res.Exit != 0 {
		t.Fatalf("setting up the second MariaDB: %s", res)
	}
	for _, to := range [][]string{tcp, {"--socket=" + sock, "--protocol=socket"}} {
		// the mariadb client strips comments: the marker is a literal
		marker := "rediscover_" + randomHex(t)
		if res := cli(true, "select count(*), '"+marker+"_ok' from sqlfw.rd", to...); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "2\t"+marker+"_ok" {
			t.Errorf("%v: select through interception: %s, want 2", to, res)
		}
		if res := cli(true, "delete from sqlfw.rd", to...); !strings.Contains(res.Stderr, "ERROR 1227 (42000)") {
			t.Errorf("%v: delete through interception: %s, want ERROR 1227 (42000) from sqlfw", to, res)
		}
		sentinel := "sentinel_" + randomHex(t)
		cli(false, "select '"+sentinel+"'", tcp...)
		var log string
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log, sentinel) && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			b, _ := os.ReadFile(glog)
			log = string(b)
		}
		blocked := strings.Contains(strings.ToLower(log), "delete from sqlfw.rd")
		if !strings.Contains(log, marker+"_ok") || blocked {
			t.Errorf("%v: the general log %s has the allowed select: %v, the blocked delete: %v; want true, false", to, glog, strings.Contains(log, marker+"_ok"), blocked)
		}
	}
	if res := cli(false, "select count(*) from sqlfw.rd", tcp...); strings.TrimSpace(res.Stdout) != "2" {
		t.Errorf("rows after the blocked deletes: %s, want 2", res)
	}
	runCmd(t, time.Minute, "", nil, "bash", script, "stop", "--dir", dir)
	waitLog(t, d, `"msg":"discovery: server gone: no longer intercepting its addresses; open sessions end on their own"`, `"database":"`+name+`"`)
}

// secondPG is a PostgreSQL started by the test (scripts/pg.sh).
type secondPG struct {
	dir, script    string
	Port           int
	SockDir, Log   string
	ready, started time.Time
}

// startSecondPG starts a PostgreSQL 15 on a free port with
// log_statement=all, and stops and removes it when the test ends.
func startSecondPG(t *testing.T) *secondPG {
	t.Helper()
	dir, err := os.MkdirTemp("", "sqlfw-pg2-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // the postgres user works inside
	p := &secondPG{dir: filepath.Join(dir, "pg"), script: scriptPath("pg.sh")}
	t.Cleanup(func() {
		runCmd(t, time.Minute, "", nil, "bash", p.script, "stop", "--dir", p.dir)
		os.RemoveAll(dir)
	})
	p.start(t)
	env := scriptEnv(t, "bash", p.script, "env", "--dir", p.dir)
	p.Port, _ = strconv.Atoi(env["SQLFW_PG_PORT"])
	p.SockDir, p.Log = env["SQLFW_PG_SOCKDIR"], env["SQLFW_PG_LOG"]
	if p.Port == 0 || p.SockDir == "" {
		t.Fatalf("pg.sh env: %v", env)
	}
	return p
}

func (p *secondPG) start(t *testing.T) {
	t.Helper()
	p.started = time.Now()
	if res := runCmd(t, 3*time.Minute, "", nil, "bash", p.script, "start", "--dir", p.dir, "--log-statements"); res.Exit != 0 {
		t.Fatalf("starting a second PostgreSQL: %s", res)
	}
	p.ready = time.Now()
}

func (p *secondPG) stop(t *testing.T) {
	t.Helper()
	if res := runCmd(t, time.Minute, "", nil, "bash", p.script, "stop", "--dir", p.dir); res.Exit != 0 {
		t.Fatalf("stopping the second PostgreSQL: %s", res)
	}
}

// pgLogAfterSentinel sends a sentinel straight to the second server and
// returns its statement log once the sentinel is in it.
func pgLogAfterSentinel(t *testing.T, p *secondPG, run func(bool, string, string) psqlResult) string {
	t.Helper()
	sentinel := "sentinel_" + randomHex(t)
	run(false, "127.0.0.1", "select '"+sentinel+"'")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(p.Log)
		if strings.Contains(string(b), sentinel) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel never reached %s", p.Log)
		}
	}
}

// scriptPath is a script of scripts/ (the tests run in e2e/).
func scriptPath(name string) string {
	root, _ := filepath.Abs("..")
	return filepath.Join(root, "scripts", name)
}

// scriptEnv runs a script's env command and returns its exported variables.
func scriptEnv(t *testing.T, path string, args ...string) map[string]string {
	t.Helper()
	res := runCmd(t, 30*time.Second, "", nil, path, args...)
	if res.Exit != 0 {
		t.Fatalf("%s %v: %s", path, args, res)
	}
	out := map[string]string{}
	for _, f := range strings.Fields(strings.TrimPrefix(strings.TrimSpace(res.Stdout), "export ")) {
		if k, v, ok := strings.Cut(f, "="); ok {
			out[k] = strings.Trim(v, `'"`)
		}
	}
	return out
}

// waitLog waits until one line of the daemon's log holds every part and
// returns how long that took; the test fails after three intervals and 20 s.
func waitLog(t *testing.T, d *daemon, parts ...string) time.Duration {
	t.Helper()
	start := time.Now()
	for deadline := start.Add(3*rediscoverInterval + 20*time.Second); !logHas(d.log(), parts...); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("sqlfwd never logged %v:\n%s", parts, tail(d.log(), 30))
		}
	}
	return time.Since(start)
}

// statusOf returns a database's entry in fwctl status --json, or nil.
func statusOf(t *testing.T, d *daemon, name string) *control.DatabaseStatus {
	t.Helper()
	res := runToolPath(t, filepath.Join(binDir, "fwctl"), "status", "--json", "--control-socket", d.control)
	var st control.Status
	if res.Exit != 0 || json.Unmarshal([]byte(res.Stdout), &st) != nil {
		t.Fatalf("fwctl status --json: %s", res)
	}
	for i := range st.Databases {
		if st.Databases[i].Name == name {
			return &st.Databases[i]
		}
	}
	return nil
}

// TestRediscoveryWithConfig: a configuration with discovery.enabled and a
// configured database. Discovery leaves the configured server to its
// database, adds a server started later, keeps it across a reload
// (SIGHUP), and when that server stops the configured database is still
// protected.
func TestRediscoveryWithConfig(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	cfgPath := filepath.Join(t.TempDir(), "sqlfwd.yaml")
	cfg := fmt.Sprintf("discovery: {enabled: true, interval: %s}\ndatabases:\n  - name: suite\n    protocol: postgres\n    upstream: 127.0.0.1:%d\n    intercept: app-host\n",
		rediscoverInterval, pg.Port)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := startDiscovering(t, cg, "--config", cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	waitLog(t, d, `"msg":"discovery: not protected by discovery: postgres (pid`, "configured as database suite")
	if ds := statusOf(t, d, "postgres-"+strconv.Itoa(pg.Port)); ds != nil {
		t.Fatalf("discovery added the configured server as %+v", ds)
	}
	pg2 := startSecondPG(t)
	name := "postgres-" + strconv.Itoa(pg2.Port)
	waitLog(t, d, `"msg":"discovery: found and protecting"`, `"database":"`+name+`"`)
	blocked := func(port int, what string) {
		t.Helper()
		args := append(inCgroup(cg), tool(t, "psql"), "-X", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", pg.User, "-d", pg.Database,
			"-v", "VERBOSITY=verbose", "-Atc", "delete from rediscover_cfg_absent")
		if res := runCmd(t, time.Minute, "", nil, args[0], args[1:]...); !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("%s: delete through interception: %s, want %s", what, res, codeBlocked)
		}
	}
	blocked(pg.Port, "configured database")
	blocked(pg2.Port, "discovered database")

	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, d, `"msg":"policy reloaded"`, `"database":"`+name+`"`)
	waitLog(t, d, `"msg":"policy reloaded"`, `"database":"suite"`)
	if ds := statusOf(t, d, name); ds == nil || ds.State != "protected" {
		t.Fatalf("after the reload: %+v, want %s still protected", ds, name)
	}
	blocked(pg2.Port, "discovered database after the reload")

	pg2.stop(t)
	waitLog(t, d, `"msg":"discovery: server gone: no longer intercepting its addresses; open sessions end on their own"`, `"database":"`+name+`"`)
	if ds := statusOf(t, d, "suite"); ds == nil || ds.Discovered {
		t.Errorf("the configured database after the discovered server went: %+v", ds)
	}
	blocked(pg.Port, "configured database after the discovered server went")
}
