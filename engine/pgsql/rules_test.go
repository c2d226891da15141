package pgsql

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/engine"
)

// TestRuleKinds covers each match key and scope key: policy snippet (the
// rules: list) + statement + session → verdict.
func TestRuleKinds(t *testing.T) {
	app := &engine.Session{User: "app", Database: "shop", ClientAddr: netip.MustParseAddr("10.1.2.3")}
	mapped := &engine.Session{User: "app", ClientAddr: netip.MustParseAddr("::ffff:10.1.2.3")}
	other := &engine.Session{User: "bob", Database: "shop", ClientAddr: netip.MustParseAddr("192.168.0.9")}
	proc := &engine.Session{User: "app", Process: engine.ProcessInfo{Known: true, Tgid: 42, UID: 1000, Comm: "psql", Cgroup: "/system.slice/billing.service"}}
	unknownProc := &engine.Session{User: "app"}
	// 2026-12-01 is a Tuesday.
	tueNoon := &engine.Session{User: "app", At: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	tueNight := &engine.Session{User: "app", At: time.Date(2026, 12, 1, 23, 30, 0, 0, time.UTC)}
	sunNoon := &engine.Session{User: "app", At: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	tests := []struct {
		name    string
		policy  string
		sql     string
		session *engine.Session
		action  engine.Action
		ruleID  string
	}{
		// statement kinds, DDL by verb and object, DCL, utility
		{"dcl grant", `[{id: r, action: deny, match: {kind: [dcl]}}]`, "GRANT SELECT ON t TO x", app, engine.ActionDeny, "r"},
		{"dcl not ddl", `[{id: r, action: deny, match: {kind: [ddl]}}]`, "GRANT SELECT ON t TO x", app, engine.ActionAllow, ""},
		{"dcl create role", `[{id: r, action: deny, match: {kind: [dcl]}}]`, "CREATE ROLE x", app, engine.ActionDeny, "r"},
		{"verb drop object table", `[{id: r, action: deny, match: {verbs: [drop], objects: [table]}}]`, "DROP TABLE t", app, engine.ActionDeny, "r"},
		{"verb drop object index", `[{id: r, action: deny, match: {verbs: [drop], objects: [table]}}]`, "DROP INDEX i", app, engine.ActionAllow, ""},
		{"verb create function", `[{id: r, action: deny, match: {verbs: [create], objects: [function, procedure]}}]`, "CREATE PROCEDURE p() LANGUAGE sql AS 'select 1'", app, engine.ActionDeny, "r"},
		{"verb alter table", `[{id: r, action: log, match: {verbs: [alter], objects: [table]}}]`, "ALTER TABLE t ADD COLUMN c int", app, engine.ActionLog, "r"},
		{"verb create extension", `[{id: r, action: deny, match: {objects: [extension]}}]`, "CREATE EXTENSION hstore", app, engine.ActionDeny, "r"},
		{"verb revoke", `[{id: r, action: deny, match: {verbs: [revoke]}}]`, "REVOKE ALL ON t FROM x", app, engine.ActionDeny, "r"},
		{"verb grant role", `[{id: r, action: deny, match: {verbs: [grant], objects: [role]}}]`, "GRANT admin TO app", app, engine.ActionDeny, "r"},
		{"vacuum", `[{id: r, action: deny, match: {kind: [vacuum]}}]`, "VACUUM FULL t", app, engine.ActionDeny, "r"},
		{"analyze is not vacuum", `[{id: r, action: deny, match: {kind: [vacuum]}}]`, "ANALYZE t", app, engine.ActionAllow, ""},
		{"explain plain", `[{id: r, action: deny, match: {kind: [explain]}}]`, "EXPLAIN SELECT 1", app, engine.ActionDeny, "r"},
		{"explain analyze is its statement", `[{id: r, action: deny, match: {kind: [insert]}}]`, "EXPLAIN ANALYZE INSERT INTO t VALUES (1)", app, engine.ActionDeny, "r"},
		{"set", `[{id: r, action: deny, match: {settings: [session_authorization, role]}}]`, "SET SESSION AUTHORIZATION admin", app, engine.ActionDeny, "r"},
		{"set role", `[{id: r, action: deny, match: {settings: [role]}}]`, "SET ROLE admin", app, engine.ActionDeny, "r"},
		{"set other", `[{id: r, action: deny, match: {settings: [role]}}]`, "SET search_path = x", app, engine.ActionAllow, ""},
		{"transaction", `[{id: r, action: log, match: {kind: [transaction]}}]`, "BEGIN", app, engine.ActionLog, "r"},
		// effects
		{"effects one of", `[{id: r, action: deny, match: {effects: [runs_program, loads_code]}}]`, "LOAD 'x'", app, engine.ActionDeny, "r"},
		{"effects none", `[{id: r, action: deny, match: {effects: [runs_program, loads_code]}}]`, "SELECT pg_read_file('x')", app, engine.ActionAllow, ""},
		{"effects and kind", `[{id: r, action: deny, match: {kind: [ddl], effects: [reads_server_file]}}]`, "SELECT pg_read_file('x')", app, engine.ActionAllow, ""},
		{"effects scoped", `[{id: r, action: deny, users: [bob], match: {effects: [reads_server_file]}}]`, "SELECT pg_read_file('x')", app, engine.ActionAllow, ""},
		{"stacked cte write", `[{id: r, action: deny, match: {stacked_after: [select]}}]`, "SELECT a FROM t; WITH d AS (DELETE FROM u WHERE id = 1 RETURNING 1) SELECT 1", app, engine.ActionDeny, "r"},
		{"stacked select", `[{id: r, action: deny, match: {stacked_after: [select]}}]`, "SELECT a FROM t; SELECT b FROM u", app, engine.ActionAllow, ""},
		{"kind of cte write", `[{id: r, action: deny, match: {kind: [delete]}}]`, "WITH d AS (DELETE FROM u WHERE id = 1 RETURNING 1) SELECT 1", app, engine.ActionDeny, "r"},
		{"kind of plain explain", `[{id: r, action: deny, match: {kind: [delete]}}]`, "EXPLAIN DELETE FROM u", app, engine.ActionAllow, ""},
		{"allow kind needs every kind", `[{id: ok, action: allow, match: {kind: [select]}}, {id: rest, action: deny, match: {}}]`, "WITH d AS (DELETE FROM u WHERE id = 1 RETURNING 1) SELECT 1", app, engine.ActionDeny, "rest"},
		{"allow kind select", `[{id: ok, action: allow, match: {kind: [select]}}, {id: rest, action: deny, match: {}}]`, "SELECT a FROM t", app, engine.ActionAllow, "ok"},
		{"allow kind explain analyze select", `[{id: ok, action: allow, match: {kind: [select]}}, {id: rest, action: deny, match: {}}]`, "EXPLAIN ANALYZE SELECT a FROM t", app, engine.ActionAllow, "ok"},
		{"allow kinds listed", `[{id: ok, action: allow, match: {kind: [select, delete]}}, {id: rest, action: deny, match: {}}]`, "WITH d AS (DELETE FROM u WHERE id = 1 RETURNING 1) SELECT 1", app, engine.ActionAllow, "ok"},
		{"deny kind any", `[{id: r, action: deny, match: {kind: [select]}}]`, "WITH d AS (DELETE FROM u WHERE id = 1 RETURNING 1) SELECT 1", app, engine.ActionDeny, "r"},
		{"tables cte in other scope", `[{id: r, action: deny, match: {tables: [secrets]}}]`, "SELECT * FROM (SELECT * FROM secrets) a, (WITH secrets AS (SELECT 1) SELECT * FROM secrets) b", app, engine.ActionDeny, "r"},
		{"tables cte in scope", `[{id: r, action: deny, match: {tables: [secrets]}}]`, "WITH secrets AS (SELECT 1) SELECT * FROM secrets", app, engine.ActionAllow, ""},
		{"select into is ddl", `[{id: r, action: deny, match: {verbs: [create], objects: [table]}}]`, "SELECT * INTO n FROM t", app, engine.ActionDeny, "r"},
		// COPY
		{"copy stdio to", `[{id: r, action: deny, match: {copy: [stdio], copy_direction: [to]}}]`, "COPY t TO STDOUT", app, engine.ActionDeny, "r"},
		{"copy stdio from not to", `[{id: r, action: deny, match: {copy: [stdio], copy_direction: [to]}}]`, "COPY t FROM STDIN", app, engine.ActionAllow, ""},
		// objects
		{"tables glob schema", `[{id: r, action: deny, match: {tables: ["secret.*"]}}]`, "SELECT * FROM secret.keys", app, engine.ActionDeny, "r"},
		{"tables glob schema other", `[{id: r, action: deny, match: {tables: ["secret.*"]}}]`, "SELECT * FROM public.keys", app, engine.ActionAllow, ""},
		{"tables glob name", `[{id: r, action: deny, match: {tables: ["*_archive"]}}]`, "DELETE FROM orders_archive WHERE id = 1", app, engine.ActionDeny, "r"},
		{"tables_outside inside", `[{id: r, action: deny, match: {tables_outside: ["public.*", orders]}}]`, "SELECT * FROM public.users JOIN orders ON true", app, engine.ActionAllow, ""},
		{"tables_outside outside", `[{id: r, action: deny, match: {tables_outside: ["public.*"]}}]`, "SELECT * FROM billing.invoices", app, engine.ActionDeny, "r"},
		{"tables_outside catalog", `[{id: r, action: deny, match: {tables_outside: ["public.*"]}}]`, "SELECT * FROM pg_shadow", app, engine.ActionDeny, "r"},
		{"tables_outside cte ignored", `[{id: r, action: deny, match: {tables_outside: ["public.*"]}}]`, "WITH x AS (SELECT 1) SELECT * FROM x", app, engine.ActionAllow, ""},
		{"tables_outside write only", `[{id: r, action: deny, match: {tables_outside: [scratch], access: write}}]`, "INSERT INTO scratch SELECT * FROM users", app, engine.ActionAllow, ""},
		{"tables_outside write hit", `[{id: r, action: deny, match: {tables_outside: [scratch], access: write}}]`, "INSERT INTO users SELECT * FROM scratch", app, engine.ActionDeny, "r"},
		// columns
		{"column named", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "SELECT password_hash FROM users WHERE id = 1", app, engine.ActionDeny, "r"},
		{"column via alias", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "SELECT u.password_hash FROM users u", app, engine.ActionDeny, "r"},
		{"column in where", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "SELECT id FROM users WHERE password_hash LIKE 'a%'", app, engine.ActionDeny, "r"},
		{"column other table alias", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "SELECT l.password_hash FROM users u JOIN logins l ON l.uid = u.id", app, engine.ActionAllow, ""},
		{"column not read", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "SELECT id, email FROM users", app, engine.ActionAllow, ""},
		{"column set is not read", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "UPDATE users SET password_hash = $1 WHERE id = $2", app, engine.ActionAllow, ""},
		{"column star", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "SELECT * FROM users", app, engine.ActionDeny, "r"},
		{"column qualified star", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "SELECT u.* FROM users u", app, engine.ActionDeny, "r"},
		{"column whole row", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "SELECT row_to_json(u) FROM users u", app, engine.ActionDeny, "r"},
		{"column star other table", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "SELECT o.* FROM orders o JOIN users u ON u.id = o.uid", app, engine.ActionAllow, ""},
		{"column returning star", `[{id: r, action: deny, match: {columns: [users.password_hash]}}]`, "DELETE FROM users WHERE id = 1 RETURNING *", app, engine.ActionDeny, "r"},
		{"column wildcard table", `[{id: r, action: deny, match: {columns: ["*.ssn"]}}]`, "SELECT ssn FROM people", app, engine.ActionDeny, "r"},
		{"column star with table_columns", "[{id: r, action: deny, match: {columns: [\"*.ssn\"]}}]\ntable_columns: {orders: [id, total]}", "SELECT * FROM orders", app, engine.ActionAllow, ""},
		{"column star without table_columns", `[{id: r, action: deny, match: {columns: ["*.ssn"]}}]`, "SELECT * FROM orders", app, engine.ActionDeny, "r"},
		{"column star table_columns lists it", "[{id: r, action: deny, match: {columns: [\"*.ssn\"]}}]\ntable_columns: {people: [id, ssn]}", "SELECT * FROM people", app, engine.ActionDeny, "r"},
		// functions and languages
		{"language untrusted", `[{id: r, action: deny, match: {languages: [plpython3u]}}]`, "CREATE FUNCTION f() RETURNS int LANGUAGE plpython3u AS 'return 1'", app, engine.ActionDeny, "r"},
		{"language trusted", `[{id: r, action: deny, match: {languages: [plpython3u]}}]`, "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'select 1'", app, engine.ActionAllow, ""},
		{"language of do", `[{id: r, action: deny, match: {languages: ["pl*u"]}}]`, "DO LANGUAGE plperlu 'print 1'", app, engine.ActionDeny, "r"},
		{"create language is create extension", `[{id: r, action: deny, match: {extensions: [plperlu]}}]`, "CREATE LANGUAGE plperlu", app, engine.ActionDeny, "r"},
		{"extension", `[{id: r, action: deny, match: {extensions: [file_fdw]}}]`, "CREATE EXTENSION file_fdw", app, engine.ActionDeny, "r"},
		{"granted role", `[{id: r, action: deny, match: {granted_roles: ["pg_*_server_*"]}}]`, "GRANT pg_write_server_files TO app", app, engine.ActionDeny, "r"},
		{"role attribute", `[{id: r, action: deny, match: {role_attributes: [superuser]}}]`, "ALTER ROLE app NOSUPERUSER", app, engine.ActionAllow, ""},
		// shapes
		{"tautology", `[{id: r, action: deny, match: {tautology: true}}]`, "SELECT * FROM t WHERE a = 1 OR 'b' = 'b'", app, engine.ActionDeny, "r"},
		{"tautology whole where is not", `[{id: r, action: deny, match: {tautology: true}}]`, "SELECT * FROM t WHERE 1 = 1", app, engine.ActionAllow, ""},
		{"tautology false arm", `[{id: r, action: deny, match: {tautology: true}}]`, "SELECT * FROM t WHERE a = 1 OR 1 = 2", app, engine.ActionAllow, ""},
		{"tautology param arm", `[{id: r, action: deny, match: {tautology: true}}]`, "SELECT * FROM t WHERE a = $1 OR $1 IS NULL", app, engine.ActionAllow, ""},
		{"always-true where on delete", `[{id: r, action: deny, match: {without_where: true}}]`, "DELETE FROM t WHERE 2 > 1", app, engine.ActionDeny, "r"},
		{"always-true where x=x", `[{id: r, action: deny, match: {without_where: true}}]`, "UPDATE t SET a = 1 WHERE id = id", app, engine.ActionDeny, "r"},
		{"catalog union", `[{id: r, action: deny, match: {catalog_union: true}}]`, "SELECT a FROM t UNION SELECT passwd FROM pg_shadow", app, engine.ActionDeny, "r"},
		{"catalog only union", `[{id: r, action: deny, match: {catalog_union: true}}]`, "SELECT relname FROM pg_class UNION SELECT typname FROM pg_type", app, engine.ActionAllow, ""},
		{"stacked after select", `[{id: r, action: deny, match: {stacked_after: [select]}}]`, "SELECT * FROM t; DELETE FROM t WHERE a = 1", app, engine.ActionDeny, "r"},
		{"stacked select select", `[{id: r, action: deny, match: {stacked_after: [select]}}]`, "SELECT * FROM t; SELECT * FROM u", app, engine.ActionAllow, ""},
		{"stacked select commit", `[{id: r, action: deny, match: {stacked_after: [select]}}]`, "BEGIN; SELECT * FROM t FOR UPDATE; COMMIT", app, engine.ActionAllow, ""},
		{"stacked insert list", `[{id: r, action: deny, match: {stacked_after: [select, insert]}}]`, "INSERT INTO t VALUES (1); DROP TABLE t", app, engine.ActionDeny, "r"},
		{"stacked first statement never", `[{id: r, action: deny, match: {stacked_after: [select]}}]`, "DROP TABLE t", app, engine.ActionAllow, ""},
		{"time probe", `[{id: r, action: deny, match: {time_probe: true}}]`, "SELECT * FROM t WHERE pg_sleep(1) IS NULL", app, engine.ActionDeny, "r"},
		{"time probe plain sleep", `[{id: r, action: deny, match: {time_probe: true}}]`, "SELECT pg_sleep(1)", app, engine.ActionAllow, ""},
		{"comment trick", `[{id: r, action: deny, match: {comment_trick: true}}]`, "SELECT/**/1", app, engine.ActionDeny, "r"},
		{"comment spaced", `[{id: r, action: deny, match: {comment_trick: true}}]`, "SELECT 1 /* tag */", app, engine.ActionAllow, ""},
		// limits
		{"limit joins", `[{id: r, action: deny, match: {limits: {joins: 2}}}]`, "SELECT * FROM a JOIN b ON true JOIN c ON true JOIN d ON true", app, engine.ActionDeny, "r"},
		{"limit joins comma", `[{id: r, action: deny, match: {limits: {joins: 2}}}]`, "SELECT * FROM a, b, c", app, engine.ActionAllow, ""},
		{"limit union arms", `[{id: r, action: deny, match: {limits: {union_arms: 2}}}]`, "SELECT 1 UNION SELECT 2 UNION SELECT 3", app, engine.ActionDeny, "r"},
		{"limit ctes", `[{id: r, action: deny, match: {limits: {ctes: 1}}}]`, "WITH a AS (SELECT 1), b AS (SELECT 2) SELECT 1", app, engine.ActionDeny, "r"},
		{"limit in list", `[{id: r, action: deny, match: {limits: {in_list: 3}}}]`, "SELECT * FROM t WHERE a IN (1, 2, 3, 4)", app, engine.ActionDeny, "r"},
		{"limit in list ok", `[{id: r, action: deny, match: {limits: {in_list: 4}}}]`, "SELECT * FROM t WHERE a IN (1, 2, 3, 4)", app, engine.ActionAllow, ""},
		{"limit depth", `[{id: r, action: deny, match: {limits: {depth: 3}}}]`, "SELECT ((((1))))", app, engine.ActionDeny, "r"},
		{"limit bytes", `[{id: r, action: deny, match: {limits: {bytes: 10}}}]`, "SELECT 12345678", app, engine.ActionDeny, "r"},
		{"limit bytes scoped other user parses", `[{id: r, action: deny, users: [bob], match: {limits: {bytes: 10}}}, {id: s, action: log, match: {kind: [select]}}]`, "SELECT 12345678", app, engine.ActionLog, "s"},
		// scope
		{"cidr in", `[{id: r, action: deny, client_addrs: [10.0.0.0/8], match: {}}]`, "SELECT 1", app, engine.ActionDeny, "r"},
		{"cidr v4-mapped", `[{id: r, action: deny, client_addrs: [10.0.0.0/8], match: {}}]`, "SELECT 1", mapped, engine.ActionDeny, "r"},
		{"cidr out", `[{id: r, action: deny, client_addrs: [10.0.0.0/8], match: {}}]`, "SELECT 1", other, engine.ActionAllow, ""},
		{"single address", `[{id: r, action: deny, client_addrs: [192.168.0.9], match: {}}]`, "SELECT 1", other, engine.ActionDeny, "r"},
		{"users glob", `[{id: r, action: deny, users: ["ap*"], match: {}}]`, "SELECT 1", app, engine.ActionDeny, "r"},
		{"comm", `[{id: r, action: deny, comms: [psql], match: {kind: [ddl]}}]`, "DROP TABLE t", proc, engine.ActionDeny, "r"},
		{"comm unknown process", `[{id: r, action: deny, comms: [psql], match: {kind: [ddl]}}]`, "DROP TABLE t", unknownProc, engine.ActionAllow, ""},
		{"unit", `[{id: r, action: allow, units: [billing.service], match: {}}]`, "DROP TABLE t", proc, engine.ActionAllow, "r"},
		{"cgroup glob", `[{id: r, action: deny, cgroups: ["/system.slice/*"], match: {}}]`, "SELECT 1", proc, engine.ActionDeny, "r"},
		{"uid", `[{id: r, action: deny, uids: [0], match: {}}]`, "SELECT 1", proc, engine.ActionAllow, ""},
		{"time window in", `[{id: r, action: deny, time: {days: [mon, tue, wed, thu, fri], hours: ["09:00-17:00"]}, match: {kind: [ddl]}}]`, "DROP TABLE t", tueNoon, engine.ActionDeny, "r"},
		{"time window hours out", `[{id: r, action: deny, time: {days: [tue], hours: ["09:00-17:00"]}, match: {kind: [ddl]}}]`, "DROP TABLE t", tueNight, engine.ActionAllow, ""},
		{"time window day out", `[{id: r, action: deny, time: {days: [mon, tue]}, match: {kind: [ddl]}}]`, "DROP TABLE t", sunNoon, engine.ActionAllow, ""},
		{"time window wraps", `[{id: r, action: deny, time: {hours: ["22:00-06:00"]}, match: {kind: [ddl]}}]`, "DROP TABLE t", tueNight, engine.ActionDeny, "r"},
		{"time window timezone", `[{id: r, action: deny, time: {hours: ["00:00-02:00"], timezone: Asia/Tokyo}, match: {}}]`, "SELECT 1", &engine.Session{At: time.Date(2026, 12, 1, 16, 30, 0, 0, time.UTC)}, engine.ActionDeny, "r"},
		{"time window without At", `[{id: r, action: deny, time: {hours: ["00:00-24:00"]}, match: {}}]`, "SELECT 1", app, engine.ActionAllow, ""},
		// actions
		{"deny_and_close", `[{id: r, action: deny_and_close, match: {tautology: true}}]`, "SELECT * FROM t WHERE a = 1 OR 1 = 1", app, engine.ActionDenyClose, "r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEngine(t, "rules: "+tt.policy, engine.Options{CacheBytes: -1})
			got := e.Judge([]byte(tt.sql), tt.session)
			if got.Action != tt.action || got.RuleID != tt.ruleID {
				t.Errorf("policy %s\nsql %q\nsession %+v\n got: %v %q (%s)\nwant: %v %q",
					tt.policy, tt.sql, tt.session, got.Action, got.RuleID, got.Reason, tt.action, tt.ruleID)
			}
			// Cached path gives the same verdict.
			ec := mustEngine(t, "rules: "+tt.policy, engine.Options{})
			ec.Judge([]byte(tt.sql), tt.session)
			if again := ec.Judge([]byte(tt.sql), tt.session); again.Action != got.Action || again.RuleID != got.RuleID {
				t.Errorf("%q: cached verdict %+v differs from uncached %+v", tt.sql, again, got)
			}
		})
	}
}

func TestModes(t *testing.T) {
	policy := `mode: monitor
rules:
  - {id: enf, action: deny, mode: enforce, match: {kind: [ddl]}}
  - {id: det, action: deny, mode: detect, match: {kind: [delete]}}
  - {id: pol, action: deny, match: {kind: [truncate]}}
  - {id: close, action: deny_and_close, match: {kind: [dcl]}}
`
	e := mustEngine(t, policy, engine.Options{})
	tests := []struct {
		sql    string
		action engine.Action
		rule   string
		mode   engine.Mode
	}{
		{"DROP TABLE t", engine.ActionDeny, "enf", engine.ModeEnforce},
		{"DELETE FROM t WHERE a = 1", engine.ActionDeny, "det", engine.ModeDetect},
		{"TRUNCATE t", engine.ActionDeny, "pol", engine.ModeMonitor},
		{"SELECT 1", engine.ActionAllow, "", engine.ModeMonitor},
		// The enforce-mode deny wins over an earlier detect-mode one.
		{"DELETE FROM t WHERE a = 1; DROP TABLE t", engine.ActionDeny, "enf", engine.ModeEnforce},
		{"GRANT x TO y; TRUNCATE t", engine.ActionDenyClose, "close", engine.ModeMonitor},
	}
	for _, tt := range tests {
		v := e.Judge([]byte(tt.sql), nil)
		if v.Action != tt.action || v.RuleID != tt.rule || v.Mode != tt.mode {
			t.Errorf("%q\n got: %v %q mode %q\nwant: %v %q mode %q", tt.sql, v.Action, v.RuleID, v.Mode, tt.action, tt.rule, tt.mode)
		}
	}
	if m := mustEngine(t, "rules: []", engine.Options{}).Judge([]byte("SELECT 1"), nil).Mode; m != "" {
		t.Errorf("policy without mode: verdict mode %q, want empty", m)
	}
	if !engine.ActionDenyClose.Denies() || !engine.ActionDeny.Denies() || engine.ActionLog.Denies() || engine.ActionAllow.Denies() {
		t.Error("Denies is wrong")
	}
}

func TestRate(t *testing.T) {
	e := mustEngine(t, `rules:
  - id: slow-down
    action: deny
    match: {kind: [select], tables: [users], rate: {per_second: 2, burst: 3, per: [user]}}
`, engine.Options{})
	if !e.Policy().UsesTime() {
		t.Fatal("a rate rule must make UsesTime true")
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a := &engine.Session{User: "a", At: t0}
	b := &engine.Session{User: "b", At: t0}
	q := []byte("SELECT * FROM users WHERE name = 'x'")
	for i := 0; i < 3; i++ {
		if v := e.Judge(q, a); v.Action != engine.ActionAllow {
			t.Fatalf("statement %d within burst: %+v", i, v)
		}
	}
	if v := e.Judge(q, a); v.Action != engine.ActionDeny || v.RuleID != "slow-down" {
		t.Fatalf("4th statement at once: got %+v, want deny slow-down", v)
	}
	if v := e.Judge(q, b); v.Action != engine.ActionAllow {
		t.Fatalf("other user has its own bucket: got %+v", v)
	}
	if v := e.Judge([]byte("SELECT 1"), a); v.Action != engine.ActionAllow {
		t.Fatalf("statement not matching the rule is not limited: got %+v", v)
	}
	a.At = t0.Add(time.Second) // two tokens back
	for i := 0; i < 2; i++ {
		if v := e.Judge(q, a); v.Action != engine.ActionAllow {
			t.Fatalf("after refill, statement %d: %+v", i, v)
		}
	}
	if v := e.Judge(q, a); v.Action != engine.ActionDeny {
		t.Fatalf("after refill is used: got %+v", v)
	}
	if v := e.Judge(q, &engine.Session{User: "a"}); v.Action != engine.ActionAllow {
		t.Fatalf("without At the rate rule does not apply: got %+v", v)
	}
}

func TestFingerprintAllowlist(t *testing.T) {
	l := engine.NewLearner(Dialect, 0)
	s := &engine.Session{User: "app", Database: "shop"}
	for _, q := range []string{
		"SELECT * FROM users WHERE id = 1",
		"SELECT * FROM users WHERE id = 2",
		"UPDATE users SET name = 'x' WHERE id = 3; SELECT 1",
	} {
		l.Record(q, s)
	}
	l.Record("SELECT secret FROM vault", &engine.Session{User: "admin"})
	if n, _ := l.Len(); n != 4 {
		t.Fatalf("learned %d fingerprints, want 4", n)
	}
	frag := l.Export()
	for _, want := range []string{"SELECT * FROM users WHERE id = $1", "UPDATE users SET name = $1 WHERE id = $2", "users: [\"app\"]", "(seen 2)"} {
		if !strings.Contains(string(frag), want) {
			t.Errorf("export lacks %q:\n%s", want, frag)
		}
	}
	for _, lit := range []string{"'x'", "= 3"} {
		if strings.Contains(string(frag), lit) {
			t.Errorf("export contains literal %s:\n%s", lit, frag)
		}
	}
	// The fragment plus a catch-all deny is an enforcing allowlist.
	policy := string(frag) + `  - {id: not-learned, action: deny, users: [app], match: {}}` + "\n"
	e := mustEngine(t, policy, engine.Options{})
	if w := e.Policy().Warnings(); len(w) != 0 {
		t.Errorf("learned policy warnings: %v", w)
	}
	for _, tt := range []struct {
		sql  string
		want engine.Action
	}{
		{"SELECT * FROM users WHERE id = 99", engine.ActionAllow},
		{"select * from users where id = 5", engine.ActionAllow},
		{"SELECT * FROM users WHERE id = 1 OR 1 = 1", engine.ActionDeny},
		{"SELECT * FROM orders", engine.ActionDeny},
		{"SELECT 1", engine.ActionAllow},
	} {
		if v := e.Judge([]byte(tt.sql), s); v.Action != tt.want {
			t.Errorf("%q: got %v %s, want %v\npolicy:\n%s", tt.sql, v.Action, v.RuleID, tt.want, policy)
		}
	}
}

func TestEngineLearner(t *testing.T) {
	e := mustEngine(t, "rules: []", engine.Options{})
	s := &engine.Session{User: "app"}
	e.Judge([]byte("SELECT 1"), s) // before learning: not recorded
	l := engine.NewLearner(Dialect, 2)
	e.SetLearner(l)
	for _, q := range []string{"SELECT a FROM t WHERE b = 1", "SELECT a FROM t WHERE b = 2", "SELECT c FROM u", "SELECT d FROM v"} {
		e.Judge([]byte(q), s)
	}
	e.SetLearner(nil)
	e.Judge([]byte("SELECT e FROM w"), s)
	n, dropped := l.Len()
	if n != 2 || dropped != 1 {
		t.Errorf("learned %d, dropped %d; want 2 and 1", n, dropped)
	}
}

// Pathological input is denied by limit, quickly and without a crash.
func TestDefaultLimits(t *testing.T) {
	e, _ := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	in := make([]string, 10000)
	for i := range in {
		in[i] = fmt.Sprint(i)
	}
	var joins strings.Builder
	joins.WriteString("SELECT * FROM t0")
	for i := 1; i < 50; i++ {
		fmt.Fprintf(&joins, " JOIN t%d ON t%d.id = t0.id", i, i)
	}
	tests := []struct {
		name, sql, reason string
	}{
		{"10k IN list", "SELECT * FROM t WHERE id IN (" + strings.Join(in, ",") + ")", "in_list 10000 > 5000"},
		{"500-deep subqueries", strings.Repeat("SELECT * FROM (", 500) + "SELECT 1" + strings.Repeat(") s", 500), "depth 500 > 128"},
		{"10,000-deep parentheses", "SELECT " + strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000), "depth 10000 > 128"},
		{"50-way join", joins.String(), "joins 49 > 40"},
		{"16 MB", "SELECT '" + strings.Repeat("x", 16<<20) + "'", "bytes 16777225 > 4194304"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Now()
			v := e.Judge([]byte(tt.sql), nil)
			el := time.Since(t0)
			if v.Action != engine.ActionDeny || v.RuleID != "limits" || !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("got %v %s %q, want deny limits with %q", v.Action, v.RuleID, v.Reason, tt.reason)
			}
			t.Logf("%s: %v", tt.name, el) // reported, not asserted
		})
	}
}

