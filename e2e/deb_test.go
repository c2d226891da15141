package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDebPackage builds the Debian package with `make deb` (nfpm), checks
// its control fields and contents, unpacks it into a scratch root and runs
// the sqlfwd from there in front of the test PostgreSQL: it must block what
// the default policy blocks.
func TestDebPackage(t *testing.T) {
	needPG(t)
	for _, tool := range []string{"make", "dpkg-deb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s is not installed", tool)
		}
	}
	dist := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "deb")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make deb: %v\n%s", err, out)
	}
	debs, _ := filepath.Glob("../dist/sqlfw_*.deb")
	if len(debs) == 0 {
		t.Fatal("make deb made no dist/sqlfw_*.deb")
	}
	deb := debs[len(debs)-1]
	t.Cleanup(func() {
		for _, d := range debs {
			os.Remove(d)
		}
	})
	info, err := exec.Command("dpkg-deb", "--info", deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb --info: %v\n%s", err, info)
	}
	for _, want := range []string{"Package: sqlfw", "Architecture: ", "postinst", "prerm", "postrm"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
		}
	}
	root := filepath.Join(dist, "root")
	if out, err := exec.Command("dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v\n%s", err, out)
	}
	for _, f := range []string{"usr/bin/sqlfwd", "usr/bin/fwctl", "lib/systemd/system/sqlfwd.service", "lib/systemd/system/sqlfwd-listener.service",
		"usr/lib/sysusers.d/sqlfw.conf", "usr/share/sqlfw/policy/postgres.yaml", "usr/share/sqlfw/policy/mysql.yaml", "usr/share/doc/sqlfw/copyright",
		"usr/share/bash-completion/completions/fwctl", "usr/share/doc/sqlfw/changelog.Debian.gz",
		"usr/share/man/man8/sqlfwd.8.gz", "usr/share/man/man1/fwctl.1.gz", "usr/share/man/man5/sqlfwd.yaml.5.gz"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("the package lacks %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "etc/sqlfw/sqlfwd.yaml")); err == nil {
		t.Error("the package ships /etc/sqlfw/sqlfwd.yaml: a fresh install should start without one (zero configuration)")
	}
	sqlfwd := filepath.Join(root, "usr/bin/sqlfwd")
	res := runToolPath(t, sqlfwd, "--version")
	if res.Exit != 0 {
		t.Fatalf("the packaged sqlfwd --version: %s", res)
	}
	// one version everywhere: the package's, the binary's, scripts/deb-version.sh's
	ver, err := exec.Command("dpkg-deb", "--field", deb, "Version").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(ver))
	if strings.Contains(v, "0.0.0") || !strings.HasPrefix(v, "0.") {
		t.Errorf("package version %q: want the tag's (0.1.0, 0.1.0+N.gHASH), not 0.0.0~git", v)
	}
	if got := strings.TrimSpace(res.Stdout); got != "sqlfwd "+v {
		t.Errorf("the packaged sqlfwd says %q, the package %q", got, v)
	}
	// stripped: no symbol table, no DWARF
	if out, err := exec.Command("file", "-L", sqlfwd).Output(); err == nil && !strings.Contains(string(out), ", stripped") {
		t.Errorf("the packaged sqlfwd is not stripped: %s", out)
	}
	// the packaged daemon serves
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctl := filepath.Join(dist, "control.sock")
	d := exec.Command(sqlfwd, "--protocol", "postgres", "--listen", "127.0.0.1:"+strconv.Itoa(port),
		"--upstream", "127.0.0.1:"+strconv.Itoa(pg.Port), "--control-socket", ctl)
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { d.Process.Kill(); d.Wait() }()
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
			break
		}
		if i > 100 {
			t.Fatalf("the packaged sqlfwd does not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res = psql(t, "", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", pg.User, "-c", "delete from deb_t")
	if !strings.Contains(res.Stderr, "sqlfw: statement blocked") {
		t.Errorf("psql through the packaged sqlfwd: %s, want the statement blocked", res)
	}
}
