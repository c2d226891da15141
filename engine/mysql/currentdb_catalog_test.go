package mysql

import (
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
