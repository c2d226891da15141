package e2e

// The drivers applications use, in Python, Node.js, Java and PHP, through
// sqlfwd (issue 13: "the drivers applications use ... must work the same
// way"). Each driver runs one small program of e2e/drivers/<lang>/ that
// goes through the same steps (e2e/drivers/README.md) and prints one line
// per step; the test judges the lines and then the server's own statement
// log (MariaDB's general log, PostgreSQL's log_statement=all): a blocked
// statement never reached the server, and a driver said to use server-side
// prepared statements did.
//
// The drivers come from Debian and npm, installed by scripts/deps.sh. A
// driver that is not installed skips the test saying so, except under CI,
// where it fails: there the drivers must run.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// driverProg is one driver and how to run its program.
type driverProg struct {
	lang, driver string
	// binary: the driver uses server-side prepared statements (MySQL's
	// binary protocol, PostgreSQL's named statements) for parameters
	binary bool
	// noSQLState: the driver drops the SQLSTATE of an ERR packet (PyMySQL)
	noSQLState bool
	// noReset: the driver has no connection reset; its program says "none"
	noReset bool
	// ed25519: the driver logs in with MariaDB's client_ed25519 too
	ed25519 bool
	// module: what must be installed for it (a Python module, a PHP
	// extension, a jar in /usr/share/java, an npm package)
	module string
	// extra are the steps only this driver's program has
	extra map[string]any
}

func (p driverProg) String() string { return p.lang + "/" + p.driver }

var mysqlDrivers = []driverProg{
	{lang: "node", driver: "mysql2", binary: true, module: "mysql2",
		extra: map[string]any{"infile": "2"}},
	{lang: "node", driver: "mariadb", binary: true, ed25519: true, module: "mariadb",
		extra: map[string]any{"pipeline": "1,1227,3", "batch": "3", "blocked-batch": blockedMySQL, "infile": "2"}},
	{lang: "node", driver: "mysql", module: "mysql"},
	{lang: "python", driver: "pymysql", noSQLState: true, noReset: true, ed25519: true, module: "pymysql"},
	{lang: "python", driver: "mysqldb", ed25519: true, module: "MySQLdb"},
	{lang: "php", driver: "mysqli", binary: true, module: "mysqli",
		extra: map[string]any{"cursor": "5000 12502500", "long-data": "4194304"}},
	{lang: "php", driver: "pdo_mysql", binary: true, noReset: true, module: "pdo_mysql",
		extra: map[string]any{"gbk-injection": blockedMySQLAny}},
	{lang: "java", driver: "mariadb", binary: true, ed25519: true, module: "mariadb-java-client.jar",
		extra: map[string]any{"batch": "3", "blocked-batch": blockedMySQL, "long-data": "3145728", "cancel": "1317", "infile": "2"}},
}

var pgDrivers = []driverProg{
	{lang: "node", driver: "pg", binary: true, module: "pg"},
	{lang: "node", driver: "postgres", binary: true, module: "postgres"},
	{lang: "python", driver: "psycopg2", module: "psycopg2"},
	{lang: "python", driver: "psycopg", binary: true, module: "psycopg",
		extra: map[string]any{"pipeline": blockedPG, "after-pipeline": "3", "copy": "1000", "notify": "hello", "cancel": "57014"}},
	{lang: "python", driver: "asyncpg", binary: true, module: "asyncpg",
		extra: map[string]any{"cursor": "12502500", "copy": "1000", "cancel": "57014"}},
	{lang: "php", driver: "pgsql", binary: true, module: "pgsql"},
	{lang: "php", driver: "pdo_pgsql", binary: true, module: "pdo_pgsql"},
	{lang: "java", driver: "pgjdbc", binary: true, module: "postgresql.jar",
		extra: map[string]any{"cursor": "12502500", "cancel": "57014"}},
}

