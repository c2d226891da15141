package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInterceptUnixOtherNames: a protected unix socket reached by another
// name than the one sqlfwd redirects — a symlink to its directory, a hard
// link to the socket file, a relative path — is refused for the clients
// sqlfwd intercepts (bpf/unix.c's lsm_cgroup guard), never relayed to the
// server unjudged: nothing reaches the server's log and the rows stay. The
// protected name itself is judged, and outside the cgroup the other names
// still work (the guard is the cgroup's).
func TestInterceptUnixOtherNames(t *testing.T) {
	needKernel(t)
	if pg.SockDir == "" {
		t.Skip("skipping: the test server has no unix socket (SQLFW_PG_SOCKDIR)")
	}
	cg := childCgroup(t)
	d := startIntercepting(t, cg)
	for i := 0; !strings.Contains(d.log(), `"msg":"intercepting unix socket"`); i++ {
		if i > 200 {
			t.Fatalf("sqlfwd did not intercept the unix socket:\n%s", tail(d.log(), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	status := fwctl(t, d, "status")
	if !strings.Contains(d.log(), `"other_names_refused":true`) {
		if strings.Contains(d.log(), "BPF LSM is not available") {
			// then it says so everywhere an operator looks
			if !strings.Contains(status.Stdout, "not protected: unix sockets reached by another name") {
				t.Errorf("fwctl status does not say that other names are not protected:\n%s", status)
			}
			if js := fwctl(t, d, "status", "--json"); !strings.Contains(js.Stdout, `"unix_other_names": "NOT refused: `) && !strings.Contains(js.Stdout, `"unix_other_names":"NOT refused: `) {
				t.Errorf("fwctl status --json has no unix_other_names NOT refused:\n%s", js.Stdout)
			}
			t.Skipf("skipping: this kernel cannot refuse other names (no BPF LSM); sqlfwd says so:\n%s", tail(d.log(), 5))
		}
		t.Fatalf("sqlfwd neither refuses other names nor says why:\n%s", tail(d.log(), 10))
	}
	if strings.Contains(status.Stdout, "not protected: unix sockets") {
		t.Errorf("fwctl status says other names are not protected while they are refused:\n%s", status)
	}
	freshTable(t, "unix_names", 1, 2, 3)
	sockName := fmt.Sprintf(".s.PGSQL.%d", pg.Port)

	// other names: a symlink to the directory, a directory holding a hard
	// link to the socket file, and the directory itself as a relative
	// path (psql's host must be absolute: sh changes into it and psql
	// names it by a /proc/self/cwd path, which the kernel resolves)
	dir, err := os.MkdirTemp("", "sqlfw-names-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	link := filepath.Join(dir, "link")
	if err := os.Symlink(pg.SockDir, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard")
	os.Mkdir(hard, 0o755)
	if err := os.Link(filepath.Join(pg.SockDir, sockName), filepath.Join(hard, sockName)); err != nil {
		t.Fatal(err)
	}
	psqlAt := func(cg, host, sql string) psqlResult {
		return runCmd(t, time.Minute, "", nil, "sh", append(clientIn(cg), "sh", "-c",
			`cd "$0" && exec "$@"`, pg.SockDir, tool(t, "psql"), "-X", "-h", host, "-p", fmt.Sprint(pg.Port), "-U", pg.User,
			"-d", pg.Database, "-v", "VERBOSITY=verbose", "-Atc", sql)...)
	}
	names := map[string]string{"symlink": link, "hard link": hard, "relative": "/proc/self/cwd"}

	// outside the cgroup each name reaches the server: the test's premise
	for what, host := range names {
		if res := psqlAt("", host, "select count(*) from unix_names"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
			t.Fatalf("%s (%s), not intercepted: %s, want 3", what, host, res)
		}
	}
	// the protected name is judged
	if res := psqlAt(cg, pg.SockDir, "delete from unix_names"); !strings.Contains(res.Stderr, codeBlocked) {
		t.Fatalf("the socket's own name from the cgroup: %s, want %s", res, codeBlocked)
	}
	for what, host := range names {
		marker := "names_" + randomHex(t)
		res := psqlAt(cg, host, "delete from unix_names /* "+marker+" */")
		if res.Exit == 0 || !strings.Contains(res.Stderr, "Operation not permitted") {
			t.Errorf("%s (%s) from the cgroup: %s, want the connect refused (Operation not permitted)", what, host, res)
		}
		if strings.Contains(serverLog(t), marker) {
			t.Errorf("%s: the DELETE reached PostgreSQL's statement log", what)
		}
	}
	if n := directInts(t, "SELECT count(*) FROM unix_names"); len(n) != 1 || n[0] != 3 {
		t.Errorf("rows left: %v, want 3", n)
	}
}
