package sqlfw_test

// The house's layering (README "Architecture", docs/design.md): which of our
// packages may never depend on which, checked on the real import graph
// (`go list -test`: a package's tests too), and that the protocols are named
// in one place, protocol/builtin.

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const mod = "github.com/sqlfw/sqlfw"

// never says that no package matched by from (a package path relative to
// the module, or one ending in "/..." for it and everything under it) may
// depend, directly or not, on a package matched by any of to: module
// paths ("wire" and everything under it, "wire/pg"), "std:NAME" for exactly
// the standard library package NAME, or a third-party module path prefix.
// direct checks only the package's own imports (fwctl reaches the
// dialects through protocol/builtin, but names none itself).
//
// A rule holds for the package's tests (_test.go files, internal and
// external) too, unless tests says why they may break it.
type never struct {
	from   string
	to     []string
	direct bool
	tests  string
}

// protocolPkgs are the packages of one protocol: its relay, wire package
// and dialect. Only protocol/builtin imports them all (and each protocol's
// own packages each other).
var protocolPkgs = []string{"relay/pg", "relay/mysql", "wire/pg", "wire/mysql", "engine/pgsql", "engine/mysql"}

// protocolNamers are protocolPkgs and the package that registers them.
var protocolNamers = append(slices.Clone(protocolPkgs), "protocol/builtin")

var nevers = []never{
	{"engine", []string{"github.com/pganalyze/pg_query_go", "github.com/pingcap/tidb", "wire", "relay", "daemon", "bpf", "cgroupstats", "config", "protocol", "std:net"}, false,
		"the engine's external tests (package engine_test) run one rule table under every dialect"},
	{"engine/pgsql", []string{"wire", "relay", "daemon", "config", "protocol", "engine/mysql", "github.com/pingcap/tidb"}, false, ""},
	{"engine/mysql", []string{"wire", "relay", "daemon", "config", "protocol", "engine/pgsql", "github.com/pganalyze/pg_query_go"}, false, ""},
	{"wire/...", []string{"engine", "relay", "daemon", "config", "protocol"}, false, ""},
	{"wire/pg", []string{"wire/mysql"}, false, ""},
	{"wire/mysql", []string{"wire/pg"}, false, ""},
	{"relay/...", []string{"daemon", "bpf", "cgroupstats", "protocol/builtin"}, false, ""},
	{"relay/...", []string{"engine/pgsql", "engine/mysql", "config", "protocol"}, false,
		"relay/pg's proxy tests build their engine through config from the protocol table, with the real PostgreSQL dialect (relay/pg/main_test.go); each relay's tests read what a text changes in the session through their protocol's dialect (relaytest.Sessions)"},
	{"relay/pg", []string{"relay/mysql"}, false, ""},
	{"relay/mysql", []string{"relay/pg"}, false, ""},
	// the table's shape names no protocol and stands below config
	{"protocol", append(slices.Clone(protocolNamers), "config", "daemon", "control", "bpf", "cgroupstats"), false, ""},
	// config reads every protocol fact from the table; its tests register
	// a table of their own (config/protocols_test.go)
	{"config", append(slices.Clone(protocolNamers), "daemon", "bpf", "cgroupstats", "github.com/pganalyze/pg_query_go", "github.com/pingcap/tidb"), false, ""},
	{"daemon", protocolNamers, false,
		"the daemon's tests serve real sessions of the built-in protocols: TestMain registers protocol/builtin as cmd/sqlfwd does, and relay/pg/pgtest scripts the server"},
	{"control", []string{"config", "protocol", "daemon", "relay", "wire", "bpf", "cgroupstats", "audit", "discover", "engine/pgsql", "engine/mysql"}, false, ""},
	{"audit/...", []string{"*"}, false, ""},
	{"internal/...", []string{"*"}, false, "internal/mangen's tests compare the man pages with config's keys"},
	{"internal/yamlpos", []string{"*"}, false, ""},
	{"internal/corpus", []string{"*"}, false, ""},
	{"bpf/...", []string{"*"}, false, "bpf's tests find the cgroup2 mount with cgroupstats (helpers_test.go)"},
	{"bpf/...", []string{"daemon", "relay", "engine", "wire", "config", "protocol", "discover", "control", "audit"}, false, ""},
	{"cgroupstats/...", []string{"*"}, false, ""},
	{"discover/...", []string{"*"}, false, ""},
	{"bench/...", []string{"daemon", "relay", "engine", "config", "protocol"}, false, ""},
	{"cmd/fwctl", []string{"daemon"}, false, ""},
	// the binaries reach the protocols through protocol/builtin only
	{"cmd/fwctl", protocolPkgs, true, ""},
	{"cmd/sqlfwd", protocolPkgs, true, ""},
}

