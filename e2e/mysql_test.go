package e2e

// MySQL / MariaDB through sqlfwd (protocol mysql, the embedded default
// policy, enforce mode) in front of the MariaDB scripts/test.sh starts
// (scripts/mariadb.sh; SQLFW_MY_*). Its general log is on: it proves that a
// blocked statement never reached the server.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// myEnv is the MariaDB the tests run against, from scripts/mariadb.sh env.
type myEnv struct {
	Host, Port, User, Database, Log, Socket string
	PWUser, PWPassword                      string
}

func mariadbEnv(t *testing.T) myEnv {
	t.Helper()
	my := myEnv{Host: envOr("SQLFW_MY_HOST", "127.0.0.1"), Port: os.Getenv("SQLFW_MY_PORT"), User: envOr("SQLFW_MY_USER", "root"),
		Database: envOr("SQLFW_MY_DATABASE", "sqlfw"), Log: os.Getenv("SQLFW_MY_LOG"), Socket: os.Getenv("SQLFW_MY_SOCKET"),
		PWUser: envOr("SQLFW_MY_PW_USER", "sqlfw_user"), PWPassword: envOr("SQLFW_MY_PW_PASSWORD", "sqlfw_pass")}
	if my.Port == "" {
		t.Skip("SQLFW_MY_PORT not set: run scripts/test.sh (SQLFW_TEST_MARIADB=1)")
	}
	return my
}

func (my myEnv) addr() string { return net.JoinHostPort(my.Host, my.Port) }

// mysqlDaemon starts a sqlfwd for MariaDB for one test.
func mysqlDaemon(t *testing.T, my myEnv, args ...string) *daemon {
	t.Helper()
	return ownDaemon(t, append([]string{"--protocol", "mysql", "--upstream", my.addr()}, args...)...)
}

