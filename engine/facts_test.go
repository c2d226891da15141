package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// describe renders facts compactly for table tests: "kind kinds=[..] unfiltered=[..]
// copy=.. tables=[..] funcs=[..]". Tables written carry a "+w" suffix.
func describe(f *stmtFacts) string {
	var b strings.Builder
	b.WriteString(f.kind.String())
	if extra := f.kinds &^ (1 << f.kind); extra != 0 {
		fmt.Fprintf(&b, " nested=%s", kindList(extra))
	}
	if f.unfiltered != 0 {
		fmt.Fprintf(&b, " unfiltered=%s", kindList(f.unfiltered))
	}
	if f.copy != 0 {
		var c []string
		for bit, name := range map[copyTarget]string{copyStdio: "stdio", copyFile: "file", copyProgram: "program"} {
			if f.copy&bit != 0 {
				c = append(c, name)
			}
		}
		slices.Sort(c)
		fmt.Fprintf(&b, " copy=%s", strings.Join(c, ","))
	}
	var ts []string
	for _, t := range f.tables {
		s := t.name
		if t.schema != "" {
			s = t.schema + "." + s
		}
		if t.write {
			s += "+w"
		}
		ts = append(ts, s)
	}
	slices.Sort(ts)
	if len(ts) > 0 {
		fmt.Fprintf(&b, " tables=%s", strings.Join(ts, ","))
	}
	var fs []string
	for _, fn := range f.funcs {
		s := fn.name
		if fn.schema != "" {
			s = fn.schema + "." + s
		}
		fs = append(fs, s)
	}
	slices.Sort(fs)
	if len(fs) > 0 {
		fmt.Fprintf(&b, " funcs=%s", strings.Join(fs, ","))
	}
	return b.String()
}

func kindList(s kindSet) string {
	var out []string
	for k := stmtKind(0); k < numKinds; k++ {
		if s.has(k) {
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
		{"explain without analyze", "EXPLAIN DELETE FROM t WHERE a = 1", "explain nested=delete tables=t+w"},
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
			if tf.parseError {
				t.Fatalf("analyze(%q): parse error %s", tt.sql, tf.parseReason)
			}
			if len(tf.stmts) != 1 {
				t.Fatalf("analyze(%q): %d statements, want 1", tt.sql, len(tf.stmts))
			}
			if got := describe(&tf.stmts[0]); got != tt.want {
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
			if !tf.parseError && (len(tf.stmts) != 1 || len(tf.stmts[0].funcs) != 1) {
				t.Errorf("parenthesised depth %d: got %+v, want one function or a parse error", depth, tf.stmts)
			}
			subq := strings.Repeat("SELECT * FROM (", depth) + "SELECT pg_read_file('x')" + strings.Repeat(") s", depth)
			tf = analyze(subq)
			if !tf.parseError && (len(tf.stmts) != 1 || len(tf.stmts[0].funcs) != 1) {
				t.Errorf("subquery depth %d: got %+v, want one function or a parse error", depth, tf.stmts)
			}
		})
	}
}
