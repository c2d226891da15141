package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startMySQLIntercepting starts sqlfwd intercepting MariaDB's port (and its
// unix socket, when the test server has one) for the clients of cgroup cg,
// and waits until it says it intercepts. extra are more sqlfwd flags.
func startMySQLIntercepting(t *testing.T, my myEnv, cg string, extra ...string) *daemon {
	t.Helper()
	args := []string{"--protocol", "mysql", "--upstream", my.addr(), "--intercept", "--cgroup", cg}
	if my.Socket != "" {
		args = append(args, "--unix-socket", my.Socket)
	}
	args = append(args, extra...)
	d, err := startDaemonWrapped(inCgroup(cg), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 40))
		}
		_ = d.stop()
	})
	for i := 0; !strings.Contains(d.log(), `"msg":"sqlfwd started"`); i++ {
		if i > 100 {
			t.Fatalf("sqlfwd did not finish starting; its log:\n%s", d.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(d.log(), `"msg":"intercepting"`) {
		t.Fatalf("sqlfwd did not intercept; its log:\n%s", d.log())
	}
	return d
}

// TestInterceptMySQLClients: the clients issue 13 names, in a cgroup whose
// connections to MariaDB's own address and unix socket are intercepted:
// sysbench oltp_read_only and oltp_read_write with no errors, a file run by
// the mariadb CLI's source with a blocked statement in it, LOAD DATA LOCAL,
// and go-sql-driver/mysql with interpolateParams off and on (a blocked
// statement and a blocked prepare, the connection working after each). The
// blocked texts are absent from MariaDB's general log.
func TestInterceptMySQLClients(t *testing.T) {
	needKernel(t)
	my := mariadbEnv(t)
	cg := childCgroup(t)
	d := startMySQLIntercepting(t, my, cg)

	table := "e2e_iclients_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	for _, q := range []string{"create table " + table + " (id int, name varchar(20))", "insert into " + table + " values (1, 'a'), (2, 'b'), (3, 'c')"} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { direct.Exec("drop table if exists " + table) })
	blocked := []string{} // texts that must never reach the server

	type target struct{ name, host, port, socket string }
	targets := []target{{name: "tcp", host: my.Host, port: my.Port}}
	if my.Socket != "" {
		targets = append(targets, target{name: "socket", socket: my.Socket})
	}

	// sysbench, its tables made and dropped through interception too
	for _, to := range targets {
		t.Run("sysbench/"+to.name, func(t *testing.T) {
			args := []string{"--db-driver=mysql", "--mysql-user=" + my.User, "--mysql-db=" + my.Database, "--mysql-ssl=off",
				"--tables=1", "--table-size=1000", "--time=3"}
			if to.socket != "" {
				args = append(args, "--mysql-socket="+to.socket)
			} else {
				args = append(args, "--mysql-host="+to.host, "--mysql-port="+to.port)
			}
			sb := func(timeout time.Duration, a ...string) psqlResult {
				return runCmd(t, timeout, "", nil, "sh", append(append(inCgroup(cg)[1:], tool(t, "sysbench")), append(a, args...)...)...)
			}
			t.Cleanup(func() { direct.Exec("drop table if exists sbtest1") })
			if res := sb(3*time.Minute, "oltp_read_write", "prepare"); res.Exit != 0 {
				t.Fatalf("sysbench prepare through interception: %s", res)
			}
			// the writing workload runs alone: two writers can deadlock in
			// the server, which sysbench counts as an ignored error
			for _, w := range [][2]string{{"oltp_read_only", "--threads=2"}, {"oltp_read_write", "--threads=1"}} {
				res := sb(2*time.Minute, w[0], w[1], "run")
				tx := regexp.MustCompile(`transactions:\s+(\d+)`).FindStringSubmatch(res.Stdout)
				errs := regexp.MustCompile(`ignored errors:\s+(\d+)`).FindStringSubmatch(res.Stdout)
				if res.Exit != 0 || tx == nil || tx[1] == "0" || errs == nil || errs[1] != "0" {
					t.Errorf("sysbench %s through interception: want transactions > 0 and 0 errors\n%s", w[0], res)
				}
			}
		})
	}

	// the mariadb CLI: source of a file, LOAD DATA LOCAL
	dir := t.TempDir()
	csv := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(csv, []byte("10,x\n11,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, to := range targets {
		t.Run("mariadb/"+to.name, func(t *testing.T) {
			cli := func(args ...string) psqlResult {
				a := append(inCgroup(cg)[1:], tool(t, "mariadb"), "--no-defaults", "-u", my.User, "--skip-ssl", "-N", "-B", "--local-infile=1")
				if to.socket != "" {
					a = append(a, "--socket="+to.socket, "--protocol=socket")
				} else {
					a = append(a, "-h", to.host, "-P", to.port, "--protocol=tcp")
				}
				return runCmd(t, time.Minute, "", nil, "sh", append(append(a, my.Database), args...)...)
			}
			del := "delete from " + table + " -- " + to.name
			blocked = append(blocked, del)
			script := filepath.Join(dir, to.name+".sql")
			body := "select count(*) from " + table + ";\nselect 'before' as step;\n" + del + "\n;\nselect 'after' as step;\n"
			if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			// without --force the CLI stops at the first error, as it does
			// for the server's own; with it, the rest of the file runs
			res := cli("--force", "-e", "source "+script)
			if !strings.Contains(res.Stdout, "before") || !strings.Contains(res.Stdout, "after") ||
				!strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stderr, "sqlfw:") {
				t.Errorf("source of a file with a blocked statement through interception: %s", res)
			}
			if res := cli("-e", "load data local infile '"+csv+"' into table "+table+" fields terminated by ','; select count(*) from "+table+" where id >= 10"); res.Exit != 0 || strings.TrimSpace(res.Stdout) == "0" {
				t.Errorf("LOAD DATA LOCAL through interception: %s", res)
			}
			if _, err := direct.Exec("delete from " + table + " where id >= 10"); err != nil {
				t.Fatal(err)
			}
		})
	}

	// go-sql-driver/mysql in this process, moved into the cgroup
	enterCgroup(t, cg)
	for _, interpolate := range []bool{false, true} {
		name := "go-sql-driver/interpolate=false"
		if interpolate {
			name = "go-sql-driver/interpolate=true"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := myDB(t, my, my.addr(), interpolate).Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var n int
			if err := c.QueryRowContext(ctx, "select count(*) from "+table+" where id > ?", 1).Scan(&n); err != nil || n != 2 {
				t.Fatalf("select with a parameter through interception: %d %v, want 2", n, err)
			}
			del := "delete from " + table + " where 1 = 1 or id = ?"
			if interpolate {
				del += " -- interpolated"
			}
			blocked = append(blocked, "delete from "+table+" where 1 = 1")
			_, err = c.ExecContext(ctx, del, 7)
			wantMyBlocked(t, "a tautological delete", err, "no-unfiltered-writes")
			if _, err := c.PrepareContext(ctx, "delete from "+table+" where 1 = 1"); err == nil {
				t.Errorf("prepare of a tautological delete through interception: no error")
			} else {
				wantMyBlocked(t, "a blocked prepare", err, "no-unfiltered-writes")
			}
			if err := c.QueryRowContext(ctx, "select count(*) from "+table).Scan(&n); err != nil || n != 3 {
				t.Errorf("the connection after the blocks: %d %v, want 3 rows", n, err)
			}
		})
	}

	log := generalLog(t, my)
	for _, b := range blocked {
		if strings.Contains(log, b) {
			t.Errorf("a blocked statement reached MariaDB: %q is in its general log", b)
		}
	}
	st := stats(t, d)
	if ic := st.Interception; !ic.Active || ic.Redirected == 0 || (my.Socket != "" && ic.UnixRedirected == 0) {
		t.Errorf("interception counters %+v: want active, redirected > 0 (and unix)", ic)
	}
}
