package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/control"
)

func TestExtractGlobals(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		rest   []string
		socket string
		json   bool
		err    bool
	}{
		{[]string{"--json", "status"}, []string{"status"}, "", true, false},
		{[]string{"status", "--json"}, []string{"status"}, "", true, false},
		{[]string{"--control-socket", "/a", "learn", "status", "--json"}, []string{"learn", "status"}, "/a", true, false},
		{[]string{"-control-socket=/b", "mode", "enforce", "--database", "x"}, []string{"mode", "enforce", "--database", "x"}, "/b", false, false},
		{[]string{"status", "--json=false"}, []string{"status"}, "", false, false},
		{[]string{"check", "--", "--json"}, []string{"check", "--", "--json"}, "", false, false},
		{[]string{"check", "--jsonl", "f"}, []string{"check", "--jsonl", "f"}, "", false, false},
		{[]string{"status", "--control-socket"}, nil, "", false, true},
		{[]string{"status", "--json=yes"}, nil, "", false, true},
	} {
		rest, g, err := extractGlobals(tt.args)
		if (err != nil) != tt.err {
			t.Errorf("%q: err %v, want error %v", tt.args, err, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		if strings.Join(rest, " ") != strings.Join(tt.rest, " ") || g.socket != tt.socket || g.json != tt.json {
			t.Errorf("%q: rest %q socket %q json %v, want %q %q %v", tt.args, rest, g.socket, g.json, tt.rest, tt.socket, tt.json)
		}
	}
}

// The control socket: flag > SQLFW_CONTROL_SOCKET > control_socket in the
// configuration file > the default.
func TestControlSocketPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sqlfwd.yaml")
	old := defaultConfigFile
	defaultConfigFile = cfg
	t.Cleanup(func() { defaultConfigFile = old; cur = globals{} })

	t.Setenv(envControlSocket, "")
	cur = globals{}
	if got := controlSocket(); got != control.DefaultSocket {
		t.Errorf("nothing set: %q, want the default %q", got, control.DefaultSocket)
	}
	os.WriteFile(cfg, []byte("control_socket: none\n"), 0o644)
	if got := controlSocket(); got != control.DefaultSocket {
		t.Errorf("config says none: %q, want the default", got)
	}
	os.WriteFile(cfg, []byte("log_level: info\ncontrol_socket: /from/config.sock\n"), 0o644)
	if got := controlSocket(); got != "/from/config.sock" {
		t.Errorf("config: %q, want /from/config.sock", got)
	}
	t.Setenv(envControlSocket, "/from/env.sock")
	if got := controlSocket(); got != "/from/env.sock" {
		t.Errorf("env and config: %q, want the environment's", got)
	}
	cur = globals{socket: "/from/flag.sock"}
	if got := controlSocket(); got != "/from/flag.sock" {
		t.Errorf("flag, env and config: %q, want the flag's", got)
	}
}

// A fake sqlfwd on a unix socket: the global flags reach it from before
// or after the command, and from the environment.
func TestGlobalFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	serve := func(name string) (string, *[]string) {
		sock := filepath.Join(dir, name)
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			paths = append(paths, r.Method+" "+r.URL.Path)
			w.Write([]byte(`{"version":"fake-` + name + `"}`))
		})}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
		return sock, &paths
	}
	a, hitsA := serve("a.sock")
	b, hitsB := serve("b.sock")
	t.Setenv(envControlSocket, b)
	t.Cleanup(func() { cur = globals{} })
	for _, tt := range []struct {
		args []string
		want string // the fake whose answer is printed
	}{
		{[]string{"--json", "--control-socket", a, "status"}, "fake-a.sock"},
		{[]string{"status", "--control-socket=" + a, "--json"}, "fake-a.sock"},
		{[]string{"--control-socket", a, "connections", "--json"}, "fake-a.sock"},
		{[]string{"status", "--json"}, "fake-b.sock"}, // SQLFW_CONTROL_SOCKET
	} {
		var out, errb bytes.Buffer
		if rc := run(tt.args, &out, &errb); rc != 0 {
			t.Errorf("%q: rc %d: %s", tt.args, rc, errb.String())
			continue
		}
		var v struct{ Version string }
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Version != tt.want {
			t.Errorf("%q: printed %q, want the JSON of %s", tt.args, out.String(), tt.want)
		}
	}
	if len(*hitsA) != 3 || len(*hitsB) != 1 {
		t.Errorf("requests: a %v, b %v; want 3 and 1", *hitsA, *hitsB)
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"--json", "reload"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "no --json") {
		t.Errorf("--json on reload: rc %d %q, want 2 and that reload has no JSON output", rc, errb.String())
	}
}

// --json where a script wants it: check (a line per verdict), policy
// validate and config validate.
func TestJSONOutputs(t *testing.T) {
	t.Cleanup(func() { cur = globals{} })
	var out, errb bytes.Buffer
	if rc := run([]string{"--json", "check", "DELETE FROM t"}, &out, &errb); rc != 1 {
		t.Fatalf("check --json of a denied DELETE: rc %d %s", rc, errb.String())
	}
	var v verdictJSON
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || !v.Denied || v.Action != "deny" || v.Rule != "no-unfiltered-writes" || v.SQL != "DELETE FROM t" {
		t.Errorf("check --json: %q (%v)", out.String(), err)
	}
	f := filepath.Join(t.TempDir(), "q.sql")
	os.WriteFile(f, []byte("SELECT 1\nDELETE FROM t\n"), 0o644)
	out.Reset()
	if rc := run([]string{"check", "--file", f, "--json"}, &out, &errb); rc != 1 {
		t.Fatalf("check --file --json: rc %d", rc)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("check --file --json: %d lines, want 2:\n%s", len(lines), out.String())
	}
	for i, l := range lines {
		var v verdictJSON
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.N != i+1 || v.Denied != (i == 1) {
			t.Errorf("line %d: %q (%v)", i+1, l, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nrules:\n  - id: x\n    action: explode\n"), 0o644)
	for _, tt := range []struct {
		args  []string
		rc    int
		valid bool
	}{
		{[]string{"policy", "validate", "--json", "../../engine/pgsql/default_policy.yaml"}, 0, true},
		{[]string{"--json", "policy", "validate", bad}, 2, false},
		{[]string{"config", "validate", "../../deploy/sqlfwd.yaml", "--json"}, 0, true},
		{[]string{"--json", "config", "validate", bad}, 2, false},
	} {
		out.Reset()
		errb.Reset()
		rc := run(tt.args, &out, &errb)
		var r validJSON
		if err := json.Unmarshal(out.Bytes(), &r); rc != tt.rc || err != nil || r.Valid != tt.valid || (!r.Valid && r.Error == "") {
			t.Errorf("%q: rc %d %q %q (%v)", tt.args, rc, out.String(), errb.String(), err)
		}
	}
}
