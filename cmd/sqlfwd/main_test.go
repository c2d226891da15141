package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("databases:\n  - name: main\n    protocol: postgres\n    listen: 127.0.0.1:6432\n    upstream: 127.0.0.1:5432\n"), 0o600)
	badPolicy := filepath.Join(dir, "bad-policy.yaml")
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("rules:\n  - id: x\n    action: maybe\n"), 0o600)
	os.WriteFile(badPolicy, []byte("databases:\n  - name: main\n    protocol: postgres\n    listen: 127.0.0.1:6432\n    upstream: 127.0.0.1:5432\n    policy: "+filepath.Join(dir, "p.yaml")+"\n"), 0o600)
	badKey := filepath.Join(dir, "bad-key.yaml")
	os.WriteFile(badKey, []byte("databses: []\n"), 0o600)
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{good, 0, "configuration valid (1 databases)"},
		{badPolicy, 2, "unknown action"},
		{badKey, 2, "databses"},
	} {
		var stderr bytes.Buffer
		code := run([]string{"--check-config", "--config", tc.path, "--control-socket", "none"}, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: exit %d, %q; want exit %d and %q", filepath.Base(tc.path), code, stderr.String(), tc.code, tc.want)
		}
	}
}

func TestHelpExitsZero(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"--help"}, &stderr); code != 0 || !strings.Contains(stderr.String(), "-config") {
		t.Errorf("sqlfwd --help: exit %d, %q; want 0 and the flags", code, stderr.String())
	}
}
