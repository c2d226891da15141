package e2e

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestSysbench runs sysbench's OLTP read-write workload (PostgreSQL driver)
// through sqlfwd with the default policy: the policy must not block it.
func TestSysbench(t *testing.T) {
	d := ownDaemon(t)
	args := []string{"oltp_read_write", "--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=" + strconv.Itoa(portOf(t, d.addr)),
		"--pgsql-user=" + pg.User, "--pgsql-db=" + pg.Database, "--tables=1", "--table-size=2000", "--threads=2"}
	t.Cleanup(func() { directExec(t, "DROP TABLE IF EXISTS sbtest1") })
	if res := runTool(t, 3*time.Minute, "", nil, "sysbench", append(args, "prepare")...); res.Exit != 0 {
		t.Fatalf("sysbench prepare through the target: %s", res)
	}
	res := runTool(t, 3*time.Minute, "", nil, "sysbench", append(args, "--time=5", "run")...)
	if res.Exit != 0 {
		t.Fatalf("sysbench run: %s", res)
	}
	// sysbench ignores PostgreSQL's own deadlock and duplicate-key errors
	// between its threads; what matters is that sqlfw denied nothing
	tx := regexp.MustCompile(`transactions:\s+(\d+)`).FindStringSubmatch(res.Stdout)
	if tx == nil || tx[1] == "0" {
		t.Fatalf("sysbench run: want transactions > 0\n%s", res)
	}
	st := stats(t, d)
	db := st.Databases[0]
	if db.Denied != 0 || db.WouldDeny != 0 || db.ParseErrors != 0 || db.Messages == 0 {
		t.Errorf("sqlfw stats after sysbench: %d messages, %d denied, %d parse errors; want > 0, 0, 0\n%s",
			db.Messages, db.Denied, db.ParseErrors, tail(d.log(), 10))
	}
	t.Logf("sysbench oltp_read_write: %s transactions in 5 s", tx[1])
}
