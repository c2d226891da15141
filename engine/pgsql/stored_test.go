package pgsql

import (
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestStoredCodeAtCreate: code a statement stores is judged at CREATE as it
// will run, with the default policy, and the reason says it was stored code
// (the rule a direct statement meets, not a rule of its own).
func TestStoredCodeAtCreate(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sql, want string // want: a rule id, or "allow"
		body      bool   // the reason names stored code
	}{
		{`CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'DELETE FROM t'`, "no-unfiltered-writes", true},
		{`CREATE OR REPLACE FUNCTION f() RETURNS void AS 'UPDATE t SET a = 1'`, "no-unfiltered-writes", true},
		{`CREATE PROCEDURE p() BEGIN ATOMIC DELETE FROM t; END`, "no-unfiltered-writes", true},
		{`CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC UPDATE t SET a = 1 WHERE true; SELECT 1; END`, "no-unfiltered-writes", true},
		{`CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE t SET a = 1; RETURN NEW; END $$`, "no-unfiltered-writes", true},
		{`CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE t SET a = 1 WHERE NEW.flag; RETURN NEW; END $$`, "no-unfiltered-writes", true},
		{`CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN IF true THEN BEGIN LOOP DELETE FROM t; EXIT; END LOOP; END; END IF; END $$`, "no-unfiltered-writes", true},
		{`CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'DELETE FROM t'; END $$`, "no-unfiltered-writes", true},
		{`CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'CREATE FUNCTION g() RETURNS void LANGUAGE sql AS ''DELETE FROM t'''; END $$`, "no-unfiltered-writes", true},
		{`CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'DELETE FROM t WHERE ' || $1; END $$`, "no-dynamic-sql", true},
		{`CREATE FUNCTION f() RETURNS SETOF text LANGUAGE sql AS 'SELECT name FROM products UNION SELECT usename FROM pg_user'`, "no-catalog-union", true},
		{`CREATE VIEW v AS SELECT a FROM t UNION SELECT usename FROM pg_user`, "no-catalog-union", true},
		{`CREATE OR REPLACE VIEW v AS SELECT id FROM t WHERE 1 = 1 OR id = 2`, "no-tautology", true},
		{`CREATE MATERIALIZED VIEW v AS SELECT a FROM t UNION SELECT usename FROM pg_user`, "no-catalog-union", true},
		{`CREATE RULE r AS ON INSERT TO t DO ALSO DELETE FROM u`, "no-unfiltered-writes", true},
		{`CREATE OR REPLACE RULE r AS ON UPDATE TO t DO INSTEAD (UPDATE u SET a = 1; SELECT 1)`, "no-unfiltered-writes", true},
		{`DO $$ BEGIN EXECUTE 'CREATE FUNCTION g() RETURNS void LANGUAGE sql AS ''DELETE FROM t'''; END $$`, "no-unfiltered-writes", true},
		// The benign face.
		{`CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.updated_at := now(); RETURN NEW; END $$`, "allow", false},
		{`CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO audit_log(tbl, op, row_id) VALUES (TG_TABLE_NAME, TG_OP, NEW.id); RETURN NEW; END $$`, "allow", false},
		{`CREATE FUNCTION del() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM children WHERE parent_id = OLD.id; UPDATE parents SET n = n - 1 WHERE id = OLD.parent_id; RETURN OLD; END $$`, "allow", false},
		{`CREATE FUNCTION get(uid int) RETURNS SETOF users LANGUAGE sql STABLE AS 'SELECT * FROM users WHERE id = $1'`, "allow", false},
		{`CREATE FUNCTION purge(days int) RETURNS void LANGUAGE sql AS $$ DELETE FROM sessions WHERE created_at < now() - make_interval(days => days) $$`, "allow", false},
		{`CREATE VIEW active_users AS SELECT id, name FROM users WHERE active`, "allow", false},
		{`CREATE RULE r AS ON DELETE TO v DO INSTEAD DELETE FROM t WHERE id = OLD.id`, "allow", false},
		{`CREATE RULE r AS ON INSERT TO v DO INSTEAD INSERT INTO t VALUES (NEW.id, NEW.name)`, "allow", false},
	}
	for _, tc := range tests {
		v := e.Judge([]byte(tc.sql), nil)
		switch {
		case tc.want == "allow" && v.Action.Denies():
			t.Errorf("%s\n got %s %s (%s), want allow", tc.sql, v.Action, v.RuleID, v.Reason)
		case tc.want != "allow" && (!v.Action.Denies() || v.RuleID != tc.want):
			t.Errorf("%s\n got %s %s (%s), want %s", tc.sql, v.Action, v.RuleID, v.Reason, tc.want)
		case tc.body != strings.Contains(v.Reason, "this statement creates, judged as it will run"):
			t.Errorf("%s\n reason %q: stored code named %v, want %v", tc.sql, v.Reason, !tc.body, tc.body)
		}
	}
}