// driversDir is e2e/drivers, where the programs are.
func driversDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs("drivers")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// driverCommand returns the command line that runs p's program for proto
// ("mysql" or "pg"), or skips (fails under CI) when the language or the
// driver is not installed.
func driverCommand(t *testing.T, p driverProg, proto string) []string {
	t.Helper()
	dir := driversDir(t)
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf("%s: ", p) + fmt.Sprintf(format, args...) + " (scripts/deps.sh installs it)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	prog := filepath.Join(dir, p.lang, proto)
	switch p.lang {
	case "node":
		node, err := exec.LookPath("node")
		if err != nil {
			missing("node not on PATH")
		}
		if _, err := os.Stat(filepath.Join(dir, "node", "node_modules", p.module, "package.json")); err != nil {
			missing("npm package %s not in e2e/drivers/node/node_modules", p.module)
		}
		return []string{node, prog + ".js", p.driver}
	case "python":
		// Debian's python3, whose dist-packages hold the drivers (a
		// python3 earlier on PATH, such as pyenv's, does not see them)
		py := "/usr/bin/python3"
		if _, err := os.Stat(py); err != nil {
			missing("no %s", py)
		}
		if err := exec.Command(py, "-c", "import "+p.module).Run(); err != nil {
			missing("python3 cannot import %s", p.module)
		}
		return []string{py, prog + ".py", p.driver}
	case "php":
		php, err := exec.LookPath("php")
		if err != nil {
			missing("php not on PATH")
		}
		if err := exec.Command(php, "-r", "exit(extension_loaded('"+p.module+"') ? 0 : 1);").Run(); err != nil {
			missing("PHP extension %s not loaded", p.module)
		}
		return []string{php, prog + ".php", p.driver}
	case "java":
		java, err := exec.LookPath("java")
		if err != nil {
			missing("java not on PATH")
		}
		if _, err := exec.LookPath("javac"); err != nil {
			missing("no JDK (javac) for the source launcher")
		}
		jar := filepath.Join("/usr/share/java", p.module)
		if _, err := os.Stat(jar); err != nil {
			missing("no %s", jar)
		}
		class := map[string]string{"mysql": "MySQL", "pg": "PG"}[proto]
		return []string{java, "-cp", jar, filepath.Join(dir, "java", class+".java"), p.driver}
	}
	t.Fatalf("%s: no such language", p)
	return nil
}

// driverEnv is what a program connects with.
type driverEnv struct {
	host, port, user, password, db, table, proc string
	socket                                      string // MySQL: the unix socket, else TCP
	ca                                          string // TLS verified against this CA, else plain
}

func (e driverEnv) environ() []string {
	return []string{"DRV_HOST=" + e.host, "DRV_PORT=" + e.port, "DRV_USER=" + e.user, "DRV_PASSWORD=" + e.password,
		"DRV_DB=" + e.db, "DRV_TABLE=" + e.table, "DRV_PROC=" + e.proc, "DRV_SOCKET=" + e.socket, "DRV_CA=" + e.ca}
}

// runDriver runs argv (prefixed by wrap, e.g. inCgroup) and returns its
// steps: the first word of each line of its output and the rest.
func runDriver(t *testing.T, wrap, argv []string, e driverEnv) map[string]string {
	t.Helper()
	argv = append(append([]string(nil), wrap...), argv...)
	res := runCmd(t, 3*time.Minute, "", e.environ(), argv[0], argv[1:]...)
	steps := map[string]string{}
	for _, l := range strings.Split(res.Stdout, "\n") {
		if k, v, _ := strings.Cut(strings.TrimSpace(l), " "); k != "" {
			steps[k] = v
		}
	}
	if _, done := steps["done"]; res.Exit != 0 || !done {
		t.Fatalf("%s: the program did not finish:\n%s", strings.Join(argv, " "), res)
	}
	t.Logf("%s:\n%s", filepath.Base(argv[len(argv)-2])+" "+argv[len(argv)-1], res.Stdout)
	return steps
}

// blockedMySQL and blockedPG match a step that printed sqlfw's block of a
// WHERE-less write: MySQL's error 1227 with SQLSTATE 42000, PostgreSQL's
// SQLSTATE 42501, each with a message that names sqlfw and the rule.
var (
	blockedMySQL = regexp.MustCompile(`^1227 42000 sqlfw: statement blocked by rule no-unfiltered-writes\b`)
	blockedPG    = regexp.MustCompile(`^42501 sqlfw: statement blocked by rule no-unfiltered-writes\b`)
	// a block by whichever rule
	blockedMySQLAny = regexp.MustCompile(`^1227 42000 sqlfw: statement blocked by rule `)
	// PyMySQL reads the SQLSTATE off the packet and drops it
	blockedMySQLNoState = regexp.MustCompile(`^1227 - sqlfw: statement blocked by rule no-unfiltered-writes\b`)
)

