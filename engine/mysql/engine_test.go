package mysql

import (
	"fmt"
	"strings"
	"sync"
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

func TestParseErrorReasonHasNoLiterals(t *testing.T) {
	const secret = "hunter2-secret-literal"
	tests := []struct {
		name, policy string
		sql          string
		action       engine.Action
	}{
		{"default deny", "rules: []", "SELEC '" + secret + "'", engine.ActionDeny},
		{"configured allow", "on_parse_error: allow", "SELECT FROM WHERE '" + secret + "'", engine.ActionAllow},
		{"configured log", "on_parse_error: log", "INSERT INTO t VALUES ('" + secret + "'", engine.ActionLog},
		{"second statement bad", "rules: []", "SELECT 1; SELEC '" + secret + "'", engine.ActionDeny},
		{"unterminated literal", "rules: []", "SELECT '" + secret, engine.ActionDeny},
		{"mariadb syntax not read", "rules: []", "HANDLER t READ a = ('" + secret + "')", engine.ActionDeny},
		{"mariadb returning not read", "rules: []", "DELETE FROM t WHERE a = '" + secret + "' RETURNING a b c", engine.ActionDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEngine(t, tt.policy, engine.Options{})
			for i := 0; i < 2; i++ { // cold, then cached
				v := e.Judge([]byte(tt.sql), nil)
				if v.Action != tt.action || !v.ParseError || v.RuleID != "parse-error" {
					t.Errorf("%q: got %+v, want action %v, ParseError, RuleID parse-error", tt.sql, v, tt.action)
				}
				if strings.Contains(v.Reason, secret) || strings.Contains(v.Reason, "'") || !strings.HasPrefix(v.Reason, parseErrorReason) {
					t.Errorf("%q: reason %q must be generic and free of literals", tt.sql, v.Reason)
				}
			}
		})
	}
}

func TestMultiStatement(t *testing.T) {
	e := mustEngine(t, `rules:
  - {id: deny-drop, action: deny, match: {kind: [ddl]}}
  - {id: log-delete, action: log, match: {kind: [delete]}}
  - {id: allow-select, action: allow, match: {kind: [select]}}
`, engine.Options{})
	tests := []struct {
		sql    string
		action engine.Action
		ruleID string
		n      int
	}{
		{"SELECT 1; SELECT 2", engine.ActionAllow, "allow-select", 2},
		{"BEGIN; SELECT 1; COMMIT", engine.ActionAllow, "allow-select", 3},
		{"DELETE FROM t WHERE a = 1; DROP TABLE t", engine.ActionDeny, "deny-drop", 2},
		{"DROP TABLE t; DELETE FROM t WHERE a = 1", engine.ActionDeny, "deny-drop", 2},
		{"SELECT 1; DELETE FROM t WHERE a = 1; SELECT 2", engine.ActionLog, "log-delete", 3},
		{"BEGIN; COMMIT", engine.ActionAllow, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			v := e.Judge([]byte(tt.sql), nil)
			if v.Action != tt.action || v.RuleID != tt.ruleID || v.Statements != tt.n {
				t.Errorf("%q\n got: %v %q %d statements\nwant: %v %q %d statements", tt.sql, v.Action, v.RuleID, v.Statements, tt.action, tt.ruleID, tt.n)
			}
		})
	}
}

