package pgsql

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// pgCatalogRows is what PostgreSQL 15 answers CatalogQueries for a schema
// with a secrets table, a view over it, a function that deletes every row
// of orders, a trigger function with a WHERE-less UPDATE fired by INSERTs
// on audit, a DO ALSO DELETE rule on events, and NOT NULL columns
// (definitions as pg_get_viewdef, pg_get_functiondef and pg_get_ruledef
// print them).
func pgCatalogRows() [][][]string {
	return [][][]string{
		{ // relations
			{"public", "secrets"}, {"public", "orders"}, {"public", "audit"}, {"public", "events"}, {"public", "items"},
			{"pg_catalog", "pg_class"}, {"other", "orders"},
		},
		{ // views
			{"public", "v_secrets", " SELECT secrets.id,\n    secrets.s\n   FROM secrets;"},
			{"public", "v_v", " SELECT v_secrets.id\n   FROM v_secrets;"},
			{"public", "v_items", " SELECT items.id, items.name\n   FROM items;"},
		},
		{ // routines
			{"public", "wipe", "f", "CREATE OR REPLACE FUNCTION public.wipe()\n RETURNS void\n LANGUAGE sql\nAS $function$ delete from orders $function$\n"},
			{"public", "peek", "f", "CREATE OR REPLACE FUNCTION public.peek()\n RETURNS SETOF text\n LANGUAGE sql\nAS $function$ select s from secrets $function$\n"},
			{"public", "touch", "f", "CREATE OR REPLACE FUNCTION public.touch()\n RETURNS trigger\n LANGUAGE plpgsql\nAS $function$ begin update orders set total = 0; return new; end $function$\n"},
			{"public", "purge", "p", "CREATE OR REPLACE PROCEDURE public.purge()\n LANGUAGE plpgsql\nAS $procedure$ begin delete from orders; end $procedure$\n"},
			{"public", "ext", "f", "CREATE OR REPLACE FUNCTION public.ext(bytea)\n RETURNS bytea\n LANGUAGE c\n IMMUTABLE STRICT\nAS '$libdir/pgcrypto', $function$pg_digest$function$\n"},
			{"public", "add1", "f", "CREATE OR REPLACE FUNCTION public.add1(integer)\n RETURNS integer\n LANGUAGE sql\nAS $function$ select $1 + 1 $function$\n"},
		},
		{ // triggers: tgtype 5 = ROW | INSERT
			{"public", "t_touch", "public", "audit", "5", "public", "touch"},
		},
		{ // rules: ev_type 3 = INSERT
			{"public", "r_also", "public", "events", "3", "CREATE RULE r_also AS\n    ON INSERT TO public.events DO  DELETE FROM orders;"},
		},
		{ // not null columns
			{"public", "orders", "id"}, {"public", "items", "id"}, {"other", "orders", "id"},
		},
	}
}

const scopedPolicy = `
mode: enforce
rules:
  - id: app-no-secrets
    action: deny
    users: [app]
    reason: the application role may not read secrets
    match: {tables: [secrets]}
`

