package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each problem at its real line and column, in the file's terms: the key
// path, what it wants in words; no Go type name anywhere.
func TestParseErrorsInTheFilesTerms(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []string // "line:column: text" of each problem, in order
	}{
		{"unknown key with a near miss", "log_level: info\ndatabases:\n  - name: a\n    protocl: postgres\n",
			[]string{`4:5: unknown key "protocl" in databases[0]: did you mean protocol?`}},
		{"unknown global key", "log_levle: info\n", []string{`1:1: unknown key "log_levle": did you mean log_level?`}},
		{"unknown key far from any", "zzz: 1\n", []string{`1:1: unknown key "zzz": the keys here are log_level, `}},
		{"duration and integer", "drain_timeout: abc\ndatabases:\n  - name: a\n    max_connections: lots\n",
			[]string{`1:16: drain_timeout: "abc" is not a duration: write it like 30s`, `4:22: databases[0].max_connections: want a whole number, got "lots"`}},
		{"bool", "intercept:\n  fail_closed: sometimes\n", []string{`2:16: intercept.fail_closed: want true or false, got "sometimes"`}},
		{"list wanted", "databases:\n  - name: a\n    protect: 127.0.0.1:5432\n", []string{`3:14: databases[0].protect: want a list`}},
		{"mapping wanted", "intercept: yes\n", []string{`1:12: intercept: want keys (`}},
		{"given twice", "log_level: info\nlog_level: debug\n", []string{`2:1: log_level: given twice`}},
		{"second database", "databases:\n  - name: a\n    protocol: postgres\n  - name: b\n    upstream: [1, 2]\n",
			[]string{`5:15: databases[1].upstream: want a single value, got a list`}},
		// indentation: the line whose indentation is wrong, not where the parser gave up
		{"dedent to no key", "log_level: info\ndatabases:\n  - name: a\n    protocol: postgres\n   upstream: 127.0.0.1:2\n",
			[]string{`5:4: indentation of 3 spaces matches no enclosing key`}},
		{"indent under a value", "log_level: info\nintercept:\n  cgroup: /x\n    fail_closed: true\n",
			[]string{`4:5: indented more (4 spaces) than the line before`}},
		{"tab", "databases:\n  - name: a\n\tprotocol: postgres\n", []string{`3:1: a tab in the indentation`}},
		{"deep dedent in the first lines", "databases:\n  - name: a\n    protocol: postgres\n    listen: 127.0.0.1:1\n    upstream: 127.0.0.1:2\n  - name: b\n     protocol: mysql\n",
			[]string{`7:6: indented more`}},
	} {
		_, err := Parse([]byte(tt.text))
		if err == nil {
			t.Errorf("%s: parsed", tt.name)
			continue
		}
		es, ok := err.(Errors)
		if !ok {
			t.Errorf("%s: %T %v, want Errors", tt.name, err, err)
			continue
		}
		if len(es) != len(tt.want) {
			t.Errorf("%s: %d problems, want %d:\n%v", tt.name, len(es), len(tt.want), err)
			continue
		}
		for i, e := range es {
			got := strings.TrimPrefix(e.Error(), "line ")
			got = strings.Replace(got, ", column ", ":", 1)
			if !strings.HasPrefix(got, tt.want[i]) {
				t.Errorf("%s: got %q, want %q...", tt.name, got, tt.want[i])
			}
			for _, goName := range []string{"time.Duration", "config.", "int64", "uint32", "!!str", "[]string", "unmarshal"} {
				if strings.Contains(e.Msg, goName) {
					t.Errorf("%s: %q names Go's %s", tt.name, e.Msg, goName)
				}
			}
		}
	}
}

// Well-formed files parse as before: the checks refuse nothing yaml
// decodes (the repository's own configurations, hex, durations, nulls).
func TestParseAcceptsValidFiles(t *testing.T) {
	for _, text := range []string{
		"log_level: info\ndrain_timeout: 30s\nintercept:\n  mark: 0x80007371\n  sockmap: false\n  fail_closed:\ndatabases:\n  - name: a\n    protocol: postgres\n    listen: 127.0.0.1:1\n    upstream: 127.0.0.1:2\n    protect: [127.0.0.1:2, \"[::1]:2\"]\n    max_connections: 1_000\n",
		"# only keys at the top\ndatabases:\n- name: a   # a sequence at the key's column\n  protocol: mysql\n  upstream: 127.0.0.1:3306\n  listen: 127.0.0.1:3307\n",
	} {
		if _, err := Parse([]byte(text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
	for _, f := range []string{"../deploy/sqlfwd.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Load names the file in the compilers' form, one problem a line.
func TestLoadNamesFileLineColumn(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sqlfwd.yaml")
	os.WriteFile(p, []byte("drain_timeout: abc\nlog_levle: x\n"), 0o600)
	_, err := Load(p)
	if err == nil {
		t.Fatal("loaded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], p+":1:16: drain_timeout") || !strings.HasPrefix(lines[1], p+":2:1: unknown key") {
		t.Errorf("got\n%v", err)
	}
}
