package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestStartupParameters: run-time parameters in the startup packet
// (libpq's PGOPTIONS, options=-c ...) take effect before any statement, so
// sqlfwd judges them as the SET statements they amount to. A connection
// whose options switch off logging or preload a library is refused with
// the rule's SQLSTATE; ordinary options reach the server. The server's
// statement log proves the refused session ran nothing.
func TestStartupParameters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	marker := "sqlfw_startup_" + randomHex(t)
	for _, tc := range []struct {
		options string
		rule    string // "" when the connection must work
	}{
		{"-c log_statement=none", "no-logging-changes"},
		{"--session-preload-libraries=/tmp/sqlfw-none.so", "no-code-loading"},
		{"-c search_path=public,pg_catalog", "no-name-shadowing"},
		{"-c statement_timeout=4321ms", ""},
	} {
		cfg, err := pgx.ParseConfig(targetDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		cfg.RuntimeParams["options"] = tc.options
		c, err := pgx.ConnectConfig(ctx, cfg)
		if tc.rule != "" {
			if err == nil {
				c.Exec(ctx, "SELECT '"+marker+"'")
				c.Close(ctx)
				t.Errorf("options %q: connected, want refusal by %s", tc.options, tc.rule)
				continue
			}
			if code := errCode(err); code != "42501" || !strings.Contains(err.Error(), tc.rule) {
				t.Errorf("options %q: got %v (code %q), want 42501 naming %s", tc.options, err, code, tc.rule)
			}
			continue
		}
		if err != nil {
			t.Fatalf("options %q: %v", tc.options, err)
		}
		var got string
		if err := c.QueryRow(ctx, "SHOW statement_timeout").Scan(&got); err != nil || got != "4321ms" {
			t.Errorf("options %q: SHOW statement_timeout = %q, %v; want 4321ms (the option reached the server)", tc.options, got, err)
		}
		c.Close(ctx)
	}
	if pg.Log != "" {
		b, err := os.ReadFile(pg.Log)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), marker) {
			t.Errorf("a refused connection's statement reached the server log")
		}
	}
}
