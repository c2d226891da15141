package pgsql

import (
	"testing"
	"unicode/utf8"

	"github.com/sqlfw/sqlfw/engine"
)

// FuzzJudgePostgres checks that no input panics and that a verdict is
// self-consistent. Seeds are the real statements under testdata/.
func FuzzJudgePostgres(f *testing.F) {
	for _, file := range []string{"pgbench.sql", "benign.sql"} {
		for _, s := range readStatements(f, file) {
			f.Add([]byte(s))
		}
	}
	f.Add([]byte("SELECT pg_read_file('/etc/passwd'); DELETE FROM t"))
	f.Add([]byte("DO $$ BEGIN PERFORM pg_ls_dir('.'); END $$"))
	f.Add([]byte("COPY t FROM PROGRAM 'id'"))
	f.Add([]byte("SELECT ((((((((1))))))))"))
	f.Add([]byte("\x00"))
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{CacheBytes: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	s := &engine.Session{User: "fuzz"}
	f.Fuzz(func(t *testing.T, sql []byte) {
		v := e.Judge(sql, s)
		if v.ParseError && (v.RuleID != "parse-error" || v.Action != engine.ActionDeny) {
			t.Fatalf("%q: inconsistent parse-error verdict %+v", sql, v)
		}
		if v.Statements < 0 || v.Statements > len(sql)+1 {
			t.Fatalf("%q: %d statements", sql, v.Statements)
		}
		if !utf8.ValidString(v.Reason) {
			t.Fatalf("%q: reason not UTF-8", sql)
		}
		if again := e.Judge(sql, s); again != v {
			t.Fatalf("%q: cached verdict %+v differs from first %+v", sql, again, v)
		}
	})
}