func TestFacts(t *testing.T) {
	tests := []struct {
		sql   string
		check func(st *engine.StmtFacts) bool
		want  string
	}{
		{"SELECT a FROM s.t AS x JOIN u ON x.id = u.id", func(st *engine.StmtFacts) bool {
			return st.Kind == engine.KindSelect && len(st.Tables) == 2 && st.Tables[0] == engine.TableRef{Schema: "s", Name: "t", Alias: "x"} && st.Joins == 1
		}, "select; tables s.t AS x, u; 1 join"},
		{"INSERT INTO t (a) SELECT a FROM s", func(st *engine.StmtFacts) bool {
			return st.Kind == engine.KindInsert && written(st, "t") && !written(st, "s")
		}, "insert; t written, s read"},
		{"UPDATE t1 JOIN t2 ON t1.id = t2.id SET t1.a = t2.b WHERE t2.c = 1", func(st *engine.StmtFacts) bool {
			return st.Kind == engine.KindUpdate && written(st, "t1") && !written(st, "t2") && st.Unfiltered == 0
		}, "update; t1 written, t2 read"},
		{"SELECT NOW(), COUNT(*), ROW_NUMBER() OVER () FROM t", func(st *engine.StmtFacts) bool {
			names := ""
			for _, f := range st.Funcs {
				names += f.Name + " "
			}
			return names == "now count row_number "
		}, "functions now, count, row_number"},
		{"ALTER TABLE t ADD COLUMN b int", func(st *engine.StmtFacts) bool {
			return st.Kind == engine.KindDDL && st.Verb == engine.VerbAlter && st.Object == "table"
		}, "ddl alter table"},
		{"DROP VIEW v", func(st *engine.StmtFacts) bool {
			return st.Kind == engine.KindDDL && st.Verb == engine.VerbDrop && st.Object == "view"
		}, "ddl drop view"},
		{"SET GLOBAL max_connections = 10, @x = 1", func(st *engine.StmtFacts) bool {
			return st.Kind == engine.KindSetStmt && len(st.Settings) == 1 && st.Settings[0] == "max_connections"
		}, "set; settings max_connections"},
		{"WITH c AS (SELECT 1) SELECT * FROM c", func(st *engine.StmtFacts) bool {
			return len(st.Tables) == 1 && st.Tables[0].CTE && st.CTEs == 1
		}, "a CTE reference is not a relation"},
		{"EXPLAIN ANALYZE SELECT * FROM t", func(st *engine.StmtFacts) bool {
			return st.Kind == engine.KindSelect && st.Kinds.Has(engine.KindExplain)
		}, "explain analyze takes its statement's kind"},
		{"LOAD DATA LOCAL INFILE 'x' INTO TABLE t", func(st *engine.StmtFacts) bool {
			return st.Kind == engine.KindCopy && st.Kinds.Has(engine.KindInsert) && st.Copy == engine.CopyStdio && st.Effects == 0
		}, "load data local: a copy from the client"},
		{"GRANT r1, r2 TO u", func(st *engine.StmtFacts) bool {
			return st.Kind == engine.KindDCL && len(st.Roles) == 2 && st.Roles[1] == "r2"
		}, "grant roles"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			tf := analyze(tt.sql, engine.LexStats{})
			if tf.ParseError || len(tf.Stmts) != 1 {
				t.Fatalf("%q: parse error %v (%s), %d statements", tt.sql, tf.ParseError, tf.ParseReason, len(tf.Stmts))
			}
			if st := &tf.Stmts[0]; !tt.check(st) {
				t.Errorf("%q: got %+v, want %s", tt.sql, *st, tt.want)
			}
		})
	}
}

func written(st *engine.StmtFacts, name string) bool {
	for _, t := range st.Tables {
		if t.Name == name && t.Write {
			return true
		}
	}
	return false
}

func TestStatementLocations(t *testing.T) {
	text := "SELECT 1; UPDATE t SET a = 1 WHERE id = 2;\nSELECT 3"
	tf := analyze(text, engine.LexStats{})
	if len(tf.Stmts) != 3 {
		t.Fatalf("got %d statements, want 3", len(tf.Stmts))
	}
	var got []string
	for _, st := range tf.Stmts {
		got = append(got, strings.TrimSpace(text[st.Loc:st.Loc+st.Length]))
	}
	want := []string{"SELECT 1;", "UPDATE t SET a = 1 WHERE id = 2;", "SELECT 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("statement texts: got %q, want %q", got, want)
	}
}

