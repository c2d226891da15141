package engine

import (
	"strings"
	"testing"
)

func mustEngine(t testing.TB, policyYAML string, opts Options) *Engine {
	t.Helper()
	p, err := ParsePolicy([]byte(policyYAML))
	if err != nil {
		t.Fatalf("ParsePolicy:\n%s\nerror: %v", policyYAML, err)
	}
	e, err := New(p, PostgreSQL, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRules(t *testing.T) {
	app := &Session{User: "app", Database: "shop"}
	admin := &Session{User: "admin", Database: "shop"}
	tests := []struct {
		name    string
		policy  string // the rules: list
		sql     string
		session *Session
		action  Action
		ruleID  string
	}{
		{"kind matches", `[{id: r, action: deny, match: {kind: [delete]}}]`, "DELETE FROM t WHERE id = 1", app, ActionDeny, "r"},
		{"kind other", `[{id: r, action: deny, match: {kind: [delete]}}]`, "SELECT 1", app, ActionAllow, ""},
		{"kind nested delete in cte", `[{id: r, action: deny, match: {kind: [delete]}}]`, "WITH d AS (DELETE FROM t WHERE a = 1 RETURNING 1) SELECT 1", app, ActionDeny, "r"},
		{"kind ddl", `[{id: r, action: log, match: {kind: [ddl]}}]`, "ALTER TABLE t ADD COLUMN c int", app, ActionLog, "r"},
		{"without_where update", `[{id: r, action: deny, match: {kind: [update], without_where: true}}]`, "UPDATE t SET a = 1", app, ActionDeny, "r"},
		{"without_where update has where", `[{id: r, action: deny, match: {kind: [update], without_where: true}}]`, "UPDATE t SET a = 1 WHERE id = 3", app, ActionAllow, ""},
		{"without_where kind restricts", `[{id: r, action: deny, match: {kind: [update], without_where: true}}]`, "DELETE FROM t", app, ActionAllow, ""},
		{"without_where alone", `[{id: r, action: deny, match: {without_where: true}}]`, "DELETE FROM t", app, ActionDeny, "r"},
		{"function bare", `[{id: r, action: deny, match: {functions: [pg_sleep]}}]`, "SELECT pg_sleep(10)", app, ActionDeny, "r"},
		{"function pg_catalog qualified call", `[{id: r, action: deny, match: {functions: [pg_sleep]}}]`, "SELECT pg_catalog.pg_sleep(10)", app, ActionDeny, "r"},
		{"function case folded", `[{id: r, action: deny, match: {functions: [PG_Sleep]}}]`, "SELECT PG_SLEEP(1)", app, ActionDeny, "r"},
		{"function qualified entry unqualified call", `[{id: r, action: deny, match: {functions: [pg_catalog.pg_sleep]}}]`, "SELECT pg_sleep(1)", app, ActionDeny, "r"},
		{"function qualified entry other schema", `[{id: r, action: deny, match: {functions: [pg_catalog.pg_sleep]}}]`, "SELECT mine.pg_sleep(1)", app, ActionAllow, ""},
		{"function prefix", `[{id: r, action: deny, match: {functions: ["dblink*"]}}]`, "SELECT * FROM dblink_exec('c', 'q')", app, ActionDeny, "r"},
		{"function absent", `[{id: r, action: deny, match: {functions: [pg_sleep]}}]`, "SELECT now()", app, ActionAllow, ""},
		{"table any", `[{id: r, action: deny, match: {tables: [secrets]}}]`, "SELECT * FROM app.secrets", app, ActionDeny, "r"},
		{"table qualified entry", `[{id: r, action: deny, match: {tables: [app.secrets]}}]`, "SELECT * FROM other.secrets", app, ActionAllow, ""},
		{"table qualified entry unqualified use", `[{id: r, action: deny, match: {tables: [app.secrets]}}]`, "SELECT * FROM secrets", app, ActionDeny, "r"},
		{"table write only, read", `[{id: r, action: deny, match: {tables: [ledger], access: write}}]`, "SELECT * FROM ledger", app, ActionAllow, ""},
		{"table write only, insert", `[{id: r, action: deny, match: {tables: [ledger], access: write}}]`, "INSERT INTO ledger VALUES (1)", app, ActionDeny, "r"},
		{"table write only, drop", `[{id: r, action: deny, match: {tables: [ledger], access: write}}]`, "DROP TABLE ledger", app, ActionDeny, "r"},
		{"table read only, update target", `[{id: r, action: deny, match: {tables: [ledger], access: read}}]`, "UPDATE ledger SET a = 1 WHERE b = 2", app, ActionAllow, ""},
		{"table read only, subquery", `[{id: r, action: deny, match: {tables: [ledger], access: read}}]`, "UPDATE t SET a = (SELECT max(a) FROM ledger) WHERE b = 2", app, ActionDeny, "r"},
		{"copy program", `[{id: r, action: deny, match: {copy: [program]}}]`, "COPY t TO PROGRAM 'cat'", app, ActionDeny, "r"},
		{"copy program vs stdin", `[{id: r, action: deny, match: {copy: [program, file]}}]`, "COPY t FROM STDIN", app, ActionAllow, ""},
		{"copy file", `[{id: r, action: deny, match: {copy: [file]}}]`, "COPY t FROM '/etc/passwd'", app, ActionDeny, "r"},
		{"conditions are anded", `[{id: r, action: deny, match: {kind: [select], tables: [t]}}]`, "SELECT * FROM u", app, ActionAllow, ""},
		{"users scope matches", `[{id: r, action: deny, users: [app], match: {kind: [ddl]}}]`, "DROP TABLE t", app, ActionDeny, "r"},
		{"users scope other user", `[{id: r, action: deny, users: [app], match: {kind: [ddl]}}]`, "DROP TABLE t", admin, ActionAllow, ""},
		{"databases scope", `[{id: r, action: deny, databases: [other], match: {kind: [ddl]}}]`, "DROP TABLE t", app, ActionAllow, ""},
		{"nil session", `[{id: r, action: deny, users: [app], match: {kind: [ddl]}}]`, "DROP TABLE t", nil, ActionAllow, ""},
		{"first match wins", `[{id: a, action: allow, users: [admin], match: {}}, {id: d, action: deny, match: {kind: [ddl]}}]`, "DROP TABLE t", admin, ActionAllow, "a"},
		{"first match wins, skipped", `[{id: a, action: allow, users: [admin], match: {}}, {id: d, action: deny, match: {kind: [ddl]}}]`, "DROP TABLE t", app, ActionDeny, "d"},
		{"empty match is catch-all", `[{id: all, action: log, match: {}}]`, "SELECT 1", app, ActionLog, "all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEngine(t, "rules: "+tt.policy, Options{CacheBytes: -1})
			got := e.Judge([]byte(tt.sql), tt.session)
			if got.Action != tt.action || got.RuleID != tt.ruleID || got.Statements != 1 {
				t.Errorf("policy %s\nsql %q\n got: %v %q (%d statements)\nwant: %v %q (1 statement)",
					tt.policy, tt.sql, got.Action, got.RuleID, got.Statements, tt.action, tt.ruleID)
			}
		})
	}
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // substrings of the error
	}{
		{"unknown top-level key", "on_parse_eror: deny\n", []string{"line 1", "on_parse_eror"}},
		{"unknown rule key", "rules:\n  - id: a\n    action: deny\n    matches: {}\n", []string{"line 4", "matches"}},
		{"unknown match key", "rules:\n  - id: a\n    action: deny\n    match: {kinds: [update]}\n", []string{"line 4", "kinds"}},
		{"bad action", "rules:\n  - id: a\n    action: block\n", []string{"line 3 column 13", "block"}},
		{"bad on_parse_error", "on_parse_error: maybe\n", []string{"line 1 column 17", "maybe"}},
		{"bad kind", "rules:\n  - {id: a, action: deny, match: {kind: [select, upsert]}}\n", []string{"line 2", "upsert"}},
		{"bad copy", "rules:\n  - {id: a, action: deny, match: {copy: [stdin]}}\n", []string{"line 2", "stdin"}},
		{"bad access", "rules:\n  - {id: a, action: deny, match: {tables: [t], access: modify}}\n", []string{"line 2", "modify"}},
		{"access without tables", "rules:\n  - {id: a, action: deny, match: {access: read}}\n", []string{"line 2 column 5", "access needs tables"}},
		{"missing id", "rules:\n  - {action: deny}\n", []string{"line 2", "missing id"}},
		{"missing action", "rules:\n  - id: a\n", []string{"line 2", "missing action"}},
		{"duplicate id", "rules:\n  - {id: a, action: deny}\n  - {id: a, action: allow}\n", []string{"line 3", "duplicate id"}},
		{"without_where on select", "rules:\n  - {id: a, action: deny, match: {kind: [select], without_where: true}}\n", []string{"without_where"}},
		{"bad version", "version: 2\n", []string{"version 2"}},
		{"empty", "", []string{"empty"}},
		{"not yaml", "rules: [\n", []string{"line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("ParsePolicy(%q): got no error, want one containing %q", tt.yaml, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParsePolicy(%q)\n got: %v\nwant it to contain %q", tt.yaml, err, w)
				}
			}
		})
	}
}

