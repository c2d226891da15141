package pgsql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

func mustEngine(t testing.TB, policyYAML string, opts engine.Options) *engine.Engine {
	t.Helper()
	p, err := engine.ParsePolicy([]byte(policyYAML))
	if err != nil {
		t.Fatalf("ParsePolicy:\n%s\nerror: %v", policyYAML, err)
	}
	e, err := engine.New(p, Dialect, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRules(t *testing.T) {
	app := &engine.Session{User: "app", Database: "shop"}
	admin := &engine.Session{User: "admin", Database: "shop"}
	tests := []struct {
		name    string
		policy  string // the rules: list
		sql     string
		session *engine.Session
		action  engine.Action
		ruleID  string
	}{
		{"kind matches", `[{id: r, action: deny, match: {kind: [delete]}}]`, "DELETE FROM t WHERE id = 1", app, engine.ActionDeny, "r"},
		{"kind other", `[{id: r, action: deny, match: {kind: [delete]}}]`, "SELECT 1", app, engine.ActionAllow, ""},
		{"kind nested delete in cte", `[{id: r, action: deny, match: {kind: [delete]}}]`, "WITH d AS (DELETE FROM t WHERE a = 1 RETURNING 1) SELECT 1", app, engine.ActionDeny, "r"},
		{"kind ddl", `[{id: r, action: log, match: {kind: [ddl]}}]`, "ALTER TABLE t ADD COLUMN c int", app, engine.ActionLog, "r"},
		{"without_where update", `[{id: r, action: deny, match: {kind: [update], without_where: true}}]`, "UPDATE t SET a = 1", app, engine.ActionDeny, "r"},
		{"without_where update has where", `[{id: r, action: deny, match: {kind: [update], without_where: true}}]`, "UPDATE t SET a = 1 WHERE id = 3", app, engine.ActionAllow, ""},
		{"without_where kind restricts", `[{id: r, action: deny, match: {kind: [update], without_where: true}}]`, "DELETE FROM t", app, engine.ActionAllow, ""},
		{"without_where alone", `[{id: r, action: deny, match: {without_where: true}}]`, "DELETE FROM t", app, engine.ActionDeny, "r"},
		{"function bare", `[{id: r, action: deny, match: {functions: [pg_sleep]}}]`, "SELECT pg_sleep(10)", app, engine.ActionDeny, "r"},
		{"function pg_catalog qualified call", `[{id: r, action: deny, match: {functions: [pg_sleep]}}]`, "SELECT pg_catalog.pg_sleep(10)", app, engine.ActionDeny, "r"},
		{"function case folded", `[{id: r, action: deny, match: {functions: [PG_Sleep]}}]`, "SELECT PG_SLEEP(1)", app, engine.ActionDeny, "r"},
		{"function qualified entry unqualified call", `[{id: r, action: deny, match: {functions: [pg_catalog.pg_sleep]}}]`, "SELECT pg_sleep(1)", app, engine.ActionDeny, "r"},
		{"function qualified entry other schema", `[{id: r, action: deny, match: {functions: [pg_catalog.pg_sleep]}}]`, "SELECT mine.pg_sleep(1)", app, engine.ActionAllow, ""},
		// an unqualified pg_* name is pg_catalog's (ImplicitSchema), not another schema's of that name
		{"function other schema entry unqualified pg_ call", `[{id: r, action: deny, match: {functions: [mine.pg_sleep]}}]`, "SELECT pg_sleep(1)", app, engine.ActionAllow, ""},
		{"function prefix", `[{id: r, action: deny, match: {functions: ["dblink*"]}}]`, "SELECT * FROM dblink_exec('c', 'q')", app, engine.ActionDeny, "r"},
		{"function absent", `[{id: r, action: deny, match: {functions: [pg_sleep]}}]`, "SELECT now()", app, engine.ActionAllow, ""},
		{"table any", `[{id: r, action: deny, match: {tables: [secrets]}}]`, "SELECT * FROM app.secrets", app, engine.ActionDeny, "r"},
		{"table qualified entry", `[{id: r, action: deny, match: {tables: [app.secrets]}}]`, "SELECT * FROM other.secrets", app, engine.ActionAllow, ""},
		{"table qualified entry unqualified use", `[{id: r, action: deny, match: {tables: [app.secrets]}}]`, "SELECT * FROM secrets", app, engine.ActionDeny, "r"},
		{"table write only, read", `[{id: r, action: deny, match: {tables: [ledger], access: write}}]`, "SELECT * FROM ledger", app, engine.ActionAllow, ""},
		{"table write only, insert", `[{id: r, action: deny, match: {tables: [ledger], access: write}}]`, "INSERT INTO ledger VALUES (1)", app, engine.ActionDeny, "r"},
		{"table write only, drop", `[{id: r, action: deny, match: {tables: [ledger], access: write}}]`, "DROP TABLE ledger", app, engine.ActionDeny, "r"},
		{"table read only, update target", `[{id: r, action: deny, match: {tables: [ledger], access: read}}]`, "UPDATE ledger SET a = 1 WHERE b = 2", app, engine.ActionAllow, ""},
		{"table read only, subquery", `[{id: r, action: deny, match: {tables: [ledger], access: read}}]`, "UPDATE t SET a = (SELECT max(a) FROM ledger) WHERE b = 2", app, engine.ActionDeny, "r"},
		{"copy program", `[{id: r, action: deny, match: {copy: [program]}}]`, "COPY t TO PROGRAM 'cat'", app, engine.ActionDeny, "r"},
		{"copy program vs stdin", `[{id: r, action: deny, match: {copy: [program, file]}}]`, "COPY t FROM STDIN", app, engine.ActionAllow, ""},
		{"copy file", `[{id: r, action: deny, match: {copy: [file]}}]`, "COPY t FROM '/etc/passwd'", app, engine.ActionDeny, "r"},
		{"conditions are anded", `[{id: r, action: deny, match: {kind: [select], tables: [t]}}]`, "SELECT * FROM u", app, engine.ActionAllow, ""},
		{"users scope matches", `[{id: r, action: deny, users: [app], match: {kind: [ddl]}}]`, "DROP TABLE t", app, engine.ActionDeny, "r"},
		{"users scope other user", `[{id: r, action: deny, users: [app], match: {kind: [ddl]}}]`, "DROP TABLE t", admin, engine.ActionAllow, ""},
		{"databases scope", `[{id: r, action: deny, databases: [other], match: {kind: [ddl]}}]`, "DROP TABLE t", app, engine.ActionAllow, ""},
		{"nil session", `[{id: r, action: deny, users: [app], match: {kind: [ddl]}}]`, "DROP TABLE t", nil, engine.ActionAllow, ""},
		{"first match wins", `[{id: a, action: allow, users: [admin], match: {}}, {id: d, action: deny, match: {kind: [ddl]}}]`, "DROP TABLE t", admin, engine.ActionAllow, "a"},
		{"first match wins, skipped", `[{id: a, action: allow, users: [admin], match: {}}, {id: d, action: deny, match: {kind: [ddl]}}]`, "DROP TABLE t", app, engine.ActionDeny, "d"},
		{"empty match is catch-all", `[{id: all, action: log, match: {}}]`, "SELECT 1", app, engine.ActionLog, "all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEngine(t, "rules: "+tt.policy, engine.Options{CacheBytes: -1})
			got := e.Judge([]byte(tt.sql), tt.session)
			if got.Action != tt.action || got.RuleID != tt.ruleID || got.Statements != 1 {
				t.Errorf("policy %s\nsql %q\n got: %v %q (%d statements)\nwant: %v %q (1 statement)",
					tt.policy, tt.sql, got.Action, got.RuleID, got.Statements, tt.action, tt.ruleID)
			}
		})
	}
}