// TestCatalogObjects: a statement is judged by what the objects it names
// do, with the rule the direct statement would meet, and the reason names
// the chain.
func TestCatalogObjects(t *testing.T) {
	cat := Dialect.(engine.CatalogReader).BuildCatalog(pgCatalogRows(), engine.CatalogOptions{})
	def, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := engine.ParsePolicy([]byte(scopedPolicy))
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := engine.New(pol, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	app := &engine.Session{User: "app"}
	dba := &engine.Session{User: "dba"}
	tests := []struct {
		e       *engine.Engine
		s       *engine.Session
		sql     string
		without string // rule id without the catalog ("" allow)
		with    string // rule id with it
		via     string // in the reason with it
	}{
		{scoped, app, "SELECT * FROM v_secrets", "", "app-no-secrets", "view public.v_secrets → secrets"},
		{scoped, app, "SELECT id FROM public.v_v", "", "app-no-secrets", "view public.v_v"},
		{scoped, app, "SELECT * FROM (SELECT * FROM v_secrets) x", "", "app-no-secrets", "v_secrets"},
		{scoped, app, "WITH q AS (SELECT * FROM v_v) SELECT * FROM q", "", "app-no-secrets", "v_v"},
		{scoped, app, "UPDATE v_secrets SET s = 'x' WHERE id = 1", "", "app-no-secrets", "v_secrets"},
		{scoped, app, "SELECT peek()", "", "app-no-secrets", "call public.peek"},
		{scoped, app, "SELECT * FROM public.peek()", "", "app-no-secrets", "call public.peek"},
		{scoped, app, "SELECT i.id FROM items i JOIN v_secrets v ON v.id = i.id", "", "app-no-secrets", "v_secrets"},
		{scoped, app, "SELECT id FROM items WHERE EXISTS (SELECT 1 FROM v_v WHERE v_v.id = items.id)", "", "app-no-secrets", "v_v"},
		{scoped, app, "SELECT id FROM items UNION ALL SELECT id FROM v_secrets", "", "app-no-secrets", "v_secrets"},
		{scoped, app, "SELECT id FROM items ORDER BY (SELECT count(*) FROM peek())", "", "app-no-secrets", "peek"},
		{scoped, app, "INSERT INTO items (name) SELECT s FROM v_secrets", "", "app-no-secrets", "v_secrets"},
		{scoped, app, "DELETE FROM items WHERE name IN (SELECT peek())", "", "app-no-secrets", "peek"},
		// The facts fold quoted names too: "V_SECRETS" is judged as the view as well (more, never fewer).
		{scoped, app, "SELECT * FROM \"V_SECRETS\"", "", "app-no-secrets", "v_secrets"},
		{scoped, dba, "SELECT * FROM v_secrets", "", "", ""},
		{scoped, app, "SELECT * FROM v_items", "", "", ""},
		{def, app, "SELECT wipe()", "", "no-unfiltered-writes", "call public.wipe → DELETE without WHERE"},
		{def, app, "SELECT public.wipe() FROM items WHERE id = 3", "", "no-unfiltered-writes", "wipe"},
		{def, app, "CALL purge()", "", "no-unfiltered-writes", "call public.purge → DELETE without WHERE"},
		{def, app, "INSERT INTO audit VALUES (1)", "", "no-unfiltered-writes", "trigger public.t_touch on public.audit → UPDATE without WHERE"},
		{def, app, "INSERT INTO events VALUES (1)", "", "no-unfiltered-writes", "rule public.r_also on public.events"},
		{def, app, "INSERT INTO items VALUES (wipe())", "", "no-unfiltered-writes", "wipe"},
		{def, app, "WITH w AS (SELECT wipe()) SELECT 1 FROM w", "", "no-unfiltered-writes", "wipe"},
		{def, app, "INSERT INTO audit SELECT id FROM items WHERE id = 1", "", "no-unfiltered-writes", "trigger public.t_touch"},
		{def, app, "COPY audit FROM STDIN", "", "no-unfiltered-writes", "trigger public.t_touch"},
		{def, app, "WITH x AS (INSERT INTO public.events VALUES (1) RETURNING 1) SELECT * FROM x", "", "no-unfiltered-writes", "rule public.r_also"},
		{def, app, "UPDATE events SET x = 1 WHERE id = 2", "", "", ""}, // the rule is ON INSERT
		{def, app, "DELETE FROM audit WHERE id = 2", "", "", ""},       // the trigger is ON INSERT
		{def, app, "SELECT add1(2)", "", "", ""},
		{def, app, "DELETE FROM orders WHERE id IS NOT NULL", "", "no-unfiltered-writes", "NOT NULL column"},
		{def, app, "DELETE FROM public.orders WHERE orders.id IS NOT NULL", "", "no-unfiltered-writes", "NOT NULL"},
		{def, app, "UPDATE items SET name = 'x' WHERE id IS NOT NULL OR id = 3", "", "no-unfiltered-writes", "NOT NULL"},
		{def, app, "DELETE FROM orders WHERE id > 0", "", "", ""},           // data-dependent
		{def, app, "DELETE FROM orders WHERE note IS NOT NULL", "", "", ""}, // note may be NULL
		{def, app, "DELETE FROM orders WHERE id IS NOT NULL AND id = 4", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			tc.e.SetCatalog(nil)
			if v := tc.e.Judge([]byte(tc.sql), tc.s); v.RuleID != tc.without {
				t.Fatalf("without the catalog: %s (%s), want %q", v.RuleID, v.Reason, tc.without)
			}
			tc.e.SetCatalog(cat)
			defer tc.e.SetCatalog(nil)
			for range 2 { // computed, then remembered
				v := tc.e.Judge([]byte(tc.sql), tc.s)
				if v.RuleID != tc.with {
					t.Fatalf("with the catalog: %s (%s), want %q", v.RuleID, v.Reason, tc.with)
				}
				if !strings.Contains(v.Reason, tc.via) {
					t.Fatalf("reason %q does not name %q", v.Reason, tc.via)
				}
			}
		})
	}
}

