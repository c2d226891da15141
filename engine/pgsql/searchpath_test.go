package pgsql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// twoSchemaRows: a function f, a view v and a table-named view items in
// two schemas, one harmless (safe) and one dangerous (evil: f deletes
// every row of orders, v reads secrets), a temporary view items of some
// session over secrets shadowing public.items, and the login roles'
// search_path defaults (app: safe, public; everyone else the server's
// "$user", public).
func twoSchemaRows() [][][]string {
	rows := pgCatalogRows()
	rows[0] = append(rows[0], []string{"pg_temp_3", "items"})
	rows[1] = append(rows[1],
		[]string{"safe", "v", " SELECT items.id\n   FROM public.items;"},
		[]string{"evil", "v", " SELECT secrets.s\n   FROM secrets;"},
		[]string{"pg_temp_3", "items", " SELECT secrets.id, secrets.s AS name\n   FROM secrets;"},
	)
	rows[2] = append(rows[2],
		[]string{"safe", "f", "f", "CREATE OR REPLACE FUNCTION safe.f()\n RETURNS integer\n LANGUAGE sql\nAS $function$ select 1 $function$\n"},
		[]string{"evil", "f", "f", "CREATE OR REPLACE FUNCTION evil.f()\n RETURNS void\n LANGUAGE sql\nAS $function$ delete from public.orders $function$\n"},
	)
	return append(rows,
		[][]string{{"app", "false", "search_path=safe, public"}}, // search_path settings
		[][]string{{`"$user", public`, "default"}},               // search_path
		nil, // implicit set_config
	)
}

// TestSearchPathResolves: an unqualified name is the object the session's
// search_path picks, in both directions (the harmless schema first, the
// dangerous one first); with the path unknown every schema's object of
// the name is judged; a temporary relation shadowing a name comes first
// unless the path puts pg_temp after it.
func TestSearchPathResolves(t *testing.T) {
	cat := Dialect.(engine.CatalogReader).BuildCatalog(twoSchemaRows(), engine.CatalogOptions{})
	pol, err := engine.ParsePolicy([]byte(scopedPolicy))
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := engine.New(pol, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	def, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scoped.SetCatalog(cat)
	def.SetCatalog(cat)
	tests := []struct {
		name string
		e    *engine.Engine
		user string
		path string
		sql  string
		want string // rule id; "" allowed
	}{
		{"safe first: f", def, "app", "safe, public", "SELECT f()", ""},
		{"evil first: f", def, "app", "evil, public", "SELECT f()", "no-unfiltered-writes"},
		{"evil later: f", def, "app", "safe, evil", "SELECT f()", "no-unfiltered-writes"}, // overloads: every schema on the path
		{"safe first: v", scoped, "app", "safe, public", "SELECT * FROM v", ""},
		{"evil first: v", scoped, "app", "evil, safe, public", "SELECT * FROM v", "app-no-secrets"},
		{"safe before evil: v", scoped, "app", "safe, evil", "SELECT * FROM v", ""}, // a relation: the first on the path
		{"quoted path", scoped, "app", `"evil", public`, "SELECT * FROM v", "app-no-secrets"},
		{"unknown: f", def, "app", "", "SELECT f()", "no-unfiltered-writes"},
		{"unknown: v", scoped, "app", "", "SELECT * FROM v", "app-no-secrets"},
		{"role default: f", def, "app", engine.SearchPathDefault, "SELECT f()", ""},
		{"role default: v", scoped, "app", engine.SearchPathDefault, "SELECT * FROM v", ""},
		{"server default, neither schema: f", def, "dba", engine.SearchPathDefault, "SELECT f()", "no-unfiltered-writes"},
		{"$user", def, "evil", `"$user", public`, "SELECT f()", "no-unfiltered-writes"},
		{"$user safe", def, "safe", `"$user", public`, "SELECT f()", ""},
		{"qualified evil", def, "app", "safe, public", "SELECT evil.f()", "no-unfiltered-writes"},
		{"qualified safe", def, "app", "evil, public", "SELECT safe.f()", ""},
		{"a path PostgreSQL rejects", def, "app", "safe,,public", "SELECT f()", "no-unfiltered-writes"},
		// pg_temp is searched first for relations unless the path names it.
		{"temp shadows", scoped, "app", "public", "SELECT * FROM items", "app-no-secrets"},
		{"temp named first", scoped, "app", "pg_temp, public", "SELECT * FROM items", "app-no-secrets"},
		{"temp named last", scoped, "app", "public, pg_temp", "SELECT * FROM items", ""},
		{"temp never for routines", def, "app", "pg_temp, safe", "SELECT f()", ""},
		{"pg_catalog first", scoped, "app", "public", "SELECT * FROM pg_class", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &engine.Session{User: tc.user, SearchPath: tc.path}
			for range 2 { // computed, then remembered
				if v := tc.e.Judge([]byte(tc.sql), s); v.RuleID != tc.want {
					t.Fatalf("%s with search_path %q: %s (%s), want %q", tc.sql, tc.path, v.RuleID, v.Reason, tc.want)
				}
			}
		})
	}
	// One text in sessions of different paths, in turn: each its own.
	for range 2 {
		for _, p := range []string{"safe", "evil", "safe"} {
			v := def.Judge([]byte("SELECT f()"), &engine.Session{User: "app", SearchPath: p})
			if (v.RuleID != "") != (p == "evil") {
				t.Fatalf("path %s: %s", p, v.RuleID)
			}
		}
	}
}

