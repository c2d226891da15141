package e2e

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"
)

func TestLibPQ(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("postgres", targetDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// One connection, so every step below shares a session.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("connecting with lib/pq: %v", err)
	}
	defer conn.Close()

	stmt, err := conn.PrepareContext(ctx, "select $1::int * 2")
	if err != nil {
		t.Fatalf("input Prepare(select $1::int * 2): %v", err)
	}
	for _, in := range []int{1, 21} {
		var got int
		if err := stmt.QueryRowContext(ctx, in).Scan(&got); err != nil || got != 2*in {
			t.Errorf("input execute(%d): got %d, %v; want %d, nil", in, got, err, 2*in)
		}
	}
	stmt.Close()

	// Without arguments lib/pq uses the simple protocol, with them the
	// extended one: check both.
	for _, tt := range []struct {
		name string
		args []any
	}{{"simple", nil}, {"extended", []any{1}}} {
		q := deny("delete from e2e_libpq")
		if tt.args != nil {
			// A DELETE needs no parameter; file access takes one.
			q = "select pg_read_file('/etc/passwd', $1, 10)"
			if direct {
				q = "select sqlfw_e2e_denied($1::int)"
			}
		}
		_, err := conn.ExecContext(ctx, q, tt.args...)
		var pqErr *pq.Error
		if !errors.As(err, &pqErr) {
			t.Errorf("%s: input %q: got %v (%T), want a *pq.Error", tt.name, q, err, err)
		} else {
			if string(pqErr.Code) != wantDeniedCode() {
				t.Errorf("%s: input %q: got SQLSTATE %s (%s), want %s", tt.name, q, pqErr.Code, pqErr.Message, wantDeniedCode())
			}
			if !direct && !strings.HasPrefix(pqErr.Message, blockedPrefix) {
				t.Errorf("%s: input %q: got message %q, want it to start with %q", tt.name, q, pqErr.Message, blockedPrefix)
			}
		}
		var got string
		if err := conn.QueryRowContext(ctx, "select 'still here'").Scan(&got); err != nil || got != "still here" {
			t.Errorf("%s: input select 'still here' after the denied statement: got %q, %v; want \"still here\", nil", tt.name, got, err)
		}
	}
}
