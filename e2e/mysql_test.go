package e2e

// MySQL / MariaDB through sqlfwd (protocol mysql, the embedded default
// policy, enforce mode) in front of the MariaDB scripts/test.sh starts
// (scripts/mariadb.sh; SQLFW_MY_*). Its general log is on: it proves that a
// blocked statement never reached the server.

import (
	"bytes"
	"context"
	"crypto/sha1"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
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
// showGrants is SHOW GRANTS FOR account on db, its lines joined by "; ".
func showGrants(t *testing.T, db *sql.DB, account string) string {
	t.Helper()
	rows, err := db.Query("show grants for " + account)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "; ")
}

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

// TestSysbenchMySQL runs every sysbench OLTP workload (MySQL driver,
// prepared statements) through sqlfwd with the default policy, prepare, run
// and cleanup: nothing is blocked and sysbench counts no errors.
func TestSysbenchMySQL(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	host, port, _ := net.SplitHostPort(d.addr)
	table := "sbtest1"
	args := []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=" + my.User,
		"--mysql-db=" + my.Database, "--mysql-ssl=off", "--tables=1", "--table-size=2000"}
	t.Cleanup(func() { myDB(t, my, my.addr(), true).Exec("drop table if exists " + table) })
	if res := runTool(t, 3*time.Minute, "", nil, "sysbench", append([]string{"oltp_read_write"}, append(args, "prepare")...)...); res.Exit != 0 {
		t.Fatalf("sysbench prepare through sqlfwd: %s", res)
	}
	// Two threads that write can deadlock each other in the server, which
	// sysbench counts as ignored errors: the writing workloads run alone,
	// so that any error would be sqlfw's. Every OLTP script sysbench has.
	for _, w := range [][2]string{{"oltp_read_only", "--threads=2"}, {"oltp_read_write", "--threads=1"},
		{"oltp_write_only", "--threads=1"}, {"oltp_point_select", "--threads=2"}, {"oltp_update_index", "--threads=1"},
		{"oltp_update_non_index", "--threads=1"}, {"oltp_insert", "--threads=1"}, {"oltp_delete", "--threads=1"},
		{"select_random_points", "--threads=2"}, {"select_random_ranges", "--threads=2"}} {
		res := runTool(t, 3*time.Minute, "", nil, "sysbench", append([]string{w[0], w[1]}, append(args, "--time=3", "run")...)...)
		if res.Exit != 0 {
			t.Fatalf("sysbench %s run: %s", w[0], res)
		}
		tx := regexp.MustCompile(`transactions:\s+(\d+)`).FindStringSubmatch(res.Stdout)
		errs := regexp.MustCompile(`ignored errors:\s+(\d+)`).FindStringSubmatch(res.Stdout)
		if tx == nil || tx[1] == "0" || errs == nil || errs[1] != "0" {
			t.Errorf("sysbench %s: want transactions > 0 and 0 errors\n%s", w[0], res)
		}
		if tx != nil {
			t.Logf("sysbench %s %s: %s transactions in 3 s", w[0], w[1], tx[1])
		}
	}
	if res := runTool(t, 3*time.Minute, "", nil, "sysbench", append([]string{"oltp_read_write"}, append(args, "cleanup")...)...); res.Exit != 0 {
		t.Errorf("sysbench cleanup through sqlfwd: %s", res)
	}
	// bulk_insert has tables of its own: prepare, run and cleanup.
	bulk := append([]string{"bulk_insert", "--threads=1"}, args...)
	for _, step := range [][]string{{"prepare"}, {"--time=3", "run"}, {"cleanup"}} {
		res := runTool(t, 3*time.Minute, "", nil, "sysbench", append(append([]string(nil), bulk...), step...)...)
		if res.Exit != 0 {
			t.Errorf("sysbench bulk_insert %s through sqlfwd: %s", step[len(step)-1], res)
		}
		if errs := regexp.MustCompile(`ignored errors:\s+(\d+)`).FindStringSubmatch(res.Stdout); errs != nil && errs[1] != "0" {
			t.Errorf("sysbench bulk_insert %s: %s ignored errors\n%s", step[len(step)-1], errs[1], res)
		}
	}
	st := stats(t, d)
	db := st.Databases[0]
	if db.Denied != 0 || db.WouldDeny != 0 || db.ParseErrors != 0 || db.Messages == 0 {
		t.Errorf("sqlfw stats after sysbench: %d messages, %d denied, %d parse errors; want > 0, 0, 0\n%s",
			db.Messages, db.Denied, db.ParseErrors, tail(d.log(), 10))
	}
}