// checkSteps compares steps with want: a string is the exact value, a
// regexp matches it.
func checkSteps(t *testing.T, p driverProg, steps map[string]string, want map[string]any) {
	t.Helper()
	for step, w := range want {
		got, ok := steps[step]
		switch w := w.(type) {
		case string:
			if !ok || got != w {
				t.Errorf("%s step %q: got %q (printed: %v), want %q", p, step, got, ok, w)
			}
		case *regexp.Regexp:
			if !ok || !w.MatchString(got) {
				t.Errorf("%s step %q: got %q (printed: %v), want it to match %s", p, step, got, ok, w)
			}
		}
	}
}

// wantMySQLSteps is what every MySQL program must print: the block of a
// plain statement inside a transaction that stays open (MySQL's
// semantics), of a prepare, of a multi-statement text whose first
// statement must not run either; results of several sets (a procedure)
// and of 5,000 rows; the pool's reset clearing the session.
func wantMySQLSteps(p driverProg) map[string]any {
	blocked := blockedMySQL
	if p.noSQLState {
		blocked = blockedMySQLNoState
	}
	w := map[string]any{
		"connect": "ok text", "plain": "42", "prepared": "two",
		"blocked": blocked, "in-tx": "4", "blocked-prepare": blocked, "blocked-multi": blocked,
		"after": "4", "multi": "1,2", "call": "1,2", "big": "5000 12502500",
		"reset": "cleared", "after-reset": "three",
	}
	if p.binary {
		w["connect"] = "ok binary"
		w["call-binary"] = "1,2"
		w["big-binary"] = "5000 12502500"
	}
	return withExtra(p, w)
}

// withExtra adds p's own steps to w, and "none" for a reset it lacks.
func withExtra(p driverProg, w map[string]any) map[string]any {
	if p.noReset {
		w["reset"] = "none"
	}
	for k, v := range p.extra {
		w[k] = v
	}
	return w
}

// wantPGSteps: as for MySQL, except that a blocked statement aborts the
// transaction as any error does in PostgreSQL (sqlfwd sends the server a
// statement that fails instead), so the test rolls back.
func wantPGSteps(p driverProg) map[string]any {
	return withExtra(p, map[string]any{
		"connect": "ok", "plain": "42", "prepared": "two",
		"blocked": blockedPG, "in-tx": "25P02", "blocked-prepare": blockedPG, "blocked-multi": blockedPG,
		"after": "3", "multi": "1,2", "big": "5000 12502500", "big-binary": "5000 12502500",
		"reset": "cleared", "after-reset": "three",
	})
}

// blockedText matches, in a server log's lines, the statements the
// programs send that sqlfwd blocks: a delete of table without WHERE, the
// WHERE-less update and (with multi, MySQL's) the insert sent in one text
// with a blocked delete and PDO's GBK injection. The programs' other
// deletes have a WHERE.
func blockedText(table string, multi bool) *regexp.Regexp {
	re := `(?m)delete from ` + table + `\s*(;|$)|update ` + table + ` set v`
	if multi {
		re += `|\(5, 'five'\)|or 1=1`
	}
	return regexp.MustCompile(re)
}

// checkMySQLLog: the blocked statements of the run on table never reached
// MariaDB; the allowed ones did, through COM_STMT_PREPARE when the driver
// is binary.
func checkMySQLLog(t *testing.T, p driverProg, my myEnv, table string) {
	t.Helper()
	log := linesWith(generalLog(t, my), table)
	if m := blockedText(table, true).FindAllString(log, -1); m != nil {
		t.Errorf("%s: a blocked statement reached the server: %q in\n%s", p, m, log)
	}
	if !strings.Contains(log, "insert into "+table+" (id, v) values") {
		t.Errorf("%s: the general log lacks the allowed inserts:\n%s", p, log)
	}
	prepared := regexp.MustCompile(`\sPrepare\t[^\n]*` + table).MatchString(log)
	if p.binary && !prepared {
		t.Errorf("%s: no COM_STMT_PREPARE on %s in the general log, want the binary protocol:\n%s", p, table, log)
	}
}

