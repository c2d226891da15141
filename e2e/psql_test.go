package e2e

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// sqlstates returns the SQLSTATEs of the "ERROR:  XXXXX: ..." lines psql
// prints with VERBOSITY=verbose, in order.
func sqlstates(stderr string) []string {
	re := regexp.MustCompile(`(?m)^(?:psql:[^ ]* )?ERROR:  ([0-9A-Z]{5}):`)
	var codes []string
	for _, m := range re.FindAllStringSubmatch(stderr, -1) {
		codes = append(codes, m[1])
	}
	return codes
}

func TestPsqlSimpleQuery(t *testing.T) {
	needPG(t)
	tests := []struct {
		name, sql string
		want      []string // lines of unaligned, tuples-only output
	}{
		{"one statement", "select 1", []string{"1"}},
		{"two statements in one Query", "select 1; select 2", []string{"1", "2"}},
		{"three with a write", "create temp table x(a int); insert into x values (7); select a from x", []string{"CREATE TABLE", "INSERT 0 1", "7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := psql(t, "", "-tA", "-c", tt.sql)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
				if l != "" {
					got = append(got, l)
				}
			}
			if res.Exit != 0 || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("input %q\ngot  %q (%s)\nwant %q, exit 0", tt.sql, got, res, tt.want)
			}
		})
	}
}

// TestPsqlMultiStatementBlocked sends several statements in one simple Query
// of which one is denied: none of them may run. Each row starts from a table
// holding 1, so a partly forwarded Query shows up as a changed table.
func TestPsqlMultiStatementBlocked(t *testing.T) {
	needPG(t)
	tests := []struct{ name, sql string }{
		{"denied last", "insert into e2e_multi values (2); " + deny("delete from e2e_multi")},
		{"denied first", deny("delete from e2e_multi") + "; insert into e2e_multi values (3)"},
		{"denied in the middle", "insert into e2e_multi values (4); " + deny("delete from e2e_multi") + "; insert into e2e_multi values (5)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			freshTable(t, "e2e_multi", 1)
			res := psql(t, "", "-c", tt.sql)
			if got := sqlstates(res.Stderr); res.Exit == 0 || !reflect.DeepEqual(got, []string{wantDeniedCode()}) {
				t.Errorf("input %q\ngot SQLSTATEs %q (%s)\nwant [%s] and a non-zero exit", tt.sql, got, res, wantDeniedCode())
			}
			if !direct && !strings.Contains(res.Stderr, blockedPrefix) {
				t.Errorf("input %q: stderr %q does not mention %q", tt.sql, res.Stderr, blockedPrefix)
			}
			if got := directInts(t, "select id from e2e_multi order by id"); !reflect.DeepEqual(got, []int{1}) {
				t.Errorf("input %q: table afterwards (read on PostgreSQL) got %v, want [1]: part of the Query ran", tt.sql, got)
			}
		})
	}
}

// TestPsqlTransactionBlocked: a denied statement inside BEGIN puts the
// transaction into the failed state, exactly as a PostgreSQL error would.
func TestPsqlTransactionBlocked(t *testing.T) {
	needPG(t)
	freshTable(t, "e2e_tx")
	script := strings.Join([]string{
		"BEGIN;",
		"INSERT INTO e2e_tx VALUES (42);",
		deny("DELETE FROM e2e_tx") + ";",
		"SELECT 1;",
		"COMMIT;",
		"SELECT 'after' AS tag;",
	}, "\n") + "\n"
	res := psql(t, script, "-tA")
	want := []string{wantDeniedCode(), "25P02"}
	if got := sqlstates(res.Stderr); !reflect.DeepEqual(got, want) {
		t.Errorf("input %q\ngot SQLSTATEs %q\nwant %q\n%s", script, got, want, res)
	}
	// COMMIT of a failed transaction reports ROLLBACK; the session goes on.
	if !regexp.MustCompile(`(?m)^ROLLBACK$`).MatchString(res.Stdout) || !strings.Contains(res.Stdout, "after") {
		t.Errorf("input %q\ngot stdout %q\nwant a ROLLBACK line for COMMIT, then \"after\"", script, res.Stdout)
	}
	if got := directInts(t, "select id from e2e_tx"); len(got) != 0 {
		t.Errorf("input %q: table afterwards (read on PostgreSQL) got %v, want no rows: the INSERT was committed", script, got)
	}
}