// TestInterceptMySQLAppHost: clients in an intercepted cgroup that connect
// to MariaDB's own port or unix socket get sqlfw's verdicts.
func TestInterceptMySQLAppHost(t *testing.T) {
	needKernel(t)
	my := mariadbEnv(t)
	cg := childCgroup(t)
	d := startMySQLIntercepting(t, my, cg)
	table := "e2e_icept_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + table + " (id int); insert into " + table + " values (1), (2), (3)"); err != nil {
		// no multi-statements on this DSN: one at a time
		if _, err := direct.Exec("create table " + table + " (id int)"); err != nil {
			t.Fatal(err)
		}
		if _, err := direct.Exec("insert into " + table + " values (1), (2), (3)"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { direct.Exec("drop table if exists " + table) })
	targets := [][]string{{"-h", my.Host, "-P", my.Port, "--protocol=tcp"}}
	if my.Socket != "" {
		targets = append(targets, []string{"--socket=" + my.Socket, "--protocol=socket"})
	}
	for _, to := range targets {
		t.Run(to[len(to)-1], func(t *testing.T) {
			cli := func(sql string) psqlResult {
				a := append(inCgroup(cg)[1:], tool(t, "mariadb"), "--no-defaults", "-u", my.User, "--skip-ssl", "-N", "-B")
				a = append(append(a, to...), my.Database, "-e", sql)
				return runCmd(t, time.Minute, "", nil, "sh", a...)
			}
			if res := cli("select count(*) from " + table); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
				t.Fatalf("select through interception: %s, want 3", res)
			}
			if res := cli("delete from " + table); res.Exit == 0 || !strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stderr, "sqlfw:") {
				t.Fatalf("delete through interception: %s, want ERROR 1227 (42000) from sqlfw", res)
			}
		})
	}
	var n int
	if err := direct.QueryRow("select count(*) from " + table).Scan(&n); err != nil || n != 3 {
		t.Errorf("rows after the blocked deletes: %d %v, want 3", n, err)
	}
	st := stats(t, d)
	if ic := st.Interception; !ic.Active || ic.Redirected == 0 || (my.Socket != "" && ic.UnixRedirected == 0) {
		t.Errorf("interception counters %+v: want active, redirected > 0 (and unix)", ic)
	}
}

// TestMySQLChangeUser: COM_CHANGE_USER through sqlfwd, from root to the
// password user (mysql_native_password, the auth switch passed through);
// the session's user and schema change for fwctl connections and the
// policy. The client is raw: go-sql-driver/mysql does not send the command.
func TestMySQLChangeUser(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	c, err := net.DialTimeout("tcp", d.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	read := func() []byte {
		t.Helper()
		var h [4]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
		return append(h[:], b...)
	}
	write := func(seq byte, payload []byte) {
		t.Helper()
		n := len(payload)
		if _, err := c.Write(append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)); err != nil {
			t.Fatal(err)
		}
	}
	scramble := func(nonce []byte, password string) []byte {
		if password == "" {
			return nil
		}
		h1 := sha1.Sum([]byte(password))
		h2 := sha1.Sum(h1[:])
		h := sha1.New()
		h.Write(nonce[:20])
		h.Write(h2[:])
		out := h.Sum(nil)
		for i := range out {
			out[i] ^= h1[i]
		}
		return out
	}
	// auth answers auth switches until the OK.
	auth := func(password string) {
		t.Helper()
		for {
			m := read()
			switch m[4] {
			case 0x00:
				return
			case 0xfe:
				rest := m[5:]
				i := bytes.IndexByte(rest, 0)
				if i < 0 || string(rest[:i]) != "mysql_native_password" {
					t.Fatalf("auth switch: %q", m)
				}
				write(m[3]+1, scramble(rest[i+1:], password))
			default:
				t.Fatalf("authentication: %q", m)
			}
		}
	}
	g := read()
	// the nonce: 8 bytes after the version and connection id, 12 more
	// after the capabilities, character set, status and reserved bytes
	v := bytes.IndexByte(g[5:], 0)
	p := g[5+v+1:]
	nonce := append(append([]byte(nil), p[4:12]...), p[31:43]...)
	var caps uint32 = 1<<0 | 1<<3 | 1<<9 | 1<<13 | 1<<15 | 1<<19 // long password, with db, 4.1, transactions, secure connection, plugin auth
	hello := []byte{byte(caps), byte(caps >> 8), byte(caps >> 16), byte(caps >> 24), 0, 0, 0, 1, 45}
	hello = append(hello, make([]byte, 23)...)
	hello = append(append(hello, my.User...), 0, 0)
	hello = append(append(hello, my.Database...), 0)
	hello = append(hello, "mysql_native_password\x00"...)
	write(1, hello)
	auth("")
	queryOne := func(q string) string {
		t.Helper()
		write(0, append([]byte{0x03}, q...))
		// without CLIENT_DEPRECATE_EOF: column count, definitions, EOF,
		// rows, EOF
		var out []string
		for eofs := 0; ; {
			m := read()
			if m[4] == 0xff {
				return string(m[4:])
			}
			if m[4] == 0xfe && len(m) < 13 {
				if eofs++; eofs == 2 {
					return strings.Join(out, "|")
				}
				continue
			}
			out = append(out, string(m[4:]))
		}
	}
	if got := queryOne("select current_user()"); !strings.Contains(got, my.User+"@") {
		t.Fatalf("current_user as %s: %q", my.User, got)
	}
	cu := []byte{0x11}
	cu = append(append(cu, my.PWUser...), 0, 20)
	cu = append(cu, scramble(nonce, my.PWPassword)...)
	cu = append(cu, "mysql\x00"...)
	cu = append(cu, 45, 0)
	cu = append(cu, "mysql_native_password\x00"...)
	write(0, cu)
	auth(my.PWPassword)
	if got := queryOne("select current_user()"); !strings.Contains(got, my.PWUser+"@") {
		t.Errorf("current_user after COM_CHANGE_USER: %q, want %s", got, my.PWUser)
	}
	if got := queryOne("delete from user"); !strings.Contains(got, "sqlfw:") || !strings.Contains(got, "42000") {
		t.Errorf("a WHERE-less delete after COM_CHANGE_USER: %q, want sqlfw's 42000", got)
	}
	res := runToolPath(t, filepath.Join(binDir, "fwctl"), "connections", "--control-socket", d.control)
	if res.Exit != 0 || !strings.Contains(res.Stdout, my.PWUser) || !strings.Contains(res.Stdout, "mysql") {
		t.Errorf("fwctl connections after COM_CHANGE_USER: %s, want user %s on database mysql", res, my.PWUser)
	}
}

