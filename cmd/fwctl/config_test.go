package main

import (
	"bytes"
	"flag"
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
	indent := filepath.Join(dir, "indent.yaml")
	os.WriteFile(indent, []byte("log_level: info\ndatabases:\n  - name: a\n    protocol: postgres\n   upstream: 127.0.0.1:5432\n"), 0o600)
	quote := filepath.Join(dir, "quote.yaml")
	os.WriteFile(quote, []byte("log_level: \"info\ndatabases:\n  - name: a\n"), 0o600)
	mode := filepath.Join(dir, "mode.yaml")
	os.WriteFile(mode, []byte("log_level: loud\ndatabases:\n  - name: a\n    protocol: postgres\n    listen: 127.0.0.1:6432\n    upstream: 127.0.0.1:5432\n    mode: block\n"), 0o600)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		// a value's problem at its line and column, each on a line of its own
		{[]string{"validate", mode}, 2, "\n" + mode + ":1:12: log_level \"loud\": want debug, info, warn or error\n" + mode + ":7:11: databases[0] (a): mode \"block\""},
		{[]string{"validate", good}, 0, "valid (1 databases)"},
		// the file named once, the line and column of the real mistake
		{[]string{"validate", indent}, 2, "\n" + indent + ":5:4: indentation of 3 spaces"},
		// a quote never closed: at the quote, not the file's last line
		{[]string{"validate", quote}, 2, "\n" + quote + ":1:12: the value quoted with \" here is never closed"},
		{[]string{"validate", dup}, 2, "\n" + dup + ":6:11: databases[1] (a): duplicate name"},
		{[]string{"validate", filepath.Join(dir, "missing.yaml")}, 2, "missing.yaml"},
		{[]string{"validate"}, 2, "usage"},
		{[]string{"--help"}, 0, "usage"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"config"}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains("\n"+out.String()+errb.String(), tc.want) {
			t.Errorf("fwctl config %v: exit %d, %q %q; want %d and %q", tc.args, code, out.String(), errb.String(), tc.code, tc.want)
		}
	}
}

// Every command's --help is help: exit 0, usage on stdout, nothing done
// (mode and reload would otherwise call a control socket).
func TestHelpEverywhere(t *testing.T) {
	for name := range commandUsage {
		for _, flag := range []string{"--help", "-h"} {
			var out, errb bytes.Buffer
			code := run([]string{name, flag}, &out, &errb)
			if code != 0 || !strings.HasPrefix(out.String(), "usage: fwctl") {
				t.Errorf("fwctl %s %s: exit %d, stdout %q, stderr %q; want 0 and the usage", name, flag, code, out.String(), errb.String())
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"mode", "enforce", "--control-socket", "/nonexistent/sock", "--help"}, &out, &errb); code != 0 || errb.Len() != 0 {
		t.Errorf("fwctl mode enforce ... --help: exit %d, stderr %q; want help, not a call", code, errb.String())
	}
}

func TestParseInterspersed(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	a := fs.String("anchors", "", "")
	k := fs.String("key-file", "", "")
	pos, err := parseInterspersed(fs, []string{"--key-file", "K", "FILE", "--anchors", "LOG"})
	if err != nil || len(pos) != 1 || pos[0] != "FILE" || *a != "LOG" || *k != "K" {
		t.Fatalf("got %v %v anchors %q key %q", pos, err, *a, *k)
	}
}
