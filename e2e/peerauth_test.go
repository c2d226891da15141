package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The local OS user that the servers authenticate by its peer credentials
// (PostgreSQL's peer, MariaDB's unix_socket), as Debian's servers do their
// administrators by default.
const peerUser = "sqlfw_peer_e2e"

// TestInterceptPeerAuthentication: sqlfwd run as its unit runs it (its own
// user, the unit's capabilities) intercepts each server's unix socket; a
// client the server authenticates by its peer credentials logs in through
// sqlfwd as it does directly (sqlfwd connects as the client), is judged (a
// WHERE-less DELETE blocked, absent from the server's log, the rows kept),
// and without CAP_SETUID/CAP_SETGID the login fails and sqlfwd says why.
func TestInterceptPeerAuthentication(t *testing.T) {
	needKernel(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("skipping: setpriv (util-linux) is not installed")
	}
	ensureSystemUser(t, peerUser)
	_, svcName, svcCaps := unitUser(t)
	// the service user writes its control sockets here (t.TempDir's
	// parent is root's alone)
	svcDir, err := os.MkdirTemp("", "sqlfw-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(svcDir) })
	os.Chmod(svcDir, 0o777)
	// as runs a client as peerUser, or as nobody (who is not)
	asPeer := func(uid string) []string {
		gid := uid
		if uid == "nobody" {
			gid = "nogroup"
		}
		return []string{setpriv, "--reuid=" + uid, "--regid=" + gid, "--clear-groups"}
	}

	started := 0
	// startAs starts sqlfwd as su (with caps as its capability list)
	// intercepting cg's connections to socket, and waits until it does.
	startAs := func(t *testing.T, cg, caps string, args ...string) *daemon {
		t.Helper()
		wrap := append(inCgroup(cg), setpriv, "--reuid="+svcName, "--regid="+svcName, "--clear-groups",
			"--inh-caps="+caps, "--ambient-caps="+caps, "--bounding-set=-all,"+caps)
		started++ // a short name: a unix socket's path has 107 bytes
		args = append(args, "--intercept", "--cgroup", cg, "--control-socket", filepath.Join(svcDir, fmt.Sprintf("c%d.sock", started)))
		d, err := startDaemonWrapped(wrap, args...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("sqlfwd log:\n%s", tail(d.log(), 30))
			}
			d.stop()
		})
		for i := 0; !strings.Contains(d.log(), `"msg":"intercepting unix socket"`); i++ {
			if i > 200 {
				t.Fatalf("sqlfwd did not intercept the unix socket; its log:\n%s", tail(d.log(), 20))
			}
			time.Sleep(50 * time.Millisecond)
		}
		return d
	}

	t.Run("postgresql", func(t *testing.T) {
		if pg.SockDir == "" {
			t.Skip("skipping: the test server has no unix socket (SQLFW_PG_SOCKDIR)")
		}
		dropRole := fmt.Sprintf(`DO $$BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = '%s') THEN
			DROP OWNED BY %s; DROP ROLE %s; END IF; END$$`, peerUser, peerUser, peerUser)
		t.Cleanup(func() { directExec(t, dropRole) })
		directExec(t, dropRole)
		directExec(t, "CREATE ROLE "+peerUser+" LOGIN")
		freshTable(t, "peer_e2e", 1, 2, 3)
		directExec(t, "GRANT SELECT, DELETE ON peer_e2e TO "+peerUser)
		// a peer line for this role ahead of the test server's trust lines
		hba := directText(t, "SHOW hba_file")
		orig, err := os.ReadFile(hba)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			os.WriteFile(hba, orig, 0o600)
			directExec(t, "SELECT pg_reload_conf()")
		})
		if err := os.WriteFile(hba, append([]byte("local all "+peerUser+" peer\n"), orig...), 0o600); err != nil {
			t.Fatal(err)
		}
		directExec(t, "SELECT pg_reload_conf()")
		sock := fmt.Sprintf("%s/.s.PGSQL.%d", pg.SockDir, pg.Port)
		psqlAs := func(cg, uid, sql string) psqlResult {
			args := append(clientIn(cg), asPeer(uid)...)
			args = append(args, tool(t, "psql"), "-X", "-h", pg.SockDir, "-p", fmt.Sprint(pg.Port), "-U", peerUser,
				"-d", pg.Database, "-v", "VERBOSITY=verbose", "-Atc", sql)
			return runCmd(t, time.Minute, "", nil, "sh", args...)
		}
		// the premise: peer authentication admits the OS user of that
		// name, and no other (here nobody)
		plain := ""         // the test's own cgroup: not intercepted
		for i := 0; ; i++ { // pg_reload_conf is asynchronous
			if res := psqlAs(plain, "nobody", "select 1"); strings.Contains(res.Stderr, "Peer authentication failed") {
				break
			} else if i > 50 {
				t.Fatalf("as nobody, directly: %s, want Peer authentication failed", res)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if res := psqlAs(plain, peerUser, "select current_user"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != peerUser {
			t.Fatalf("as %s, directly: %s", peerUser, res)
		}

		cg := childCgroup(t)
		d := startAs(t, cg, svcCaps, "--unix-socket", sock)
		if !strings.Contains(d.log(), `"connects_as_client":true`) {
			t.Errorf("sqlfwd with the unit's capabilities does not say it connects as its clients:\n%s", tail(d.log(), 10))
		}
		if res := psqlAs(cg, peerUser, "select current_user, count(*) from peer_e2e group by 1"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != peerUser+"|3" {
			t.Fatalf("as %s through sqlfwd: %s, want %s|3", peerUser, res, peerUser)
		}
		if res := psqlAs(cg, "nobody", "select 1"); !strings.Contains(res.Stderr, "Peer authentication failed") {
			t.Errorf("as nobody through sqlfwd: %s, want Peer authentication failed (sqlfwd is not a way in)", res)
		}
		marker := "peer_e2e_" + randomHex(t)
		res := psqlAs(cg, peerUser, "delete from peer_e2e /* "+marker+" */")
		if res.Exit == 0 || !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("as %s through sqlfwd, a DELETE without WHERE: %s, want %s", peerUser, res, codeBlocked)
		}
		if log := serverLog(t); strings.Contains(log, marker) {
			t.Errorf("the blocked DELETE reached PostgreSQL's statement log")
		}
		if n := directInts(t, "SELECT count(*) FROM peer_e2e"); len(n) != 1 || n[0] != 3 {
			t.Errorf("rows left: %v, want 3", n)
		}
		if !strings.Contains(d.log(), `"via":"unix"`) {
			t.Errorf("no session came through the unix-socket interception:\n%s", tail(d.log(), 10))
		}

		// without the two capabilities sqlfwd connects as itself: the
		// server refuses the client, and sqlfwd said it would
		var less []string
		for _, c := range strings.Split(svcCaps, ",") {
			if c != "+setuid" && c != "+setgid" {
				less = append(less, c)
			}
		}
		t.Run("without CAP_SETUID", func(t *testing.T) {
			cg := childCgroup(t)
			d := startAs(t, cg, strings.Join(less, ","), "--unix-socket", sock)
			if !strings.Contains(d.log(), "unix-socket clients reach the server as sqlfwd's own user") {
				t.Errorf("sqlfwd without CAP_SETUID/CAP_SETGID does not warn:\n%s", tail(d.log(), 10))
			}
			if res := psqlAs(cg, peerUser, "select 1"); !strings.Contains(res.Stderr, "Peer authentication failed") {
				t.Errorf("as %s through sqlfwd without CAP_SETUID: %s, want the server's Peer authentication failed", peerUser, res)
			}
		})
	})

	t.Run("mariadb", func(t *testing.T) {
		my := mariadbEnv(t)
		if my.Socket == "" {
			t.Skip("skipping: the test server has no unix socket (SQLFW_MY_SOCKET)")
		}
		direct := myDB(t, my, my.addr(), true)
		table := "e2e_peer_" + randomHex(t)
		for _, q := range []string{
			"DROP USER IF EXISTS '" + peerUser + "'@'localhost'",
			"CREATE USER '" + peerUser + "'@'localhost' IDENTIFIED VIA unix_socket",
			"CREATE TABLE " + table + " (id int)",
			"INSERT INTO " + table + " VALUES (1), (2), (3)",
			"GRANT SELECT, DELETE ON " + my.Database + "." + table + " TO '" + peerUser + "'@'localhost'",
		} {
			if _, err := direct.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		t.Cleanup(func() {
			direct.Exec("DROP TABLE IF EXISTS " + table)
			direct.Exec("DROP USER IF EXISTS '" + peerUser + "'@'localhost'")
		})
		mariadbAs := func(cg, uid, sql string) psqlResult {
			args := append(clientIn(cg), asPeer(uid)...)
			args = append(args, tool(t, "mariadb"), "--no-defaults", "--protocol=socket", "--socket="+my.Socket,
				"-u", peerUser, "-N", "-B", "-e", sql, my.Database)
			return runCmd(t, time.Minute, "", nil, "sh", args...)
		}
		plain := ""
		if res := mariadbAs(plain, "nobody", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "Access denied") {
			t.Fatalf("as nobody, directly: %s, want Access denied", res)
		}
		if res := mariadbAs(plain, peerUser, "select 1"); res.Exit != 0 {
			t.Fatalf("as %s, directly: %s", peerUser, res)
		}

		cg := childCgroup(t)
		d := startAs(t, cg, svcCaps, "--protocol", "mysql", "--upstream", my.addr(), "--unix-socket", my.Socket)
		if res := mariadbAs(cg, peerUser, "select current_user()"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != peerUser+"@localhost" {
			t.Fatalf("as %s through sqlfwd: %s, want %s@localhost", peerUser, res, peerUser)
		}
		if res := mariadbAs(cg, peerUser, "select count(*) from "+table); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
			t.Fatalf("as %s through sqlfwd: %s, want 3", peerUser, res)
		}
		if res := mariadbAs(cg, "nobody", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "Access denied") {
			t.Errorf("as nobody through sqlfwd: %s, want Access denied (sqlfwd is not a way in)", res)
		}
		marker := "peer_" + randomHex(t)
		res := mariadbAs(cg, peerUser, "delete from "+table+" /* "+marker+" */")
		if res.Exit == 0 || !strings.Contains(res.Stderr, "no-unfiltered-writes") {
			t.Errorf("as %s through sqlfwd, a DELETE without WHERE: %s, want blocked by no-unfiltered-writes", peerUser, res)
		}
		if strings.Contains(generalLog(t, my), marker) {
			t.Errorf("the blocked DELETE reached MariaDB's general log")
		}
		var n int
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := direct.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != 3 {
			t.Errorf("rows left: %d (%v), want 3", n, err)
		}
		if !strings.Contains(d.log(), `"via":"unix"`) {
			t.Errorf("no session came through the unix-socket interception:\n%s", tail(d.log(), 10))
		}
	})
}

// ensureSystemUser creates the system user name if it does not exist, and
// removes it after the test.
func ensureSystemUser(t *testing.T, name string) {
	t.Helper()
	if _, err := user.Lookup(name); err == nil {
		return
	}
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Skipf("skipping: cannot create the user %s: %v %s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
}

// clientIn is the sh arguments that run a command in cgroup cg ("": the
// test's own, which nothing intercepts).
func clientIn(cg string) []string {
	if cg == "" {
		return []string{"-c", `exec "$@"`, "sh"}
	}
	return inCgroup(cg)[1:]
}

// directText returns the single text value of a query run on PostgreSQL
// itself.
func directText(t *testing.T, sql string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var v string
	if err := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, "")).QueryRow(ctx, sql).Scan(&v); err != nil {
		t.Fatalf("directly on PostgreSQL: %s: %v", sql, err)
	}
	return v
}
