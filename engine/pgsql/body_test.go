package pgsql

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// codeFacts renders the facts code in strings contributes: nested kinds,
// WHERE-less writes, COPY ends, relations (+w: written), functions, and the
// dynamic/unparsed facts.
func codeFacts(f *engine.StmtFacts) string {
	var parts []string
	if extra := f.Kinds &^ (1 << f.Kind); extra != 0 {
		parts = append(parts, "nested="+kindList(extra))
	}
	if f.Unfiltered != 0 {
		parts = append(parts, "unfiltered="+kindList(f.Unfiltered))
	}
	if f.Copy&engine.CopyProgram != 0 {
		parts = append(parts, "copy=program")
	}
	if f.Copy&engine.CopyFile != 0 {
		parts = append(parts, "copy=file")
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
		parts = append(parts, "tables="+strings.Join(ts, ","))
	}
	var fs []string
	for _, fn := range f.Funcs {
		fs = append(fs, fn.Name)
	}
	slices.Sort(fs)
	if len(fs) > 0 {
		parts = append(parts, "funcs="+strings.Join(fs, ","))
	}
	if f.DynamicSQL {
		parts = append(parts, "dynamic")
	}
	if f.Unparsed != "" {
		parts = append(parts, "unparsed="+f.Unparsed)
	}
	return strings.Join(parts, " ")
}

// nestDO returns a DO block that EXECUTEs n DO blocks nested in each other.
func nestDO(n int) string {
	s := "DO $z$ BEGIN NULL; END $z$"
	for i := 0; i < n; i++ {
		tag := fmt.Sprintf("$t%d$", i)
		s = "DO " + tag + " BEGIN EXECUTE '" + strings.ReplaceAll(s, "'", "''") + "'; END " + tag
	}
	return s
}

