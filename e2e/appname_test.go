package e2e

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestApplicationNameFollowsServer: a rule scoped by applications sees the
// application_name the server reports, not only the startup packet's:
// drivers change it on a live connection (pgjdbc's setClientInfo sends SET
// application_name; a pool's DISCARD ALL or RESET puts the startup value
// back; a SET LOCAL ends with its transaction).
func TestApplicationNameFollowsServer(t *testing.T) {
	pol := policyFile(t, `rules:
  - id: batch-no-reads
    action: deny
    reason: the batch jobs do not read this table
    applications: ["batch*"]
    match:
      tables: [e2e_app_scope]
`)
	d := ownDaemon(t, "--policy", pol)
	freshTable(t, "e2e_app_scope", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, "application_name=web"))
	read := func(when string, denied bool) {
		t.Helper()
		var n int
		err := c.QueryRow(ctx, "select count(*) from e2e_app_scope").Scan(&n)
		switch {
		case denied:
			checkDenied(t, when, err)
			if err != nil && !strings.Contains(err.Error(), "batch-no-reads") {
				t.Errorf("%s: %v, want rule batch-no-reads", when, err)
			}
		case err != nil:
			t.Errorf("%s: %v, want the read allowed", when, err)
		}
	}
	exec := func(sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	read("logged in as web", false)
	exec("set application_name = 'batch-nightly'")
	read("after SET application_name = 'batch-nightly'", true)
	exec("reset application_name")
	read("after RESET application_name", false)
	exec("begin")
	exec("set local application_name = 'batch-tx'")
	read("after SET LOCAL application_name in a transaction", true)
	exec("rollback")
	read("after the transaction's ROLLBACK", false)
	exec("set application_name = 'batch-pooled'")
	read("after SET application_name = 'batch-pooled'", true)
	exec("discard all")
	// pgx's statement cache does not see the DISCARD: forget it too
	if err := c.DeallocateAll(ctx); err != nil {
		t.Fatal(err)
	}
	read("after DISCARD ALL", false)
}
