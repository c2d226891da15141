package config

import (
	"errors"
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
		// the other syntax errors: yaml.v3 says a line alone (and for a
		// quote opened on line 1, the last line); each at its place
		{"unclosed double quote", "log_level: \"info\ndatabases:\n  - name: a\n",
			[]string{`1:12: the value quoted with " here is never closed`}},
		{"unclosed single quote", "databases:\n  - name: 'a\n    protocol: postgres\n",
			[]string{`2:11: the value quoted with ' here is never closed`}},
		{"unclosed list", "databases:\n  - name: a\n    protect: [127.0.0.1:5432\n    mode: monitor\n",
			[]string{`3:14: the [ opened here is never closed with ]`}},
		{"second colon", "databases:\n  - name: a\n    dsn: user: x\n", []string{`3:14: a second ": " on this line`}},
		{"key without colon", "log_level info\ndatabases:\n  - name: a\n", []string{`1:1: "log_level info" has no ": " after it`}},
		{"text after a quote", "log_level: \"info\"x\n", []string{`1:18: text after the value's closing "`}},
		{"alias of nothing", "log_level: *lvl\n", []string{`1:12: *lvl names no anchor`}},
		{"item without colon", "databases:\n  - name a\n    protocol: postgres\n", []string{`2:5: "name a" has no ": " after it`}},
		{"a mistake after a list over lines", "databases:\n  - name: a\n    protect: [\n      127.0.0.1:1,\n    ]\n    mode: \"monitor\n",
			[]string{`6:11: the value quoted with " here is never closed`}},
		{"an indentation mistake after a list over lines", "databases:\n  - name: a\n    protect: [\n      127.0.0.1:1,\n    ]\n   mode: monitor\n",
			[]string{`6:4: `}},
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

// Problems Normalize finds in a file's values (an unknown log level or
// mode, a duration below its floor, a bad address, an entry that lacks a
// key) are FILE:LINE:COLUMN at the value, or at the entry that lacks it,
// as the parser's own; one about the file as a whole names the file alone.
func TestNormalizeNamesFileLineColumn(t *testing.T) {
	const text = `log_level: loud
stats_window: 50ms
discovery:
  interval: 10ms
databases:
  - name: a
    protocol: postgres
    listen: 127.0.0.1:1
    upstream: 127.0.0.1:5432
    mode: block
  - name: b
    protocol: mysql
    listen: 127.0.0.1:2
    max_message_bytes: 10
    catalog: {dsn: "x", refresh: 10ms}
`
	c, err := ParseFile("sqlfwd.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Normalize()
	if err == nil {
		t.Fatal("valid")
	}
	want := []string{
		`sqlfwd.yaml:1:12: log_level "loud": want debug, info, warn or error`,
		`sqlfwd.yaml:2:15: stats_window 50ms is below 100ms`,
		`sqlfwd.yaml:4:13: discovery.interval 10ms is below 100ms`,
		`sqlfwd.yaml:10:11: databases[0] (a): mode "block": want enforce, monitor or detect`,
		`sqlfwd.yaml:15:34: databases[1] (b): catalog: refresh 10ms: want at least 1s`,
		`sqlfwd.yaml:11:5: databases[1] (b): upstream: `, // left out: the entry
		`sqlfwd.yaml:14:24: databases[1] (b): max_message_bytes 10 is below 1024`,
	}
	got := err.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("no %q in\n%s", w, got)
		}
	}
	var fe *FileError
	if !errors.As(err, &fe) || len(fe.Errs) != len(want) {
		t.Errorf("want a FileError of %d problems, got %T:\n%s", len(want), err, got)
	}
	// without a file: the messages alone, as before
	c2, _ := Parse([]byte(text))
	if err := c2.Normalize(); err == nil || strings.Contains(err.Error(), "sqlfwd.yaml") || !strings.Contains(err.Error(), `log_level "loud"`) {
		t.Errorf("Parse then Normalize: %v", err)
	}
	// a problem of no key names the file
	c3, _ := ParseFile("empty.yaml", []byte("log_level: info\n"))
	if err := c3.Normalize(); err == nil || !strings.HasPrefix(err.Error(), "empty.yaml: no databases configured") {
		t.Errorf("no databases: %v", err)
	}
}