// TestCodeInStringsFacts: the facts of the last statement of each text.
func TestCodeInStringsFacts(t *testing.T) {
	tests := []struct {
		name, sql, want string
	}{
		// Functions that run their text argument.
		{"query_to_xml const", `SELECT query_to_xml('DELETE FROM t', true, true, '')`,
			"nested=delete unfiltered=delete tables=t+w funcs=query_to_xml"},
		{"query_to_xml concat", `SELECT query_to_xml('DELETE ' || 'FROM t WHERE id = 1', true, true, '')`,
			"nested=delete tables=t+w funcs=query_to_xml"},
		{"query_to_xml format", `SELECT query_to_xml(format('SELECT %I FROM %I WHERE x = %L', 'a', 'T', 'it''s'), true, true, '')`,
			"tables=t funcs=format,query_to_xml"},
		{"query_to_xml named", `SELECT query_to_xml(nulls => true, query => 'SELECT pg_read_file(''/x'')', tableforest => true, targetns => '')`,
			"funcs=pg_read_file,query_to_xml"},
		{"query_to_xml param", `SELECT query_to_xml($1, true, true, '')`, "funcs=query_to_xml dynamic"},
		{"query_to_xml column", `SELECT query_to_xml(q, true, true, '') FROM jobs`, "tables=jobs funcs=query_to_xml dynamic"},
		{"query_to_xml format var", `SELECT query_to_xml(format('SELECT * FROM %I', $1), true, true, '')`, "funcs=format,query_to_xml dynamic"},
		{"query_to_xml format position", `SELECT query_to_xml(format('SELECT %1$s', '1'), true, true, '')`, "funcs=format,query_to_xml dynamic"},
		{"query_to_xml bad sql", `SELECT query_to_xml('DELETE FROM', true, true, '')`, "funcs=query_to_xml unparsed=" + unparsedSQL},
		{"table_to_xml name", `SELECT table_to_xml('s."Secret"', true, true, '')`, "tables=s.secret funcs=table_to_xml"},
		{"table_to_xml regclass", `SELECT table_to_xml('pg_authid'::regclass, true, true, '')`, "tables=pg_authid funcs=table_to_xml"},
		{"table_to_xml oid", `SELECT table_to_xml(1260, true, true, '')`, "funcs=table_to_xml dynamic"},
		{"schema_to_xml", `SELECT schema_to_xml('public', true, true, '')`, "funcs=schema_to_xml dynamic"},
		{"cursor_to_xml elsewhere", `SELECT cursor_to_xml('c', 1, true, true, '')`, "funcs=cursor_to_xml dynamic"},
		{"cursor_to_xml same message", `DECLARE c CURSOR WITH HOLD FOR SELECT 1; SELECT cursor_to_xml('c', 1, true, true, '')`, "funcs=cursor_to_xml"},
		{"dblink_exec two args", `SELECT dblink_exec('dbname=x', 'TRUNCATE t')`, "nested=truncate tables=t+w funcs=dblink_exec"},
		{"dblink_exec fail flag", `SELECT dblink_exec('DELETE FROM t WHERE a = 1', false)`, "nested=delete tables=t+w funcs=dblink_exec"},
		{"dblink_open", `SELECT dblink_open('conn', 'cur', 'SELECT pg_ls_dir(''.'')', true)`, "funcs=dblink_open,pg_ls_dir"},
		{"dblink var", `SELECT dblink('dbname=x', q) FROM jobs`, "tables=jobs funcs=dblink dynamic"},
		{"not a runner", `SELECT length('DELETE FROM t')`, "funcs=length"},

		// DO blocks run now.
		{"DO execute const", `DO $$ BEGIN EXECUTE 'DELETE FROM t'; END $$`, "nested=delete unfiltered=delete tables=t+w"},
		{"DO execute format const", `DO $$ BEGIN EXECUTE format('COPY %I FROM PROGRAM %L', 't', 'id'); END $$`,
			"nested=copy copy=program tables=t+w funcs=format"},
		{"DO for in execute", `DO $$ DECLARE r record; BEGIN FOR r IN EXECUTE 'UPDATE t SET a = 1 RETURNING a' LOOP END LOOP; END $$`,
			"nested=update unfiltered=update tables=t+w"},
		{"DO execute var", `DO $$ DECLARE q text := 'DELETE FROM t'; BEGIN EXECUTE q; END $$`, "dynamic"},
		{"DO execute concat var", `DO $$ DECLARE n text := 't'; BEGIN EXECUTE 'DELETE FROM ' || n; END $$`, "dynamic"},
		{"DO execute using", `DO $$ BEGIN EXECUTE 'DELETE FROM t WHERE id = $1' USING pg_backend_pid(); END $$`,
			"nested=delete tables=t+w funcs=pg_backend_pid"},
		{"DO assignment", `DO $$ DECLARE x xml; BEGIN x := query_to_xml('DELETE FROM t', true, true, ''); END $$`,
			"nested=delete unfiltered=delete tables=t+w funcs=query_to_xml"},
		{"DO subscript assignment", `DO $$ DECLARE a text[]; BEGIN a[1] = pg_read_file('/x'); END $$`, "funcs=pg_read_file"},
		{"DO declaration default", `DO $$ DECLARE x text := pg_read_file('/x'); BEGIN END $$`, "funcs=pg_read_file"},
		{"DO comment in body", "DO $$ BEGIN PERFORM /* ( */ pg_read_file -- (\n ('/x'); END $$", "funcs=pg_read_file"},
		{"DO unicode ident", `DO $$ BEGIN PERFORM U&"pg_read_fil\0065"('/x'); END $$`, "funcs=pg_read_file"},
		{"DO form feed", "DO $$ BEGIN PERFORM pg_read_file\f('/x'); END $$", "funcs=pg_read_file"},
		{"DO no scan of strings", `DO $$ BEGIN RAISE NOTICE 'pg_read_file(x)'; END $$`, ""},
		{"DO collate declaration", `DO $$ DECLARE s text COLLATE "C"; BEGIN DELETE FROM t; END $$`, "nested=delete unfiltered=delete tables=t+w"},
		{"DO open for execute", `DO $$ DECLARE c refcursor; BEGIN OPEN c FOR EXECUTE 'DELETE FROM t RETURNING 1'; CLOSE c; END $$`, "nested=delete unfiltered=delete tables=t+w"},
		{"DO open for query", `DO $$ DECLARE c refcursor; BEGIN OPEN c FOR SELECT pg_ls_dir('.'); MOVE NEXT IN c; END $$`, "funcs=pg_ls_dir"},
		{"DO open bound cursor", `DO $$ DECLARE c CURSOR FOR SELECT pg_ls_dir('.'); x text; BEGIN OPEN c; FETCH c INTO x; END $$`, "funcs=pg_ls_dir"},
		{"DO open with arguments", `DO $$ DECLARE c CURSOR (a text) FOR SELECT a; BEGIN OPEN c(pg_ls_dir('.')); END $$`, "unparsed=" + unparsedPLpgSQL},
		{"DO cursor words in strings", `DO $$ BEGIN RAISE NOTICE 'OPEN c FOR'; EXECUTE 'SELECT 1'; END $$`, ""},
		{"DO other language", `DO LANGUAGE plv8 $$ plv8.execute('DELETE FROM t') $$`, "funcs=execute unparsed=" + unparsedLanguage},
		{"DO nested 7", nestDO(7), ""},
		{"DO nested 8", nestDO(8), "unparsed=" + unparsedDepth},

		// Function bodies run later: capabilities, not kinds.
		{"function plpgsql delete", `CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t; END $$`, "tables=t+w"},
		{"function sql delete", `CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'DELETE FROM t'`, "tables=t+w"},
		{"function no language", `CREATE FUNCTION f() RETURNS text AS 'SELECT pg_read_file(''/x'')'`, "funcs=pg_read_file"},
		{"function quoted language", `CREATE FUNCTION f() RETURNS void LANGUAGE 'PLPGSQL' AS $$ BEGIN EXECUTE 'COPY t TO PROGRAM ''id'''; END $$`,
			"copy=program tables=t"},
		{"function dynamic", `CREATE FUNCTION run(q text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE q; END $$`, "dynamic"},
		{"function return query execute", `CREATE FUNCTION f() RETURNS SETOF int LANGUAGE plpgsql AS $$ BEGIN RETURN QUERY EXECUTE 'SELECT 1 FROM pg_ls_dir(''.'')'; END $$`,
			"funcs=pg_ls_dir"},
		{"procedure atomic", `CREATE PROCEDURE p() BEGIN ATOMIC SELECT query_to_xml('DELETE FROM t', true, true, ''); END`,
			"tables=t+w funcs=query_to_xml"},
		{"function sql unparsable", `CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'DELETE FROM'`, "unparsed=" + unparsedSQL},
		{"function plperl", `CREATE FUNCTION f() RETURNS void LANGUAGE plperl AS $$ spi_exec_query('x') $$`, "funcs=spi_exec_query unparsed=" + unparsedLanguage},

		// Created and called in one message: the body runs now.
		{"create then select", `CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'DELETE FROM t'; SELECT f()`,
			"nested=delete unfiltered=delete tables=t+w funcs=f"},
		{"create then call", `CREATE PROCEDURE p() BEGIN ATOMIC DELETE FROM t; END; CALL p()`,
			"nested=delete unfiltered=delete tables=t+w funcs=p"},
		{"chained functions", `CREATE FUNCTION g() RETURNS void LANGUAGE sql AS 'DELETE FROM t'; CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'SELECT g()'; SELECT f()`,
			"nested=delete unfiltered=delete tables=t+w funcs=f,g"},
		{"trigger then write", `CREATE FUNCTION tf() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t; RETURN NEW; END $$; CREATE TRIGGER x AFTER INSERT ON u FOR EACH ROW EXECUTE FUNCTION tf(); INSERT INTO u VALUES (1)`,
			"nested=delete unfiltered=delete tables=t+w,u+w"},
		{"overloads", `CREATE FUNCTION f(int) RETURNS void LANGUAGE sql AS 'DELETE FROM t'; CREATE FUNCTION f(text) RETURNS void LANGUAGE sql AS 'SELECT 1'; SELECT f(1)`,
			"nested=delete unfiltered=delete tables=t+w funcs=f"},
		{"renamed", `CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'DELETE FROM t'; ALTER FUNCTION f() RENAME TO g; SELECT g()`,
			"nested=delete unfiltered=delete tables=t+w funcs=f,g"}, // g runs what f is (f: in the catalog too, TestCatalogMovedInMessage),
		{"trigger creation is later", `CREATE FUNCTION tf() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t; RETURN NEW; END $$; CREATE TRIGGER x AFTER INSERT ON u FOR EACH ROW EXECUTE FUNCTION tf()`,
			"tables=t+w,u+w funcs=tf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tf := analyze(tc.sql)
			if tf.ParseError {
				t.Fatalf("%q: parse error: %s", tc.sql, tf.ParseReason)
			}
			got := codeFacts(&tf.Stmts[len(tf.Stmts)-1])
			if got != tc.want {
				t.Errorf("%q\n got: %s\nwant: %s", tc.sql, got, tc.want)
			}
		})
	}
}

