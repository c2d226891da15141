package mysql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestStoredCodeAtCreate: a view's SELECT and a routine's, trigger's or
// event's body are judged at CREATE as they will run, with the default
// policy, and the reason says it was stored code.
func TestStoredCodeAtCreate(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sql, want string // want: a rule id, or "allow"
	}{
		{"CREATE PROCEDURE p() DELETE FROM t", "no-unfiltered-writes"},
		{"CREATE OR REPLACE PROCEDURE p() BEGIN UPDATE t SET a = 1; END", "no-unfiltered-writes"},
		{"CREATE FUNCTION f() RETURNS INT BEGIN DELETE FROM t; RETURN 1; END", "no-unfiltered-writes"},
		{"CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW DELETE FROM u", "no-unfiltered-writes"},
		{"CREATE TRIGGER tr AFTER UPDATE ON t FOR EACH ROW UPDATE u SET c = c + 1 WHERE NEW.flag = 1", "no-unfiltered-writes"},
		{"CREATE VIEW v AS SELECT a FROM t UNION SELECT user FROM mysql.user", "no-catalog-union"},
		{"CREATE OR REPLACE VIEW v AS SELECT a FROM t UNION SELECT table_name FROM information_schema.tables", "no-catalog-union"},
		{"ALTER VIEW v AS SELECT a FROM t UNION SELECT schema_name FROM information_schema.schemata", "no-catalog-union"},
		{"CREATE VIEW v AS SELECT * FROM t WHERE a = 2 OR 1 = 1", "no-tautology"},
		// The benign face: mysqldump's and migrations' triggers and views.
		{"CREATE TRIGGER tr BEFORE UPDATE ON t FOR EACH ROW SET NEW.updated_at = NOW()", "allow"},
		{"CREATE TRIGGER tr AFTER DELETE ON t FOR EACH ROW DELETE FROM u WHERE id = OLD.id", "allow"},
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO audit (tbl, row_id, at) VALUES ('t', NEW.id, NOW())", "allow"},
		{"CREATE TRIGGER tr AFTER UPDATE ON t FOR EACH ROW BEGIN IF NEW.a <> OLD.a THEN UPDATE u SET c = c + 1 WHERE u.id = NEW.uid; END IF; END", "allow"},
		{"CREATE PROCEDURE del_user(IN uid INT) DELETE FROM users WHERE id = uid", "allow"},
		{"CREATE FUNCTION total(oid INT) RETURNS DECIMAL(10,2) READS SQL DATA RETURN (SELECT SUM(price) FROM items WHERE order_id = oid)", "allow"},
		{"CREATE OR REPLACE VIEW active AS SELECT id, name FROM users WHERE deleted_at IS NULL", "allow"},
		{"CREATE ALGORITHM=UNDEFINED SQL SECURITY DEFINER VIEW totals AS SELECT o.id, SUM(i.price) AS total FROM orders o JOIN items i ON i.order_id = o.id GROUP BY o.id", "allow"},
	}
	for _, tc := range tests {
		v := e.Judge([]byte(tc.sql), &engine.Session{User: "app"})
		switch {
		case tc.want == "allow" && v.Action.Denies():
			t.Errorf("%s\n got %s %s (%s), want allow", tc.sql, v.Action, v.RuleID, v.Reason)
		case tc.want != "allow" && (!v.Action.Denies() || v.RuleID != tc.want):
			t.Errorf("%s\n got %s %s (%s), want %s", tc.sql, v.Action, v.RuleID, v.Reason, tc.want)
		case tc.want != "allow" && !strings.Contains(v.Reason, "this statement creates, judged as it will run"):
			t.Errorf("%s\n reason %q does not say it is stored code", tc.sql, v.Reason)
		}
	}
}

