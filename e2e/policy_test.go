package e2e

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestDefaultPolicyEdges runs statements whose verdict depends on reading
// the SQL, not the text, through psql: the blocked ones must get 42501 and
// leave the table as it was; the allowed ones must run.
func TestDefaultPolicyEdges(t *testing.T) {
	needSqlfwd(t)
	tests := []struct {
		name, sql string
		deny      bool
	}{
		{"delete in a string literal", "select 'delete from e2e_edges'", false},
		{"delete in a dollar quote", "select $q$delete from e2e_edges$q$", false},
		{"delete with WHERE", "delete from e2e_edges where id = 99", false},
		{"copy to stdout", "copy e2e_edges to stdout", false},
		{"comment and mixed case", "/* hello */ DeLeTe FROM e2e_edges", true},
		{"update without where", "update e2e_edges set id = id + 10", true},
		{"delete in a CTE", "with d as (delete from e2e_edges returning id) select count(*) from d", true},
		{"explain analyze runs it", "explain analyze delete from e2e_edges", true},
		{"SQL PREPARE of a delete", "prepare e2e_p as delete from e2e_edges", true},
		{"schema-qualified pg_read_file", "select pg_catalog.pg_read_file('/etc/passwd')", true},
		{"quoted pg_read_file", `select "pg_read_file"('/etc/passwd')`, true},
		{"upper-case pg_read_file", "select PG_READ_FILE('/etc/passwd')", true},
		{"pg_read_binary_file", "select pg_read_binary_file('/etc/passwd')", true},
		{"copy from a server file", "copy e2e_edges from '/etc/hostname'", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			freshTable(t, "e2e_edges", 1, 2)
			res := psql(t, "", "-c", tt.sql)
			codes := sqlstates(res.Stderr)
			if tt.deny {
				if !reflect.DeepEqual(codes, []string{codeBlocked}) || !strings.Contains(res.Stderr, blockedPrefix) {
					t.Errorf("input %q\ngot %s\nwant denied: one error %s starting %q", tt.sql, res, codeBlocked, blockedPrefix)
				}
				if got := directInts(t, "select id from e2e_edges order by id"); !reflect.DeepEqual(got, []int{1, 2}) {
					t.Errorf("input %q: table afterwards (read on PostgreSQL) got %v, want [1 2]", tt.sql, got)
				}
			} else if res.Exit != 0 {
				t.Errorf("input %q\ngot %s\nwant allowed: exit 0", tt.sql, res)
			}
		})
	}
}

// TestPgxTransactionBlocked is the extended-protocol twin of
// TestPsqlTransactionBlocked.
func TestPgxTransactionBlocked(t *testing.T) {
	needPG(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	freshTable(t, "e2e_pgx_tx")
	c := connect(t, ctx, targetDSN(t))
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := tx.Exec(ctx, "insert into e2e_pgx_tx values (7)"); err != nil {
		t.Fatalf("insert in the transaction: %v", err)
	}
	bad := deny("delete from e2e_pgx_tx")
	_, err = tx.Exec(ctx, bad)
	checkDenied(t, bad, err)
	_, err = tx.Exec(ctx, "select 1")
	if got := errCode(err); got != "25P02" {
		t.Errorf("input select 1 after the denied statement: got %q (%v), want 25P02", got, err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Errorf("input COMMIT: got %v, want pgx.ErrTxCommitRollback (the server answered ROLLBACK)", err)
	}
	if got := directInts(t, "select id from e2e_pgx_tx"); len(got) != 0 {
		t.Errorf("table afterwards (read on PostgreSQL) got %v, want no rows", got)
	}
	var one int
	if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("input select 1 after the transaction: got %d, %v; want 1, nil", one, err)
	}
}

// TestPgxNamedStatementDenied: a denied Parse of a named statement leaves no
// statement behind, as a failed Parse does in PostgreSQL: executing the name
// then fails with 26000 (invalid_sql_statement_name), not with a result.
func TestPgxNamedStatementDenied(t *testing.T) {
	needPG(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, targetDSN(t))
	bad := deny("delete from e2e_named")
	_, err := c.Prepare(ctx, "e2e_named_bad", bad)
	checkDenied(t, bad, err)
	_, err = c.PgConn().ExecPrepared(ctx, "e2e_named_bad", nil, nil, nil).Close()
	if got := errCode(err); got != "26000" {
		t.Errorf("input execute e2e_named_bad after its denied Parse: got %q (%v), want 26000", got, err)
	}
	var one int
	if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("input select 1 afterwards: got %d, %v; want 1, nil", one, err)
	}
}

// TestLargeMessages sends a 3 MiB literal through both protocols and COPY:
// framing must not depend on messages fitting one read.
func TestLargeMessages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := connect(t, ctx, targetDSN(t))
	// 3 MiB: far beyond the relay buffer, below the default policy's
	// 4 MiB statement limit (the parameter below is not a statement)
	big := strings.Repeat("x", 3<<20)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		var n int
		err := c.QueryRow(ctx, "select length('"+big+"')", mode).Scan(&n)
		if err != nil || n != len(big) {
			t.Errorf("input select length('x'*3MiB) in mode %v: got %d, %v; want %d", mode, n, err, len(big))
		}
		var echo string
		err = c.QueryRow(ctx, "select $1::text", mode, big).Scan(&echo)
		if err != nil || echo != big {
			t.Errorf("input select $1::text with 3 MiB in mode %v: got %d bytes, %v; want %d", mode, len(echo), err, len(big))
		}
	}
	if !direct {
		// beyond the default statement limit: denied by limit, connection usable
		huge := "select length('" + strings.Repeat("x", 5<<20) + "')"
		var n int
		checkDenied(t, "select length('x'*5MiB)", c.QueryRow(ctx, huge, pgx.QueryExecModeSimpleProtocol).Scan(&n))
		if err := c.QueryRow(ctx, "select 1").Scan(&n); err != nil {
			t.Errorf("after a statement denied by limit: %v", err)
		}
	}
	freshTable(t, "e2e_big")
	rows := make([][]any, 200000)
	for i := range rows {
		rows[i] = []any{int32(i)}
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"e2e_big"}, []string{"id"}, pgx.CopyFromRows(rows))
	if err != nil || n != int64(len(rows)) {
		t.Errorf("input COPY FROM STDIN of %d rows: got %d, %v", len(rows), n, err)
	}
	if got := directInts(t, "select count(*)::int from e2e_big"); !reflect.DeepEqual(got, []int{len(rows)}) {
		t.Errorf("rows in e2e_big (read on PostgreSQL) got %v, want %d", got, len(rows))
	}
}
