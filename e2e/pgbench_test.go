package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPgbench initialises pgbench's tables through the target and runs the
// select-only script in each query mode: no transaction may fail.
func TestPgbench(t *testing.T) {
	host, port := target(t)
	conn := []string{"-h", host, "-p", strconv.Itoa(port), "-U", pg.User}
	init := append(append([]string{"-i", "-s", "1", "-q"}, conn...), pg.Database)
	res := runTool(t, 3*time.Minute, "", nil, "pgbench", init...)
	if res.Exit != 0 || !strings.Contains(res.Stderr, "done in") {
		t.Fatalf("input pgbench %s\ngot %s\nwant exit 0 and \"done in\"", strings.Join(init, " "), res)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			directExec(t, "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
		}
	})

	processed := regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`)
	failed := regexp.MustCompile(`(?m)^number of failed transactions: (\d+)`)
	for _, mode := range []string{"simple", "extended", "prepared"} {
		t.Run(mode, func(t *testing.T) {
			args := append(append([]string{"-S", "-T", "5", "-c", "2", "-j", "2", "-M", mode, "-n"}, conn...), pg.Database)
			res := runTool(t, 2*time.Minute, "", nil, "pgbench", args...)
			p := processed.FindStringSubmatch(res.Stdout)
			f := failed.FindStringSubmatch(res.Stdout)
			if res.Exit != 0 || p == nil || f == nil {
				t.Fatalf("input pgbench %s\ngot %s\nwant exit 0 and the processed/failed summary", strings.Join(args, " "), res)
			}
			n, _ := strconv.Atoi(p[1])
			if f[1] != "0" || n == 0 {
				t.Errorf("input pgbench %s\ngot %s transactions, %s failed\nwant > 0 transactions, 0 failed\n%s", strings.Join(args, " "), p[1], f[1], res)
			}
			t.Logf("pgbench -M %s: %s transactions in 5 s", mode, p[1])
		})
	}
}
