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
// name than the one sqlfwd was given. Names the kernel resolves from the
// client's working or root directory (a relative path, /proc/self/cwd/...,
// /proc/self/root/...) and doubled slashes or "." components are
// redirected like the name itself and judged: a DELETE without WHERE is
// blocked, absent from PostgreSQL's statement log, the rows stay. Names no
// program can resolve before the kernel does — a symlink to the directory,
// a hard link to the socket file, a path through ".." — are refused for the
// clients sqlfwd intercepts where a guard program loads (bpf/unix.c:
// lsm_cgroup, else fmod_ret), never relayed to the server unjudged; where
// neither loads sqlfwd says so (WARN, fwctl status and its JSON) and the
// refusal is skipped, saying why. Outside the cgroup every name still works.
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
	freshTable(t, "unix_names", 1, 2, 3)
	sockName := fmt.Sprintf(".s.PGSQL.%d", pg.Port)

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
	// psql runs in cwd; its host must be absolute, so a relative name is
	// a /proc/self/cwd path (the kernel resolves it from the working
	// directory, as it does "name"); bpf's TestUnixRedirect has the plain
	// relative names.
	psqlAt := func(cg, cwd, host, sql string) psqlResult {
		return runCmd(t, time.Minute, "", nil, "sh", append(clientIn(cg), "sh", "-c",
			`cd "$0" && exec "$@"`, cwd, tool(t, "psql"), "-X", "-h", host, "-p", fmt.Sprint(pg.Port), "-U", pg.User,
			"-d", pg.Database, "-v", "VERBOSITY=verbose", "-Atc", sql)...)
	}
	type name struct{ what, cwd, host string }
	judged := []name{
		{"the socket's own name", "/", pg.SockDir},
		{"/proc/self/cwd from the socket's directory", pg.SockDir, "/proc/self/cwd"},
		{"/proc/self/cwd from above it", filepath.Dir(pg.SockDir), "/proc/self/cwd/" + filepath.Base(pg.SockDir)},
		{"/proc/self/root", "/", "/proc/self/root" + pg.SockDir},
		{"doubled slashes", "/", "/" + strings.ReplaceAll(pg.SockDir, "/", "//")},
		{"dot components", "/", strings.ReplaceAll(pg.SockDir, "/", "/./")},
	}
	refused := []name{
		{"symlink to the directory", "/", link},
		{"hard link", "/", hard},
		{"through ..", "/", pg.SockDir + "/../" + filepath.Base(pg.SockDir)},
	}

	// outside the cgroup each name reaches the server: the test's premise
	for _, n := range append(append([]name{}, judged...), refused...) {
		if res := psqlAt("", n.cwd, n.host, "select count(*) from unix_names"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
			t.Fatalf("%s (%s), not intercepted: %s, want 3", n.what, n.host, res)
		}
	}
	for _, n := range judged {
		marker := "names_" + randomHex(t)
		if res := psqlAt(cg, n.cwd, n.host, "delete from unix_names /* "+marker+" */"); !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("%s (%s) from the cgroup: %s, want %s", n.what, n.host, res, codeBlocked)
		}
		if strings.Contains(serverLog(t), marker) {
			t.Errorf("%s: the DELETE reached PostgreSQL's statement log", n.what)
		}
		if res := psqlAt(cg, n.cwd, n.host, "select count(*) from unix_names"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
			t.Errorf("%s (%s) from the cgroup, a SELECT: %s, want 3 (relayed)", n.what, n.host, res)
		}
	}
	if n := directInts(t, "SELECT count(*) FROM unix_names"); len(n) != 1 || n[0] != 3 {
		t.Fatalf("rows left: %v, want 3", n)
	}

	status := fwctl(t, d, "status")
	if !strings.Contains(d.log(), `"other_names_refused":true`) {
		if strings.Contains(d.log(), "no guard program loads on this kernel") {
			// then it says so everywhere an operator looks
			if !strings.Contains(status.Stdout, "not protected: unix sockets reached by another name") {
				t.Errorf("fwctl status does not say that other names are not protected:\n%s", status)
			}
			if js := fwctl(t, d, "status", "--json"); !strings.Contains(js.Stdout, `"unix_other_names": "NOT refused: `) && !strings.Contains(js.Stdout, `"unix_other_names":"NOT refused: `) {
				t.Errorf("fwctl status --json has no unix_other_names NOT refused:\n%s", js.Stdout)
			}
			var warn string
			for _, l := range strings.Split(d.log(), "\n") {
				if strings.Contains(l, "no guard program loads on this kernel") {
					warn = l
				}
			}
			t.Skipf("skipping the refusal of symlinks, hard links and ..: no guard program loads on this kernel (lsm_cgroup, fmod_ret); sqlfwd says so:\n%s", warn)
		}
		t.Fatalf("sqlfwd neither refuses other names nor says why:\n%s", tail(d.log(), 10))
	}
	if strings.Contains(status.Stdout, "not protected: unix sockets") {
		t.Errorf("fwctl status says other names are not protected while they are refused:\n%s", status)
	}
	for _, n := range refused {
		marker := "names_" + randomHex(t)
		res := psqlAt(cg, n.cwd, n.host, "delete from unix_names /* "+marker+" */")
		if res.Exit == 0 || !strings.Contains(res.Stderr, "Operation not permitted") {
			t.Errorf("%s (%s) from the cgroup: %s, want the connect refused (Operation not permitted)", n.what, n.host, res)
		}
		if strings.Contains(serverLog(t), marker) {
			t.Errorf("%s: the DELETE reached PostgreSQL's statement log", n.what)
		}
	}
	if n := directInts(t, "SELECT count(*) FROM unix_names"); len(n) != 1 || n[0] != 3 {
		t.Errorf("rows left: %v, want 3", n)
	}
}
