package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDebVersion runs scripts/deb-version.sh in a scratch repository: no
// tag, the annotated tag v0.1.0, one commit past it, local changes; each
// version is what docs/operations.md says, none is 0.0.0~git, and dpkg
// orders them: tag < tag dirty < tagless < one past < one past dirty <
// 0.1.1.
func TestDebVersion(t *testing.T) {
	for _, tool := range []string{"git", "dpkg"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s is not installed", tool)
		}
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.MkdirAll(filepath.Join(dir, "deploy/debian"), 0o755)
	for _, f := range []string{"scripts/deb-version.sh", "deploy/debian/changelog"} {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	version := func() string {
		t.Helper()
		c := exec.Command("bash", "scripts/deb-version.sh")
		c.Dir = dir
		out, err := c.Output()
		if err != nil {
			t.Fatalf("deb-version.sh: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "one")
	top := regexp.MustCompile(`^sqlfw \(([^)]+)\)`).FindStringSubmatch(readFile(t, filepath.Join(dir, "deploy/debian/changelog")))[1]
	check := func(what, got, pattern string) string {
		t.Helper()
		if !regexp.MustCompile(`^`+pattern+`$`).MatchString(got) || strings.Contains(got, "0.0.0") {
			t.Errorf("%s: %q, want %s", what, got, pattern)
		}
		return got
	}
	tagless := check("no tag", version(), regexp.QuoteMeta(top)+`\+0\.git\.g[0-9a-f]{7}`)
	git("tag", "-a", "v0.1.0", "-m", "sqlfw 0.1.0")
	tagged := check("at v0.1.0", version(), `0\.1\.0`)
	os.WriteFile(filepath.Join(dir, "scripts/deb-version.sh"), []byte(readFile(t, filepath.Join(dir, "scripts/deb-version.sh"))+"\n"), 0o644)
	taggedDirty := check("at v0.1.0, changed", version(), `0\.1\.0\+0\.dirty`)
	git("commit", "-qam", "two")
	past := check("one past", version(), `0\.1\.0\+1\.g[0-9a-f]{7}`)
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	git("add", "x")
	pastDirty := check("one past, changed", version(), `0\.1\.0\+1\.g[0-9a-f]{7}\.dirty`)
	order := []string{tagged, taggedDirty, tagless, past, pastDirty, "0.1.1"}
	for i := 0; i+1 < len(order); i++ {
		if err := exec.Command("dpkg", "--compare-versions", order[i], "lt", order[i+1]).Run(); err != nil {
			t.Errorf("dpkg orders %s not before %s", order[i], order[i+1])
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
