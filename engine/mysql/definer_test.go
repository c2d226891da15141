package mysql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestMyDefinerAtCall: a routine of SQL SECURITY DEFINER (the default) runs
// as its DEFINER, and a trigger always does: rules scoped to users are
// checked for the definer, not the session's user; SQL SECURITY INVOKER
// runs as the caller.
func TestMyDefinerAtCall(t *testing.T) {
	rows := myCatalogRows()
	rows[2] = append(rows[2],
		[]string{"shop", "peek_root", "FUNCTION", "text", "RETURN (SELECT s FROM secrets LIMIT 1)", "DEFINER", "root@localhost"},
		[]string{"shop", "peek_app", "FUNCTION", "text", "RETURN (SELECT s FROM secrets LIMIT 1)", "DEFINER", "app@%"},
		[]string{"shop", "peek_inv", "FUNCTION", "text", "RETURN (SELECT s FROM secrets LIMIT 1)", "INVOKER", "root@localhost"},
		[]string{"shop", "wipe_root", "PROCEDURE", "", "DELETE FROM orders", "DEFINER", "root@localhost"},
	)
	rows[0] = append(rows[0], []string{"shop", "log"})
	rows[4] = append(rows[4], []string{"shop", "t_log", "shop", "log", "INSERT", "AFTER", "UPDATE secrets SET s = 'x' WHERE id = NEW.id", "app@%"})
	cat := Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{})
	pol, err := engine.ParsePolicy([]byte(`
rules:
  - {id: app-no-secrets, action: deny, users: [app], match: {tables: [secrets]}}
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
	for _, tc := range []struct{ user, sql, rule, says string }{
		{"app", "SELECT peek_root()", "", ""},
		{"app", "SELECT peek_inv()", "app-no-secrets", "peek_inv"},
		{"root", "SELECT peek_app()", "app-no-secrets", "as its owner app"},
		{"root", "SELECT peek_inv()", "", ""},
		{"app", "CALL wipe_root()", "no-wipe", "as its owner root"},
		{"root", "INSERT INTO log VALUES (1)", "app-no-secrets", "trigger shop.t_log"},
		{"app", "SELECT peek()", "app-no-secrets", "peek"}, // no DEFINER read: the session's
	} {
		for range 2 {
			v := e.Judge([]byte(tc.sql), &engine.Session{User: tc.user, Database: "shop"})
			if v.RuleID != tc.rule || !strings.Contains(v.Reason, tc.says) {
				t.Errorf("%s as %s: %s (%s), want %q naming %q", tc.sql, tc.user, v.RuleID, v.Reason, tc.rule, tc.says)
				break
			}
		}
	}
}

// TestMyAlterSecurityDefiner: ALTER PROCEDURE / FUNCTION ... SQL SECURITY
// DEFINER makes the body run as its DEFINER from now on: it is judged
// again as that account (a procedure of app's reading secrets is app's
// read, denied; one of root's is not), a routine the catalog does not
// hold is unknown_object; the other characteristics change no runner.
func TestMyAlterSecurityDefiner(t *testing.T) {
	rows := myCatalogRows()
	rows[2] = append(rows[2],
		[]string{"shop", "peek_app_inv", "PROCEDURE", "", "SELECT s FROM secrets", "INVOKER", "app@%"},
		[]string{"shop", "peek_root_inv", "PROCEDURE", "", "SELECT s FROM secrets", "INVOKER", "root@localhost"},
	)
	pol, err := engine.ParsePolicy([]byte(`
rules:
  - {id: app-no-secrets, action: deny, users: [app], match: {tables: [secrets]}}
  - {id: unknown-object, action: deny, match: {unknown_object: true}}
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(pol, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetCatalog(Dialect.(engine.CatalogReader).BuildCatalog(rows, engine.CatalogOptions{}))
	for _, tc := range []struct{ sql, rule, says string }{
		{"ALTER PROCEDURE peek_app_inv SQL SECURITY DEFINER", "app-no-secrets", "now run as app"},
		{"ALTER PROCEDURE shop.peek_app_inv COMMENT 'x' SQL SECURITY DEFINER", "app-no-secrets", "peek_app_inv"},
		{"alter procedure `peek_app_inv` sql security definer", "app-no-secrets", "peek_app_inv"},
		{"ALTER PROCEDURE peek_root_inv SQL SECURITY DEFINER", "", ""},
		{"ALTER PROCEDURE peek_app_inv SQL SECURITY INVOKER", "", ""},
		{"ALTER PROCEDURE peek_app_inv COMMENT 'x' MODIFIES SQL DATA", "", ""},
		{"ALTER PROCEDURE nowhere SQL SECURITY DEFINER", "unknown-object", "nowhere"},
		{"ALTER PROCEDURE peek_app_inv SQL SECURITY DEFINER DETERMINISTIC", "parse-error", ""},
	} {
		v := e.Judge([]byte(tc.sql), &engine.Session{User: "root", Database: "shop"})
		if v.RuleID != tc.rule || !strings.Contains(v.Reason, tc.says) {
			t.Errorf("%s: %s (%s), want %q naming %q", tc.sql, v.RuleID, v.Reason, tc.rule, tc.says)
		}
	}
}