// layout lists the packages the layering is about; each must exist.
var layout = []string{"engine", "engine/pgsql", "engine/mysql", "relay", "relay/pg", "relay/mysql", "wire/pg", "wire/mysql", "protocol", "protocol/builtin", "config", "control", "audit", "internal/yamlpos", "daemon", "bpf", "cgroupstats", "discover", "bench", "cmd/fwctl", "cmd/sqlfwd"}

// listed is one package of go list -test: the package itself, or with
// ForTest set, a package as its tests compile it ("P [P.test]", and the
// external "P_test [P.test]"), or the test binary "P.test".
type listed struct {
	ImportPath string
	Deps       []string
	Imports    []string
	Standard   bool
	ForTest    string
}

// tested returns the package a go list -test entry belongs to and whether
// the entry is its tests' (a test variant or the test binary).
func (p listed) tested() (string, bool) {
	if p.ForTest != "" {
		return p.ForTest, true
	}
	if strings.HasSuffix(p.ImportPath, ".test") {
		return strings.TrimSuffix(p.ImportPath, ".test"), true
	}
	return p.ImportPath, false
}

// golist returns the packages matched by the patterns with their deps.
func golist(t *testing.T, patterns ...string) []listed {
	t.Helper()
	readSources(t)
	cmd := exec.Command("go", append([]string{"list", "-e", "-test", "-json=ImportPath,Deps,Imports,Standard,ForTest"}, patterns...)...)
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

var sourcesRead sync.Once

// readSources opens every directory and Go file of the module once: go test
// caches a result by the files the test itself opened, and go list, which
// reads the sources, is another process. Without this, a new import would
// leave go test . passing from its cache.
func readSources(t *testing.T) {
	sourcesRead.Do(func() {
		err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
				return filepath.SkipDir
			case d.IsDir() || strings.HasSuffix(path, ".go") || path == "go.mod":
				f, err := os.Open(path)
				if err != nil {
					return err
				}
				return f.Close()
			}
			return nil
		})
		if err != nil {
			t.Fatalf("reading the sources: %v", err)
		}
	})
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
	seen := map[string]bool{}
	for _, p := range golist(t, pattern) {
		pkg, isTest := p.tested()
		if p.ImportPath == "" || (isTest && n.tests != "") {
			continue
		}
		// the test binary "P.test" imports only testing's main: its Deps
		// are the whole test's, its Imports say nothing
		if n.direct && strings.HasSuffix(p.ImportPath, ".test") && p.ForTest == "" {
			continue
		}
		deps := p.Deps
		if n.direct {
			deps = p.Imports
		}
		who := strings.TrimPrefix(pkg, mod+"/")
		if isTest {
			who += " (tests)"
		}
		for _, dep := range deps {
			// a test variant of a package ("relay [config.test]") is
			// that package
			dep, _, _ = strings.Cut(dep, " [")
			if isTest && (dep == pkg || dep == pkg+"_test") {
				continue
			}
			for _, to := range n.to {
				if line := who + " → " + strings.TrimPrefix(dep, mod+"/"); matches(to, dep, own) && !seen[line] {
					seen[line] = true
					bad = append(bad, line)
				}
			}
		}
	}
	return bad
}