// TestCatalogUnknownObject: a name the catalog cannot resolve, or a body it
// cannot read, is unknown_object, which the default policy logs.
func TestCatalogUnknownObject(t *testing.T) {
	cat := Dialect.(engine.CatalogReader).BuildCatalog(pgCatalogRows(), engine.CatalogOptions{})
	def, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	def.SetCatalog(cat)
	for _, tc := range []struct{ sql, rule, why string }{
		{"SELECT * FROM nowhere", "unknown-object", "relation nowhere is not in the catalog"},
		{"SELECT ext('x')", "unknown-object", "function public.ext"},
		{"INSERT INTO other.nowhere VALUES (1)", "unknown-object", "other.nowhere"},
		{"SELECT * FROM pg_class", "", ""},
		{"SELECT * FROM pg_catalog.pg_namespace", "", ""},
		{"SELECT * FROM items", "", ""},
		{"SELECT count(*) FROM other.orders", "", ""},
	} {
		v := def.Judge([]byte(tc.sql), &engine.Session{User: "app"})
		if v.RuleID != tc.rule || !strings.Contains(v.Reason, tc.why) {
			t.Errorf("%s: %s %s (%s), want %s with %q", tc.sql, v.Action, v.RuleID, v.Reason, tc.rule, tc.why)
		}
	}
	trusted := Dialect.(engine.CatalogReader).BuildCatalog(pgCatalogRows(), engine.CatalogOptions{TrustSchemas: []string{"public"}})
	def.SetCatalog(trusted)
	if v := def.Judge([]byte("SELECT ext('x')"), nil); v.RuleID != "" {
		t.Errorf("trusted schema: %s (%s)", v.RuleID, v.Reason)
	}
}

// BenchmarkVerdictRepeatedThroughCatalog: a cached verdict with a catalog in
// force, for a statement through a view (0 allocations: the catalog's
// facts are remembered per text and catalog).
func BenchmarkVerdictRepeatedThroughCatalog(b *testing.B) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(pgCatalogRows(), engine.CatalogOptions{}))
	sql := []byte("SELECT id, name FROM v_items WHERE id = 42")
	s := &engine.Session{User: "app"}
	e.Judge(sql, s)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e.Judge(sql, s)
	}
}

