package e2e

// Tested as the unit runs sqlfwd (issue 23 items 1, 5 and 6): its own user
// with exactly the unit's capabilities, in a child cgroup: a server in a
// network namespace it cannot read, the per-host log bound, and the
// control socket's idle connections.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sqlfw/sqlfw/control"
)

// TestLogBoundAsServiceUser: clients that open one connection per
// statement, hundreds of blocked DELETEs a second from 16 at once, get a
// bounded number of block lines (a burst of 10, then one per 5 s of the
// run), and the rest is counted in the summary at shutdown; every
// session's DELETE was refused and never reached PostgreSQL. Each block
// line names the process, application_name, user and database, not the
// statement.
func TestLogBoundAsServiceUser(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	freshTable(t, "unit_bound_t", 1, 2)
	d := startInterceptingWrapped(t, cg, unitWrap(t))
	enterCgroup(t, cg) // this test's connects are the clients'

	const sessions, workers = 1000, 16
	var next, blocked atomic.Int64
	var mu sync.Mutex
	var other []string
	began := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= sessions {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				err := func() error {
					c, err := pgx.Connect(ctx, dsn(pg.Host, pg.Port, pg.User, "application_name=unit-bound"))
					if err != nil {
						return err
					}
					defer c.Close(ctx)
					_, err = c.Exec(ctx, "delete from unit_bound_t", pgx.QueryExecModeSimpleProtocol)
					return err
				}()
				cancel()
				var pe *pgconn.PgError
				if errors.As(err, &pe) && pe.Code == codeBlocked {
					blocked.Add(1)
					continue
				}
				mu.Lock()
				other = append(other, fmt.Sprint(err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	t.Logf("%d sessions, one blocked DELETE each, in %v (%.0f/s, %d clients, this shared machine)", sessions, elapsed, float64(sessions)/elapsed.Seconds(), workers)
	if len(other) > 0 {
		t.Fatalf("%d sessions not refused with %s, first: %s", len(other), codeBlocked, other[0])
	}
	if code, err := d.signal(syscall.SIGTERM, 15*time.Second); err != nil || code != 0 {
		t.Fatalf("sqlfwd after SIGTERM: exit %d, %v", code, err)
	}
	lines, suppressed := 0, 0
	comm := filepath.Base(os.Args[0])
	if len(comm) > 15 {
		comm = comm[:15] // the kernel's TASK_COMM_LEN
	}
	for _, l := range strings.Split(d.log(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch m["msg"] {
		case "statement blocked":
			lines++
			p, _ := m["process"].(map[string]any)
			if p == nil || p["comm"] != comm || m["application_name"] != "unit-bound" || m["user"] != pg.User || m["db"] != pg.Database {
				t.Errorf("block line without the process (comm %s), application_name, user %s and db %s: %s", comm, pg.User, pg.Database, l)
			}
			if strings.Contains(l, "unit_bound_t") {
				t.Errorf("block line carries the statement's text: %s", l)
			}
		case "suppressed similar log lines":
			if m["kind"] == "blocked" && m["reason"] == "no-unfiltered-writes" {
				n, _ := m["suppressed"].(float64)
				suppressed += int(n)
			}
		}
	}
	most := 10 + int(elapsed/(5*time.Second)) + 1
	t.Logf("%d block lines, %d counted in the summary (at most %d lines allowed)", lines, suppressed, most)
	if lines+suppressed != sessions || lines > most {
		t.Errorf("%d block lines and %d counted as suppressed for %d blocked sessions in %v: want all %d accounted for, at most %d lines:\n%s",
			lines, suppressed, blocked.Load(), elapsed, sessions, most, tail(d.log(), 20))
	}
	if got := directInts(t, "select count(*) from unit_bound_t"); got[0] != 2 {
		t.Errorf("rows: %v, want 2", got)
	}
	if n := strings.Count(serverLog(t), "delete from unit_bound_t"); n != 0 {
		t.Errorf("PostgreSQL's statement log has the refused DELETE %d times", n)
	}
}

// TestControlIdleAsServiceUser: 500 connections to the control socket of
// sqlfwd run as the unit's user, silent, stopped in the middle of a
// request's header, or after a header whose body never comes, do not lock
// fwctl out: fwctl status, stats
// and connections are served each time, and the server closes the idle
// ones to make room (at most 64 stay open).
func TestControlIdleAsServiceUser(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	d := startInterceptingWrapped(t, cg, unitWrap(t))
	fwctl := filepath.Join(binDir, "fwctl")
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := 0; i < 500; i++ {
		c, err := net.Dial("unix", d.control)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		req := ""
		switch i % 3 {
		case 1: // a request that never finishes its header
			req = "GET /v1/status HTTP/1.1\r\nHost: sqlfwd\r\n"
		case 2: // a header whose body never comes
			req = "POST /v1/mode?database=x&mode=monitor HTTP/1.1\r\nHost: sqlfwd\r\nContent-Length: 100000\r\n\r\n"
		}
		if _, err := c.Write([]byte(req)); req != "" && err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		idle = append(idle, c)
	}
	for round := 0; round < 3; round++ {
		for _, args := range [][]string{{"status"}, {"stats"}, {"connections"}} {
			res := runToolPath(t, fwctl, append(args, "--control-socket", d.control)...)
			if res.Exit != 0 || strings.TrimSpace(res.Stdout) == "" {
				t.Errorf("round %d: fwctl %s behind 500 idle control connections: %s", round, args[0], res)
			}
		}
	}
	// the server closed the idle ones past its bound
	closed := 0
	buf := make([]byte, 4096)
	for _, c := range idle {
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		for { // an answer (408, 400) may come before the close
			if _, err := c.Read(buf); err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					closed++
				}
				break
			}
		}
	}
	if open := len(idle) - closed; open > 64 {
		t.Errorf("%d of the 500 idle control connections still open, want at most 64", open)
	}
	if res := runToolPath(t, fwctl, "status", "--control-socket", d.control); res.Exit != 0 || strings.TrimSpace(res.Stdout) == "" {
		t.Errorf("fwctl status after: %s", res)
	}
}

// TestZeroConfigUnreadableNetnsAsServiceUser: a server (a process named
// mariadbd, run as mysql) in a network namespace of its own, which sqlfwd
// as the unit's user cannot read, listens there on port P and on the unix
// socket its command line names (--socket, a file here); on the host a
// root listener that is no database holds P too. The socket, reached
// through its file from this namespace, is said by its path. sqlfwd never takes the
// server's namespace for its own: no database is made of it or of P (a
// client in the clients' cgroup reaches the host's listener directly),
// and what it cannot protect is said: a WARN line "not protected: … because
// …" naming the other namespace, fwctl status and its JSON, the metric and
// systemd's STATUS.
func TestZeroConfigUnreadableNetnsAsServiceUser(t *testing.T) {
	needKernel(t)
	for _, b := range []string{"setpriv", "unshare", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("skipping: %s is not installed", b)
		}
	}
	if _, err := user.Lookup("mysql"); err != nil {
		t.Skip("skipping: no mysql user")
	}
	py, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Skip("skipping: no /usr/bin/python3")
	}
	cg := childCgroup(t)
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	port := plain.Addr().(*net.TCPAddr).Port

	// the server: its comm is the link's name (mariadbd)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	fake := filepath.Join(dir, "mariadbd")
	if err := os.Symlink(py, fake); err != nil {
		t.Fatal(err)
	}
	// and a unix socket its command line names, in a directory of this
	// mount namespace: bound in the server's network namespace, its file
	// is reached from any
	sockDir, err := os.MkdirTemp("", "sqlfw-netns-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	os.Chmod(sockDir, 0o755)
	if out, err := exec.Command("chown", "mysql", sockDir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	sock := filepath.Join(sockDir, "mysqld.sock")
	setpriv, _ := exec.LookPath("setpriv")
	script := fmt.Sprintf("import os,socket,threading,time\ns=socket.socket()\ns.bind(('127.0.0.1',%d))\ns.listen()\n"+
		"u=socket.socket(socket.AF_UNIX)\nu.bind(%q)\nos.chmod(%q,0o777)\nu.listen()\n"+
		"def serve():\n  while True:\n    c,_=u.accept(); c.sendall(b'the server in its namespace\\n'); c.close()\n"+
		"threading.Thread(target=serve,daemon=True).start()\nprint('ready', flush=True)\ntime.sleep(3600)\n", port, sock, sock)
	args := append(inCgroup(siblingCgroup(t, cg, "netns")), "unshare", "--net", "sh", "-c", `ip link set lo up && exec "$0" "$@"`,
		setpriv, "--reuid=mysql", "--regid=mysql", "--clear-groups", fake, "-c", script, "--socket="+sock)
	srv := exec.Command(args[0], args[1:]...)
	out, _ := srv.StdoutPipe()
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the server in its network namespace said %q: %v", line, err)
	}
	pid := srv.Process.Pid // sh, unshare and setpriv each exec the next
	own, _ := os.Readlink("/proc/self/ns/net")
	theirs, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil || theirs == own {
		t.Fatalf("the server's network namespace %q (%v), want another than %q", theirs, err, own)
	}

	notify := notifySocket(t)
	metricsPort, _ := freePort()
	d, err := startDiscoveringWrapped(t, append(inCgroup(cg), unitWrap(t)...), cg, []string{"NOTIFY_SOCKET=" + notify.path},
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", metricsPort))
	if err != nil {
		t.Fatal(err)
	}
	log := d.log()
	note := fmt.Sprintf("not protected: mysql (pid %d, mariadbd): its listeners because", pid)
	if !logHas(log, `"level":"WARN"`, `"msg":"discovery: `+note, "another network namespace") {
		t.Errorf("no WARN line %q naming another network namespace:\n%s", note, tail(log, 30))
	}
	// the socket its command line names is said by its path: clients
	// here reach it unjudged
	sockNote := fmt.Sprintf("not protected: mysql (pid %d, mariadbd): %s because its configuration names it", pid, sock)
	if !logHas(log, `"level":"WARN"`, `"msg":"discovery: `+sockNote, "bound in another network namespace") {
		t.Errorf("no WARN line %q:\n%s", sockNote, tail(log, 30))
	}
	if res := runCmd(t, 30*time.Second, "", nil, "sh", append(inCgroup(cg)[1:], "python3", "-c",
		fmt.Sprintf("import socket; s=socket.socket(socket.AF_UNIX); s.connect(%q); print(s.recv(100).decode(), end='')", sock))...); !strings.Contains(res.Stdout, "the server in its namespace") {
		t.Errorf("a client here connecting to %s: %s; want the server's answer (reached, as said, unjudged)", sock, res)
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "found and protecting") && (strings.Contains(l, fmt.Sprintf(`"pid":%d`, pid)) || strings.Contains(l, fmt.Sprintf(":%d", port))) {
			t.Errorf("the server in another namespace, or port %d, made a database: %s", port, l)
		}
	}
	fwctl := filepath.Join(binDir, "fwctl")
	if res := runToolPath(t, fwctl, "status", "--control-socket", d.control); res.Exit != 0 || !strings.Contains(res.Stdout, note) {
		t.Errorf("fwctl status does not say %q:\n%s", note, res)
	}
	res := runToolPath(t, fwctl, "status", "--json", "--control-socket", d.control)
	var st control.Status
	if err := json.Unmarshal([]byte(res.Stdout), &st); err != nil || st.Discovery == nil {
		t.Fatalf("fwctl status --json: %v\n%s", err, res)
	}
	if !containsPrefix(st.Discovery.NotProtected, note) || !containsPrefix(st.Discovery.NotProtected, sockNote) || st.Discovery.Unprotected < 2 {
		t.Errorf("status JSON: unprotected_paths %d, not_protected %q; want %q and %q", st.Discovery.Unprotected, st.Discovery.NotProtected, note, sockNote)
	}
	if v := scrape(t, metricsPort, "sqlfw_unprotected_paths"); v != float64(st.Discovery.Unprotected) || v < 1 {
		t.Errorf("sqlfw_unprotected_paths %v, want %d as in the status", v, st.Discovery.Unprotected)
	}
	if m := notify.wait(t, "READY=1"); !strings.Contains(m, "NOT protected") {
		t.Errorf("systemd READY STATUS does not say what is unprotected: %q", m)
	}
	// the host's port P is the host's listener's, reached directly
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
	pyc := fmt.Sprintf("import socket; s=socket.create_connection(('127.0.0.1', %d)); s.sendall(b'netns-hello\\n'); s.close()", port)
	if res := runCmd(t, 30*time.Second, "", nil, "sh", append(inCgroup(cg)[1:], "python3", "-c", pyc)...); res.Exit != 0 {
		t.Errorf("connecting to the host's listener from the clients' cgroup: %s", res)
	}
	if line := <-got; line != "netns-hello\n" {
		t.Errorf("the host's listener got %q, want the client's line (not intercepted)", line)
	}
}
