package yamlpos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The repository's YAML files: Lexical (and Indentation) find nothing
// wrong in what yaml.v3 accepts.
var wellFormed = []string{
	"../../deploy/sqlfwd.yaml",
	"../../deploy/nfpm.yaml",
	"../../deploy/prometheus/alerts.yaml",
	"../../deploy/prometheus/alerts_test.yaml",
	"../../deploy/kubernetes/daemonset.yaml",
	"../../deploy/kubernetes/configmap.yaml",
	"../../engine/pgsql/default_policy.yaml",
	"../../engine/mysql/default_policy.yaml",
}

func TestLexicalAcceptsWellFormed(t *testing.T) {
	texts := []string{
		"a: \"x: y\"\nb: 'it''s: fine'\nc: [a, 'b]', {d: e}]\nf: {g: [1, 2], h: \"}\"}\n",
		"dsn: postgres://u:p@host:5432/db?x=1#frag\nurl: http://x/#a\nk: it's\n",
		"a: &base {x: 1}\nb: *base\nc: !!str 5\n",
		"a: \"multi\n  line\"\nb: 'also\n\n  multi'\n",
		"a: |\n  text: with: colons [ and { and \"\n  @at\nb: >-\n  more ] text\nc: [\n  1,\n  2\n]\n",
		"- a\n- b: c\n  d: e\n-\n  - f\n",
		"? complex\n: value\n",
		"a: b # comment: with \" and [\n# only a comment ]\n",
	}
	for _, f := range wellFormed {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
		// nor Indentation, which knows no multi-line [ ] or quotes
		if l, c, msg, ok := Indentation(b); ok {
			t.Errorf("%s: Indentation: line %d column %d: %s", f, l, c, msg)
		}
	}
	for _, text := range texts {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(text), &n); err != nil {
			t.Fatalf("%q: yaml.v3 refuses it: %v", text, err)
		}
		if l, c, msg, ok := Lexical([]byte(text)); ok {
			t.Errorf("%q: line %d column %d: %s", text, l, c, msg)
		}
	}
}

// Each lexical mistake at its place: the opening quote or bracket, not the
// end of the file where yaml.v3 gives up.
func TestLexical(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		line, col  int
		want       string
	}{
		{"double quote on line 1", "log_level: \"info\ndatabases:\n  - name: pg\n", 1, 12, "quoted with \" here is never closed"},
		{"single quote", "log_level: info\ndatabases:\n  - name: 'pg\n    protocol: postgres\n", 3, 11, "quoted with ' here is never closed"},
		{"flow list", "databases: [a, b\nlog_level: info\n", 1, 12, "[ opened here is never closed"},
		{"flow in an entry", "databases:\n  - name: pg\n    protect: [127.0.0.1:5432\n", 3, 14, "[ opened here"},
		{"wrong closer", "a: [1, 2}\n", 1, 9, "} where the [ opened at line 1, column 4 wants ]"},
		{"closes nothing", "a: ]\n", 1, 4, "] closes no ["},
		{"after a closing quote", "a: \"x\"y\n", 1, 7, "text after the value's closing \""},
		{"after a closing bracket", "a: [x]*\n", 1, 7, "text after the closing ]"},
		{"bracket inside a flow value", "a: [A[LL]\n", 1, 6, "a [ inside a value in [ ]"},
		{"colon with no key", ": x\nb: 1\n", 1, 1, `a ": " with no key before it`},
		{"second colon", "log_level: info: x\n", 1, 16, `a second ": "`},
		{"second colon in an item", "databases:\n  - name: a: b\n", 2, 12, `a second ": "`},
		{"alias of no anchor", "log_level: *x\n", 1, 12, "*x names no anchor"},
		{"at sign", "a: @x\n", 1, 4, "cannot start with @"},
		{"backquote", "a:\n  - `x`\n", 2, 5, "cannot start with `"},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tt.text), &n); err == nil {
			t.Errorf("%s: %q: yaml.v3 accepts it", tt.name, tt.text)
		}
		l, c, msg, ok := Lexical([]byte(tt.text))
		if !ok || l != tt.line || c != tt.col || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %q: got %v %d:%d %q, want %d:%d %q", tt.name, tt.text, ok, l, c, msg, tt.line, tt.col, tt.want)
		}
	}
}

// Every single-character mistake yaml.v3 refuses in a real configuration
// (a character deleted, or a quote, bracket, colon, tab, space, @ or *
// put in, at each place) is placed at a line and a column, and that line
// holds the file's text (not past its end).
func TestSyntaxAlwaysHasAColumn(t *testing.T) {
	files := []string{"../../deploy/sqlfwd.yaml", "../../deploy/kubernetes/configmap.yaml"}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := string(b)
		var refused, without int
		try := func(text string) {
			var n yaml.Node
			err := yaml.Unmarshal([]byte(text), &n)
			if err == nil {
				return
			}
			refused++
			line, problem, ok := SyntaxError(err)
			if !ok {
				t.Errorf("%s: not a syntax error: %v", filepath.Base(f), err)
				return
			}
			l, c, msg := Syntax([]byte(text), line, problem)
			if c == 0 || l < 1 || l > strings.Count(text, "\n")+1 {
				without++
				if without <= 5 {
					t.Errorf("%s: %v: placed at %d:%d %q; the changed line %d: %q", filepath.Base(f), err, l, c, msg, changed(base, text), strings.Split(text, "\n")[changed(base, text)-1])
				}
			}
		}
		for i := 0; i < len(base); i++ {
			try(base[:i] + base[i+1:])
			for _, ins := range []string{"\"", "'", "[", "{", "]", ": ", "\t", " ", "@", "*"} {
				try(base[:i] + ins + base[i:])
			}
		}
		t.Logf("%s: %d mutations refused by yaml.v3, %d without a column", filepath.Base(f), refused, without)
		if without > 0 {
			t.Errorf("%s: %d of %d refused texts placed without a column", filepath.Base(f), without, refused)
		}
	}
}

// changed is the line where text first differs from base.
func changed(base, text string) int {
	n := 1
	for k := 0; k < len(text) && k < len(base) && text[k] == base[k]; k++ {
		if text[k] == '\n' {
			n++
		}
	}
	return n
}