// syntheticCatalog is a schema of n tables, each with a view, a SQL
// function, a PL/pgSQL trigger and two NOT NULL columns: the rows the
// catalog queries return for it.
func syntheticCatalog(n int) [][][]string {
	rows := make([][][]string, 6)
	for i := range n {
		t := "t" + strconv.Itoa(i)
		rows[0] = append(rows[0], []string{"public", t})
		rows[1] = append(rows[1], []string{"public", "v_" + t, " SELECT " + t + ".id,\n    " + t + ".name\n   FROM " + t + "\n  WHERE " + t + ".id > 0;"})
		rows[2] = append(rows[2],
			[]string{"public", "f_" + t, "f", "CREATE OR REPLACE FUNCTION public.f_" + t + "(integer)\n RETURNS integer\n LANGUAGE sql\nAS $function$ select count(*)::int from " + t + " where id = $1 $function$\n"},
			[]string{"public", "tg_" + t, "f", "CREATE OR REPLACE FUNCTION public.tg_" + t + "()\n RETURNS trigger\n LANGUAGE plpgsql\nAS $function$ begin insert into audit values (new.id, now()); return new; end $function$\n"})
		rows[3] = append(rows[3], []string{"public", "trg_" + t, "public", t, "29", "public", "tg_" + t})
		rows[5] = append(rows[5], []string{"public", t, "id"}, []string{"public", t, "name"})
	}
	return rows
}

// BenchmarkCatalogBuild is the cost of one refresh's reading, per size of
// schema (docs/performance.md): every definition parsed and judged.
func BenchmarkCatalogBuild(b *testing.B) {
	for _, n := range []int{100, 1000} {
		rows := syntheticCatalog(n)
		b.Run(strconv.Itoa(n)+"-tables", func(b *testing.B) {
			b.ReportAllocs()
			var c *engine.Catalog
			for range b.N {
				c = Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
			}
			b.ReportMetric(float64(c.Bytes()), "catalog-bytes")
			b.ReportMetric(float64(c.Objects()), "objects")
		})
		b.Run(strconv.Itoa(n)+"-tables-unchanged", func(b *testing.B) {
			prev := Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				prev = Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{Previous: prev})
			}
		})
	}
}

// TestCatalogOtherDatabase: the catalog is the one database's its
// connection reads (the search_path query's current_database()). A session
// to another database through the same listener (the startup message's
// database) is judged as one whose every object is unknown_object: that
// database's wipe() or v_secrets may be anything, whatever the catalog's
// database holds of those names. A text without user objects, or naming
// only the server's own relations and built-ins, stays as it was.
func TestCatalogOtherDatabase(t *testing.T) {
	rows := pgCatalogRows()
	for len(rows) < 7 {
		rows = append(rows, nil)
	}
	rows = append(rows, [][]string{{`"$user", public`, "default", "appdb"}})
	cat := Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
	def, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	def.SetCatalog(cat)
	in := &engine.Session{User: "app", Database: "appdb", SearchPath: engine.SearchPathDefault}
	other := &engine.Session{User: "app", Database: "otherdb", SearchPath: engine.SearchPathDefault}
	upper := &engine.Session{User: "app", Database: "APPDB", SearchPath: engine.SearchPathDefault}
	const why = "the session's database is not one the catalog was read in"
	for _, tc := range []struct {
		sql        string
		inRule     string // in appdb
		otherRule  string // in otherdb
		otherWhy   string
		otherAllow bool // otherdb: allowed without a log
	}{
		{"SELECT wipe()", "no-unfiltered-writes", "unknown-object", "routine wipe is not in the catalog: " + why, false},
		{"SELECT public.wipe()", "no-unfiltered-writes", "unknown-object", "routine public.wipe", false},
		{"SELECT add1(2)", "", "unknown-object", "routine add1", false},
		{"CALL purge()", "no-unfiltered-writes", "unknown-object", "purge is not in the catalog: " + why, false},
		{"SELECT * FROM v_secrets", "", "unknown-object", "relation v_secrets is not in the catalog: " + why, false},
		{"SELECT id FROM items WHERE id = 1", "", "unknown-object", "relation items", false},
		{"INSERT INTO audit VALUES (1)", "no-unfiltered-writes", "unknown-object", "relation audit", false},
		{"CREATE SCHEMA s2", "", "unknown-object", "event triggers are not known: " + why, false},
		{"DROP TABLE items", "", "unknown-object", "relation items", false},
		{"SELECT 1", "", "", "", true},
		{"SELECT now(), lower('A')", "", "", "", true},
		{"SELECT * FROM pg_class", "", "", "", true},
		{"SELECT * FROM pg_catalog.pg_namespace", "", "", "", true},
	} {
		for range 2 { // computed, then remembered
			if v := def.Judge([]byte(tc.sql), in); v.RuleID != tc.inRule {
				t.Errorf("%s in appdb: %s %s (%s), want %q", tc.sql, v.Action, v.RuleID, v.Reason, tc.inRule)
			}
			if v := def.Judge([]byte(tc.sql), upper); v.RuleID != tc.otherRule {
				// PostgreSQL's database names keep their case: APPDB is another
				t.Errorf("%s in APPDB: %s %s (%s), want %q", tc.sql, v.Action, v.RuleID, v.Reason, tc.otherRule)
			}
			v := def.Judge([]byte(tc.sql), other)
			if v.RuleID != tc.otherRule || !strings.Contains(v.Reason, tc.otherWhy) {
				t.Errorf("%s in otherdb: %s %s (%s), want %q with %q", tc.sql, v.Action, v.RuleID, v.Reason, tc.otherRule, tc.otherWhy)
			}
			if tc.otherAllow != (v.Action == engine.ActionAllow) {
				t.Errorf("%s in otherdb: %s", tc.sql, v.Action)
			}
		}
	}
	// A catalog whose rows do not say their database (a snapshot from
	// before) judges every session with its objects, as before.
	def.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(pgCatalogRows(), engine.CatalogOptions{}))
	if v := def.Judge([]byte("SELECT wipe()"), other); v.RuleID != "no-unfiltered-writes" {
		t.Errorf("no database in the rows: %s (%s)", v.RuleID, v.Reason)
	}
	// Its own search_path defaults are per database: not followed.
	def.SetCatalog(cat)
	if v := def.Judge([]byte("SELECT wipe()"), &engine.Session{User: "app", Database: "otherdb", SearchPath: "evil"}); v.RuleID != "unknown-object" {
		t.Errorf("otherdb with a path: %s (%s)", v.RuleID, v.Reason)
	}
}