// checkPGLog: the same in PostgreSQL's statement log; named prepared
// statements for binary drivers. The insert before the blocked delete of
// blocked-multi may reach the server: pgjdbc sends the two statements as
// two Parse/Bind/Execute before one Sync, and sqlfwd judges each message;
// the failing stand-in for the delete aborts the implicit transaction, so
// the insert is rolled back (step after), as when the server rejects a
// statement of a pipeline itself.
func checkPGLog(t *testing.T, p driverProg, table string) {
	t.Helper()
	log := linesWith(serverLog(t), table)
	if m := blockedText(table, false).FindAllString(log, -1); m != nil {
		t.Errorf("%s: a blocked statement reached the server: %q in\n%s", p, m, log)
	}
	if !strings.Contains(log, "insert into "+table+" (id, v) values") {
		t.Errorf("%s: the server log lacks the allowed inserts:\n%s", p, log)
	}
	named := regexp.MustCompile(`execute [^<][^:]*: insert into ` + table).MatchString(log)
	if p.binary && !named {
		t.Errorf("%s: no named prepared statement on %s in the server log:\n%s", p, table, log)
	}
}

// myProc is a procedure with two result sets, made directly on MariaDB.
func myProc(t *testing.T, my myEnv) string {
	t.Helper()
	proc := "e2e_drv_proc_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create procedure " + proc + "() begin select 1 as a; select 2 as b; end"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Exec("drop procedure if exists " + proc) })
	return proc
}

func TestDriversMySQL(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	host, port, _ := net.SplitHostPort(d.addr)
	proc := myProc(t, my)
	for _, p := range mysqlDrivers {
		t.Run(p.String(), func(t *testing.T) {
			argv := driverCommand(t, p, "mysql")
			table := "e2e_drv_" + strings.ReplaceAll(p.driver, "-", "_") + "_" + randomHex(t)
			t.Cleanup(func() { myDB(t, my, my.addr(), true).Exec("drop table if exists " + table) })
			e := driverEnv{host: host, port: port, user: my.PWUser, password: my.PWPassword, db: my.Database, table: table, proc: proc}
			checkSteps(t, p, runDriver(t, nil, argv, e), wantMySQLSteps(p))
			checkMySQLLog(t, p, my, table)
		})
	}
}

// TestDriversMySQLEd25519: the drivers that speak MariaDB's client_ed25519
// log in through sqlfwd as a user that has only it (the server's greeting
// names mysql_native_password, so the login goes through an auth switch)
// and then run the same steps.
func TestDriversMySQLEd25519(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	host, port, _ := net.SplitHostPort(d.addr)
	direct := myDB(t, my, my.addr(), true)
	// the plugin ships with mariadb-server; INSTALL SONAME of an installed
	// plugin only warns
	user, password := "e2e_ed25519_user", "ed25519 pass "+randomHex(t)
	for _, q := range []string{
		"install soname 'auth_ed25519'",
		"drop user if exists '" + user + "'@'127.0.0.1'",
		"create user '" + user + "'@'127.0.0.1' identified via ed25519 using password('" + password + "')",
		"grant all on " + my.Database + ".* to '" + user + "'@'127.0.0.1'",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { direct.Exec("drop user if exists '" + user + "'@'127.0.0.1'") })
	var plugin string
	if err := direct.QueryRow("select json_value(priv, '$.plugin') from mysql.global_priv where user = ?", user).Scan(&plugin); err != nil || plugin != "ed25519" {
		t.Fatalf("%s's plugin: %q %v, want ed25519", user, plugin, err)
	}
	proc := myProc(t, my)
	for _, p := range mysqlDrivers {
		if !p.ed25519 {
			continue
		}
		t.Run(p.String(), func(t *testing.T) {
			argv := driverCommand(t, p, "mysql")
			if p.driver == "pymysql" {
				// PyMySQL signs with PyNaCl (python3-nacl)
				if err := exec.Command(argv[0], "-c", "import nacl.signing").Run(); err != nil {
					if os.Getenv("CI") != "" {
						t.Fatalf("%s: python3 cannot import nacl (scripts/deps.sh installs python3-nacl)", p)
					}
					t.Skipf("%s: python3 cannot import nacl (scripts/deps.sh installs python3-nacl)", p)
				}
			}
			table := "e2e_drv_ed_" + strings.ReplaceAll(p.driver, "-", "_") + "_" + randomHex(t)
			t.Cleanup(func() { myDB(t, my, my.addr(), true).Exec("drop table if exists " + table) })
			e := driverEnv{host: host, port: port, user: user, password: password, db: my.Database, table: table, proc: proc}
			checkSteps(t, p, runDriver(t, nil, argv, e), wantMySQLSteps(p))
			checkMySQLLog(t, p, my, table)
		})
	}
}

