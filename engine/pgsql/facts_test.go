package pgsql

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// describe renders facts compactly for table tests: "kind kinds=[..] unfiltered=[..]
// copy=.. tables=[..] funcs=[..]". Tables written carry a "+w" suffix.
func describe(f *engine.StmtFacts) string {
	var b strings.Builder
	b.WriteString(f.Kind.String())
	if extra := f.Kinds &^ (1 << f.Kind); extra != 0 {
		fmt.Fprintf(&b, " nested=%s", kindList(extra))
	}
	if f.Unfiltered != 0 {
		fmt.Fprintf(&b, " unfiltered=%s", kindList(f.Unfiltered))
	}
	if f.Copy != 0 {
		var c []string
		for bit, name := range map[engine.CopyTarget]string{engine.CopyStdio: "stdio", engine.CopyFile: "file", engine.CopyProgram: "program"} {
			if f.Copy&bit != 0 {
				c = append(c, name)
			}
		}
		slices.Sort(c)
		fmt.Fprintf(&b, " copy=%s", strings.Join(c, ","))
	}
	var ts []string
	for _, t := range f.Tables {
		s := t.Name
		if t.Schema != "" {
			s = t.Schema + "." + s
		}
		if t.Write {
			s += "+w"
		}
		ts = append(ts, s)
	}
	slices.Sort(ts)
	if len(ts) > 0 {
		fmt.Fprintf(&b, " tables=%s", strings.Join(ts, ","))
	}
	var fs []string
	for _, fn := range f.Funcs {
		s := fn.Name
		if fn.Schema != "" {
			s = fn.Schema + "." + s
		}
		fs = append(fs, s)
	}
	slices.Sort(fs)
	if len(fs) > 0 {
		fmt.Fprintf(&b, " funcs=%s", strings.Join(fs, ","))
	}
	return b.String()
}

func kindList(s engine.KindSet) string {
	var out []string
	for k := engine.StmtKind(0); k < engine.NumKinds; k++ {
		if s.Has(k) {
			out = append(out, k.String())
		}
	}
	return strings.Join(out, ",")
}