func TestParsePolicyDefaults(t *testing.T) {
	p, err := ParsePolicy([]byte("rules: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.onParseError != ActionDeny {
		t.Errorf("on_parse_error default: got %v, want deny", p.onParseError)
	}
	if DefaultPolicy() == nil || len(DefaultPolicy().rules) == 0 {
		t.Fatal("default policy is empty")
	}
}

func TestParsePolicyNewKeyErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"bad mode", "mode: block\n", []string{"line 1 column 7", "block"}},
		{"bad rule mode", "rules:\n  - {id: a, action: deny, mode: loud}\n", []string{"line 2", "loud"}},
		{"bad verb", "rules:\n  - {id: a, action: deny, match: {verbs: [smash]}}\n", []string{"line 2", "smash"}},
		{"bad object", "rules:\n  - {id: a, action: deny, match: {objects: [tabel]}}\n", []string{"line 2", "tabel"}},
		{"bad role attribute", "rules:\n  - {id: a, action: deny, match: {role_attributes: [god]}}\n", []string{"god"}},
		{"bad day", "rules:\n  - {id: a, action: deny, time: {days: [funday]}}\n", []string{"funday"}},
		{"bad hours", "rules:\n  - {id: a, action: deny, time: {hours: [\"9-5\"]}}\n", []string{"line 2", "HH:MM"}},
		{"bad timezone", "rules:\n  - {id: a, action: deny, time: {timezone: Mars/Olympus}}\n", []string{"Mars/Olympus"}},
		{"bad cidr", "rules:\n  - {id: a, action: deny, client_addrs: [10.0.0.0/99]}\n", []string{"10.0.0.0/99"}},
		{"bad fingerprint", "rules:\n  - {id: a, action: allow, match: {fingerprints: [xyz]}}\n", []string{"line 2", "xyz"}},
		{"bad column", "rules:\n  - {id: a, action: deny, match: {columns: [password]}}\n", []string{"table.column"}},
		{"unknown limit", "rules:\n  - {id: a, action: deny, match: {limits: {rows: 5}}}\n", []string{"line 2", "rows"}},
		{"empty limits", "rules:\n  - {id: a, action: deny, match: {limits: {}}}\n", []string{"no limit"}},
		{"rate without rate", "rules:\n  - {id: a, action: deny, match: {rate: {burst: 5}}}\n", []string{"per_second"}},
		{"rate bad key", "rules:\n  - {id: a, action: deny, match: {rate: {per_second: 1, per: [ip]}}}\n", []string{"ip"}},
		{"unknown scope key", "rules:\n  - {id: a, action: deny, user: [x]}\n", []string{"line 2", "user"}},
		{"star alone", "rules:\n  - {id: a, action: deny, match: {tables: [\"*\"]}}\n", []string{"leave the key out"}},
		{"bad deny_and_close spelling", "rules:\n  - {id: a, action: deny-and-close}\n", []string{"deny_and_close"}},
		{"bad effect", "rules:\n  - id: a\n    action: deny\n    match:\n      effects: [reads_server_file, runs_shell]\n", []string{"line 5 column 36", "runs_shell", "runs_program"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicy([]byte(tt.yaml))
			if err == nil {
				err = p.Check(PostgreSQL) // object types are the dialect's
			}
			if err == nil {
				t.Fatalf("ParsePolicy(%q): no error, want one containing %q", tt.yaml, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParsePolicy(%q)\n got: %v\nwant it to contain %q", tt.yaml, err, w)
				}
			}
		})
	}
}