// pgDriverTable makes table for a PostgreSQL program, owned by the
// superuser and granted to the SCRAM user the program logs in as.
func pgDriverTable(t *testing.T, p driverProg) string {
	t.Helper()
	table := "e2e_drv_" + strings.ReplaceAll(p.driver, "-", "_") + "_" + randomHex(t)
	directExec(t, fmt.Sprintf("CREATE TABLE %s (id int primary key, v text); GRANT ALL ON %s TO %s", table, table, pg.ScramUser))
	t.Cleanup(func() { directExec(t, "DROP TABLE IF EXISTS "+table) })
	return table
}

func TestDriversPG(t *testing.T) {
	needSqlfwd(t)
	d := ownDaemon(t)
	host, port, _ := net.SplitHostPort(d.addr)
	for _, p := range pgDrivers {
		t.Run(p.String(), func(t *testing.T) {
			argv := driverCommand(t, p, "pg")
			table := pgDriverTable(t, p)
			e := driverEnv{host: host, port: port, user: pg.ScramUser, password: pg.ScramPassword, db: pg.Database, table: table}
			checkSteps(t, p, runDriver(t, nil, argv, e), wantPGSteps(p))
			checkPGLog(t, p, table)
		})
	}
}

// TestDriversTLS: every driver over TLS to a sqlfwd that requires it on
// the client leg (its certificate verified against the test's CA, the
// server leg plain), both protocols, the same steps.
func TestDriversTLS(t *testing.T) {
	needSqlfwd(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "drivers-ca")
	cert, key := ca.issue(t, dir, "sqlfwd", false)
	tlsArgs := []string{"--tls-cert", cert, "--tls-key", key, "--tls-require"}
	t.Run("mysql", func(t *testing.T) {
		my := mariadbEnv(t)
		d := mysqlDaemon(t, my, tlsArgs...)
		host, port, _ := net.SplitHostPort(d.addr)
		proc := myProc(t, my)
		for _, p := range mysqlDrivers {
			t.Run(p.String(), func(t *testing.T) {
				argv := driverCommand(t, p, "mysql")
				table := "e2e_drv_tls_" + strings.ReplaceAll(p.driver, "-", "_") + "_" + randomHex(t)
				t.Cleanup(func() { myDB(t, my, my.addr(), true).Exec("drop table if exists " + table) })
				e := driverEnv{host: host, port: port, user: my.PWUser, password: my.PWPassword, db: my.Database, table: table, proc: proc, ca: ca.path}
				checkSteps(t, p, runDriver(t, nil, argv, e), wantMySQLSteps(p))
				checkMySQLLog(t, p, my, table)
			})
		}
	})
	t.Run("pg", func(t *testing.T) {
		d := ownDaemon(t, tlsArgs...)
		host, port, _ := net.SplitHostPort(d.addr)
		for _, p := range pgDrivers {
			t.Run(p.String(), func(t *testing.T) {
				argv := driverCommand(t, p, "pg")
				table := pgDriverTable(t, p)
				e := driverEnv{host: host, port: port, user: pg.ScramUser, password: pg.ScramPassword, db: pg.Database, table: table, ca: ca.path}
				checkSteps(t, p, runDriver(t, nil, argv, e), wantPGSteps(p))
				checkPGLog(t, p, table)
			})
		}
	})
}