func myDB(t *testing.T, my myEnv, addr string, interpolate bool) *sql.DB {
	t.Helper()
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = my.User, "tcp", addr, my.Database
	cfg.InterpolateParams = interpolate
	cfg.AllowAllFiles = true
	cfg.MaxAllowedPacket = 0
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// wantMyBlocked wants sqlfw's block: error 1227, SQLSTATE 42000, a message
// naming sqlfw and the rule.
func wantMyBlocked(t *testing.T, what string, err error, rule string) {
	t.Helper()
	var me *gomysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1227 || string(me.SQLState[:]) != "42000" ||
		!strings.HasPrefix(me.Message, "sqlfw:") || !strings.Contains(me.Message, rule) {
		t.Errorf("%s: got %v, want error 1227 (42000) from sqlfw naming rule %s", what, err, rule)
	}
}

// generalLog returns MariaDB's general log once a sentinel sent directly
// has reached it.
func generalLog(t *testing.T, my myEnv) string {
	t.Helper()
	if my.Log == "" {
		t.Skip("SQLFW_MY_LOG not set")
	}
	sentinel := "sentinel" + randomHex(t)
	if _, err := myDB(t, my, my.addr(), true).Exec("select '" + sentinel + "'"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(my.Log)
		if err != nil {
			t.Fatalf("reading the general log: %v", err)
		}
		if strings.Contains(string(b), sentinel) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel never reached %s: is the general log on (scripts/mariadb.sh start --log-statements)?", my.Log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// mariadbCLI runs the mariadb client against addr.
func mariadbCLI(t *testing.T, my myEnv, addr string, args ...string) psqlResult {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	return runTool(t, time.Minute, "", nil, "mariadb", append([]string{"--no-defaults", "-h", host, "-P", port, "-u", my.User,
		"--skip-ssl", "-N", "-B", my.Database}, args...)...)
}

func TestMySQLMariaDBCLI(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "cli_" + randomHex(t)
	table := "e2e_cli_" + marker
	if res := mariadbCLI(t, my, d.addr, "-e", "select 41+1"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "42" {
		t.Errorf("mariadb -e 'select 41+1' through sqlfwd: %s, want 42", res)
	}
	res := mariadbCLI(t, my, d.addr, "-e", fmt.Sprintf("create table %s (id int); insert into %s values (1), (2); delete from %s; select 'not reached'", table, table, table))
	if res.Exit == 0 || !strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stderr, "no-unfiltered-writes") || strings.Contains(res.Stdout, "not reached") {
		t.Errorf("mariadb -e with a WHERE-less delete: %s, want ERROR 1227 (42000) naming no-unfiltered-writes and nothing after it", res)
	}
	t.Cleanup(func() { mariadbCLI(t, my, my.addr(), "-e", "drop table if exists "+table) })
	f := t.TempDir() + "/script.sql"
	if err := os.WriteFile(f, []byte(fmt.Sprintf("insert into %s values (3);\nselect count(*) from %s;\n", table, table)), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := mariadbCLI(t, my, d.addr, "-e", "source "+f); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
		t.Errorf("mariadb -e 'source FILE' through sqlfwd: %s, want 3", res)
	}
	// The general log has everything but the blocked statement.
	log := generalLog(t, my)
	if !strings.Contains(log, "insert into "+table+" values (3)") {
		t.Errorf("the general log lacks the allowed statements of %s", table)
	}
	if strings.Contains(log, "delete from "+table) {
		t.Errorf("the blocked statement reached the server:\n%s", linesWith(log, "delete from "+table))
	}
}

// linesWith returns the lines of s that contain sub.
func linesWith(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestMySQLDriver(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	// values longer than one packet need the server's leave
	if _, err := myDB(t, my, my.addr(), true).Exec("set global max_allowed_packet = 67108864"); err != nil {
		t.Fatal(err)
	}
	for _, interpolate := range []bool{false, true} {
		t.Run("interpolateParams="+strconv.FormatBool(interpolate), func(t *testing.T) {
			table := "e2e_driver_" + randomHex(t)
			db := myDB(t, my, d.addr, interpolate)
			t.Cleanup(func() { myDB(t, my, my.addr(), true).Exec("drop table if exists " + table) })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := conn.ExecContext(ctx, q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			count := func() (n int) {
				t.Helper()
				if err := conn.QueryRowContext(ctx, "select count(*) from "+table+" where id > ?", 0).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			exec("create table " + table + " (id int primary key, v longtext)")
			exec("insert into "+table+" values (?, ?), (?, ?)", 1, "one", 2, "two")
			// a blocked statement; with arguments and without
			// interpolation, a blocked prepare
			_, err = conn.ExecContext(ctx, "update "+table+" set v = ?", "x")
			wantMyBlocked(t, "WHERE-less update with an argument", err, "no-unfiltered-writes")
			_, err = conn.ExecContext(ctx, "delete from "+table+" where 1 = 1")
			wantMyBlocked(t, "delete with a tautology", err, "no-")
			_, err = conn.ExecContext(ctx, "delete from "+table)
			wantMyBlocked(t, "WHERE-less delete", err, "no-unfiltered-writes")
			if n := count(); n != 2 {
				t.Errorf("rows after the blocks: %d, want 2", n)
			}
			// a transaction around a block stays open and commits
			exec("begin")
			exec("insert into "+table+" values (?, ?)", 3, "three")
			_, err = conn.ExecContext(ctx, "update "+table+" set v = 'x'")
			wantMyBlocked(t, "WHERE-less update in a transaction", err, "no-unfiltered-writes")
			exec("insert into "+table+" values (?, ?)", 4, "four")
			exec("commit")
			if n := count(); n != 4 {
				t.Errorf("rows after the transaction: %d, want 4", n)
			}
			// a 64 MiB result, and a value longer than one packet
			var total int
			rows, err := conn.QueryContext(ctx, "select repeat('x', 1048576) from seq_1_to_64")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var v []byte
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				total += len(v)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			exec("insert into "+table+" values (?, repeat('y', 8388608))", 9)
			exec("update "+table+" set v = concat(v, v, v) where id = ?", 9)
			var long []byte
			if err := conn.QueryRowContext(ctx, "select v from "+table+" where id = ?", 9).Scan(&long); err != nil {
				t.Fatal(err)
			}
			exec("delete from "+table+" where id = ?", 9)
			if total != 64<<20 || len(long) != 24<<20 {
				t.Errorf("results of %d and %d bytes, want %d and %d", total, len(long), 64<<20, 24<<20)
			}
			// LOAD DATA LOCAL INFILE
			f := t.TempDir() + "/rows.tsv"
			if err := os.WriteFile(f, []byte("10\tten\n11\televen\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			exec("load data local infile '" + f + "' into table " + table)
			if n := count(); n != 6 {
				t.Errorf("rows after LOAD DATA LOCAL: %d, want 6", n)
			}
			log := generalLog(t, my)
			if strings.Contains(log, "delete from "+table+" where 1 = 1") || strings.Contains(log, "delete from "+table+"\n") || strings.Contains(log, "update "+table+" set v = 'x'") ||
				strings.Contains(log, "update "+table+" set v = ?") {
				t.Errorf("a blocked statement reached the server:\n%s", linesWith(log, table))
			}
		})
	}
	st := stats(t, d)
	if db := st.Databases[0]; db.Denied == 0 || db.Messages == 0 {
		t.Errorf("fwctl stats: %d messages, %d denied; want both > 0", db.Messages, db.Denied)
	}
}

// TestSysbenchMySQL runs sysbench's OLTP workloads (MySQL driver, prepared
// statements) through sqlfwd with the default policy: nothing is blocked
// and sysbench counts no errors.
func TestSysbenchMySQL(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	host, port, _ := net.SplitHostPort(d.addr)
	table := "sbtest1"
	args := []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=" + my.User,
		"--mysql-db=" + my.Database, "--mysql-ssl=off", "--tables=1", "--table-size=2000", "--threads=2"}
	t.Cleanup(func() { myDB(t, my, my.addr(), true).Exec("drop table if exists " + table) })
	if res := runTool(t, 3*time.Minute, "", nil, "sysbench", append([]string{"oltp_read_write"}, append(args, "prepare")...)...); res.Exit != 0 {
		t.Fatalf("sysbench prepare through sqlfwd: %s", res)
	}
	for _, w := range []string{"oltp_read_only", "oltp_read_write"} {
		res := runTool(t, 3*time.Minute, "", nil, "sysbench", append([]string{w}, append(args, "--time=5", "run")...)...)
		if res.Exit != 0 {
			t.Fatalf("sysbench %s run: %s", w, res)
		}
		tx := regexp.MustCompile(`transactions:\s+(\d+)`).FindStringSubmatch(res.Stdout)
		errs := regexp.MustCompile(`errors:\s+(\d+)`).FindStringSubmatch(res.Stdout)
		if tx == nil || tx[1] == "0" || errs == nil || errs[1] != "0" {
			t.Errorf("sysbench %s: want transactions > 0 and 0 errors\n%s", w, res)
		}
		if tx != nil {
			t.Logf("sysbench %s: %s transactions in 5 s", w, tx[1])
		}
	}
	st := stats(t, d)
	db := st.Databases[0]
	if db.Denied != 0 || db.WouldDeny != 0 || db.ParseErrors != 0 || db.Messages == 0 {
		t.Errorf("sqlfw stats after sysbench: %d messages, %d denied, %d parse errors; want > 0, 0, 0\n%s",
			db.Messages, db.Denied, db.ParseErrors, tail(d.log(), 10))
	}
}
