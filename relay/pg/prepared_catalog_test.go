package pg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/config"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/pgsql"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// catalogWithView is a catalog of the table vault, the table items and the
// view v over the query def.
func catalogWithView(def string) *engine.Catalog {
	return pgsql.Dialect.(engine.CatalogReader).BuildCatalog([][][]string{
		{{"public", "vault"}, {"public", "items"}},
		{{"public", "v", def}},
		{}, {}, {}, {},
	}, engine.CatalogOptions{})
}

// A statement prepared (Parse), a SQL PREPARE and a protocol portal (Bind)
// made while view v read items are judged again at their use once the
// catalog in force says v reads the vault, as PostgreSQL re-analyses an
// invalidated prepared statement at its use (plancache.c): the Execute of
// the Parse, the EXECUTE and the Bind are blocked by the rule on the vault,
// and the server never runs them. A portal bound while v read the vault
// stays blocked after v is harmless again (its plan is its Bind's); a fresh
// Bind of the statement then runs. A change of search_path alone judges
// again too (TestVerdictMemorySearchPath).
func TestVerdictMemoryCatalog(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	fs.Named = true
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\nrules:\n  - id: no-vault\n    action: deny\n    reason: the vault is off limits\n    match:\n      tables: [vault]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startWith(t, config.Database{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.Addr(), Mode: modeEnforce, Policy: pol,
	})
	d.eng.Load().SetCatalog(catalogWithView(" SELECT items.id FROM items;"))
	rc := dialRaw(t, d.ln.Addr().String())
	rc.Startup()
	send := func(what string, m []byte, wantBlocked bool) {
		t.Helper()
		rc.Write(m)
		blocked := false
		for _, r := range rc.ReadUntilReady() {
			if r[0] == wire.MsgErrorResponse {
				if string(wire.ErrorField(r, 'C')) != sqlstateBlocked || !strings.Contains(string(wire.ErrorField(r, 'M')), "no-vault") {
					t.Fatalf("%s: %s", what, wire.ErrorField(r, 'M'))
				}
				blocked = true
			}
		}
		if blocked != wantBlocked {
			t.Errorf("%s: blocked %v, want %v", what, blocked, wantBlocked)
		}
	}
	send("parse s", append(parseMsg("s", "select * from v"), syncMsg...), false)
	send("prepare p", q("prepare p as select * from v"), false)
	send("begin", q("begin"), false)
	send("bind b", append(bindMsg("b", "s"), syncMsg...), false)
	send("execute s", append(append(bindMsg("", "s"), execMsg("")...), syncMsg...), false)
	fs.ResetRan()

	d.eng.Load().SetCatalog(catalogWithView(" SELECT vault.id FROM vault;"))
	send("execute b, v now reading the vault", append(execMsg("b"), syncMsg...), true)
	send("rollback", q("rollback"), false)
	send("bind and execute s, v now reading the vault", append(append(bindMsg("", "s"), execMsg("")...), syncMsg...), true)
	send("execute p, v now reading the vault", q("execute p"), true)
	if fs.RanText("select * from v") {
		t.Errorf("the server ran a use of the statement prepared while v was harmless after v came to read the vault")
	}

	// A portal bound now keeps its Bind's verdict; the statement follows v.
	send("begin", q("begin"), false)
	send("bind b2 (v reading the vault)", append(bindMsg("b2", "s"), syncMsg...), true)
	send("rollback", q("rollback"), false)
	send("declare c", q("begin; declare c cursor for select * from v"), true)
	send("rollback", q("rollback"), false)
	d.eng.Load().SetCatalog(catalogWithView(" SELECT items.id FROM items;"))
	fs.ResetRan()
	send("bind and execute s, v harmless again", append(append(bindMsg("", "s"), execMsg("")...), syncMsg...), false)
	send("execute p, v harmless again", q("execute p"), false)
	if !fs.RanText("select * from v") {
		t.Errorf("the server did not run the statement once v was harmless again")
	}
}

// A statement prepared under one search_path is judged again at its use
// under another: PostgreSQL re-analyses it with the path in force
// (plancache.c), so "v" is then the other schema's v.
func TestVerdictMemorySearchPath(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	fs.Named = true
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\nrules:\n  - id: no-vault\n    action: deny\n    reason: the vault is off limits\n    match:\n      tables: [vault]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startWith(t, config.Database{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: fs.Addr(), Mode: modeEnforce, Policy: pol,
	})
	d.eng.Load().SetCatalog(pgsql.Dialect.(engine.CatalogReader).BuildCatalog([][][]string{
		{{"a", "items"}, {"b", "vault"}},
		{{"a", "v", " SELECT items.id FROM a.items;"}, {"b", "v", " SELECT vault.id FROM b.vault;"}},
		{}, {}, {}, {},
	}, engine.CatalogOptions{Resolve: engine.ResolveSearchPath, SearchPathDefaults: map[string]string{"": "a"}}))
	rc := dialRaw(t, d.ln.Addr().String())
	rc.Startup()
	for _, c := range []struct {
		what    string
		m       []byte
		blocked bool
	}{
		{"set search_path = a", q("set search_path = a"), false},
		{"parse s", append(parseMsg("s", "select * from v"), syncMsg...), false},
		{"execute s under a", append(append(bindMsg("", "s"), execMsg("")...), syncMsg...), false},
		{"set search_path = b", q("set search_path = b"), false},
		{"execute s under b", append(append(bindMsg("", "s"), execMsg("")...), syncMsg...), true},
		{"set search_path = a again", q("set search_path = a"), false},
		{"execute s under a again", append(append(bindMsg("", "s"), execMsg("")...), syncMsg...), false},
	} {
		rc.Write(c.m)
		blocked := false
		for _, r := range rc.ReadUntilReady() {
			if r[0] == wire.MsgErrorResponse {
				blocked = string(wire.ErrorField(r, 'C')) == sqlstateBlocked
			}
		}
		if blocked != c.blocked {
			t.Errorf("%s: blocked %v, want %v", c.what, blocked, c.blocked)
		}
	}
}