// TestSearchPathFollowed: what a text does to the search_path, as the
// relay reads it: a plain SET is followed, anything else that changes it,
// or may, is not (and the verdict says so).
func TestSearchPathFollowed(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql     string
		changes bool   // Verdict.ChangesPath without a catalog
		set     string // SearchPathSet's value; "" none
	}{
		{"SET search_path = app, public", true, "app, public"},
		{"SET search_path TO \"App\", public", true, `"App", public`},
		{"set session search_path = '$user', public", true, "$user, public"},
		{"RESET search_path", true, engine.SearchPathDefault},
		{"SET search_path TO DEFAULT", true, engine.SearchPathDefault},
		{"SET LOCAL search_path = app", true, ""},
		{"SET search_path = 'app, public'", true, ""}, // one schema named "app, public"
		{"SET search_path = app; SELECT 1", true, ""},
		{"BEGIN; SET search_path = app; ROLLBACK", true, ""},
		{"SELECT set_config('search_path', 'app', false)", true, ""},
		{"SELECT pg_catalog.set_config('search_path', 'app', false)", true, ""},
		{"SET ROLE other", true, ""},
		{"SET SESSION AUTHORIZATION other", true, ""},
		{"RESET ALL", true, ""},
		{"DISCARD ALL", true, ""},
		{"DO $$ BEGIN PERFORM 1; END $$", true, ""},
		{"EXECUTE stmt", true, ""},
		{"SELECT my_function()", true, ""},
		{"INSERT INTO t VALUES (1)", true, ""},
		{"CALL p()", true, ""},
		{"SELECT 1 FROM (", true, ""}, // a parse error
		{"SELECT lower(name) FROM t WHERE id = 1", false, ""},
		{"SET work_mem = '64MB'", false, ""},
		{"SHOW search_path", false, ""},
		{"SELECT current_setting('search_path')", false, ""},
	} {
		v := e.Judge([]byte(tc.sql), nil)
		if v.ChangesPath != tc.changes {
			t.Errorf("%s: ChangesPath %v, want %v", tc.sql, v.ChangesPath, tc.changes)
		}
		if p, ok := e.SearchPathSet([]byte(tc.sql), nil); p != tc.set || ok != (tc.set != "") {
			t.Errorf("%s: SearchPathSet %q %v, want %q", tc.sql, p, ok, tc.set)
		}
	}
}

// TestSearchPathThroughCatalog: with a catalog, a call or a write whose
// code is known and leaves the path alone does not change it; code that
// sets it, or that the catalog cannot read, may.
func TestSearchPathThroughCatalog(t *testing.T) {
	rows := twoSchemaRows()
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{}))
	s := &engine.Session{User: "app", SearchPath: "safe, public"}
	for _, tc := range []struct {
		sql     string
		changes bool
	}{
		{"SELECT f()", false},
		{"SELECT add1(2)", false},
		{"INSERT INTO items VALUES (1)", false},
		{"SELECT ext('x')", true},     // a C function: not read
		{"SELECT nowhere_fn()", true}, // not in the catalog
		{"INSERT INTO nowhere VALUES (1)", true},
		{"SET search_path = evil", true},
	} {
		if v := e.Judge([]byte(tc.sql), s); v.ChangesPath != tc.changes {
			t.Errorf("%s: ChangesPath %v (%s), want %v", tc.sql, v.ChangesPath, v.RuleID, tc.changes)
		}
	}
	// A routine that sets the path may run where no statement names it:
	// no session's path is followed.
	rows[2] = append(rows[2], []string{"public", "setter", "f", "CREATE OR REPLACE FUNCTION public.setter()\n RETURNS void\n LANGUAGE plpgsql\nAS $function$ begin perform set_config('search_path', 'evil', false); end $function$\n"})
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{}))
	if v := e.Judge([]byte("SELECT f()"), s); v.RuleID != "no-unfiltered-writes" || !v.ChangesPath {
		t.Errorf("with a routine that sets the path: %s %v, want every f judged", v.RuleID, v.ChangesPath)
	}
	rows = twoSchemaRows()
	rows[len(rows)-1] = [][]string{{"a column default"}}
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{}))
	if v := e.Judge([]byte("SELECT f()"), s); v.RuleID != "no-unfiltered-writes" {
		t.Errorf("with a default that calls set_config: %s, want every f judged", v.RuleID)
	}
}

func TestParseSearchPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // joined with |; "!" rejected
	}{
		{`"$user", public`, "u|public"},
		{`App,  "B c" ,x`, `app|B c|x`},
		{`"a""b"`, `a"b`},
		{``, ``},
		{`a,`, "!"},
		{`a b`, "!"},
		{`"a`, "!"},
	} {
		got, ok := engine.ParseSearchPath(tc.in, "u")
		s := strings.Join(got, "|")
		if !ok {
			s = "!"
		}
		if s != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, s, tc.want)
		}
	}
}
