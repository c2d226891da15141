package pgsql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestCatalogPerDatabase: a catalog read in another database, put in
// force by SetDatabaseCatalogs (daemon/catalogdb.go), judges the sessions
// in that database by its objects; a session in a database with none is
// still judged with every object unknown.
func TestCatalogPerDatabase(t *testing.T) {
	read := func(db string) *engine.Catalog {
		rows := pgCatalogRows()
		for len(rows) < 7 {
			rows = append(rows, nil)
		}
		rows = append(rows, [][]string{{`"$user", public`, "default", db}})
		return Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
	}
	app, other := read("appdb"), read("otherdb")
	if !app.OneDatabase() || !app.Covers("appdb") || app.Covers("otherdb") || !other.Covers("otherdb") {
		t.Fatalf("OneDatabase %v, Covers appdb %v otherdb %v, other covers otherdb %v", app.OneDatabase(), app.Covers("appdb"), app.Covers("otherdb"), other.Covers("otherdb"))
	}
	def, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	def.SetCatalog(app)
	def.SetDatabaseCatalogs(map[string]*engine.Catalog{"otherdb": other})
	in := func(db string) *engine.Session {
		return &engine.Session{User: "app", Database: db, SearchPath: engine.SearchPathDefault}
	}
	for _, tc := range []struct{ sql, db, rule string }{
		{"SELECT wipe()", "appdb", "no-unfiltered-writes"},
		{"SELECT wipe()", "otherdb", "no-unfiltered-writes"},
		{"SELECT wipe()", "thirddb", "unknown-object"},
		{"INSERT INTO audit VALUES (1)", "otherdb", "no-unfiltered-writes"},
		{"SELECT id FROM items WHERE id = 1", "otherdb", ""},
		{"SELECT id FROM items WHERE id = 1", "thirddb", "unknown-object"},
	} {
		for range 2 { // computed, then remembered
			if v := def.Judge([]byte(tc.sql), in(tc.db)); v.RuleID != tc.rule {
				t.Errorf("%s in %s: %s %s (%s), want %q", tc.sql, tc.db, v.Action, v.RuleID, v.Reason, tc.rule)
			}
		}
	}
	def.SetDatabaseCatalogs(nil)
	if v := def.Judge([]byte("SELECT id FROM items WHERE id = 1"), in("otherdb")); v.RuleID != "unknown-object" {
		t.Errorf("without otherdb's catalog: %s (%s), want unknown-object", v.RuleID, v.Reason)
	}
}
