package yamlpos

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type rule struct {
	ID      string   `yaml:"id"`
	Limit   int      `yaml:"limit"`
	On      bool     `yaml:"on"`
	Kinds   []string `yaml:"kinds"`
	Comment string   `yaml:"comment"`
}

type doc struct {
	Version int    `yaml:"version"`
	Rules   []rule `yaml:"rules"`
}

func decode(text string) error {
	var d doc
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	return Explain([]byte(text), dec.Decode(&d))
}

// yaml.v3's errors in the file's words, at the line (and column) at fault.
func TestExplain(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"version: 1\nrules:\n  - id: a\n    mach: x\n", `line 4, column 5: unknown key "mach"`},
		{"version: 1\nrules:\n  - id: a\n    limit: 1\n    id: b\n", `line 5, column 5: "id" given twice (first at line 3)`},
		{"version: 1\nrules:\n  - id: a\n    limit: lots\n", `line 4: want a whole number, got "lots"`},
		{"version: 1\nrules:\n  - id: a\n    on: maybe\n", `line 4: want true or false, got "maybe"`},
		{"version: 1\nrules:\n  - id: a\n    kinds: delete\n", `line 4: want a list, got "delete"`},
		{"version: 1\nrules:\n  - id: a\n    comment: [a, b]\n", `line 4: want a single value, got a list`},
		{"version: 1\nrules:\n  - id: a\n    limit: 1\n   on: true\n", `line 5, column 4: indentation of 3 spaces matches no enclosing key`},
		{"version: 1\nrules:\n  - id: a\n\t  on: true\n", `line 4, column 1: a tab in the indentation`},
		{"version: 1\nrules:\n  - id: a\n    limit: 1\n      on: true\n", `line 5, column 7: indented more (6 spaces)`},
	} {
		err := decode(tt.text)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q...", tt.text, err, tt.want)
			continue
		}
		for _, goName := range []string{"main.", "yamlpos.", "int", "[]string", "!!", "unmarshal"} {
			if strings.Contains(strings.TrimPrefix(err.Error(), tt.want), goName) && !strings.Contains(tt.want, goName) {
				t.Errorf("%q: %v names Go's %s", tt.text, err, goName)
			}
		}
	}
	if err := decode("version: 1\nrules:\n  - id: a\n    limit: 2\n    kinds: [x]\n"); err != nil {
		t.Errorf("a valid document: %v", err)
	}
}

// Indentation finds nothing wrong in well-indented YAML, block scalars and
// comments included.
func TestIndentationAcceptsWellFormed(t *testing.T) {
	for _, text := range []string{
		"a: 1\nb:\n  c: 2\n  d:\n    - e: 3\n      f: 4\n    - g\n",
		"rules:\n- id: x\n  reason: |\n    text\n      indented more inside the scalar\n  action: deny\n",
		"# c\na:\n  # indented comment\n    # more\n  b: 1 # trailing\n",
		// lines inside a [ ] or a quoted value begun above are not blocks
		"a:\n  protect: [\n    127.0.0.1:1,\n      127.0.0.1:2,\n  ]\n  mode: x\nb: \"multi\n    line\"\nc: 1\n",
	} {
		if l, c, msg, ok := Indentation([]byte(text)); ok {
			t.Errorf("%q: line %d column %d: %s", text, l, c, msg)
		}
	}
}
