package e2e

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestAcceptBackoffAtFdLimit runs sqlfwd with RLIMIT_NOFILE 40 and opens
// more connections than it can hold: Accept fails with EMFILE while they
// stay in the backlog. sqlfwd must back off and log a line per second at
// most (it used to log on every failure and spin), and serve again once
// descriptors are free.
func TestAcceptBackoffAtFdLimit(t *testing.T) {
	needSqlfwd(t)
	d, err := startDaemonWrapped([]string{"sh", "-c", `ulimit -n 40 && exec "$0" "$@"`})
	if err != nil {
		t.Fatal(err)
	}
	defer d.stop()
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < 60; i++ {
		c, err := net.DialTimeout("tcp", d.addr, 2*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		held = append(held, c)
	}
	time.Sleep(2500 * time.Millisecond)
	log := d.log()
	failures := strings.Count(log, "accept failed")
	if failures == 0 {
		t.Fatalf("sqlfwd never hit the descriptor limit (the test cannot show the back-off); log:\n%s", tail(log, 20))
	}
	// First failure, then one line per second: 2.5 s give at most 4.
	if failures > 4 {
		t.Errorf("%d accept-failure lines in 2.5 s at the descriptor limit, want at most 4 (one per second); log:\n%s", failures, tail(log, 20))
	}
	for _, c := range held {
		c.Close()
	}
	held = nil
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""))
	defer c.Close(ctx)
	var one int
	if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1 after the descriptors were freed: %d, %v", one, err)
	}
	if !strings.Contains(d.log(), "accepting again") {
		t.Errorf("no 'accepting again' line after the run of failures:\n%s", tail(d.log(), 20))
	}
}