func TestAnalyzeFacts(t *testing.T) {
	tests := []struct {
		name, sql, want string
	}{
		{"point select", "SELECT abalance FROM pgbench_accounts WHERE aid = 1", "select tables=pgbench_accounts"},
		{"qualified and quoted", `SELECT * FROM Public."Accounts" a JOIN s2.b ON true`, "select tables=public.accounts,s2.b"},
		{"update with where", "UPDATE t SET a = a + 1 WHERE id = 2", "update tables=t+w"},
		{"update without where", "UPDATE t SET a = 0", "update unfiltered=update tables=t+w"},
		{"update from", "UPDATE t SET a = u.a FROM u WHERE t.id = u.id", "update tables=t+w,u"},
		{"delete without where", "DELETE FROM s.t", "delete unfiltered=delete tables=s.t+w"},
		{"delete using", "DELETE FROM t USING u WHERE t.id = u.id", "delete tables=t+w,u"},
		{"insert select", "INSERT INTO t (a) SELECT b FROM u", "insert tables=t+w,u"},
		{"insert default expr func", "INSERT INTO t VALUES (DEFAULT, now(), pg_catalog.lower('X'))", "insert tables=t+w funcs=now,pg_catalog.lower"},
		{"merge", "MERGE INTO t USING u ON t.id = u.id WHEN MATCHED THEN DELETE", "merge tables=t+w,u"},
		{"cte delete without where", "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "select nested=delete unfiltered=delete tables=d,t+w"},
		{"explain analyze delete", "EXPLAIN ANALYZE DELETE FROM t", "delete nested=explain unfiltered=delete tables=t+w"},
		{"explain without analyze plans only", "EXPLAIN DELETE FROM t", "explain tables=t+w"},
		{"explain analyze false", "EXPLAIN (ANALYZE false) SELECT 1", "explain"},
		{"prepare update", "PREPARE p AS UPDATE t SET a = $1", "utility nested=update unfiltered=update tables=t+w"},
		{"function in subquery", "SELECT 1 WHERE EXISTS (SELECT pg_read_file('/etc/passwd'))", "select funcs=pg_read_file"},
		{"function in from", "SELECT * FROM pg_catalog.pg_ls_dir('.') AS d", "select funcs=pg_catalog.pg_ls_dir"},
		{"function in lateral cte", "WITH x AS (SELECT 1) SELECT * FROM x, LATERAL (SELECT upper(y) FROM generate_series(1,2) y) z", "select tables=x funcs=generate_series,upper"},
		{"function in column default", "CREATE TABLE t (a text DEFAULT pg_read_file('f'))", "ddl tables=t+w funcs=pg_read_file"},
		{"function in check", "ALTER TABLE t ADD CONSTRAINT c CHECK (length(pg_ls_dir('.')) > 0)", "ddl tables=t+w funcs=length,pg_ls_dir"},
		{"call", "CALL myproc(1, other(2))", "call funcs=myproc,other"},
		{"copy from stdin", "COPY pgbench_accounts FROM STDIN WITH (FREEZE ON)", "copy copy=stdio tables=pgbench_accounts+w"},
		{"copy to stdout", "COPY (SELECT * FROM t) TO STDOUT", "copy copy=stdio tables=t"},
		{"copy to file", "COPY t TO '/tmp/x'", "copy copy=file tables=t"},
		{"copy from program", "COPY t FROM PROGRAM 'id'", "copy copy=program tables=t+w"},
		{"truncate", "TRUNCATE TABLE a, s.b", "truncate tables=a+w,s.b+w"},
		{"drop tables", "DROP TABLE IF EXISTS a, s.b", "ddl tables=a+w,s.b+w"},
		{"drop function", "DROP FUNCTION f(int)", "ddl"},
		{"create index", "CREATE INDEX ON t (lower(a))", "ddl tables=t+w funcs=lower"},
		{"create table as", "CREATE TABLE n AS SELECT * FROM o", "ddl tables=n+w,o"},
		{"create view", "CREATE VIEW v AS SELECT f(a) FROM o", "ddl tables=o,v+w funcs=f"},
		{"create trigger", "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION audit.log_it()", "ddl tables=t+w funcs=audit.log_it"},
		{"do block body", "DO $$ BEGIN PERFORM pg_read_file('/etc/passwd'); END $$", "do funcs=pg_read_file"},
		{"do block execute string", "DO $$ BEGIN EXECUTE 'select pg_catalog.pg_ls_dir(''.'')'; END $$", "do funcs=pg_catalog.pg_ls_dir"},
		{"create function body", "CREATE FUNCTION f() RETURNS text LANGUAGE sql AS $$ SELECT lo_export(1, '/tmp/x') $$", "ddl funcs=lo_export"},
		{"sql-standard function body", "CREATE FUNCTION f() RETURNS text LANGUAGE sql BEGIN ATOMIC SELECT pg_read_file('x'); END", "ddl funcs=pg_read_file"},
		{"set", "SET search_path = public", "set"},
		{"begin", "BEGIN", "transaction"},
		{"vacuum analyze", "VACUUM ANALYZE pgbench_branches", "vacuum tables=pgbench_branches"},
		{"analyze", "ANALYZE t", "analyze tables=t"},
		{"grant", "GRANT SELECT ON t TO r", "dcl tables=t"},
		{"do block delete", "do $$ begin delete from t; end $$", "do nested=delete unfiltered=delete tables=t+w"},
		{"do block update with where", "DO $$ BEGIN UPDATE t SET a = 1 WHERE id = 2; END $$", "do nested=update tables=t+w"},
		{"function body delete runs later", "CREATE FUNCTION f() RETURNS void LANGUAGE sql BEGIN ATOMIC DELETE FROM t; END", "ddl tables=t+w"},
		{"alter system", "ALTER SYSTEM SET work_mem = '1MB'", "alter_system"},
		{"show", "SHOW work_mem", "utility"},
		{"values", "VALUES (1), (abs(-2))", "select funcs=abs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf := analyze(tt.sql)
			if tf.ParseError {
				t.Fatalf("analyze(%q): parse error %s", tt.sql, tf.ParseReason)
			}
			if len(tf.Stmts) != 1 {
				t.Fatalf("analyze(%q): %d statements, want 1", tt.sql, len(tf.Stmts))
			}
			if got := describe(&tf.Stmts[0]); got != tt.want {
				t.Errorf("analyze(%q)\n got: %s\nwant: %s", tt.sql, got, tt.want)
			}
		})
	}
}