func TestPolicyWarnings(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // substrings, one per warning; none when empty
	}{
		{"catch-all first", "rules:\n  - {id: all, action: deny, match: {}}\n  - {id: x, action: allow, match: {kind: [select]}}\n",
			[]string{`line 3: rule "x" conflicts`}},
		{"kind subset", "rules:\n  - {id: ddl, action: deny, match: {kind: [ddl, dcl]}}\n  - {id: d2, action: deny, match: {kind: [ddl]}}\n",
			[]string{`rule "d2" is unreachable`}},
		{"duplicate conditions", "rules:\n  - {id: a, action: deny, users: [x], match: {functions: [f]}}\n  - {id: b, action: log, users: [x], match: {functions: [f]}}\n",
			[]string{`rule "b" conflicts`}},
		{"scoped catch-all does not shadow", "rules:\n  - {id: a, action: allow, users: [admin], match: {}}\n  - {id: b, action: deny, match: {kind: [ddl]}}\n", nil},
		{"narrower first is fine", "rules:\n  - {id: a, action: deny, match: {kind: [ddl]}}\n  - {id: b, action: deny, match: {kind: [ddl, dcl]}}\n", nil},
		{"allow kind does not cover a deny of the kind", "rules:\n  - {id: a, action: allow, match: {kind: [select]}}\n  - {id: b, action: deny, match: {kind: [select]}}\n", nil},
		{"allow kind covers a later allow", "rules:\n  - {id: a, action: allow, match: {kind: [select, insert]}}\n  - {id: b, action: allow, match: {kind: [select]}}\n", []string{`rule "b" is unreachable`}},
		{"rate rule never shadows", "rules:\n  - {id: a, action: deny, match: {rate: {per_second: 1}}}\n  - {id: b, action: deny, match: {}}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicy([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			w := p.Warnings()
			if len(w) != len(tt.want) {
				t.Fatalf("policy:\n%s\n got warnings: %q\nwant %d", tt.yaml, w, len(tt.want))
			}
			for i := range w {
				if !strings.Contains(w[i], tt.want[i]) {
					t.Errorf("warning %q, want it to contain %q", w[i], tt.want[i])
				}
			}
		})
	}
	if w := DefaultPolicy().Warnings(); len(w) != 0 {
		t.Errorf("default policy warnings: %q", w)
	}
}
