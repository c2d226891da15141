package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "01-a.tsv"), []byte("# comment\n\nallow\tSELECT 1\nno-x\t\"DELETE\\x00 FROM t\"\tsql_mode=ANSI_QUOTES\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "02-b.tsv"), []byte("deny\tDROP TABLE t\n"), 0o644)
	got, err := Read(filepath.Join(dir, "*.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{
		{File: "01-a.tsv", Line: 3, Expect: "allow", SQL: "SELECT 1"},
		{File: "01-a.tsv", Line: 4, Expect: "no-x", SQL: "DELETE\x00 FROM t", Session: "sql_mode=ANSI_QUOTES"},
		{File: "02-b.tsv", Line: 1, Expect: "deny", SQL: "DROP TABLE t"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("case %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	os.WriteFile(filepath.Join(dir, "bad.tsv"), []byte("no tab here\n"), 0o644)
	if _, err := Read(filepath.Join(dir, "bad.tsv")); err == nil || !strings.Contains(err.Error(), "bad.tsv:1") {
		t.Errorf("a line without a tab: %v, want an error naming bad.tsv:1", err)
	}
	os.WriteFile(filepath.Join(dir, "q.tsv"), []byte("allow\t\"unterminated\n"), 0o644)
	if _, err := Read(filepath.Join(dir, "q.tsv")); err == nil {
		t.Error("a bad Go literal read without error")
	}
	if _, err := Read(filepath.Join(dir, "none-*.tsv")); err == nil {
		t.Error("a glob matching nothing read as an empty corpus")
	}
}