func TestFingerprintAndNormalize(t *testing.T) {
	a := Dialect.Fingerprint("SELECT * FROM t WHERE id = 1")
	b := Dialect.Fingerprint("select *  from t where id = 42")
	c := Dialect.Fingerprint("SELECT * FROM u WHERE id = 1")
	if a == 0 || a != b || a == c {
		t.Errorf("fingerprints: %x %x %x: want the first two equal and non-zero, the third different", a, b, c)
	}
	n, err := Dialect.Normalize("SELECT * FROM t WHERE name = 'secret' AND id IN (1, 2, 3)")
	if err != nil || strings.Contains(n, "secret") || !strings.Contains(n, "?") {
		t.Errorf("Normalize: %q, %v: want literals replaced by ?", n, err)
	}
}

func TestDefaultPolicyChecks(t *testing.T) {
	if err := DefaultPolicy().Check(Dialect); err != nil {
		t.Fatal(err)
	}
	if len(DefaultPolicyYAML()) == 0 {
		t.Fatal("empty default policy text")
	}
	// A key the dialect cannot fill is refused.
	p, err := engine.ParsePolicy([]byte("rules:\n  - {id: l, action: deny, match: {languages: [c]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.New(p, Dialect, engine.Options{}); err == nil || !strings.Contains(err.Error(), "languages") {
		t.Errorf("a policy using languages: got %v, want an error naming the key", err)
	}
}

func TestLimitsRule(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	long := "SELECT * FROM t WHERE id IN (1" + strings.Repeat(",1", 6000) + ")"
	if v := e.Judge([]byte(long), nil); v.RuleID != "limits" || !strings.Contains(v.Reason, "in_list 6001 > 5000") {
		t.Errorf("6001-element IN list: got %v %s (%s), want limits with the measure", v.Action, v.RuleID, v.Reason)
	}
	deep := "SELECT " + strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200)
	if v := e.Judge([]byte(deep), nil); v.RuleID != "limits" {
		t.Errorf("200 nested parentheses: got %v %s, want limits", v.Action, v.RuleID)
	}
}

func TestCacheHitDoesNotAllocate(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Session{User: "app", Database: "app"}
	for _, sql := range []string{
		"SELECT c FROM sbtest1 WHERE id=4990",
		"SELECT LOAD_FILE('/etc/passwd')",
		"UPDATE t SET a = 1",
		"SELECT * FROM t /* note */ WHERE a = 'x' -- end",
	} {
		b := []byte(sql)
		e.Judge(b, s)
		if n := testing.AllocsPerRun(100, func() { e.Judge(b, s) }); n != 0 {
			t.Errorf("%q: %v allocations per cached verdict, want 0", sql, n)
		}
	}
}

func TestParseErrorNamesKnownGaps(t *testing.T) {
	for sql, want := range map[string]string{
		"INSTALL PLUGIN server_audit SONAME 'server_audit.so'":                                "INSTALL PLUGIN",
		"create function sys_exec returns int soname 'udf.so'":                                "CREATE FUNCTION ... SONAME",
		"DELETE FROM t WHERE id = 'secret' RETURNING id id id":                                "RETURNING",
		"CREATE DEFINER=`root`@`%` TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET NEW.a = 1 1": "CREATE TRIGGER",
		"HANDLER t READ a = ('secret')":                                                       "HANDLER",
		"SELEC 1":                                                                             "",
	} {
		tf := analyze(sql, engine.LexStats{})
		if !tf.ParseError {
			t.Errorf("%q: parsed, want a parse error", sql)
			continue
		}
		if strings.Contains(tf.ParseReason, "secret") || strings.Contains(tf.ParseReason, "'") {
			t.Errorf("%q: reason %q has literals", sql, tf.ParseReason)
		}
		if got := knownUnparsed(sql); got != want {
			t.Errorf("%q: named %q, want %q (reason %q)", sql, got, want, tf.ParseReason)
		}
	}
}

