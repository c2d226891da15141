package main

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/config"
)

// unroff undoes the generator's escapes and fonts, so that a page can be
// compared with the help text it came from.
func unroff(s string) string {
	r := strings.NewReplacer(`\fB`, "", `\fI`, "", `\fR`, "", `\-`, "-", `\e`, `\`, `\&`, "")
	return unicodeRE.ReplaceAllStringFunc(r.Replace(s), func(m string) string {
		n, _ := strconv.ParseUint(m[3:len(m)-1], 16, 32)
		return string(rune(n))
	})
}

// unicodeRE is groff's named Unicode character, as the generator writes a
// character beyond ASCII (\[u2192] for →).
var unicodeRE = regexp.MustCompile(`\\\[u[0-9A-F]{4,6}\]`)

// TestPagesAgreeWithHelp builds sqlfwd and fwctl, generates the pages as
// make build does, and checks that they say what --help says: every flag of
// sqlfwd with its argument and usage, every line of fwctl's usage and of
// each command's --help, and every key of the configuration file. groff,
// when installed, must render them without a warning.
func TestPagesAgreeWithHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds both commands")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "../../cmd/sqlfwd", "../../cmd/fwctl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	pages, err := generate(bin, "../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}

	help, err := output(filepath.Join(bin, "sqlfwd"), "--help")
	if err != nil {
		t.Fatal(err)
	}
	man8 := unroff(pages["sqlfwd.8"])
	flags := parseFlags(help)
	if len(flags) < 40 {
		t.Fatalf("parsed %d flags from sqlfwd --help, want them all:\n%s", len(flags), help)
	}
	for _, f := range flags {
		want := "--" + f.name
		if f.arg != "" {
			want += " " + f.arg
		}
		if !strings.Contains(man8, ".TP\n"+want+"\n"+f.usage+"\n") {
			t.Errorf("sqlfwd.8 lacks --%s as --help gives it (%q)", f.name, f.usage)
		}
	}
	for _, l := range strings.Split(help, "\n") {
		if t2 := strings.TrimSpace(l); t2 != "" && !strings.HasPrefix(t2, "Usage of") && !strings.Contains(man8, t2) {
			t.Errorf("sqlfwd.8 lacks the --help line %q", t2)
		}
	}

	man1 := unroff(pages["fwctl.1"])
	fwctl := filepath.Join(bin, "fwctl")
	usage, err := output(fwctl, "help")
	if err != nil {
		t.Fatal(err)
	}
	cmds := fwctlCommands(usage)
	if len(cmds) < 14 {
		t.Fatalf("fwctl help lists %v", cmds)
	}
	texts := []string{usage}
	for _, c := range cmds {
		if c == "version" {
			continue
		}
		h, err := output(fwctl, c, "--help")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(man1, ".SS "+c+"\n") {
			t.Errorf("fwctl.1 has no section for %s", c)
		}
		texts = append(texts, h)
	}
	for _, text := range texts {
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			if !strings.Contains(man1, l+"\n") {
				t.Errorf("fwctl.1 lacks the help line %q", l)
			}
		}
	}
	for _, w := range []string{"SQLFW_CONTROL_SOCKET", "--json", "--control-socket"} {
		if !strings.Contains(man1, w) {
			t.Errorf("fwctl.1 does not mention %s", w)
		}
	}

	man5 := unroff(pages["sqlfwd.yaml.5"])
	for _, k := range yamlKeys(reflect.TypeOf(config.Config{})) {
		if !strings.Contains(man5, k) {
			t.Errorf("sqlfwd.yaml.5 does not document the key %s", k)
		}
	}

	if groff, err := exec.LookPath("groff"); err == nil {
		for name, text := range pages {
			c := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
			c.Stdin = strings.NewReader(text)
			if out, err := c.CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("groff %s: %v\n%s", name, err, out)
			}
		}
	}
}

// yamlKeys lists the yaml key names of a configuration type, nested
// structures and lists included.
func yamlKeys(t reflect.Type) []string {
	seen := map[reflect.Type]bool{}
	var keys []string
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name != "" {
				keys = append(keys, name)
			}
			walk(f.Type)
		}
	}
	walk(t)
	return keys
}