// TestMySQLAuditAndMetrics: a MySQL session and its verdicts reach the
// audit trail (without statement text) and the Prometheus metrics, as
// PostgreSQL's do.
func TestMySQLAuditAndMetrics(t *testing.T) {
	my := mariadbEnv(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	maddr := "127.0.0.1:" + strconv.Itoa(port)
	d := mysqlDaemon(t, my, "--audit-log", path, "--audit-allowed", "--metrics-listen", maddr)
	if res := mariadbCLI(t, my, d.addr, "-e", "select 'audit-literal-allowed'"); res.Exit != 0 {
		t.Fatalf("allowed select: %s", res)
	}
	if res := mariadbCLI(t, my, d.addr, "-e", "delete from audit_secret_table"); !strings.Contains(res.Stderr, "ERROR 1227 (42000)") {
		t.Fatalf("blocked delete: %s", res)
	}
	var body string
	for i := 0; i < 50 && body == ""; i++ {
		if resp, err := http.Get("http://" + maddr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, want := range []string{`sqlfw_verdicts_total{database="default",verdict="denied"} 1`, `sqlfw_rule_verdicts_total{database="default",rule="no-unfiltered-writes"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, linesWith(body, "verdicts_total"))
		}
	}
	if code, err := d.signal(syscall.SIGTERM, 15*time.Second); err != nil || code != 0 {
		t.Fatalf("stopping sqlfwd: exit %d, %v", code, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("audit-literal-allowed")) || bytes.Contains(b, []byte("audit_secret_table")) {
		t.Fatalf("the audit trail carries statement text:\n%s", b)
	}
	for _, want := range []string{`"event":"session_start"`, `"user":"` + my.User + `"`, `"rule":"no-unfiltered-writes"`, `"event":"session_end"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the audit trail lacks %s:\n%s", want, b)
		}
	}
	if res := runToolPath(t, filepath.Join(binDir, "fwctl"), "audit", "verify", path); res.Exit != 0 || !strings.Contains(res.Stdout, "chain intact") {
		t.Errorf("fwctl audit verify: %s", res)
	}
}

// TestMySQLPreparedExecutionsCounted: executions of a prepared statement
// (go-sql-driver/mysql without interpolateParams: COM_STMT_PREPARE once,
// COM_STMT_EXECUTE each time) count in fwctl stats as executions and
// statements, allowed; the prepare is the one judged message.
func TestMySQLPreparedExecutionsCounted(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	db := myDB(t, my, d.addr, false)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	st, err := db.PrepareContext(ctx, "select ? + 1")
	if err != nil {
		t.Fatal(err)
	}
	before := stats(t, d).Databases[0]
	const n = 25
	for i := range n {
		var v int
		if err := st.QueryRowContext(ctx, i).Scan(&v); err != nil || v != i+1 {
			t.Fatalf("execution %d: %d %v, want %d", i, v, err, i+1)
		}
	}
	st.Close()
	after := stats(t, d).Databases[0]
	if got := after.Executions - before.Executions; got != n {
		t.Errorf("executions counted: %d, want %d", got, n)
	}
	if got := after.Statements - before.Statements; got != n {
		t.Errorf("statements counted over the executions: %d, want %d", got, n)
	}
	if got := after.Allowed - before.Allowed; got != n {
		t.Errorf("allowed counted over the executions: %d, want %d", got, n)
	}
	if after.Messages != before.Messages {
		t.Errorf("judged messages moved from %d to %d: executions are decided by the prepare's verdict", before.Messages, after.Messages)
	}
}