func TestPsqlCopy(t *testing.T) {
	needPG(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	out := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(in, []byte("1,one\n2,two\n3,three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	directExec(t, "DROP TABLE IF EXISTS e2e_copy; CREATE TABLE e2e_copy (id int, name text)")
	t.Cleanup(func() {
		if !t.Failed() {
			directExec(t, "DROP TABLE IF EXISTS e2e_copy")
		}
	})

	t.Run(`\copy from a client file`, func(t *testing.T) {
		cmd := `\copy e2e_copy from '` + in + `' with (format csv)`
		res := psql(t, "", "-c", cmd)
		if res.Exit != 0 || !strings.Contains(res.Stdout, "COPY 3") {
			t.Errorf("input %q\ngot %s\nwant exit 0 and COPY 3", cmd, res)
		}
	})
	t.Run("COPY FROM STDIN", func(t *testing.T) {
		// Text format: PostgreSQL 18 reads a CSV COPY's "\." line as data,
		// and psql 15 (the client for every major here) sends it.
		script := "COPY e2e_copy FROM STDIN;\n4\tfour\n5\tfive\n\\.\n"
		res := psql(t, script)
		if res.Exit != 0 || !strings.Contains(res.Stdout, "COPY 2") {
			t.Errorf("input %q\ngot %s\nwant exit 0 and COPY 2", script, res)
		}
	})
	t.Run(`\copy to a client file`, func(t *testing.T) {
		cmd := `\copy (select id, name from e2e_copy order by id) to '` + out + `' with (format csv)`
		res := psql(t, "", "-c", cmd)
		if res.Exit != 0 || !strings.Contains(res.Stdout, "COPY 5") {
			t.Errorf("input %q\ngot %s\nwant exit 0 and COPY 5", cmd, res)
		}
		got, _ := os.ReadFile(out)
		want := "1,one\n2,two\n3,three\n4,four\n5,five\n"
		if string(got) != want {
			t.Errorf("input %q: file got %q, want %q", cmd, got, want)
		}
	})
	t.Run("COPY TO STDOUT", func(t *testing.T) {
		sql := "COPY (select id from e2e_copy where id > 3 order by id) TO STDOUT"
		res := psql(t, "", "-c", sql)
		if res.Exit != 0 || res.Stdout != "4\n5\n" {
			t.Errorf("input %q\ngot %s\nwant exit 0 and \"4\\n5\\n\"", sql, res)
		}
	})
	if got := directInts(t, "select count(*)::int from e2e_copy"); !reflect.DeepEqual(got, []int{5}) {
		t.Errorf("rows in e2e_copy (read on PostgreSQL) got %v, want [5]", got)
	}
}

// TestPsqlServerFileBlocked: the default policy keeps the server's files and
// programs out of reach even of a superuser.
func TestPsqlServerFileBlocked(t *testing.T) {
	needSqlfwd(t)
	tests := []struct{ name, sql string }{
		{"pg_read_file", "select pg_read_file('/etc/passwd')"},
		{"pg_ls_dir", "select pg_ls_dir('/')"},
		{"COPY FROM PROGRAM", "copy e2e_nowhere from program 'id'"},
		{"COPY TO a server file", "copy (select 1) to '/tmp/sqlfw-e2e-should-not-exist'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := psql(t, "", "-c", tt.sql)
			if got := sqlstates(res.Stderr); !reflect.DeepEqual(got, []string{codeBlocked}) || !strings.Contains(res.Stderr, blockedPrefix) {
				t.Errorf("input %q\ngot %s\nwant one error %s starting %q", tt.sql, res, codeBlocked, blockedPrefix)
			}
		})
	}
	if _, err := os.Stat("/tmp/sqlfw-e2e-should-not-exist"); err == nil {
		os.Remove("/tmp/sqlfw-e2e-should-not-exist")
		t.Errorf("COPY TO a server file: the file was written")
	}
}