// Deep nesting must end in a verdict, not a crash: pg_query stops at its
// stack-depth limit, and the walker has no recursion of its own.
func TestAnalyzeDeepNesting(t *testing.T) {
	for _, depth := range []int{100, 1000, 10000, 100000} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			parens := "SELECT " + strings.Repeat("(", depth) + "pg_read_file('x')" + strings.Repeat(")", depth)
			tf := analyze(parens)
			if !tf.ParseError && (len(tf.Stmts) != 1 || len(tf.Stmts[0].Funcs) != 1) {
				t.Errorf("parenthesised depth %d: got %+v, want one function or a parse error", depth, tf.Stmts)
			}
			subq := strings.Repeat("SELECT * FROM (", depth) + "SELECT pg_read_file('x')" + strings.Repeat(") s", depth)
			tf = analyze(subq)
			if !tf.ParseError && (len(tf.Stmts) != 1 || len(tf.Stmts[0].Funcs) != 1) {
				t.Errorf("subquery depth %d: got %+v, want one function or a parse error", depth, tf.Stmts)
			}
		})
	}
}

// TestLookaheadComments: a comment between the two words PostgreSQL's
// grammar reads together (NOT BETWEEN, NULLS FIRST, WITH TIME ZONE) is read
// as PostgreSQL reads it, a blank, not as a parse error (libpg_query's
// lookahead sees the comment); the tree is the one without the comment,
// and a text that does not parse without the comment stays a parse error.
func TestLookaheadComments(t *testing.T) {
	for _, c := range []struct{ sql, same string }{
		{"SELECT name FROM items WHERE id NOT/**/BETWEEN 1 AND 2", "SELECT name FROM items WHERE id NOT BETWEEN 1 AND 2"},
		{"SELECT name FROM items WHERE id NOT /* excluded */ IN (1, 2)", "SELECT name FROM items WHERE id NOT IN (1, 2)"},
		{"SELECT name FROM items WHERE name NOT -- not these\nLIKE 'a%'", "SELECT name FROM items WHERE name NOT LIKE 'a%'"},
		{"SELECT name FROM items WHERE name NOT /* a /* nested */ b */ ILIKE 'a%'", "SELECT name FROM items WHERE name NOT ILIKE 'a%'"},
		{"SELECT name FROM items WHERE name NOT /**/ /**/ SIMILAR TO 'a%'", "SELECT name FROM items WHERE name NOT SIMILAR TO 'a%'"},
		{"SELECT name FROM items ORDER BY name NULLS /* c */ FIRST", "SELECT name FROM items ORDER BY name NULLS FIRST"},
		{"SELECT now()::timestamp WITH /**/ TIME ZONE", "SELECT now()::timestamp WITH TIME ZONE"},
		{"SELECT * FROM unnest(ARRAY[1]) WITH /**/ ORDINALITY", "SELECT * FROM unnest(ARRAY[1]) WITH ORDINALITY"},
		{"SELECT name FROM items WHERE id NOT/**/IN (SELECT id FROM secrets)", "SELECT name FROM items WHERE id NOT IN (SELECT id FROM secrets)"},
	} {
		got, want := analyze(c.sql), analyze(c.same)
		if got.ParseError || want.ParseError {
			t.Errorf("%q: parse error %v (%s), without the comment %v", c.sql, got.ParseError, got.ParseReason, want.ParseError)
			continue
		}
		if len(got.Stmts) != 1 || len(want.Stmts) != 1 || fmt.Sprint(got.Stmts[0].Tables) != fmt.Sprint(want.Stmts[0].Tables) || got.Stmts[0].Kind != want.Stmts[0].Kind {
			t.Errorf("%q: got %+v, want the facts of %q: %+v", c.sql, got.Stmts, c.same, want.Stmts)
		}
	}
	for _, sql := range []string{
		"SELECT name FROM items WHERE id NOT/**/BETWEEN",
		"SELECT name FROM items WHERE NOT /**/ FROM",
		"SELECT 'NOT/**/BETWEEN' WHERE id NOT/**/BETWEEN 1",
	} {
		if tf := analyze(sql); !tf.ParseError {
			t.Errorf("%q: parsed, want a parse error", sql)
		}
	}
}