func TestLayoutExists(t *testing.T) {
	for _, p := range layout {
		found := false
		for _, l := range golist(t, "./"+p) {
			if _, isTest := l.tested(); !isTest && l.ImportPath == mod+"/"+p {
				found = true
			}
		}
		if !found {
			t.Errorf("package %s: not found", p)
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
// engine, the engine's dialect uses pg_query, and everything uses fmt;
// config reaches relay through the table; and only tests reach some: the
// daemon's register protocol/builtin, the engine's run the dialects, the
// external test package of wire/mysql imports it.
func TestNeversCheckerSeesDependencies(t *testing.T) {
	for _, n := range []never{
		{"daemon", []string{"engine"}, false, ""},
		{"engine/pgsql", []string{"github.com/pganalyze/pg_query_go"}, false, ""},
		{"engine/mysql", []string{"github.com/pingcap/tidb"}, false, ""},
		{"engine", []string{"std:fmt"}, false, ""},
		{"daemon", []string{"*"}, false, ""},
		{"daemon", []string{"engine"}, true, ""},
		{"config", []string{"relay"}, false, ""},
		{"cmd/fwctl", []string{"protocol/builtin"}, true, ""},
		{"daemon", []string{"protocol/builtin"}, false, ""},
		{"daemon", []string{"protocol/builtin"}, true, ""},
		{"engine", []string{"engine/mysql"}, false, ""},
		{"relay/pg", []string{"engine/pgsql"}, true, ""},
	} {
		if len(violations(t, n)) == 0 {
			t.Errorf("checker found no dependency of %s on %v, which exists: it cannot fail", n.from, n.to)
		}
	}
}

// The protocols are registered in one place: no package of ours but
// protocol/builtin imports the packages of more than one protocol, and
// none outside a protocol's own packages imports them but protocol/builtin
// (and tests, under the rules above). A second registry would be a second
// place that names protocols.
func TestProtocolsNamedInOnePlace(t *testing.T) {
	own := map[string]string{} // a protocol package → its protocol
	for _, p := range protocolPkgs {
		own[mod+"/"+p] = p[strings.LastIndex(p, "/")+1:]
	}
	side := map[string]string{"pg": "pg", "pgsql": "pg", "mysql": "mysql"}
	builtin := 0
	for _, p := range golist(t, "./...") {
		if _, isTest := p.tested(); isTest || p.ImportPath == "" {
			continue
		}
		var named []string
		for _, im := range p.Imports {
			if proto, ok := own[im]; ok && !slices.Contains(named, side[proto]) {
				named = append(named, side[proto])
			}
		}
		rel := strings.TrimPrefix(p.ImportPath, mod+"/")
		switch {
		case len(named) == 0:
		case rel == "protocol/builtin":
			builtin = len(named)
		case slices.Contains(protocolPkgs, rel) || strings.HasPrefix(rel, "relay/pg/") || strings.HasPrefix(rel, "relay/mysql/"):
			if len(named) > 1 {
				t.Errorf("%s, one protocol's package, imports the packages of %v", rel, named)
			}
		case strings.HasPrefix(rel, "bench/") || strings.HasPrefix(rel, "e2e"):
			// a benchmark or end-to-end program drives one relay or
			// dialect as such
		default:
			t.Errorf("%s imports the protocol packages of %v: only protocol/builtin names protocols (config, daemon and fwctl read protocol.Named)", rel, named)
		}
	}
	if builtin < 2 {
		t.Errorf("protocol/builtin registers %d protocols' packages, want both", builtin)
	}
}

// sqlWords are the SQL keywords a statement's meaning is read by. The
// relays leave reading SQL to the dialects (engine.SessionEffector,
// Engine.SQLOps, Engine.SearchPathSet): a relay that compares text with
// one of them reads SQL itself.
var sqlWords = []string{
	"select", "insert", "update", "delete", "replace", "set", "names", "use", "prepare", "execute",
	"deallocate", "declare", "immediate", "drop", "call", "create", "alter", "begin", "commit",
	"rollback", "grant", "revoke", "show", "reset", "discard", "fetch", "savepoint",
	"release", "copy", "explain", "handler", "load", "lock", "unlock", "flush", "kill",
}

// sqlWritten are the literals by which a relay writes a statement for the
// engine to judge, reading none: a protocol command judged as the SQL it
// amounts to.
var sqlWritten = map[string]string{
	"SHOW COLUMNS FROM `": "relay/mysql: COM_FIELD_LIST is judged as SHOW COLUMNS FROM `table`",
}

// TestRelaysReadNoSQL: no string literal of a relay's own code (tests and
// the test kits, relay/relaytest's toy dialect and relay/pg/pgtest's
// scripted server, aside) is an SQL keyword or starts with one, but the
// statements it writes (sqlWritten): what a statement means or changes in
// the session is the dialect's answer, which the relay applies.
func TestRelaysReadNoSQL(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("relay", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && strings.HasSuffix(d.Name(), "test"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			w, _, _ := strings.Cut(strings.TrimSpace(strings.ToLower(s)), " ")
			if _, written := sqlWritten[s]; slices.Contains(sqlWords, w) && !written {
				t.Errorf("%s: %s reads SQL in the relay: ask the dialect (engine.SessionEffector)", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
