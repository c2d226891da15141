package sqlfw_test

// The house's layering (README "Architecture", docs/design.md): which of our
// packages may never depend on which, checked on the real import graph with
// `go list -deps`, and that no daemon file but protocols.go names a protocol.

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/sqlfw/sqlfw"

// never says that no package matched by from (a package path relative to
// the module, or one ending in "/..." for it and everything under it) may
// depend, directly or not, on a package matched by any of to: module
// paths ("wire" and everything under it, "wire/pg"), "std:NAME" for exactly
// the standard library package NAME, or a third-party module path prefix.
// direct checks only the package's own imports: the daemon depends on
// wire/pg through relay/pg (daemon/protocols.go), but frames no bytes itself.
type never struct {
	from   string
	to     []string
	direct bool
}

var nevers = []never{
	{"engine", []string{"github.com/pganalyze/pg_query_go", "github.com/pingcap/tidb", "wire", "relay", "daemon", "bpf", "cgroupstats", "std:net"}, false},
	{"engine/pgsql", []string{"wire", "relay", "daemon", "engine/mysql", "github.com/pingcap/tidb"}, false},
	{"engine/mysql", []string{"wire", "relay", "daemon", "engine/pgsql", "github.com/pganalyze/pg_query_go"}, false},
	{"wire/...", []string{"engine", "relay", "daemon"}, false},
	{"wire/pg", []string{"wire/mysql"}, false},
	{"wire/mysql", []string{"wire/pg"}, false},
	{"relay/...", []string{"daemon", "bpf", "cgroupstats", "engine/pgsql", "engine/mysql"}, false},
	{"relay/pg", []string{"relay/mysql"}, false},
	{"relay/mysql", []string{"relay/pg"}, false},
	{"daemon", []string{"wire"}, true},
	{"bpf/...", []string{"*"}, false},
	{"cgroupstats/...", []string{"*"}, false},
	{"discover/...", []string{"*"}, false},
	{"bench/...", []string{"daemon", "relay", "engine"}, false},
	{"cmd/fwctl", []string{"daemon"}, false},
}

// layout lists the packages the layering is about; each must exist.
var layout = []string{"engine", "engine/pgsql", "engine/mysql", "relay", "relay/pg", "relay/mysql", "wire/pg", "wire/mysql", "daemon", "bpf", "cgroupstats", "discover", "bench", "cmd/fwctl", "cmd/sqlfwd"}

type listed struct {
	ImportPath string
	Deps       []string
	Imports    []string
	Standard   bool
}

// golist returns the packages matched by the patterns with their deps.
func golist(t *testing.T, patterns ...string) []listed {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-e", "-json=ImportPath,Deps,Imports,Standard"}, patterns...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", patterns, err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// matches reports whether import path dep is matched by rule target to.
// "*" is any package of this module other than the rule's own tree.
func matches(to, dep, ownTree string) bool {
	switch {
	case to == "*":
		return strings.HasPrefix(dep, mod+"/") && dep != ownTree && !strings.HasPrefix(dep, ownTree+"/")
	case strings.HasPrefix(to, "std:"):
		return dep == strings.TrimPrefix(to, "std:")
	case strings.Contains(to, "."): // a third-party module
		return dep == to || strings.HasPrefix(dep, to+"/")
	default:
		p := mod + "/" + to
		return dep == p || strings.HasPrefix(dep, p+"/")
	}
}

// violations returns "pkg → dep" for every dependency a rule forbids.
func violations(t *testing.T, n never) []string {
	t.Helper()
	own := mod + "/" + strings.TrimSuffix(n.from, "/...")
	pattern := "./" + n.from
	var bad []string
	for _, p := range golist(t, pattern) {
		if p.ImportPath == "" || strings.HasSuffix(p.ImportPath, ".test") {
			continue
		}
		deps := p.Deps
		if n.direct {
			deps = p.Imports
		}
		for _, dep := range deps {
			for _, to := range n.to {
				if matches(to, dep, own) {
					bad = append(bad, strings.TrimPrefix(p.ImportPath, mod+"/")+" → "+strings.TrimPrefix(dep, mod+"/"))
				}
			}
		}
	}
	return bad
}

func TestLayoutExists(t *testing.T) {
	for _, p := range layout {
		pkgs := golist(t, "./"+p)
		if len(pkgs) != 1 || pkgs[0].ImportPath != mod+"/"+p {
			t.Errorf("package %s: not found (go list gave %+v)", p, pkgs)
		}
	}
}

func TestNevers(t *testing.T) {
	for _, n := range nevers {
		t.Run(strings.ReplaceAll(n.from, "/", "_"), func(t *testing.T) {
			if bad := violations(t, n); len(bad) > 0 {
				t.Errorf("%s may never depend on %v; it does:\n  %s", n.from, n.to, strings.Join(bad, "\n  "))
			}
		})
	}
}

// The checker must see a dependency that exists: the daemon uses the
// engine, the engine's dialect uses pg_query, and everything uses fmt.
func TestNeversCheckerSeesDependencies(t *testing.T) {
	for _, n := range []never{
		{"daemon", []string{"engine"}, false},
		{"engine/pgsql", []string{"github.com/pganalyze/pg_query_go"}, false},
		{"engine/mysql", []string{"github.com/pingcap/tidb"}, false},
		{"engine", []string{"std:fmt"}, false},
		{"daemon", []string{"*"}, false},
		{"daemon", []string{"engine"}, true},
	} {
		if len(violations(t, n)) == 0 {
			t.Errorf("checker found no dependency of %s on %v, which exists: it cannot fail", n.from, n.to)
		}
	}
}

// Only daemon/protocols.go names a protocol: no other daemon file imports
// a protocol's relay or dialect.
func TestDaemonNamesProtocolsInOneFile(t *testing.T) {
	files, err := filepath.Glob("daemon/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("daemon sources: %v (%d files)", err, len(files))
	}
	protocolPkgs := []string{"relay/pg", "relay/mysql", "engine/pgsql", "engine/mysql", "wire/pg", "wire/mysql"}
	named := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			if !slices.ContainsFunc(protocolPkgs, func(p string) bool { return path == mod+"/"+p }) {
				continue
			}
			if filepath.Base(f) == "protocols.go" {
				named++
				continue
			}
			t.Errorf("%s imports %s: only daemon/protocols.go names a protocol", f, path)
		}
	}
	if named == 0 {
		t.Errorf("daemon/protocols.go names no protocol (imports none of %v)", protocolPkgs)
	}
}