// TestAnalyzeEffects: the effect vocabulary (effects.go) is filled from
// every syntax that reaches a capability.
func TestAnalyzeEffects(t *testing.T) {
	tests := []struct {
		name, sql, want string
	}{
		{"plain select", "SELECT a FROM t WHERE id = $1", ""},
		{"server file call", "SELECT pg_read_file('/etc/passwd')", "reads_server_file"},
		{"operator procedure", "CREATE OPERATOR ### (LEFTARG = text, PROCEDURE = pg_catalog.pg_read_file)", "reads_server_file"},
		{"aggregate finalfunc", "CREATE AGGREGATE a(text) (SFUNC = textcat, STYPE = text, FINALFUNC = pg_ls_dir)", "reads_server_file"},
		{"type input", "CREATE TYPE x (INPUT = pg_read_file, OUTPUT = textout)", "reads_server_file"},
		{"cast function", "CREATE CAST (text AS int) WITH FUNCTION pg_read_file(text)", "reads_server_file"},
		{"regproc string", "SELECT 'pg_catalog.\"pg_read_file\"'::regproc", "reads_server_file"},
		{"regprocedure string", "SELECT 'pg_read_file(text)'::regprocedure", "reads_server_file"},
		{"lo_export", "SELECT lo_export(1, '/tmp/x')", "writes_server_file"},
		{"copy to file", "COPY t TO '/tmp/x'", "writes_server_file"},
		{"copy from file", "COPY t FROM '/etc/passwd'", "reads_server_file"},
		{"copy program", "COPY t TO PROGRAM 'id'", "runs_program"},
		{"fdw program option", "CREATE FOREIGN TABLE f (a text) SERVER s OPTIONS (program 'id')", "runs_program"},
		{"fdw filename option", "ALTER FOREIGN TABLE f OPTIONS (SET filename '/etc/passwd')", "reads_server_file"},
		{"fdw option dropped", "ALTER FOREIGN TABLE f OPTIONS (DROP program)", ""},
		{"file_fdw server", "CREATE SERVER s FOREIGN DATA WRAPPER file_fdw", "reads_server_file,runs_program"},
		{"postgres_fdw server", "CREATE SERVER s FOREIGN DATA WRAPPER postgres_fdw", "opens_connection"},
		{"dblink", "SELECT dblink_exec('c', 'x')", "opens_connection"},
		{"load", "LOAD 'x'", "loads_code"},
		{"untrusted language", "CREATE FUNCTION f() RETURNS int LANGUAGE plpython3u AS 'return 1'", "loads_code"},
		{"preload via alter role", "ALTER ROLE app SET session_preload_libraries = 'x'", "loads_code"},
		{"log setting", "SET log_statement = 'none'", "disables_logging"},
		{"log setting reset", "RESET log_statement", ""},
		{"log setting default", "SET log_statement TO DEFAULT", ""},
		{"log via set_config", "SELECT set_config('log_min_messages', 'panic', false)", "disables_logging"},
		{"computed set_config name", "SELECT set_config(current_user, 'x', false)", "loads_code,disables_logging,changes_resolution,changes_identity,sets_unnamed_setting"},
		{"search_path shadowing", "SET search_path = public, pg_catalog", "changes_resolution"},
		{"search_path quoted list", "SELECT set_config('search_path', 'a, \"pg_catalog\"', true)", "changes_resolution"},
		{"search_path ordinary", "SET search_path = tenant, public", ""},
		{"search_path catalog first", "SET search_path = pg_catalog, public", ""},
		{"search_path parameter", "SELECT set_config('search_path', $1, false)", "changes_resolution"},
		{"builtin function shadow", "CREATE FUNCTION lower(varchar) RETURNS text LANGUAGE sql AS 'select 1::text'", "changes_resolution"},
		{"builtin function in pg_temp", "CREATE FUNCTION pg_temp.lower(varchar) RETURNS text LANGUAGE sql AS 'select 1::text'", ""},
		{"builtin operator shadow", "CREATE OPERATOR = (LEFTARG = varchar, RIGHTARG = varchar, FUNCTION = texteq)", "changes_resolution"},
		{"new operator", "CREATE OPERATOR <#> (LEFTARG = point, RIGHTARG = point, FUNCTION = point_distance)", ""},
		{"catalog update", "UPDATE pg_authid SET rolsuper = true WHERE rolname = 'app'", "writes_catalog"},
		{"catalog insert via cte", "WITH x AS (INSERT INTO pg_catalog.pg_auth_members SELECT 1, 2, 3, false RETURNING 1) SELECT 1", "writes_catalog"},
		{"catalog function ddl", "ALTER FUNCTION pg_catalog.lower(text) OWNER TO app", "writes_catalog"},
		{"app table named like cte", "WITH pg_authid AS (SELECT 1) SELECT * FROM pg_authid", ""},
		{"credential read", "SELECT passwd FROM pg_shadow", "reads_credentials"},
		{"roles view", "SELECT rolpassword FROM pg_roles", ""},
		{"credential column in where", "SELECT 1 FROM pg_authid WHERE rolpassword LIKE 'SCRAM%'", "reads_credentials"},
		{"credential star", "TABLE pg_shadow", "reads_credentials"},
		{"credential whole row", "SELECT row_to_json(a) FROM pg_authid a", "reads_credentials"},
		{"credential copy", "COPY pg_catalog.pg_authid TO STDOUT", "reads_credentials"},
		{"user mappings without options", "SELECT um.srvname, um.usename FROM pg_catalog.pg_user_mappings um", ""},
		{"user mappings options", "SELECT um.umoptions FROM pg_user_mappings um", "reads_credentials"},
		{"pg_settings row idiom", "SELECT set_config(name, 'view, foreign-table', false) FROM pg_settings WHERE name = 'restrict_nonsystem_relation_kind'", ""},
		{"pg_settings row idiom log", "SELECT set_config(s.name, 'none', false) FROM pg_settings s WHERE s.name = 'log_statement'", "disables_logging"},
		{"pg_settings without filter", "SELECT set_config(name, 'none', false) FROM pg_settings WHERE name LIKE 'log%'", "loads_code,disables_logging,changes_resolution,changes_identity,sets_unnamed_setting"},
		{"grant privileged role", "GRANT pg_read_server_files TO app", "grants_privilege"},
		{"create role in role", "CREATE ROLE r IN ROLE pg_execute_server_program", "grants_privilege"},
		{"alter group add user", "ALTER GROUP pg_write_server_files ADD USER app", "grants_privilege"},
		{"alter group drop user", "ALTER GROUP pg_write_server_files DROP USER app", ""},
		{"grant ordinary role", "GRANT readers TO bob", ""},
		{"createrole", "CREATE ROLE r CREATEROLE", "grants_privilege"},
		{"grant on catalog", "GRANT SELECT ON pg_authid TO app", "grants_privilege"},
		{"session authorization", "SET SESSION AUTHORIZATION bob", "changes_identity"},
		{"session authorization reset", "RESET SESSION AUTHORIZATION", ""},
		{"set role privileged", "SET ROLE pg_read_all_data", "changes_identity"},
		{"set role ordinary", "SET ROLE web_anon", ""},
		{"terminate backend", "SELECT pg_terminate_backend(1)", "signals_server"},
		{"long sleep", "SELECT pg_sleep(30)", "long_sleep"},
		{"short sleeps add up", "SELECT pg_sleep(3), pg_sleep(3)", "long_sleep"},
		{"short sleep", "SELECT pg_sleep(2)", ""},
		{"interval sleep", "SELECT pg_sleep_for('1 min')", "long_sleep"},
		{"do body effect", "DO $$ BEGIN PERFORM set_config('log_statement', 'none', false); END $$", "disables_logging"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf := analyze(tt.sql)
			if tf.ParseError || len(tf.Stmts) != 1 {
				t.Fatalf("analyze(%q): parse error %v, %d statements", tt.sql, tf.ParseError, len(tf.Stmts))
			}
			if got := tf.Stmts[0].Effects.String(); got != tt.want {
				t.Errorf("analyze(%q) effects\n got: %s\nwant: %s", tt.sql, got, tt.want)
			}
		})
	}
}