// Run once with -race: go test -race -run TestConcurrentJudge ./engine/mysql
// (the pooled parsers are shared by every goroutine).
func TestConcurrentJudge(t *testing.T) {
	e := mustEngine(t, `rules:
  - {id: f, action: deny, match: {functions: [load_file]}}
  - {id: u, action: deny, users: [bob], match: {kind: [ddl]}}
`, engine.Options{CacheBytes: 8 << 10}) // small, so eviction runs concurrently with hits
	sessions := []*engine.Session{{User: "alice"}, {User: "bob"}}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				s := sessions[(g+i)%2]
				k := i % 50
				evil := fmt.Appendf(nil, "SELECT LOAD_FILE('/f%d')", k)
				ddl := fmt.Appendf(nil, "CREATE TABLE t%d (a int)", k)
				if v := e.Judge(evil, s); v.Action != engine.ActionDeny || v.RuleID != "f" {
					t.Errorf("%s: got %+v, want deny f", evil, v)
					return
				}
				want := engine.ActionAllow
				if s.User == "bob" {
					want = engine.ActionDeny
				}
				if v := e.Judge(ddl, s); v.Action != want {
					t.Errorf("%s as %s: got %v, want %v", ddl, s.User, v.Action, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Every object type the dialect offers is one classify gives, so that a
// rule naming one can match.
func TestObjectsAreProduced(t *testing.T) {
	for _, o := range Dialect.Objects() {
		p, err := engine.ParsePolicy([]byte("rules:\n  - {id: o, action: deny, match: {objects: [" + o + "]}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := engine.New(p, Dialect, engine.Options{}); err != nil {
			t.Errorf("objects: [%s]: %v", o, err)
		}
	}
	samples := map[string]string{
		"database": "CREATE DATABASE d", "table": "CREATE TABLE t (a int)", "view": "CREATE VIEW v AS SELECT 1",
		"index": "CREATE INDEX i ON t (a)", "sequence": "CREATE SEQUENCE s", "procedure": "CREATE PROCEDURE p() SELECT 1",
		"user": "CREATE USER u", "role": "CREATE ROLE r",
		// MariaDB's syntax, read by mariadb.go and body.go
		"function": "CREATE FUNCTION f() RETURNS INT RETURN 1", "trigger": "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
		"event": "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t WHERE a < 0", "server": "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (HOST 'h')",
		"plugin": "INSTALL PLUGIN p SONAME 'p.so'",
	}
	for _, o := range Dialect.Objects() {
		sql, ok := samples[o]
		if !ok {
			t.Errorf("object type %s has no sample statement", o)
			continue
		}
		tf := analyze(sql, engine.LexStats{})
		if tf.ParseError && o != "server" && o != "plugin" || len(tf.Stmts) == 0 || tf.Stmts[0].Object != o {
			t.Errorf("%q: object %+v, want %s", sql, tf.Stmts, o)
		}
	}
}

// Past maxPieceParses pieces, statements are still recognized by their
// words: the plugin load after 200 statements is denied by its rule.
func TestRecognizeAfterManyPieces(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tail := range []string{"INSTALL SONAME 'x'", "CHANGE MASTER TO MASTER_HOST = 'h'"} {
		text := strings.Repeat("SELECT 1 RETURNING a;", 200) + tail
		v := e.Judge([]byte(text), nil)
		if want := map[bool]string{true: "no-code-loading", false: "no-remote-connections"}[strings.HasPrefix(tail, "INSTALL")]; v.RuleID != want {
			t.Errorf("200 statements, then %s: got %v %s, want %s", tail, v.Action, v.RuleID, want)
		}
	}
}

// TestNoImplicitSchema: MySQL has no schema an unqualified name is known
// to be in by its name alone (PostgreSQL's pg_* in pg_catalog is
// engine/pgsql's): an unqualified pg_users read with no current database
// may be any schema's, so a rule naming shop.pg_users matches it.
func TestNoImplicitSchema(t *testing.T) {
	e := mustEngine(t, "rules:\n  - {id: r, action: deny, match: {tables: [shop.pg_users]}}\n", engine.Options{})
	for sql, want := range map[string]string{"SELECT * FROM pg_users": "r", "SELECT * FROM shop.pg_users": "r", "SELECT * FROM other.pg_users": ""} {
		if v := e.Judge([]byte(sql), &engine.Session{User: "app"}); v.RuleID != want {
			t.Errorf("%s: rule %q, want %q", sql, v.RuleID, want)
		}
	}
}
