package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestConnectionLimitAndIdleTimeout with real clients: pgx beyond
// --max-connections gets PostgreSQL's own 53300, an idle session is closed
// after --idle-timeout with 57P05, and psql shows the message.
func TestConnectionLimitAndIdleTimeout(t *testing.T) {
	d := ownDaemon(t, "--max-connections", "1", "--idle-timeout", "1s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := dsn("127.0.0.1", portOf(t, d.addr), pg.User, "")
	c1 := connect(t, ctx, url)
	if _, err := c1.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	_, err := pgconn.Connect(ctx, url)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" || !strings.Contains(pe.Message, "max_connections 1") {
		t.Fatalf("second connection: %v, want 53300 naming max_connections", err)
	}
	time.Sleep(1500 * time.Millisecond)
	_, err = c1.Exec(ctx, "select 1")
	if err == nil {
		t.Fatal("a query after 1.5 s idle succeeded; want the session closed by idle_timeout")
	}
	// pgx reports the FATAL it read, or the closed connection
	if errors.As(err, &pe) && pe.Code != "57P05" {
		t.Errorf("after the idle timeout: %v, want 57P05", err)
	}
	// The closed session's slot is released when its goroutines end, a
	// moment after the client saw the close: wait for it, or psql below
	// can meet max_connections 1 under load.
	waitNoSessions(t, d)
	// psql runs both in one session: busy for 1.5 s is not idle
	res := psql(t, "", "-h", "127.0.0.1", "-p", strconv.Itoa(portOf(t, d.addr)), "-U", pg.User, "-c", "select pg_sleep(1.5)", "-c", "select 1")
	if res.Exit != 0 {
		t.Errorf("psql, busy for 1.5 s then another statement: %s; a busy session is not idle", res)
	}
	if !strings.Contains(d.log(), "idle-session timeout") {
		t.Errorf("no log line for the idle session:\n%s", tail(d.log(), 10))
	}
}

// waitNoSessions waits until fwctl connections lists no session.
func waitNoSessions(t *testing.T, d *daemon) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := runToolPath(t, filepath.Join(binDir, "fwctl"), "connections", "--json", "--control-socket", d.control)
		var list []json.RawMessage
		if res.Exit == 0 && json.Unmarshal([]byte(res.Stdout), &list) == nil && len(list) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions still listed after 10 s: %s", res)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