// TestCatalogOtherDatabaseRemembered: sessions of the catalog's database
// and of another judging the same text in turn reuse its facts through
// each (the foreign catalog shares the generation under a key of its
// own): no allocation once both are remembered, and each keeps its verdict.
func TestCatalogOtherDatabaseRemembered(t *testing.T) {
	rows := pgCatalogRows()
	for len(rows) < 7 {
		rows = append(rows, nil)
	}
	rows = append(rows, [][]string{{`"$user", public`, "default", "appdb"}})
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{}))
	in := &engine.Session{User: "app", Database: "appdb", SearchPath: engine.SearchPathDefault}
	other := &engine.Session{User: "app", Database: "otherdb", SearchPath: engine.SearchPathDefault}
	q := []byte("SELECT wipe()")
	var bad int
	allocs := testing.AllocsPerRun(200, func() {
		if e.Judge(q, in).RuleID != "no-unfiltered-writes" || e.Judge(q, other).RuleID != "unknown-object" {
			bad++
		}
	})
	if bad != 0 {
		t.Fatalf("%d rounds judged otherwise", bad)
	}
	if allocs != 0 {
		t.Errorf("%.1f allocations per pair of judgements, want 0", allocs)
	}
}

// TestCatalogMovedInMessage: a routine or relation an earlier statement of
// the same message renames or moves is still held by its old name in the
// catalog while the message runs; a later statement naming it by its new
// name is judged by what it is (DROP FUNCTION good(); ALTER FUNCTION evil()
// RENAME TO good; SELECT good() in one message).
func TestCatalogMovedInMessage(t *testing.T) {
	cat := Dialect.(engine.CatalogReader).BuildCatalog(pgCatalogRows(), engine.CatalogOptions{})
	def, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := engine.ParsePolicy([]byte(scopedPolicy))
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := engine.New(pol, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	app := &engine.Session{User: "app"}
	for _, tc := range []struct {
		e         *engine.Engine
		sql, rule string
	}{
		{def, "DROP FUNCTION add1(integer); ALTER FUNCTION wipe() RENAME TO add1; SELECT add1(2)", "no-unfiltered-writes"},
		{def, "ALTER FUNCTION public.wipe() RENAME TO add1; SELECT add1(2)", "no-unfiltered-writes"},
		{def, "ALTER ROUTINE wipe RENAME TO add1; SELECT public.add1(2)", "no-unfiltered-writes"},
		{def, "ALTER PROCEDURE purge() RENAME TO tidy; CALL tidy()", "no-unfiltered-writes"},
		{def, "ALTER FUNCTION wipe() RENAME TO add1; SELECT 1; SELECT * FROM items WHERE id = add1(1)", "no-unfiltered-writes"},
		{def, "ALTER TABLE audit RENAME TO items; INSERT INTO items VALUES (1)", "no-unfiltered-writes"},
		{def, "ALTER TABLE events RENAME TO items; INSERT INTO items VALUES (1)", "no-unfiltered-writes"},
		{scoped, "ALTER VIEW v_secrets RENAME TO v_items; SELECT * FROM v_items", "app-no-secrets"},
		{scoped, "ALTER TABLE v_secrets RENAME TO v_items; SELECT * FROM v_items", "app-no-secrets"},
		{scoped, "ALTER FUNCTION peek() RENAME TO add1; SELECT add1(1)", "app-no-secrets"},
		{scoped, "ALTER FUNCTION peek() SET SCHEMA other; SELECT other.peek()", "app-no-secrets"},
		// The new name is not called, or the move comes after the call.
		{def, "ALTER FUNCTION wipe() RENAME TO add1; SELECT 1", ""},
		{def, "SELECT add1(2); ALTER FUNCTION wipe() RENAME TO add1", ""},
		{def, "ALTER FUNCTION add1(integer) RENAME TO add2; SELECT add2(1)", ""},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			tc.e.SetCatalog(cat)
			defer tc.e.SetCatalog(nil)
			for range 2 { // computed, then remembered
				if v := tc.e.Judge([]byte(tc.sql), app); v.RuleID != tc.rule {
					t.Fatalf("%s (%s), want %q", v.RuleID, v.Reason, tc.rule)
				}
			}
		})
	}
}