// TestStoredCodeScoped: a user-scoped table rule holds through a view or
// routine the user creates, and for the account the code runs as (DEFINER =
// u, SQL SECURITY DEFINER); SQL SECURITY INVOKER code is judged for the
// creating session.
func TestStoredCodeScoped(t *testing.T) {
	p, err := engine.ParsePolicy([]byte(`version: 1
rules:
  - id: app-not-payroll
    action: deny
    users: [app]
    reason: the application account does not read payroll
    match:
      kind: [select]
      tables: [payroll]
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(p, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, sql string
		deny      bool
	}{
		{"app", "SELECT * FROM payroll", true},
		{"app", "CREATE VIEW v AS SELECT * FROM payroll", true},
		{"app", "CREATE OR REPLACE SQL SECURITY INVOKER VIEW v AS SELECT o.id FROM orders o JOIN payroll p ON p.id = o.id", true},
		{"app", "ALTER VIEW v AS SELECT * FROM payroll", true},
		{"app", "CREATE PROCEDURE p() SELECT * FROM payroll", true},
		{"app", "CREATE PROCEDURE p() BEGIN SELECT salary INTO @s FROM payroll WHERE id = 1; END", true},
		{"app", "CREATE FUNCTION f() RETURNS INT RETURN (SELECT COUNT(*) FROM payroll)", true},
		{"app", "CREATE TRIGGER tr AFTER INSERT ON orders FOR EACH ROW INSERT INTO leak SELECT * FROM payroll", true},
		{"app", "CREATE VIEW v AS SELECT * FROM orders", false},
		{"hr", "CREATE VIEW v AS SELECT * FROM payroll", false},
		// Code defined to run as app is judged as app's, whoever creates it.
		{"hr", "CREATE DEFINER = app@'%' VIEW v AS SELECT * FROM payroll", true},
		{"hr", "CREATE DEFINER = `app`@`localhost` PROCEDURE p() SELECT * FROM payroll", true},
		{"hr", "CREATE DEFINER = app@'%' SQL SECURITY INVOKER VIEW v AS SELECT * FROM payroll", false},
		{"app", "CREATE DEFINER = hr@'%' VIEW v AS SELECT * FROM payroll", false},
		{"app", "CREATE DEFINER = CURRENT_USER VIEW v AS SELECT * FROM payroll", true},
	} {
		v := e.Judge([]byte(tc.sql), &engine.Session{User: tc.user})
		if v.Action.Denies() != tc.deny || tc.deny && v.RuleID != "app-not-payroll" {
			t.Errorf("%s as %s: got %s %s (%s), want deny %v", tc.sql, tc.user, v.Action, v.RuleID, v.Reason, tc.deny)
		}
	}
}

// TestReadBody: stored code read on its own (engine.BodyReader) as the
// catalog holds it.
func TestReadBody(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		lang, text, want string
		ok               bool
	}{
		{"sql", "DELETE FROM t", "no-unfiltered-writes", true},
		{"SQL", "BEGIN UPDATE t SET a = 1; END", "no-unfiltered-writes", true},
		{"sql", "BEGIN DELETE FROM t WHERE id = OLD.id; END", "allow", true},
		{"sql", "RETURN (SELECT COUNT(*) FROM t)", "allow", true},
		{"view", "select `t`.`a` AS `a` from `t` union select `user`.`User` AS `User` from `mysql`.`user`", "no-catalog-union", true},
		{"view", "select `t`.`a` AS `a` from `t` where `t`.`b` > 1", "allow", true},
		{"create", "CREATE DEFINER=`root`@`localhost` PROCEDURE `p`() DELETE FROM t", "no-unfiltered-writes", true},
		{"sql", "BEGIN DELETE FROM", "deny", false},
		{"python", "x", "deny", false},
	} {
		_, ok := Dialect.(engine.BodyReader).ReadBody(tc.lang, tc.text)
		if ok != tc.ok {
			t.Errorf("%s %q: ok %v, want %v", tc.lang, tc.text, ok, tc.ok)
		}
		v := e.JudgeBody(e.Body(tc.lang, tc.text, ""), &engine.Session{User: "app"})
		switch {
		case tc.want == "allow" && v.Action.Denies(), tc.want == "deny" && !v.Action.Denies(),
			tc.want != "allow" && tc.want != "deny" && v.RuleID != tc.want:
			t.Errorf("%s %q: got %s %s (%s), want %s", tc.lang, tc.text, v.Action, v.RuleID, v.Reason, tc.want)
		}
	}
}