// TestStoredCodeScoped: a view's query and a function's body are judged in
// the session of the role that creates them, against the rules scoped to
// it: a role kept away from a table cannot read it through a view or
// function it creates; another role can.
func TestStoredCodeScoped(t *testing.T) {
	p, err := engine.ParsePolicy([]byte(`version: 1
rules:
  - id: app-not-payroll
    action: deny
    users: [app]
    reason: the application role does not read payroll
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
		{"app", `SELECT * FROM payroll`, true},
		{"app", `CREATE VIEW v AS SELECT * FROM payroll`, true},
		{"app", `CREATE VIEW v AS SELECT o.id FROM orders o JOIN payroll p ON p.id = o.id`, true},
		{"app", `CREATE FUNCTION f() RETURNS SETOF payroll LANGUAGE sql AS 'SELECT * FROM payroll'`, true},
		{"app", `CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql SECURITY DEFINER AS $$ DECLARE n int; BEGIN SELECT count(*) INTO n FROM payroll; RETURN n; END $$`, true},
		{"app", `CREATE RULE r AS ON INSERT TO orders DO ALSO SELECT * FROM payroll`, true},
		{"app", `CREATE VIEW v AS SELECT * FROM orders`, false},
		{"hr", `CREATE VIEW v AS SELECT * FROM payroll`, false},
		{"hr", `CREATE FUNCTION f() RETURNS SETOF payroll LANGUAGE sql AS 'SELECT * FROM payroll'`, false},
	} {
		v := e.Judge([]byte(tc.sql), &engine.Session{User: tc.user})
		if v.Action.Denies() != tc.deny || tc.deny && v.RuleID != "app-not-payroll" {
			t.Errorf("%s as %s: got %s %s (%s), want deny %v", tc.sql, tc.user, v.Action, v.RuleID, v.Reason, tc.deny)
		}
	}
}

// TestReadBody: stored code read on its own (engine.BodyReader, for code
// from the catalog) gives the facts its CREATE's body gets, and Engine.Body
// and JudgeBody judge it as a statement.
func TestReadBody(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		lang, text, want string
		ok               bool
	}{
		{"sql", `DELETE FROM t`, "no-unfiltered-writes", true},
		{"SQL", `SELECT 1; UPDATE t SET a = 1`, "no-unfiltered-writes", true},
		{"sql", `DELETE FROM t WHERE id = $1`, "allow", true},
		{"plpgsql", ` BEGIN UPDATE t SET a = 1; RETURN NEW; END `, "no-unfiltered-writes", true},
		{"plpgsql", ` BEGIN UPDATE t SET a = 1 WHERE id = NEW.id; RETURN NEW; END `, "allow", true},
		{"plpgsql", ` DECLARE n int; BEGIN SELECT count(*) INTO n FROM t; RETURN n; END `, "allow", true},
		{"plpgsql", ` BEGIN RETURN QUERY SELECT * FROM t; END `, "allow", true},
		{"plpgsql", ` BEGIN EXECUTE v; END `, "no-dynamic-sql", true},
		{"plpgsql", ` BEGIN DELETE FROM; END `, "no-unparsed-body", false},
		{"view", ` SELECT a FROM t UNION SELECT usename FROM pg_user;`, "no-catalog-union", true},
		{"view", ` SELECT a FROM t WHERE b > 1;`, "allow", true},
		{"view", `DELETE FROM t`, "no-unparsed-body", false},
		{"create", `CREATE OR REPLACE FUNCTION public.f() RETURNS trigger LANGUAGE plpgsql AS $function$ BEGIN DELETE FROM t; RETURN OLD; END $function$`, "no-unfiltered-writes", true},
		{"create", `CREATE RULE r AS ON INSERT TO public.t DO ALSO DELETE FROM u;`, "no-unfiltered-writes", true},
		{"create", `CREATE TABLE x (id int)`, "no-unparsed-body", false},
		{"plperlu", `spi_exec_query('DELETE FROM t')`, "no-unparsed-body", false},
	}
	for _, tc := range tests {
		b, ok := Dialect.(engine.BodyReader).ReadBody(tc.lang, tc.text)
		if ok != tc.ok {
			t.Errorf("%s %q: ok %v, want %v (%s)", tc.lang, tc.text, ok, tc.ok, b.Facts.Unparsed)
		}
		v := e.JudgeBody(e.Body(tc.lang, tc.text, ""), nil)
		if got := map[bool]string{true: v.RuleID, false: "allow"}[v.Action.Denies()]; got != tc.want {
			t.Errorf("%s %q: got %s %s (%s), want %s", tc.lang, tc.text, v.Action, v.RuleID, v.Reason, tc.want)
		}
	}
	// The caller's own description goes into the reason.
	v := e.JudgeBody(e.Body("sql", "DELETE FROM t", "the body of a function this statement calls"), nil)
	if !strings.HasSuffix(v.Reason, "(the body of a function this statement calls)") {
		t.Errorf("reason %q does not say what the code is", v.Reason)
	}
}
