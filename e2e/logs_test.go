package e2e

// Log lines bounded per daemon and reason (issue 23 item 5): many
// intercepted psql processes, one connection and one blocked DELETE each,
// write a bounded number of block lines and, at shutdown, one summary with
// the count of the rest; each block line names the client's process, its
// application_name, user and database, never the statement.

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBlockLinesBoundedPerDaemon(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	freshTable(t, "logs_t", 1, 2)
	d := startIntercepting(t, cg)
	const sessions = 25
	began := time.Now()
	for i := 0; i < sessions; i++ {
		if res := psqlIn(t, cg, "127.0.0.1", "delete from logs_t"); !strings.Contains(res.Stderr, codeBlocked) {
			t.Fatalf("psql %d: got %s, want %s", i, res, codeBlocked)
		}
	}
	elapsed := time.Since(began)
	if code, err := d.signal(syscall.SIGTERM, 15*time.Second); err != nil || code != 0 {
		t.Fatalf("sqlfwd after SIGTERM: exit %d, %v", code, err)
	}
	blocked, suppressed := 0, 0
	for _, l := range strings.Split(d.log(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch m["msg"] {
		case "statement blocked":
			blocked++
			p, _ := m["process"].(map[string]any)
			if p == nil || p["comm"] != "psql" || p["pid"] == nil || m["application_name"] != "psql" ||
				m["user"] != pg.User || m["db"] != pg.Database || m["rule"] != "no-unfiltered-writes" {
				t.Errorf("block line without the process (comm psql), application_name psql, user %s, db %s and rule: %s", pg.User, pg.Database, l)
			}
			if strings.Contains(l, "logs_t") {
				t.Errorf("block line carries the statement's text: %s", l)
			}
		case "suppressed similar log lines":
			if m["kind"] == "blocked" && m["reason"] == "no-unfiltered-writes" {
				n, _ := m["suppressed"].(float64)
				suppressed += int(n)
			}
		}
	}
	// a burst of 10, then one line per 5 s of the run
	most := 10 + int(elapsed/(5*time.Second)) + 1
	if blocked+suppressed != sessions || blocked > most {
		t.Errorf("%d block lines and %d counted as suppressed for %d blocked sessions in %v: want them all accounted for, at most %d lines:\n%s",
			blocked, suppressed, sessions, elapsed, most, tail(d.log(), 20))
	}
	if got := directInts(t, "select count(*) from logs_t"); got[0] != 2 {
		t.Errorf("rows: %v, want 2", got)
	}
}