// TestDriversInterceptMySQL: drivers connecting to MariaDB's own address
// (node mysql2) and unix socket (mysqlclient, as root, whom the socket
// authenticates) from an intercepted cgroup get the same answers.
func TestDriversInterceptMySQL(t *testing.T) {
	needKernel(t)
	my := mariadbEnv(t)
	cg := childCgroup(t)
	args := []string{"--protocol", "mysql", "--upstream", my.addr(), "--intercept", "--cgroup", cg}
	if my.Socket != "" {
		args = append(args, "--unix-socket", my.Socket)
	}
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
	waitIntercepting(t, d)
	proc := myProc(t, my)
	run := func(t *testing.T, p driverProg, e driverEnv) {
		argv := driverCommand(t, p, "mysql")
		e.table = "e2e_drv_icept_" + randomHex(t)
		t.Cleanup(func() { myDB(t, my, my.addr(), true).Exec("drop table if exists " + e.table) })
		checkSteps(t, p, runDriver(t, inCgroup(cg), argv, e), wantMySQLSteps(p))
		checkMySQLLog(t, p, my, e.table)
	}
	t.Run("tcp", func(t *testing.T) {
		run(t, findDriver(t, mysqlDrivers, "node/mysql2"), driverEnv{host: my.Host, port: my.Port, user: my.PWUser, password: my.PWPassword, db: my.Database, proc: proc})
	})
	if my.Socket != "" {
		t.Run("unix", func(t *testing.T) {
			run(t, findDriver(t, mysqlDrivers, "python/mysqldb"), driverEnv{host: "localhost", port: my.Port, user: my.User, db: my.Database, proc: proc, socket: my.Socket})
		})
	}
	if ic := stats(t, d).Interception; !ic.Active || ic.Redirected == 0 || my.Socket != "" && ic.UnixRedirected == 0 {
		t.Errorf("interception counters %+v: want active and redirected > 0 (and unix)", ic)
	}
}

// TestDriversInterceptPG: the same for PostgreSQL, node pg on TCP and
// psycopg 3 on the unix socket (its directory as the host).
func TestDriversInterceptPG(t *testing.T) {
	needKernel(t)
	cg := childCgroup(t)
	d := startIntercepting(t, cg)
	run := func(t *testing.T, p driverProg, host string) {
		argv := driverCommand(t, p, "pg")
		table := pgDriverTable(t, p)
		e := driverEnv{host: host, port: strconv.Itoa(pg.Port), user: pg.ScramUser, password: pg.ScramPassword, db: pg.Database, table: table}
		checkSteps(t, p, runDriver(t, inCgroup(cg), argv, e), wantPGSteps(p))
		checkPGLog(t, p, table)
	}
	t.Run("tcp", func(t *testing.T) { run(t, findDriver(t, pgDrivers, "node/pg"), pg.Host) })
	if pg.SockDir != "" {
		t.Run("unix", func(t *testing.T) { run(t, findDriver(t, pgDrivers, "python/psycopg"), pg.SockDir) })
	}
	if ic := stats(t, d).Interception; !ic.Active || ic.Redirected == 0 || pg.SockDir != "" && ic.UnixRedirected == 0 {
		t.Errorf("interception counters %+v: want active and redirected > 0 (and unix)", ic)
	}
}

// findDriver returns the driver of list named name (lang/driver).
func findDriver(t *testing.T, list []driverProg, name string) driverProg {
	t.Helper()
	for _, p := range list {
		if p.String() == name {
			return p
		}
	}
	t.Fatalf("no driver %s", name)
	return driverProg{}
}

// waitIntercepting waits until d has attached its programs.
func waitIntercepting(t *testing.T, d *daemon) {
	t.Helper()
	for i := 0; !strings.Contains(d.log(), `"msg":"sqlfwd started"`); i++ {
		if i > 100 {
			t.Fatalf("sqlfwd did not finish starting; its log:\n%s", d.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(d.log(), `"msg":"intercepting"`) {
		t.Fatalf("sqlfwd did not intercept; its log:\n%s", d.log())
	}
}