// TestDynamicSQLTrustedRole: the documented exception (docs/policy.md) lets
// a trusted role run dynamic SQL while every other rule still applies to it
// and other roles are still denied.
func TestDynamicSQLTrustedRole(t *testing.T) {
	yaml := strings.Replace(string(defaultPolicyYAML), "  - id: no-dynamic-sql\n", `  - id: migrations-may-use-dynamic-sql
    action: allow
    users: [migrator]
    match:
      dynamic_sql: true

  - id: no-dynamic-sql
`, 1)
	p, err := engine.ParsePolicy([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(p, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		user, sql, want string
	}{
		{"migrator", `DO $$ DECLARE t text := 'users'; BEGIN EXECUTE format('ANALYZE %I', t); END $$`, "migrations-may-use-dynamic-sql"},
		{"app", `DO $$ DECLARE t text := 'users'; BEGIN EXECUTE format('ANALYZE %I', t); END $$`, "no-dynamic-sql"},
		{"migrator", `DO $$ DECLARE q text := 'x'; BEGIN EXECUTE q; DELETE FROM accounts; END $$`, "no-unfiltered-writes"},
		{"migrator", `DO $$ BEGIN EXECUTE 'DELETE FROM'; END $$`, "no-unparsed-body"},
	}
	for _, tc := range tests {
		v := e.Judge([]byte(tc.sql), &engine.Session{User: tc.user, Database: "app"})
		if v.RuleID != tc.want {
			t.Errorf("%s: %q\n got: %v %s\nwant: %s", tc.user, tc.sql, v.Action, v.RuleID, tc.want)
		}
	}
}

// FuzzCodeInStrings: no input panics the analysis of code in strings, its
// facts do not depend on anything but the text, and an unparsed reason is
// one of the literal-free constants. Seeds: the class's corpus.
func FuzzCodeInStrings(f *testing.F) {
	for _, c := range readAdversarial(f) {
		if c.file == "02-dynamic.tsv" && len(c.sql) < 2000 {
			f.Add(c.sql)
		}
	}
	known := map[string]bool{"": true, unparsedPLpgSQL: true, unparsedSQL: true, unparsedLanguage: true, unparsedDepth: true, unparsedVolume: true}
	f.Fuzz(func(t *testing.T, sql string) {
		a, b := analyze(sql), analyze(sql)
		if len(a.Stmts) != len(b.Stmts) {
			t.Fatalf("%q: %d then %d statements", sql, len(a.Stmts), len(b.Stmts))
		}
		for i := range a.Stmts {
			// codeFacts sorts names; the order of tables and functions
			// does not matter, which reason comes first does.
			if x, y := codeFacts(&a.Stmts[i]), codeFacts(&b.Stmts[i]); x != y {
				t.Fatalf("%q: facts differ between two analyses:\n%s\n%s", sql, x, y)
			}
			if !known[a.Stmts[i].Unparsed] {
				t.Fatalf("%q: unparsed reason %q is not one of the constants", sql, a.Stmts[i].Unparsed)
			}
		}
	})
}

// TestCodeVolumeBound: code in strings that multiplies under nesting (each
// level read twice because of backslashes) is cut off by maxCodeBytes, and
// the statement is unparsed, not judged on part of its code.
func TestCodeVolumeBound(t *testing.T) {
	s := "SELECT 'a\\b', '" + strings.Repeat("x", 1<<20) + "'"
	for i := 0; i < 7; i++ {
		tag := fmt.Sprintf("$t%d$", i)
		s = "DO " + tag + " BEGIN PERFORM 'x\\y'; EXECUTE '" + strings.ReplaceAll(s, "'", "''") + "'; END " + tag
	}
	tf := analyze(s)
	if tf.ParseError {
		t.Fatalf("parse error: %s", tf.ParseReason)
	}
	if got := tf.Stmts[0].Unparsed; got != unparsedVolume {
		t.Errorf("7 levels of 1 MiB with two readings each: unparsed = %q, want %q", got, unparsedVolume)
	}
}

// TestCodeInStringsColumns: a columns rule sees the columns nested
// statements read, not PL/pgSQL variables of the same name.
func TestCodeInStringsColumns(t *testing.T) {
	p, err := engine.ParsePolicy([]byte("version: 1\nrules:\n  - id: no-passwords\n    action: deny\n    match:\n      columns: [users.password_hash]\n"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(p, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ sql, want string }{
		{`DO $$ BEGIN PERFORM password_hash FROM users; END $$`, "no-passwords"},
		{`DO $$ BEGIN EXECUTE 'SELECT password_hash FROM users'; END $$`, "no-passwords"},
		{`SELECT query_to_xml('SELECT u.password_hash FROM users u', true, true, '')`, "no-passwords"},
		{`CREATE FUNCTION f() RETURNS text LANGUAGE sql AS 'SELECT password_hash FROM users LIMIT 1'`, "no-passwords"},
		{`DO $$ DECLARE password_hash text := 'x'; n int; BEGIN SELECT count(*) INTO n FROM users; RAISE NOTICE '% %', password_hash, n; END $$`, ""},
	}
	for _, tc := range tests {
		v := e.Judge([]byte(tc.sql), &engine.Session{User: "app"})
		if v.RuleID != tc.want {
			t.Errorf("%q\n got: %v %q\nwant: %q", tc.sql, v.Action, v.RuleID, tc.want)
		}
	}
}

func TestPlainOperand(t *testing.T) {
	for q, want := range map[string]bool{
		"v": true, " r.id ": true, "42": true, "found": true, "NEW": true, "a.b.c": true,
		"": false, "v + 1": false, "f()": false, "'x'": false, "a.": false, ".a": false, "1.5": false,
		"-1": false, "$1": false, `"quoted"`: false, "a b": false, "x::int": false, "é": false,
	} {
		if got := plainOperand(q); got != want {
			t.Errorf("plainOperand(%q) = %v, want %v", q, got, want)
		}
	}
}
