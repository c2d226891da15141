package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSingle(t *testing.T) {
	tests := []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"SELECT 1"}, 0, "verdict:    allow"},
		{[]string{"DELETE FROM t"}, 1, "rule:       no-unfiltered-writes"},
		{[]string{"--protocol", "oracle", "SELECT 1"}, 2, ""},
		// the MySQL dialect, and its session's sql_mode
		{[]string{"--protocol", "mysql", "SELECT 1"}, 0, "verdict:    allow"},
		{[]string{"--protocol", "mysql", "DELETE FROM t"}, 1, "rule:       no-unfiltered-writes"},
		// read with backslash escapes: a SELECT, a stacked DELETE and a
		// comment holding a quote (denied by whichever rule comes first)
		{[]string{"--protocol", "mysql", `SELECT 'x\''; DELETE FROM t; -- '`}, 1, "statements: 2"},
		{[]string{"--protocol", "mysql", "--sql-mode", "NO_BACKSLASH_ESCAPES", `SELECT 'x\''; DELETE FROM t; -- '`}, 0, "verdict:    allow"},
		{[]string{"--protocol", "mysql", "--standard-conforming-strings", "off", "SELECT 1"}, 2, ""},
		{[]string{"--sql-mode", "ANSI_QUOTES", "SELECT 1"}, 2, ""},
		{[]string{}, 2, ""},
		{[]string{"--policy", "/nonexistent", "SELECT 1"}, 2, ""},
		// session lexing state: the same text, two readings
		{[]string{`SELECT 'x\''; DELETE FROM t; --'`}, 0, "verdict:    allow"},
		{[]string{"--standard-conforming-strings", "off", `SELECT 'x\''; DELETE FROM t; --'`}, 1, "rule:       no-unfiltered-writes"},
		{[]string{"--client-encoding", "SJIS", "SELECT E'\x95\\'; DELETE FROM t; --'"}, 1, "rule:       no-unfiltered-writes"},
		{[]string{"--client-encoding", "LATIN1", "SELECT E'\x95\\'; DELETE FROM t; --'"}, 0, "verdict:    allow"},
		{[]string{"--client-encoding", "JOHAB", "SELECT '\x88\x61'"}, 1, "rule:       client-encoding-unsupported"},
		{[]string{"--client-encoding", "nope", "SELECT 1"}, 2, ""},
		{[]string{"--standard-conforming-strings", "maybe", "SELECT 1"}, 2, ""},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		rc := check(tt.args, &out, &errb)
		if rc != tt.rc || !strings.Contains(out.String(), tt.want) {
			t.Errorf("check %q: rc %d, output\n%s%s\nwant rc %d and %q", tt.args, rc, out.String(), errb.String(), tt.rc, tt.want)
		}
	}
}

func TestCheckBulk(t *testing.T) {
	dir := t.TempDir()
	lines := filepath.Join(dir, "lines.sql")
	os.WriteFile(lines, []byte("-- comment\nSELECT 1\n\nSELECT * FROM t WHERE a = 1 OR 1=1\n"), 0o644)
	semi := filepath.Join(dir, "semi.sql")
	os.WriteFile(semi, []byte("SELECT a\n  FROM t;\nUPDATE t SET a = 1\n  WHERE id = 2;\n"), 0o644)
	jl := filepath.Join(dir, "q.jsonl")
	os.WriteFile(jl, []byte(`{"sql": "DROP TABLE t", "user": "bob"}`+"\n"+`{"sql": "SELECT 2"}`+"\n"), 0o644)
	pol := filepath.Join(dir, "p.yaml")
	os.WriteFile(pol, []byte("rules: [{id: bob-no-ddl, action: deny, users: [bob], match: {kind: [ddl]}}]\n"), 0o644)
	badjl := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(badjl, []byte(`{"query": "x"}`+"\n"), 0o644)
	tests := []struct {
		args  []string
		rc    int
		lines int
		want  string
	}{
		{[]string{"--file", lines}, 1, 2, "no-tautology"},
		{[]string{"--file", semi}, 0, 2, "SELECT a FROM t;"},
		{[]string{"--policy", pol, "--jsonl", jl}, 1, 2, "bob-no-ddl"},
		{[]string{"--jsonl", badjl}, 2, 0, ""},
		{[]string{"--file", lines, "SELECT 1"}, 2, 0, ""},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		rc := check(tt.args, &out, &errb)
		got := strings.Count(out.String(), "\n")
		if rc != tt.rc || got != tt.lines || !strings.Contains(out.String(), tt.want) {
			t.Errorf("check %q: rc %d, %d lines:\n%s%s\nwant rc %d, %d lines, %q", tt.args, rc, got, out.String(), errb.String(), tt.rc, tt.lines, tt.want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("rules:\n  - {id: all, action: deny, match: {}}\n  - {id: late, action: allow, match: {kind: [select]}}\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("rules:\n  - id: a\n    action: deny\n    match: {kind: [selec]}\n    colour: red\n"), 0o644)
	var out, errb bytes.Buffer
	if rc := policyCmd([]string{"validate", good}, &out, &errb); rc != 0 || !strings.Contains(out.String(), `rule "late"`) {
		t.Errorf("validate good: rc %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	rc := policyCmd([]string{"validate", bad}, &out, &errb)
	for _, w := range []string{"line 4", "selec", "line 5", "colour"} {
		if rc != 2 || !strings.Contains(errb.String(), w) {
			t.Errorf("validate bad: rc %d, stderr %q, want rc 2 and %q", rc, errb.String(), w)
		}
	}
	out.Reset()
	if rc := policyCmd([]string{"default"}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "no-tautology") {
		t.Errorf("policy default: rc %d", rc)
	}
}

func TestLearnOffline(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "q.sql")
	os.WriteFile(f, []byte("SELECT a FROM t WHERE id = 1\nSELECT a FROM t WHERE id = 2\n"), 0o644)
	var out, errb bytes.Buffer
	if rc := learn([]string{"offline", "--user", "app", "--file", f}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "WHERE id = $1 (seen 2)") {
		t.Errorf("learn offline: rc %d\n%s%s", rc, out.String(), errb.String())
	}
}