// TestAnalyzeProbes: set operations, sleeps and kinds by what they do.
func TestAnalyzeProbes(t *testing.T) {
	tests := []struct {
		name, sql string
		union     bool
		probe     bool
		kind      engine.StmtKind
	}{
		{"union with catalog", "SELECT a FROM t UNION SELECT relname FROM pg_class", true, false, engine.KindSelect},
		{"union with catalog cte", "WITH c AS (SELECT relname FROM pg_class) SELECT a FROM t UNION SELECT * FROM c", true, false, engine.KindSelect},
		{"union with nested catalog cte", "WITH c AS (SELECT relname FROM pg_class), d AS (SELECT * FROM c) SELECT a FROM t UNION SELECT * FROM d", true, false, engine.KindSelect},
		{"union with recursive cte", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r", false, false, engine.KindSelect},
		{"union with catalog function", "SELECT a FROM t UNION SELECT version()", true, false, engine.KindSelect},
		{"union with current_user", "SELECT a FROM t UNION SELECT current_user", true, false, engine.KindSelect},
		{"union with statistics view", "SELECT a FROM t UNION ALL SELECT relname FROM pg_stat_user_tables", false, false, engine.KindSelect},
		{"all catalog union", "SELECT relname FROM pg_class UNION SELECT viewname FROM pg_views", false, false, engine.KindSelect},
		{"sleep in case result", "SELECT CASE WHEN current_user = 'x' THEN pg_sleep(1) END", false, true, engine.KindSelect},
		{"sleep under and", "SELECT current_user = 'x' AND pg_sleep(1) IS NULL", false, true, engine.KindSelect},
		{"sleep under coalesce", "SELECT coalesce(NULL, pg_sleep(1)::text)", false, true, engine.KindSelect},
		{"computed sleep", "SELECT pg_sleep(length(current_user))", false, true, engine.KindSelect},
		{"constant sleep", "SELECT pg_sleep(1)", false, false, engine.KindSelect},
		{"sleep under where", "SELECT pg_sleep(1) WHERE current_user = 'x'", false, true, engine.KindSelect},
		{"sleep with limit", "SELECT pg_sleep(1) LIMIT length(current_user)", false, true, engine.KindSelect},
		{"sleep in do", "DO $$ BEGIN IF current_user = 'x' THEN PERFORM pg_sleep(1); END IF; END $$", false, true, engine.KindDo},
		{"sleep in function body", "CREATE FUNCTION w() RETURNS void LANGUAGE sql AS 'select pg_sleep(1)'", false, false, engine.KindDDL},
		{"select into", "SELECT * INTO n FROM t", false, false, engine.KindDDL},
		{"explain analyze select into", "EXPLAIN ANALYZE SELECT * INTO n FROM t", false, false, engine.KindDDL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf := analyze(tt.sql)
			if tf.ParseError || len(tf.Stmts) != 1 {
				t.Fatalf("analyze(%q): parse error %v, %d statements", tt.sql, tf.ParseError, len(tf.Stmts))
			}
			f := &tf.Stmts[0]
			if f.CatalogUnion != tt.union || f.TimeProbe != tt.probe || f.Kind != tt.kind {
				t.Errorf("analyze(%q)\n got: union=%v probe=%v kind=%v\nwant: union=%v probe=%v kind=%v", tt.sql, f.CatalogUnion, f.TimeProbe, f.Kind, tt.union, tt.probe, tt.kind)
			}
		})
	}
}

