package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

func TestFwctlCheck(t *testing.T) {
	needPG(t)
	needBinary(t)
	fwctl := filepath.Join(binDir, "fwctl")
	tests := []struct {
		sql      string
		wantExit int
	}{
		{"delete from t", 1},
		{"update t set a = 1", 1},
		{"select pg_read_file('/etc/passwd')", 1},
		{"select 1", 0},
		{"delete from t where id = 1", 0},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			res := runToolPath(t, fwctl, "check", "--protocol", "postgres", tt.sql)
			if res.Exit != tt.wantExit {
				t.Errorf("input fwctl check --protocol postgres %q\ngot %s\nwant exit %d", tt.sql, res, tt.wantExit)
			}
		})
	}
}

func TestFwctlStats(t *testing.T) {
	needSqlfwd(t)
	d := sharedDaemon(t)
	// Some traffic to count: one allowed, one denied.
	psql(t, "", "-c", "select 1")
	psql(t, "", "-c", "delete from e2e_stats")
	res := runToolPath(t, filepath.Join(binDir, "fwctl"), "stats", "--control-socket", d.control)
	if res.Exit != 0 ||
		!regexp.MustCompile(`(?i)connections`).MatchString(res.Stdout) ||
		!regexp.MustCompile(`(?i)statements`).MatchString(res.Stdout) {
		t.Errorf("input fwctl stats --control-socket %s\ngot %s\nwant exit 0 and output naming connections and statements", d.control, res)
	}
}

// TestSIGTERM: a daemon of its own, used once, exits 0 on SIGTERM.
func TestSIGTERM(t *testing.T) {
	needSqlfwd(t)
	needBinary(t)
	d, err := startDaemon()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
	var one int
	if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil {
		t.Errorf("select 1 through the daemon: %v", err)
	}
	c.Close(ctx)
	start := time.Now()
	code, err := d.signal(syscall.SIGTERM, 15*time.Second)
	t.Logf("sqlfwd exited %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	if err != nil || code != 0 {
		t.Errorf("input SIGTERM to sqlfwd\ngot exit %d, %v\nwant exit 0\nlog:\n%s", code, err, tail(d.log(), 40))
	}
}

// TestMonitorMode: in monitor mode a statement the policy denies still runs.
func TestMonitorMode(t *testing.T) {
	needSqlfwd(t)
	needBinary(t)
	d, err := startDaemon("--mode", "monitor")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.stop(); err != nil {
			t.Errorf("stopping the monitor-mode sqlfwd: %v", err)
		}
	}()
	freshTable(t, "e2e_monitor", 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
	if _, err := c.Exec(ctx, "delete from e2e_monitor"); err != nil {
		t.Errorf("input delete from e2e_monitor in monitor mode: got %v, want nil\nlog:\n%s", err, tail(d.log(), 20))
	}
	if got := directInts(t, "select id from e2e_monitor"); len(got) != 0 {
		t.Errorf("table afterwards (read on PostgreSQL) got %v, want no rows", got)
	}
}