func TestParseDepthReason(t *testing.T) {
	// Beyond the parser's own stack: a parse error naming the nesting,
	// when the parse bound lets the text be parsed at all.
	text := []byte("SELECT " + strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000))
	e := mustEngine(t, "rules: []", engine.Options{MaxParseDepth: 20000})
	v := e.Judge(text, nil)
	if !v.ParseError || v.Action != engine.ActionDeny || !strings.Contains(v.Reason, "nests deeper") {
		t.Errorf("10,000-deep without limit rules: got %+v, want a parse-error deny naming the nesting", v)
	}
	// Within the default bound, the bound's deny.
	e = mustEngine(t, "rules: []", engine.Options{})
	if v := e.Judge(text, nil); v.RuleID != engine.ParseBoundRule || !strings.Contains(v.Reason, "depth 10000 > 1000") {
		t.Errorf("10,000-deep, default bound: got %+v, want the parse bound's deny", v)
	}
}

func TestHitPathAllocationFree(t *testing.T) {
	e := mustEngine(t, `rules:
  - {id: fp, action: allow, users: [app], match: {fingerprints: ["0000000000000001"]}}
  - {id: net, action: log, client_addrs: [10.0.0.0/8], comms: [psql], match: {tables: [t]}}
  - {id: tw, action: deny, time: {hours: ["00:00-01:00"]}, match: {kind: [ddl]}}
  - {id: rate, action: deny, match: {tables: [t], rate: {per_second: 1000000, per: [user, client_addr, uid]}}}
`, engine.Options{})
	s := &engine.Session{User: "app", ClientAddr: netip.MustParseAddr("10.0.0.1"), Process: engine.ProcessInfo{Known: true, Comm: "x"},
		At: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	for _, sql := range []string{"SELECT a FROM t WHERE id = 1", "DROP TABLE t"} {
		b := []byte(sql)
		e.Judge(b, s)
		if n := testing.AllocsPerRun(200, func() { e.Judge(b, s) }); n != 0 {
			t.Errorf("%q: %v allocations per cached verdict, want 0", sql, n)
		}
	}
}