// TestCatalogBodySetRole: a called function whose body switches the role
// or the session's authorization is judged as the switch sent on its own:
// SET SESSION AUTHORIZATION and SET ROLE (or set_config('role', …, false))
// to a privileged role meet no-identity-switch; SET ROLE to an ordinary role
// is allowed, as it is sent directly (rules' users: scopes are the login
// role, docs/policy.md).
func TestCatalogBodySetRole(t *testing.T) {
	rows := pgCatalogRows()
	def := func(name, lang, body string) []string {
		return []string{"public", name, "f", "CREATE OR REPLACE FUNCTION public." + name + "()\n RETURNS void\n LANGUAGE " + lang + "\nAS $function$ " + body + " $function$\n"}
	}
	rows[2] = append(rows[2],
		def("sr", "plpgsql", "begin set role postgres; end"),
		def("sr2", "sql", "select set_config('role', 'postgres', false)"),
		def("sa", "plpgsql", "begin set session authorization bob; end"),
		def("srb", "plpgsql", "begin set role bob; end"),
		def("outer_sr", "sql", "select sr()"),
	)
	cat := Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetCatalog(cat)
	app := &engine.Session{User: "app"}
	for _, tc := range []struct{ sql, rule string }{
		{"SELECT sr()", "no-identity-switch"},
		{"SELECT sr2()", "no-identity-switch"},
		{"SELECT sa()", "no-identity-switch"},
		{"SELECT outer_sr()", "no-identity-switch"},
		{"SET ROLE postgres", "no-identity-switch"},
		{"SELECT srb()", ""},
		{"SET ROLE bob", ""},
	} {
		if v := e.Judge([]byte(tc.sql), app); v.RuleID != tc.rule {
			t.Errorf("%s: %s (%s), want %q", tc.sql, v.RuleID, v.Reason, tc.rule)
		}
	}
}
