package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/control"
)

// TestZeroConfigAsServiceUser runs the unit's ExecStart as an operator
// would: as a user of its own with exactly the unit's capabilities, no
// configuration file, and servers running as their own users, each in a
// cgroup of its own as their units would be: MariaDB 10.11 as mysql on
// the mariadb client's default socket (/run/mysqld/mysqld.sock, from
// /etc/mysql/my.cnf), PostgreSQL 15 as postgres with its socket in psql's
// default directory (/var/run/postgresql). sqlfwd cannot read their fd
// links or network namespaces; it must still find both servers' TCP
// ports and unix sockets, and judge the mariadb client's and psql's
// default paths (a count answered and in MariaDB's general log, a
// WHERE-less DELETE blocked, absent from the general log, the rows kept).
// A root listener that is no database (the test's own) and a root process
// named mariadbd whose configuration names none of its ports (the issue's
// "mysql-2024") are never made databases; the latter's port is said: a
// WARN line, fwctl status "not protected: … because …" and its JSON,
// sqlfw_unprotected_paths, and systemd's STATUS. A reload (SIGHUP, and
// fwctl reload) as the unit's user keeps every path judged.
func TestZeroConfigAsServiceUser(t *testing.T) {
	needKernel(t)
	for _, b := range []string{"setpriv", "mariadbd", "mariadb-install-db", "mariadb", "python3"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("skipping: %s is not installed", b)
		}
	}
	for _, u := range []string{"mysql", "postgres"} {
		if _, err := user.Lookup(u); err != nil {
			t.Skipf("skipping: no %s user", u)
		}
	}
	if c, err := net.Dial("unix", "/run/mysqld/mysqld.sock"); err == nil {
		c.Close()
		t.Skip("skipping: a MariaDB already listens on /run/mysqld/mysqld.sock")
	}
	cg := childCgroup(t) // the clients'
	my := startMariaDBAsMysql(t, siblingCgroup(t, cg, "mariadb"))
	pgs := startPGAsPostgres(t, siblingCgroup(t, cg, "postgresql"))

	// a root listener that is no database, in the test's cgroup
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plainPort := plain.Addr().(*net.TCPAddr).Port
	// a root process named mariadbd listening on a port its configuration
	// (the defaults: 3306) does not name, beside another process in its
	// cgroup (so neither its user nor its cgroup runs servers only)
	fakePid, fakePort := startFakeMariadbd(t, siblingCgroup(t, cg, "fake"))

	notify := notifySocket(t)
	metricsPort, _ := freePort()
	d, err := startDiscoveringWrapped(t, append(inCgroup(cg), unitWrap(t)...), cg, []string{"NOTIFY_SOCKET=" + notify.path},
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", metricsPort))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	t.Logf("sqlfwd credentials:\n%s", grepLines(string(b), "Uid:", "CapEff:", "CapAmb:"))
	log := d.log()
	myName, pgName := fmt.Sprintf("mysql-%d", my.port), fmt.Sprintf("postgres-%d", pgs.port)
	pgSock := fmt.Sprintf("/var/run/postgresql/.s.PGSQL.%d", pgs.port)
	if !logHas(log, `"msg":"discovery: found and protecting"`, `"database":"`+myName+`"`, `"unix_socket":"/run/mysqld/mysqld.sock"`) {
		t.Errorf("as the unit's user, MariaDB (as mysql) and its socket were not found:\n%s", tail(log, 30))
	}
	if !logHas(log, `"msg":"discovery: found and protecting"`, `"database":"`+pgName+`"`, `"unix_socket":"`+pgSock+`"`) {
		t.Errorf("as the unit's user, PostgreSQL (as postgres) and its socket were not found:\n%s", tail(log, 30))
	}
	for _, p := range []int{plainPort, fakePort} {
		for _, n := range []string{"mysql", "postgres"} {
			if strings.Contains(log, fmt.Sprintf(`"database":"%s-%d"`, n, p)) {
				t.Errorf("port %d, no database, became %s-%d:\n%s", p, n, p, tail(log, 30))
			}
		}
	}
	fakeNote := fmt.Sprintf("not protected: mysql (pid %d, mariadbd): 127.0.0.1:%d because", fakePid, fakePort)
	if !logHas(log, `"level":"WARN"`, `"msg":"discovery: `+fakeNote) {
		t.Errorf("no WARN line for the port the root mariadbd may hold (%s):\n%s", fakeNote, tail(log, 30))
	}
	// (a root mariadbd of the test's own cgroup that nothing proves a
	// socket of, another run's, may name it as one it cannot prove)
	if logHas(log, "found and protecting", fmt.Sprintf("127.0.0.1:%d", plainPort)) {
		t.Errorf("the root listener of port %d is protected as a database:\n%s", plainPort, tail(log, 30))
	}

	// the status, its JSON, the metric and systemd's STATUS say it
	fwctl := filepath.Join(binDir, "fwctl")
	if res := runToolPath(t, fwctl, "status", "--control-socket", d.control); res.Exit != 0 || !strings.Contains(res.Stdout, fakeNote) ||
		!strings.Contains(res.Stdout, myName) || !strings.Contains(res.Stdout, pgName) {
		t.Errorf("fwctl status does not list both servers and say %q:\n%s", fakeNote, res)
	}
	res := runToolPath(t, fwctl, "status", "--json", "--control-socket", d.control)
	var st control.Status
	if err := json.Unmarshal([]byte(res.Stdout), &st); err != nil || st.Discovery == nil {
		t.Fatalf("fwctl status --json: %v\n%s", err, res)
	}
	if !containsPrefix(st.Discovery.NotProtected, fakeNote) || st.Discovery.Unprotected < 1 {
		t.Errorf("status JSON: unprotected_paths %d, not_protected %q; want %q", st.Discovery.Unprotected, st.Discovery.NotProtected, fakeNote)
	}
	if v := scrape(t, metricsPort, "sqlfw_unprotected_paths"); v != float64(st.Discovery.Unprotected) {
		t.Errorf("sqlfw_unprotected_paths %v, want %d as in the status", v, st.Discovery.Unprotected)
	}
	if m := notify.wait(t, "READY=1"); !strings.Contains(m, "path(s) to servers NOT protected") {
		t.Errorf("systemd READY STATUS does not say what is unprotected: %q", m)
	}

	// the default paths, judged
	judged := func(when string) {
		t.Helper()
		table := "zc_" + randomHex(t)
		my.exec(t, "create table zcdb."+table+" (id int); insert into zcdb."+table+" values (1), (2), (3)")
		defer my.exec(t, "drop table zcdb."+table)
		sel := "select count(*) from " + table + " where id > 0"
		if res := my.client(t, cg, sel); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
			t.Errorf("%s: mariadb (default socket) %q: %s, want 3", when, sel, res)
		}
		del := "delete from " + table
		if res := my.client(t, cg, del); !strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stderr, "sqlfw:") {
			t.Errorf("%s: mariadb (default socket) %q: %s, want sqlfw's ERROR 1227", when, del, res)
		}
		// the same socket by its other name (/var/run links to /run)
		if res := my.client(t, cg, "--socket=/var/run/mysqld/mysqld.sock", del); !strings.Contains(res.Stderr, "ERROR 1227 (42000)") {
			t.Errorf("%s: mariadb -S /var/run/mysqld/mysqld.sock %q: %s, want sqlfw's ERROR 1227", when, del, res)
		}
		glog := my.generalLog(t)
		if !strings.Contains(glog, sel) || strings.Contains(glog, del) {
			t.Errorf("%s: MariaDB's general log: the select there %v (want true), the delete there %v (want false)", when, strings.Contains(glog, sel), strings.Contains(glog, del))
		}
		if n := my.exec(t, "select count(*) from zcdb."+table); strings.TrimSpace(n) != "3" {
			t.Errorf("%s: rows left %q, want 3", when, n)
		}
		pgs.exec(t, "create table "+table+" (id int); insert into "+table+" values (1), (2), (3)")
		defer pgs.exec(t, "drop table "+table)
		if res := pgs.psqlDefault(t, cg, sel); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
			t.Errorf("%s: psql (default socket directory) %q: %s, want 3", when, sel, res)
		}
		if res := pgs.psqlDefault(t, cg, del); !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("%s: psql (default socket directory) %q: %s, want %s", when, del, res, codeBlocked)
		}
		if res := pgs.psqlDefault(t, cg, del, "-h", "/run/postgresql"); !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("%s: psql -h /run/postgresql %q: %s, want %s", when, del, res, codeBlocked)
		}
		if n := pgs.exec(t, "select count(*) from "+table); strings.TrimSpace(n) != "3" {
			t.Errorf("%s: PostgreSQL rows left %q, want 3", when, n)
		}
	}
	judged("at start")

	// the root listener of another cgroup is reached directly, not
	// through sqlfwd
	got := make(chan string, 1)
	go func() {
		c, err := plain.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		got <- line
	}()
	py := fmt.Sprintf("import socket; s=socket.create_connection(('127.0.0.1', %d)); s.sendall(b'zc-hello\\n'); s.close()", plainPort)
	if res := runCmd(t, 30*time.Second, "", nil, "sh", append(inCgroup(cg)[1:], "python3", "-c", py)...); res.Exit != 0 {
		t.Errorf("connecting to the root listener from the clients' cgroup: %s", res)
	}
	if line := <-got; line != "zc-hello\n" {
		t.Errorf("the root listener got %q, want the client's line (not intercepted)", line)
	}

	// reload as the unit's user, by signal and by fwctl
	before := strings.Count(d.log(), `"msg":"policy reloaded"`)
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for i := 0; strings.Count(d.log(), `"msg":"policy reloaded"`) == before; i++ {
		if i > 200 {
			t.Fatalf("no reload logged after SIGHUP:\n%s", tail(d.log(), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res := runToolPath(t, fwctl, "reload", "--control-socket", d.control); res.Exit != 0 {
		t.Errorf("fwctl reload as root against the unit's user's sqlfwd: %s", res)
	}
	if m := notify.wait(t, "READY=1"); m == "" {
		t.Error("no READY after the reload")
	}
	judged("after two reloads")

	// the operator writes the configuration file the unit names after a
	// start without one: a reload checks it (a broken one refused at its
	// line and column, by fwctl reload and SIGHUP alike), a valid one is
	// named as in force only after a restart; discovery's databases stay
	cfgPath := filepath.Join(filepath.Dir(d.control), "absent.yaml")
	os.WriteFile(cfgPath, []byte("log_level: \"debug\n"), 0o644)
	at := cfgPath + ":1:12: the value quoted with"
	if res := runToolPath(t, fwctl, "reload", "--control-socket", d.control); res.Exit == 0 || !strings.Contains(res.Stderr, at) {
		t.Errorf("fwctl reload of a broken file written after a start without one: %s; want non-zero and %q", res, at)
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for i := 0; strings.Count(d.log(), at) < 2; i++ {
		if i > 200 {
			t.Fatalf("SIGHUP with the broken file logged no %q:\n%s", at, tail(d.log(), 5))
		}
		time.Sleep(50 * time.Millisecond)
	}
	os.WriteFile(cfgPath, []byte("log_level: debug\ndatabases:\n  - name: pg\n    protocol: postgres\n    listen: 127.0.0.1:1\n    upstream: 127.0.0.1:2\n"), 0o644)
	if res := runToolPath(t, fwctl, "reload", "--control-socket", d.control); res.Exit != 0 || !strings.Contains(res.Stdout, "in force only after a restart of sqlfwd: the whole file") {
		t.Errorf("fwctl reload of a valid file written after a start without one: %s; want exit 0 naming it as needing a restart", res)
	}
	if res := runToolPath(t, fwctl, "status", "--control-socket", d.control); !strings.Contains(res.Stdout, "none when sqlfwd started") || !strings.Contains(res.Stdout, "in force only after a restart") {
		t.Errorf("fwctl status does not say the file written since is not in force:\n%s", res.Stdout)
	}
	judged("with a file written since")
}

// unitUser is a command prefix that runs the rest as the unit's user
// (name, sqlfw-e2e, created for the test run) with exactly the unit's
// AmbientCapabilities (caps, as setpriv spells them), as systemd would
// grant them.
func unitUser(t *testing.T) (wrap []string, name, caps string) {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("skipping: setpriv (util-linux) is not installed")
	}
	name = "sqlfw-e2e"
	ensureSystemUser(t, name)
	var list []string
	for _, c := range unitCaps(t, "../deploy/sqlfwd.service") {
		list = append(list, "+"+strings.ToLower(strings.TrimPrefix(c, "CAP_")))
	}
	caps = strings.Join(list, ",")
	return []string{setpriv, "--reuid=" + name, "--regid=" + name, "--clear-groups",
		"--inh-caps=" + caps, "--ambient-caps=" + caps, "--bounding-set=-all," + caps}, name, caps
}

func unitWrap(t *testing.T) []string {
	w, _, _ := unitUser(t)
	return w
}

// siblingCgroup is a cgroup2 directory beside cg (a unit's own, for a
// server), removed when the test ends.
func siblingCgroup(t *testing.T, cg, name string) string {
	t.Helper()
	return makeCgroup(t, filepath.Dir(cg), cg+"-"+name)
}

// mysqlServer is a MariaDB run by the mysql user on the default socket.
type mysqlServer struct {
	dir  string
	port int
	sock string // its unix socket
	pid  int
}

const defaultMySQLSocket = "/run/mysqld/mysqld.sock"

func startMariaDBAsMysql(t *testing.T, cg string, extra ...string) *mysqlServer {
	t.Helper()
	return startMariaDBAsMysqlAt(t, cg, defaultMySQLSocket, extra...)
}

// startMariaDBAsMysqlAt is startMariaDBAsMysql with its socket at sock
// (given on its command line unless it is my.cnf's default).
func startMariaDBAsMysqlAt(t *testing.T, cg, sock string, extra ...string) *mysqlServer {
	t.Helper()
	dir, err := os.MkdirTemp("", "sqlfw-zcmy-")
	if err != nil {
		t.Fatal(err)
	}
	s := &mysqlServer{dir: dir, sock: sock}
	s.port, _ = freePort()
	os.Chmod(dir, 0o755)
	if out, err := exec.Command("chown", "mysql:mysql", dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	if _, err := os.Stat("/run/mysqld"); err != nil {
		// the package's tmpfiles make it at boot; a fresh CI host may lack it
		if err := os.Mkdir("/run/mysqld", 0o755); err != nil {
			t.Fatal(err)
		}
		exec.Command("chown", "mysql:root", "/run/mysqld").Run()
		t.Cleanup(func() { os.Remove("/run/mysqld") })
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--user=mysql", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	// my.cnf's defaults (the socket among them), as the packaged unit runs it
	args := append(inCgroup(cg), "mariadbd", "--user=mysql", "--datadir="+data, fmt.Sprintf("--port=%d", s.port),
		"--bind-address=127.0.0.1", "--pid-file="+filepath.Join(dir, "pid"), "--log-error="+filepath.Join(dir, "error.log"),
		"--general-log=1", "--general-log-file="+filepath.Join(dir, "general.log"), "--skip-log-bin",
		"--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0")
	if sock != defaultMySQLSocket {
		args = append(args, "--socket="+sock)
	}
	args = append(args, extra...)
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.pid = cmd.Process.Pid // inCgroup's sh execs mariadbd
	t.Cleanup(func() {
		exec.Command("mariadb-admin", "--no-defaults", "--socket="+sock, "-uroot", "shutdown").Run()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		os.RemoveAll(dir)
	})
	for i := 0; ; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if i > 240 {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("MariaDB as mysql did not come up:\n%s", tail(string(b), 20))
		}
		time.Sleep(250 * time.Millisecond)
	}
	s.exec(t, "create database zcdb; create user zc@localhost identified by 'zcpw'; grant all on zcdb.* to zc@localhost")
	return s
}

// exec runs sql as root, directly (this process is not intercepted).
func (s *mysqlServer) exec(t *testing.T, sql string) string {
	t.Helper()
	res := runCmd(t, time.Minute, "", nil, tool(t, "mariadb"), "--no-defaults", "--socket="+s.sock, "-uroot", "-N", "-B", "-e", sql)
	if res.Exit != 0 {
		t.Fatalf("mariadb (direct) %q: %s", sql, res)
	}
	return res.Stdout
}

// client runs the mariadb client from cg with its defaults (my.cnf's
// socket, no host), the path a local user takes, or with the options
// before the statement.
func (s *mysqlServer) client(t *testing.T, cg string, sqlAndArgs ...string) psqlResult {
	t.Helper()
	sql := sqlAndArgs[len(sqlAndArgs)-1]
	args := append(inCgroup(cg)[1:], tool(t, "mariadb"))
	args = append(append(args, sqlAndArgs[:len(sqlAndArgs)-1]...), "-uzc", "-pzcpw", "zcdb", "-N", "-B", "-e", sql)
	return runCmd(t, time.Minute, "", nil, "sh", args...)
}

func (s *mysqlServer) generalLog(t *testing.T) string {
	t.Helper()
	s.exec(t, "flush general logs")
	b, err := os.ReadFile(filepath.Join(s.dir, "general.log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pgServer is a PostgreSQL 15 run by the postgres user with its socket in
// /var/run/postgresql.
type pgServer struct {
	dir  string
	port int
	host string // how the test reaches it directly: 127.0.0.1, or the socket directory
}

// startPGAsPostgres starts it; extra are the server's options after the
// test's own (a later -c wins: "-c", "listen_addresses=" leaves it the
// socket alone).
func startPGAsPostgres(t *testing.T, cg string, extra ...string) *pgServer {
	t.Helper()
	bin := "/usr/lib/postgresql/15/bin"
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		t.Skip("skipping: no PostgreSQL 15 in " + bin)
	}
	if fi, err := os.Stat("/var/run/postgresql"); err != nil || !fi.IsDir() {
		t.Skip("skipping: no /var/run/postgresql")
	}
	dir, err := os.MkdirTemp("", "sqlfw-zcpg-")
	if err != nil {
		t.Fatal(err)
	}
	s := &pgServer{dir: dir, host: "127.0.0.1"}
	if slices.Contains(extra, "listen_addresses=") {
		s.host = "/var/run/postgresql"
	}
	s.port, _ = freePort()
	os.Chmod(dir, 0o755)
	exec.Command("chown", "postgres:postgres", dir).Run()
	data := filepath.Join(dir, "data")
	asPG := []string{"setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"}
	initdb := append(append([]string{}, asPG...), filepath.Join(bin, "initdb"), "-D", data, "--auth=trust", "-U", "postgres")
	cmd := exec.Command(initdb[0], initdb[1:]...)
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	args := append(append(inCgroup(cg), asPG...), filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=/var/run/postgresql", "-c", "fsync=off",
		"-c", "log_statement=all")
	args = append(args, extra...)
	srv := exec.Command(args[0], args[1:]...)
	srv.Dir, srv.Stdout, srv.Stderr = "/", logf, logf
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGINT) // fast shutdown
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			srv.Process.Kill()
			<-done
		}
		logf.Close()
		os.RemoveAll(dir)
	})
	sock := fmt.Sprintf("/var/run/postgresql/.s.PGSQL.%d", s.port)
	for i := 0; ; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if i > 120 {
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Fatalf("PostgreSQL as postgres did not come up:\n%s", tail(string(b), 20))
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // past "database system is starting up"
	return s
}

// exec runs sql directly (this process is not intercepted).
func (s *pgServer) exec(t *testing.T, sql string) string {
	t.Helper()
	res := runCmd(t, time.Minute, "", nil, tool(t, "psql"), "-X", "-h", s.host, "-p", strconv.Itoa(s.port), "-U", "postgres", "-d", "postgres", "-Atc", sql)
	if res.Exit != 0 {
		t.Fatalf("psql (direct) %q: %s", sql, res)
	}
	return res.Stdout
}

// psqlDefault runs psql from cg with no host: its default socket
// directory, /var/run/postgresql, at the server's port (PGPORT).
func (s *pgServer) psqlDefault(t *testing.T, cg, sql string, extra ...string) psqlResult {
	t.Helper()
	args := append(append(inCgroup(cg)[1:], tool(t, "psql"), "-X"), extra...)
	args = append(args, "-U", "postgres", "-d", "postgres", "-v", "VERBOSITY=verbose", "-Atc", sql)
	return runCmd(t, time.Minute, "", []string{"PGPORT=" + strconv.Itoa(s.port)}, "sh", args...)
}

// startFakeMariadbd runs, as root in cg, python3 under the name mariadbd
// listening on a loopback port, beside a sleep; it returns its pid and
// port.
func startFakeMariadbd(t *testing.T, cg string) (int, int) {
	t.Helper()
	dir := t.TempDir()
	// the system's python, not a version manager's shim (which would
	// dispatch on the name)
	py, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Skip("skipping: no /usr/bin/python3")
	}
	// the process's comm is the link's name; python finds its library
	// through the link
	fake := filepath.Join(dir, "mariadbd")
	if err := os.Symlink(py, fake); err != nil {
		t.Fatal(err)
	}
	script := "import socket,sys,time\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen()\nprint(s.getsockname()[1], flush=True)\ntime.sleep(3600)\n"
	args := append(inCgroup(cg), fake, "-c", script)
	cmd := exec.Command(args[0], args[1:]...)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sh", append(inCgroup(cg)[1:], "sleep", "3600")...)
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		sleeper.Process.Kill()
		sleeper.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	port, err2 := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || err2 != nil {
		t.Fatalf("the fake mariadbd said %q: %v %v", line, err, err2)
	}
	return cmd.Process.Pid, port
}

// notifyListener is a NOTIFY_SOCKET standing for systemd.
type notifyListener struct {
	path string
	mu   sync.Mutex
	msgs []string
	c    *net.UnixConn
}

func notifySocket(t *testing.T) *notifyListener {
	t.Helper()
	dir, err := os.MkdirTemp("", "sqlfw-notify-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	n := &notifyListener{path: filepath.Join(dir, "notify.sock")}
	n.c, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: n.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(n.path, 0o777)
	t.Cleanup(func() { n.c.Close(); os.RemoveAll(dir) })
	go func() {
		buf := make([]byte, 4096)
		for {
			k, err := n.c.Read(buf)
			if err != nil {
				return
			}
			n.mu.Lock()
			n.msgs = append(n.msgs, string(buf[:k]))
			n.mu.Unlock()
		}
	}()
	return n
}

// wait returns (and consumes) the first message with part, failing after
// 20 s.
func (n *notifyListener) wait(t *testing.T, part string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		n.mu.Lock()
		for i, m := range n.msgs {
			if strings.Contains(m, part) {
				n.msgs = append(n.msgs[:i], n.msgs[i+1:]...)
				n.mu.Unlock()
				return m
			}
		}
		n.mu.Unlock()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	t.Errorf("no notify message with %q; got %q", part, n.msgs)
	return ""
}

// scrape reads one unlabelled metric from sqlfwd's /metrics.
func scrape(t *testing.T, port int, name string) float64 {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// TestSecondListenerAsServiceUser: two daemons started as the unit's user
// with an explicit listener on the same address: the second exits 1
// naming the first, which keeps serving (the address is the lock; with
// reuse_port on both they would share it).
func TestSecondListenerAsServiceUser(t *testing.T) {
	needPG(t)
	wrap := unitWrap(t)
	ctl, err := os.MkdirTemp("", "sqlfw-svclisten-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ctl) })
	os.Chmod(ctl, 0o777)
	first, err := startDaemonWrapped(wrap, "--control-socket", filepath.Join(ctl, "1.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.stop() })
	log, code := runToEndWrapped(t, wrap, "--listen", first.addr, "--control-socket", filepath.Join(ctl, "2.sock"))
	want := fmt.Sprintf("%s is already in use by sqlfwd pid %d", first.addr, first.cmd.Process.Pid)
	if code != 1 || !strings.Contains(log, want) {
		t.Errorf("a second sqlfwd on %s: exit %d, log:\n%s\nwant exit 1 and %q", first.addr, code, tail(log, 5), want)
	}
	freshTable(t, "zc_listen", 1, 2)
	host, port, _ := net.SplitHostPort(first.addr)
	if res := runTool(t, time.Minute, "", nil, "psql", "-X", "-h", host, "-p", port, "-U", pg.User, "-d", pg.Database,
		"-v", "VERBOSITY=verbose", "-c", "delete from zc_listen"); !strings.Contains(res.Stderr, codeBlocked) {
		t.Errorf("the first sqlfwd after the refused second: %s, want %s", res, codeBlocked)
	}
	if got := directInts(t, "select count(*) from zc_listen"); got[0] != 2 {
		t.Errorf("rows %v, want 2", got)
	}
}

// TestZeroConfigTwoMariaDBOneUser: two MariaDB servers run by mysql in one
// cgroup (neither the user nor the cgroup tells them apart), sqlfwd as the
// unit's user with no configuration. Each port and socket goes to the
// server whose command line or my.cnf names it, never to the lower pid;
// a WHERE-less DELETE through each server's socket is blocked and absent
// from that server's general log. Before, the lower pid took both ports
// and both sockets and the second socket was dropped: its DELETE ran.
func TestZeroConfigTwoMariaDBOneUser(t *testing.T) {
	needKernel(t)
	for _, b := range []string{"setpriv", "mariadbd", "mariadb-install-db", "mariadb"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("skipping: %s is not installed", b)
		}
	}
	if _, err := user.Lookup("mysql"); err != nil {
		t.Skip("skipping: no mysql user")
	}
	if c, err := net.Dial("unix", defaultMySQLSocket); err == nil {
		c.Close()
		t.Skip("skipping: a MariaDB already listens on " + defaultMySQLSocket)
	}
	cg := childCgroup(t) // the clients'
	srvCg := siblingCgroup(t, cg, "mariadb")
	first := startMariaDBAsMysql(t, srvCg)
	second := startMariaDBAsMysqlAt(t, srvCg, "/run/mysqld/second.sock")

	d, err := startDiscoveringWrapped(t, append(inCgroup(cg), unitWrap(t)...), cg, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := d.log()
	for _, s := range []*mysqlServer{first, second} {
		server := fmt.Sprintf("mysql (pid %d, mariadbd) on 127.0.0.1:%d %s", s.pid, s.port, s.sock)
		if !logHas(log, `"msg":"discovery: found and protecting"`, fmt.Sprintf(`"database":"mysql-%d"`, s.port), `"server":"`+server+`"`, `"unix_socket":"`+s.sock+`"`) {
			t.Errorf("no 'found and protecting' of %s:\n%s", server, tail(log, 30))
		}
	}
	for _, s := range []*mysqlServer{first, second} {
		table := "two_" + randomHex(t)
		s.exec(t, "create table zcdb."+table+" (id int); insert into zcdb."+table+" values (1), (2), (3)")
		sel := "select count(*) from " + table + " where id > 0"
		if res := s.client(t, cg, "--socket="+s.sock, sel); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
			t.Errorf("mariadb -S %s %q: %s, want 3", s.sock, sel, res)
		}
		del := "delete from " + table
		if res := s.client(t, cg, "--socket="+s.sock, del); !strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stderr, "sqlfw:") {
			t.Errorf("mariadb -S %s %q: %s, want sqlfw's ERROR 1227", s.sock, del, res)
		}
		glog := s.generalLog(t)
		if !strings.Contains(glog, sel) || strings.Contains(glog, del) {
			t.Errorf("%s: general log has the select %v (want true), the delete %v (want false)", s.sock, strings.Contains(glog, sel), strings.Contains(glog, del))
		}
		if n := s.exec(t, "select count(*) from zcdb."+table); strings.TrimSpace(n) != "3" {
			t.Errorf("%s: rows left %q, want 3", s.sock, n)
		}
	}
}