// A regproc constant is read as a function name, so a text that differs
// only in it must not be judged by another text's shape (shape.go).
func TestShapeCacheRegproc(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Session{User: "app", Database: "app"}
	for _, name := range []string{"abs", "lower", "upper", "length"} {
		sql := "INSERT INTO t (f) VALUES ('" + name + "'::regproc)"
		if v := e.Judge([]byte(sql), s); v.Action.Denies() {
			t.Fatalf("%q: got %v %s, want allow", sql, v.Action, v.RuleID)
		}
	}
	sql := "INSERT INTO t (f) VALUES ('pg_read_file'::regproc)"
	if v := e.Judge([]byte(sql), s); !v.Action.Denies() || v.RuleID != "no-server-file-functions" {
		t.Errorf("%q after same-shaped texts: got %v %s, want deny no-server-file-functions", sql, v.Action, v.RuleID)
	}
}

// TestCTEScope: a WITH name is a CTE only where PostgreSQL resolves it to
// one; elsewhere the same name is a relation (and a write target never is
// a CTE).
func TestCTEScope(t *testing.T) {
	tests := []struct {
		name, sql string
		want      string // relations that are not CTE references, sorted
	}{
		{"plain", "WITH c AS (SELECT 1) SELECT * FROM c", ""},
		{"sibling scope", "SELECT * FROM (SELECT * FROM c) a, (WITH c AS (SELECT 1) SELECT * FROM c) b", "c"},
		{"sibling scope reversed", "SELECT * FROM (WITH c AS (SELECT 1) SELECT * FROM c) b, (SELECT * FROM c) a", "c"},
		{"later cte not visible", "WITH a AS (SELECT * FROM s), s AS (SELECT 1) SELECT * FROM a", "s"},
		{"earlier cte visible", "WITH s AS (SELECT 1), a AS (SELECT * FROM s) SELECT * FROM a", ""},
		{"recursive sees itself", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r", ""},
		{"write target", "WITH t AS (SELECT 1) UPDATE t SET a = 1 WHERE id = 2", "t+w"},
		{"nested statement scope", "WITH c AS (SELECT 1) SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM d)", "d"},
		{"cte of an insert", "WITH src AS (SELECT * FROM staging) INSERT INTO t SELECT * FROM src", "staging,t+w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tf := analyze(tt.sql)
			if tf.ParseError || len(tf.Stmts) != 1 {
				t.Fatalf("analyze(%q): parse error %v", tt.sql, tf.ParseError)
			}
			var rel []string
			for _, r := range tf.Stmts[0].Tables {
				if !r.CTE {
					s := r.Name
					if r.Write {
						s += "+w"
					}
					rel = append(rel, s)
				}
			}
			slices.Sort(rel)
			rel = slices.Compact(rel)
			if got := strings.Join(rel, ","); got != tt.want {
				t.Errorf("analyze(%q) relations\n got: %s\nwant: %s", tt.sql, got, tt.want)
			}
		})
	}
}
