package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("databases:\n  - name: main\n    protocol: postgres\n    listen: 127.0.0.1:6432\n    upstream: 127.0.0.1:5432\n"), 0o600)
	dup := filepath.Join(dir, "dup.yaml")
	os.WriteFile(dup, []byte("databases:\n  - name: a\n    protocol: postgres\n    listen: 127.0.0.1:6432\n    upstream: 127.0.0.1:5432\n  - name: a\n    protocol: postgres\n    listen: 127.0.0.1:6433\n    upstream: 127.0.0.1:5432\n"), 0o600)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"validate", good}, 0, "valid (1 databases)"},
		{[]string{"validate", dup}, 2, "a"},
		{[]string{"validate", filepath.Join(dir, "missing.yaml")}, 2, "missing.yaml"},
		{[]string{"validate"}, 2, "usage"},
		{[]string{"--help"}, 0, "usage"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"config"}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("fwctl config %v: exit %d, %q %q; want %d and %q", tc.args, code, out.String(), errb.String(), tc.code, tc.want)
		}
	}
}
