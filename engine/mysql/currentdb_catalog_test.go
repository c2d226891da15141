package mysql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestMyCatalogCurrentDatabase: an unqualified name is the object of the
// session's current database, in both directions (a harmless shop.v and
// shop.wipe, a dangerous evil.v and evil.wipe); with none selected every
// database's object of the name is judged; stored code resolves its own
// unqualified names in its own database, whatever the session's is.
func TestMyCatalogCurrentDatabase(t *testing.T) {
	rows := myCatalogRows()
	rows[0] = append(rows[0], []string{"evil", "orders"}, []string{"evil", "v"}, []string{"shop", "v"}, []string{"Mixed", "v"})
	rows[1] = append(rows[1],
		[]string{"shop", "v", "select `shop`.`items`.`id` AS `id` from `shop`.`items`"},
		[]string{"evil", "v", "select `shop`.`secrets`.`s` AS `s` from `shop`.`secrets`"},
		[]string{"mixed", "v", "select `shop`.`secrets`.`s` AS `s` from `shop`.`secrets`"},
	)
	rows[2] = append(rows[2],
		[]string{"shop", "tidy", "PROCEDURE", "", "DELETE FROM orders WHERE id = 1"},
		[]string{"evil", "tidy", "PROCEDURE", "", "DELETE FROM orders"},
		[]string{"evil", "peek2", "FUNCTION", "text", "RETURN (SELECT s FROM secrets LIMIT 1)"},
	)
	cat := Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
	pol, err := engine.ParsePolicy([]byte(`
rules:
  - {id: app-no-secrets, action: deny, users: [app], match: {tables: [shop.secrets]}}
  - {id: no-wipe, action: deny, match: {kind: [delete], without_where: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(pol, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetCatalog(cat)
	for _, tc := range []struct {
		db, sql, want string
	}{
		{"shop", "SELECT * FROM v", ""},
		{"evil", "SELECT * FROM v", "app-no-secrets"},
		{"EVIL", "SELECT * FROM v", "app-no-secrets"}, // compared without case
		{"", "SELECT * FROM v", "app-no-secrets"},
		{"nowhere", "SELECT * FROM v", "app-no-secrets"}, // no v there: every one
		{"shop", "CALL tidy()", ""},
		{"evil", "CALL tidy()", "no-wipe"},
		{"", "CALL tidy()", "no-wipe"},
		{"shop", "CALL evil.tidy()", "no-wipe"},
		{"evil", "CALL shop.tidy()", ""},
		{"shop", "SELECT * FROM evil.v", "app-no-secrets"},
		{"evil", "SELECT * FROM shop.v", ""},
		// evil.peek2 reads secrets unqualified: evil.secrets, which the
		// rule on shop.secrets does not name, from any session.
		{"shop", "SELECT evil.peek2()", ""},
		// shop.peek reads shop.secrets wherever it is called from.
		{"evil", "SELECT shop.peek()", "app-no-secrets"},
		{"mixed", "SELECT * FROM v", "app-no-secrets"},
	} {
		s := &engine.Session{User: "app", Database: tc.db}
		for range 2 {
			if v := e.Judge([]byte(tc.sql), s); v.RuleID != tc.want {
				t.Errorf("in %q: %s: %s (%s), want %q", tc.db, tc.sql, v.RuleID, v.Reason, tc.want)
				break
			}
		}
	}
}

// TestMyCatalogUncoveredDatabase: a session whose current database is not
// one the monitoring account sees (information_schema.SCHEMATA) has its
// unqualified names in that database, which the catalog does not hold:
// they are unknown_object, not another database's object of the name (a
// harmless shop.v or shop.tidy says nothing of hidden.v or hidden.tidy).
// Names qualified with a database the catalog covers are judged by its
// objects from any session.
func TestMyCatalogUncoveredDatabase(t *testing.T) {
	rows := myCatalogRows()
	rows[0] = append(rows[0], []string{"shop", "v"})
	rows[1] = append(rows[1], []string{"shop", "v", "select `shop`.`items`.`id` AS `id` from `shop`.`items`"})
	rows[2] = append(rows[2], []string{"shop", "tidy", "PROCEDURE", "", "DELETE FROM orders WHERE id = 1"})
	rows = append(rows, [][]string{{"shop"}, {"Mixed"}, {"mysql"}, {"information_schema"}})
	cat := Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetCatalog(cat)
	for _, tc := range []struct {
		db, sql, want, why string
	}{
		{"shop", "SELECT * FROM v", "", ""},
		{"SHOP", "SELECT * FROM v", "", ""}, // compared without case
		{"mixed", "SELECT id FROM items WHERE id = 1", "", ""},
		{"", "SELECT * FROM v", "", ""},
		{"hidden", "SELECT * FROM v", "unknown-object", "relation v is in the session's database: the session's database is not one the catalog was read in"},
		{"hidden", "SELECT id FROM items WHERE id = 1", "unknown-object", "relation items"},
		{"hidden", "INSERT INTO audit VALUES (1)", "unknown-object", "relation audit"},
		{"hidden", "CALL tidy()", "unknown-object", "routine tidy is in the session's database"},
		{"hidden", "CALL nothere()", "unknown-object", "procedure nothere is not in the catalog"},
		{"hidden", "SELECT add1()", "unknown-object", "routine add1"},
		{"hidden", "SELECT 1", "", ""},
		{"hidden", "SELECT NOW()", "", ""},
		{"hidden", "SELECT * FROM information_schema.tables WHERE table_name = 'x'", "", ""},
		// qualified with a covered database: that database's objects
		{"hidden", "CALL shop.wipe()", "no-unfiltered-writes", "call shop.wipe"},
		{"hidden", "SELECT * FROM shop.v", "", ""},
		{"shop", "CALL wipe()", "no-unfiltered-writes", "call shop.wipe"},
	} {
		s := &engine.Session{User: "app", Database: tc.db}
		for range 2 {
			if v := e.Judge([]byte(tc.sql), s); v.RuleID != tc.want || !strings.Contains(v.Reason, tc.why) {
				t.Errorf("in %q: %s: %s (%s), want %q with %q", tc.db, tc.sql, v.RuleID, v.Reason, tc.want, tc.why)
				break
			}
		}
	}
}
