package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
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

// unitDirective returns the values of a directive in a unit file.
func unitDirective(t *testing.T, unit, key string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../deploy", unit))
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			vals = append(vals, v)
		}
	}
	return vals
}

// The units do not loop on a configuration error: their ExecStart, run as
// written (the file path replaced by a scratch one), exits with a status in
// RestartPreventExitStatus for a missing file (the listener, which cannot
// discover), a broken file, an unknown key and a broken policy.
func TestUnitsStopOnConfigurationError(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o600)
		return p
	}
	pol := write("p.yaml", "rules:\n  - id: x\n    action: maybe\n")
	files := map[string]string{
		"broken YAML":   write("broken.yaml", "databases:\n  - name: a\n   protocol: postgres\n"),
		"unknown key":   write("key.yaml", "databses: []\n"),
		"broken policy": write("pol.yaml", "databases:\n  - name: main\n    protocol: postgres\n    listen: 127.0.0.1:0\n    upstream: 127.0.0.1:5432\n    policy: "+pol+"\n"),
		"missing file":  filepath.Join(dir, "absent.yaml"),
	}
	for _, unit := range []string{"sqlfwd-listener.service", "sqlfwd.service"} {
		prevent := unitDirective(t, unit, "RestartPreventExitStatus")
		if len(prevent) != 1 {
			t.Fatalf("%s: RestartPreventExitStatus %q, want one", unit, prevent)
		}
		if r := unitDirective(t, unit, "Restart"); len(r) != 1 || r[0] != "on-failure" {
			t.Errorf("%s: Restart %q", unit, r)
		}
		start := unitDirective(t, unit, "ExecStart")
		if len(start) != 1 {
			t.Fatalf("%s: ExecStart %q", unit, start)
		}
		args := strings.Fields(start[0])[1:] // without /usr/bin/sqlfwd
		if unit == "sqlfwd-listener.service" && !slicesContains(args, "--require-config") {
			t.Fatalf("%s: ExecStart %q lacks --require-config: without a file it would start discovery, which it has no capabilities for", unit, start[0])
		}
		for what, path := range files {
			if what == "missing file" && unit == "sqlfwd.service" {
				continue // the interception unit discovers without a file
			}
			a := make([]string, len(args))
			for i, s := range args {
				a[i] = strings.ReplaceAll(s, "/etc/sqlfw/sqlfwd.yaml", path)
			}
			a = append(a, "--control-socket", "none")
			var stderr bytes.Buffer
			code := run(a, &stderr)
			if !slicesContains(strings.Fields(prevent[0]), strconv.Itoa(code)) {
				t.Errorf("%s with a %s: exit %d (%s), not in RestartPreventExitStatus=%s: the unit would restart every RestartSec", unit, what, code, strings.TrimSpace(stderr.String()), prevent[0])
			}
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
