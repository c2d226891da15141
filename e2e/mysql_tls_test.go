package e2e

// TLS for MySQL / MariaDB through sqlfwd (relay/mysql/tls.go), against a
// MariaDB 10.11 of the test's own with TLS on (certificates from a test CA,
// the general log on): the mariadb CLI with --ssl and
// --ssl-verify-server-cert, go-sql-driver/mysql with tls=custom, a blocked
// statement over TLS that never reaches the server, client certificates,
// tls.require, a reload rotating the certificate under a live session,
// upstream_tls verify-full with the right and a wrong server name, and the
// handshake failure metric.

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// tlsMariaDB is a MariaDB with TLS started for one test.
type tlsMariaDB struct {
	myEnv
	ca  *testCA
	dir string
}

// startTLSMariaDB starts a MariaDB with ssl_cert/ssl_key from a test CA
// (for localhost and 127.0.0.1) on a free port, with the general log on,
// root without a password over TCP, sqlfw_user (mysql_native_password) and
// ed_user (client_ed25519). It is stopped when the test ends.
func startTLSMariaDB(t *testing.T) *tlsMariaDB {
	t.Helper()
	base := mariadbEnv(t) // skips without MariaDB
	if _, err := exec.LookPath("mariadbd"); err != nil {
		t.Skip("mariadbd not installed")
	}
	dir, err := os.MkdirTemp("", "sqlfw-mytls-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ca := newTestCA(t, dir, "myca")
	cert, key := ca.issue(t, dir, "mariadb", false)
	data := filepath.Join(dir, "data")
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--user=root", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	glog := filepath.Join(dir, "general.log")
	cmd := exec.Command("mariadbd", "--no-defaults", "--user=root", "--datadir="+data, "--port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--socket="+sock, "--pid-file="+filepath.Join(dir, "pid"), "--skip-log-bin",
		"--log-error="+filepath.Join(dir, "server.log"), "--innodb-flush-log-at-trx-commit=0",
		"--ssl-cert="+cert, "--ssl-key="+key, "--ssl-ca="+ca.path, "--general-log=1", "--general-log-file="+glog)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	setup := `CREATE USER 'sqlfw_user'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('sqlfw_pass');
GRANT ALL ON *.* TO 'sqlfw_user'@'127.0.0.1';
INSTALL SONAME 'auth_ed25519';
CREATE USER 'ed_user'@'127.0.0.1' IDENTIFIED VIA ed25519 USING PASSWORD('ed_pass');
GRANT ALL ON *.* TO 'ed_user'@'127.0.0.1';
CREATE DATABASE sqlfw;`
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := runTool(t, 10*time.Second, setup, nil, "mariadb", "--no-defaults", "--protocol=socket", "--socket="+sock, "-uroot")
		if res.Exit == 0 {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Fatalf("the TLS MariaDB did not come up: %s\n%s", res, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	my := base
	my.Host, my.Port, my.Socket, my.Log, my.Database = "127.0.0.1", strconv.Itoa(port), sock, glog, "sqlfw"
	my.User, my.PWUser, my.PWPassword = "root", "sqlfw_user", "sqlfw_pass"
	return &tlsMariaDB{myEnv: my, ca: ca, dir: dir}
}

// tlsCLI runs the mariadb client against addr as user with the TLS
// options given (none: --skip-ssl).
func tlsCLI(t *testing.T, my myEnv, addr, user, password string, ssl []string, args ...string) psqlResult {
	t.Helper()
	return tlsCLIInput(t, my, addr, user, password, ssl, "", args...)
}

// tlsCLIInput is tlsCLI reading statements from stdin (where --force goes
// on after an error).
func tlsCLIInput(t *testing.T, my myEnv, addr, user, password string, ssl []string, stdin string, args ...string) psqlResult {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	a := []string{"--no-defaults", "-h", host, "-P", port, "-u", user, "-N", "-B"}
	if password != "" {
		a = append(a, "-p"+password)
	}
	if len(ssl) == 0 {
		ssl = []string{"--skip-ssl"}
	}
	a = append(append(a, ssl...), my.Database)
	return runTool(t, time.Minute, stdin, nil, "mariadb", append(a, args...)...)
}

// tlsMyDB opens go-sql-driver/mysql over TLS (tls=<name>, registered with
// mysql.RegisterTLSConfig) to addr.
func tlsMyDB(t *testing.T, my myEnv, addr string, cfg *tls.Config) *sql.DB {
	t.Helper()
	name := "sqlfw-" + randomHex(t)
	if err := gomysql.RegisterTLSConfig(name, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gomysql.DeregisterTLSConfig(name) })
	dc := gomysql.NewConfig()
	dc.User, dc.Net, dc.Addr, dc.DBName = my.User, "tcp", addr, my.Database
	dc.TLSConfig = name
	dc.Timeout = 10 * time.Second
	db, err := sql.Open("mysql", dc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func caPool(t *testing.T, ca *testCA) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// generalLogOf returns a MariaDB's general log once sentinel has reached it
// (the log is written as statements arrive).
func generalLogOf(t *testing.T, my myEnv, sentinel string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(my.Log)
		if strings.Contains(string(b), sentinel) || time.Now().After(deadline) {
			return string(b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestMySQLTLS(t *testing.T) {
	needSqlfwd(t)
	my := startTLSMariaDB(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "sqlfwca")
	cert, key := ca.issue(t, dir, "sqlfwd", false)
	verify := []string{"--ssl", "--ssl-ca=" + ca.path, "--ssl-verify-server-cert"}

	t.Run("client leg", func(t *testing.T) {
		auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
		mport, _ := freePort()
		maddr := "127.0.0.1:" + strconv.Itoa(mport)
		d := mysqlDaemon(t, my.myEnv, "--tls-cert", cert, "--tls-key", key, "--tls-require", "--audit-log", auditPath, "--metrics-listen", maddr)
		marker := randomHex(t)
		table := "tls_cli_" + marker
		res := tlsCLIInput(t, my.myEnv, d.addr, my.User, "", verify,
			fmt.Sprintf("create table %s (id int);\ninsert into %s values (1), (2);\nstatus\ndelete from %s;\nselect concat('after-', count(*)) from %s;\n", table, table, table, table), "--force")
		if !strings.Contains(res.Stdout, "Cipher in use is TLS") {
			t.Errorf("mariadb --ssl --ssl-verify-server-cert: %s, want the TLS cipher in its status", res)
		}
		if !strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stdout, "after-2") {
			t.Errorf("a WHERE-less delete over TLS: %s, want ERROR 1227 (42000) and the connection going on (after-2)", res)
		}
		t.Cleanup(func() { tlsCLI(t, my.myEnv, my.addr(), my.User, "", nil, "-e", "drop table if exists "+table) })
		log := generalLogOf(t, my.myEnv, "after-")
		if !strings.Contains(log, "insert into "+table) || strings.Contains(log, "delete from "+table) {
			t.Errorf("the general log: want the insert and not the blocked delete:\n%s", linesWith(log, table))
		}
		// the client must trust sqlfwd's certificate: another CA fails
		other := newTestCA(t, dir, "otherca")
		if res := tlsCLI(t, my.myEnv, d.addr, my.User, "", []string{"--ssl", "--ssl-ca=" + other.path, "--ssl-verify-server-cert"}, "-e", "select 1"); res.Exit == 0 {
			t.Errorf("verifying sqlfwd's certificate against another CA connected: %s", res)
		}
		// tls.require
		if res := tlsCLI(t, my.myEnv, d.addr, my.User, "", nil, "-e", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "ERROR 3159 (HY000)") || !strings.Contains(res.Stderr, "TLS connections only") {
			t.Errorf("--skip-ssl with tls.require: %s, want ERROR 3159 (HY000)", res)
		}

		// go-sql-driver/mysql with tls=custom
		db := tlsMyDB(t, my.myEnv, d.addr, &tls.Config{RootCAs: caPool(t, ca), ServerName: "localhost"})
		db.SetMaxOpenConns(1)
		var got string
		if err := db.QueryRow("select concat('driver-', ?)", "tls").Scan(&got); err != nil || got != "driver-tls" {
			t.Fatalf("go-sql-driver over TLS: %q, %v", got, err)
		}
		_, err := db.Exec("delete from " + table)
		wantMyBlocked(t, "go-sql-driver over TLS, a WHERE-less delete", err, "no-unfiltered-writes")
		var n int
		if err := db.QueryRow("select count(*) from " + table).Scan(&n); err != nil || n != 2 {
			t.Errorf("after the block: %d, %v; want 2 rows", n, err)
		}
		if res := runToolPath(t, filepath.Join(binDir, "fwctl"), "connections", "--json", "--control-socket", d.control); !strings.Contains(res.Stdout, `"client_tls": "TLS 1.3`) {
			t.Errorf("fwctl connections does not show the client leg's TLS: %s", res)
		}
		// (OpenSSL's alert for a certificate it does not trust reaches
		// crypto/tls as a bad record MAC: counted, but not as a certificate)
		if n := strings.Count(d.log(), "closing connection: TLS handshake failed"); n != 1 {
			t.Errorf("%d log lines for the handshake the client refused, want 1:\n%s", n, tail(d.log(), 10))
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, _ := os.ReadFile(auditPath)
			if strings.Contains(string(b), `"client_tls":"TLS 1.3`) {
				if strings.Contains(string(b), `"server_tls"`) {
					t.Errorf("the audit trail names TLS for the clear server leg:\n%s", b)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no session_start with client_tls in the audit trail:\n%s", b)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if strings.Contains(d.log(), "PRIVATE KEY") {
			t.Error("key material in sqlfwd's log")
		}
	})

	t.Run("client certificates", func(t *testing.T) {
		mport, _ := freePort()
		maddr := "127.0.0.1:" + strconv.Itoa(mport)
		auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
		d := mysqlDaemon(t, my.myEnv, "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", ca.path, "--metrics-listen", maddr, "--audit-log", auditPath)
		ccert, ckey := ca.issue(t, dir, "app-client", true)
		rogue := newTestCA(t, dir, "rogue")
		rcert, rkey := rogue.issue(t, dir, "mallory", true)
		if res := tlsCLI(t, my.myEnv, d.addr, my.User, "", verify, "-e", "select 1"); res.Exit == 0 {
			t.Errorf("no client certificate: %s, want refused", res)
		}
		if res := tlsCLI(t, my.myEnv, d.addr, my.User, "", append(verify, "--ssl-cert="+rcert, "--ssl-key="+rkey), "-e", "select 1"); res.Exit == 0 {
			t.Errorf("a client certificate from another CA: %s, want refused", res)
		}
		if res := tlsCLI(t, my.myEnv, d.addr, my.User, "", append(verify, "--ssl-cert="+ccert, "--ssl-key="+ckey), "-e", "select 'with cert'"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "with cert" {
			t.Errorf("a client certificate from the CA: %s", res)
		}
		if got := metricValue(t, maddr, `sqlfw_tls_handshake_failures_total{database="default",leg="client",reason="certificate"}`); got != 2 {
			t.Errorf("client-leg failures for a certificate: %v, want 2", got)
		}
		if n := strings.Count(d.log(), "closing connection: TLS handshake failed"); n != 2 {
			t.Errorf("%d log lines for the 2 refused handshakes:\n%s", n, tail(d.log(), 10))
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, _ := os.ReadFile(auditPath)
			if strings.Contains(string(b), `"client_cert":"CN=app-client"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the audit trail's session_start does not name the client certificate:\n%s", b)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("rotation", func(t *testing.T) {
		live, liveKey := filepath.Join(dir, "live.crt"), filepath.Join(dir, "live.key")
		copyFile(t, cert, live)
		copyFile(t, key, liveKey)
		d := mysqlDaemon(t, my.myEnv, "--tls-cert", live, "--tls-key", liveKey, "--tls-require")
		db := tlsMyDB(t, my.myEnv, d.addr, &tls.Config{RootCAs: caPool(t, ca), ServerName: "localhost"})
		db.SetMaxOpenConns(1)
		db.SetConnMaxLifetime(0)
		conn, err := db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var one int
		if err := conn.QueryRowContext(t.Context(), "select 1").Scan(&one); err != nil {
			t.Fatal(err)
		}
		ca2 := newTestCA(t, dir, "sqlfwca2")
		cert2, key2 := ca2.issue(t, dir, "sqlfwd2", false)
		copyFile(t, cert2, live)
		copyFile(t, key2, liveKey)
		if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			res := tlsCLI(t, my.myEnv, d.addr, my.User, "", []string{"--ssl", "--ssl-ca=" + ca2.path, "--ssl-verify-server-cert"}, "-e", "select 'rotated'")
			if res.Exit == 0 && strings.TrimSpace(res.Stdout) == "rotated" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the reload the new certificate is not served: %s", res)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if res := tlsCLI(t, my.myEnv, d.addr, my.User, "", verify, "-e", "select 1"); res.Exit == 0 {
			t.Errorf("the old certificate is still served after the reload: %s", res)
		}
		if err := conn.QueryRowContext(t.Context(), "select 2").Scan(&one); err != nil || one != 2 {
			t.Errorf("the TLS session opened before the rotation: %v, want it to go on", err)
		}
		// and again with fwctl reload
		ca3 := newTestCA(t, dir, "sqlfwca3")
		cert3, key3 := ca3.issue(t, dir, "sqlfwd3", false)
		copyFile(t, cert3, live)
		copyFile(t, key3, liveKey)
		if res := runToolPath(t, filepath.Join(binDir, "fwctl"), "reload", "--control-socket", d.control); res.Exit != 0 {
			t.Fatalf("fwctl reload: %s", res)
		}
		if res := tlsCLI(t, my.myEnv, d.addr, my.User, "", []string{"--ssl", "--ssl-ca=" + ca3.path, "--ssl-verify-server-cert"}, "-e", "select 'reloaded'"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "reloaded" {
			t.Errorf("after fwctl reload the new certificate is not served: %s", res)
		}
		if err := conn.QueryRowContext(t.Context(), "select 3").Scan(&one); err != nil || one != 3 {
			t.Errorf("the TLS session opened before both rotations: %v, want it to go on", err)
		}
	})

	t.Run("upstream verify-full", func(t *testing.T) {
		mport, _ := freePort()
		maddr := "127.0.0.1:" + strconv.Itoa(mport)
		d := mysqlDaemon(t, my.myEnv, "--upstream-tls", "verify-full", "--upstream-ca", my.ca.path, "--upstream-server-name", "localhost")
		res := tlsCLI(t, my.myEnv, d.addr, my.User, "", nil, "-e", "show session status like 'Ssl_version'")
		if res.Exit != 0 || !strings.Contains(res.Stdout, "TLSv1.3") {
			t.Errorf("the server's view of sqlfwd's leg with upstream_tls verify-full: %s, want Ssl_version TLSv1.3", res)
		}
		marker := randomHex(t)
		table := "tls_up_" + marker
		tlsCLI(t, my.myEnv, my.addr(), my.User, "", nil, "-e", "create table "+table+" (id int)")
		t.Cleanup(func() { tlsCLI(t, my.myEnv, my.addr(), my.User, "", nil, "-e", "drop table if exists "+table) })
		res = tlsCLIInput(t, my.myEnv, d.addr, my.User, "", nil, "delete from "+table+";\nselect 'up-"+marker+"';\n", "--force")
		if !strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stdout, "up-"+marker) {
			t.Errorf("a blocked statement with the server leg on TLS: %s, want ERROR 1227 (42000) and the connection going on", res)
		}
		if log := generalLogOf(t, my.myEnv, "up-"+marker); strings.Contains(log, "delete from "+table) {
			t.Errorf("the blocked statement reached the server:\n%s", linesWith(log, table))
		}
		// the authentication plugins over the server leg's TLS
		if res := tlsCLI(t, my.myEnv, d.addr, my.PWUser, my.PWPassword, nil, "-e", "select current_user()"); res.Exit != 0 || !strings.Contains(res.Stdout, "sqlfw_user@") {
			t.Errorf("mysql_native_password with upstream TLS: %s", res)
		}
		if res := tlsCLI(t, my.myEnv, d.addr, "ed_user", "ed_pass", nil, "-e", "select current_user()"); res.Exit != 0 || !strings.Contains(res.Stdout, "ed_user@") {
			t.Errorf("client_ed25519 with upstream TLS: %s", res)
		}
		if res := tlsCLI(t, my.myEnv, d.addr, "ed_user", "wrong", nil, "-e", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "1045") {
			t.Errorf("client_ed25519 with a wrong password: %s, want the server's 1045", res)
		}
		if strings.Contains(d.log(), "ed_pass") || strings.Contains(d.log(), my.PWPassword) {
			t.Error("a password is in sqlfwd's log")
		}

		// a wrong server name
		d2 := mysqlDaemon(t, my.myEnv, "--upstream-tls", "verify-full", "--upstream-ca", my.ca.path, "--upstream-server-name", "db.wrong.example", "--metrics-listen", maddr)
		if res := tlsCLI(t, my.myEnv, d2.addr, my.User, "", nil, "-e", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "over TLS (upstream_tls)") {
			t.Errorf("upstream_tls verify-full for another name: %s, want sqlfw's error", res)
		}
		if got := metricValue(t, maddr, `sqlfw_tls_handshake_failures_total{database="default",leg="server",reason="certificate"}`); got != 1 {
			t.Errorf("server-leg failures for a certificate: %v, want 1", got)
		}
		if !strings.Contains(d2.log(), "cannot reach the database server over TLS") || !strings.Contains(d2.log(), "db.wrong.example") {
			t.Errorf("the log does not say why the server leg failed:\n%s", tail(d2.log(), 5))
		}
		// verify-ca checks the chain, not the name; require neither; a
		// CA that did not sign the server's certificate fails verify-ca
		for _, m := range []struct {
			args []string
			ok   bool
		}{
			{[]string{"--upstream-tls", "verify-ca", "--upstream-ca", my.ca.path, "--upstream-server-name", "db.wrong.example"}, true},
			{[]string{"--upstream-tls", "require"}, true},
			{[]string{"--upstream-tls", "verify-ca", "--upstream-ca", ca.path}, false},
		} {
			dm := mysqlDaemon(t, my.myEnv, m.args...)
			res := tlsCLI(t, my.myEnv, dm.addr, my.User, "", nil, "-e", "show session status like 'Ssl_version'")
			if m.ok && (res.Exit != 0 || !strings.Contains(res.Stdout, "TLSv1.3")) {
				t.Errorf("%v: %s, want the server leg on TLS", m.args, res)
			}
			if !m.ok && (res.Exit == 0 || !strings.Contains(res.Stderr, "over TLS (upstream_tls)")) {
				t.Errorf("%v: %s, want sqlfw's error", m.args, res)
			}
		}
	})

	t.Run("both legs", func(t *testing.T) {
		auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
		d := mysqlDaemon(t, my.myEnv, "--tls-cert", cert, "--tls-key", key, "--upstream-tls", "verify-full", "--upstream-ca", my.ca.path,
			"--upstream-server-name", "localhost", "--audit-log", auditPath)
		for _, u := range []struct{ user, password string }{{my.User, ""}, {my.PWUser, my.PWPassword}, {"ed_user", "ed_pass"}} {
			res := tlsCLI(t, my.myEnv, d.addr, u.user, u.password, verify, "-e", "show session status like 'Ssl_version';\nstatus")
			if res.Exit != 0 || !strings.Contains(res.Stdout, "TLSv1.3") || !strings.Contains(res.Stdout, "Cipher in use is TLS") {
				t.Errorf("%s with TLS on both legs: %s, want both legs on TLS", u.user, res)
			}
		}
		db := tlsMyDB(t, my.myEnv, d.addr, &tls.Config{RootCAs: caPool(t, ca), ServerName: "localhost"})
		_, err := db.Exec("delete from tls_both_absent")
		wantMyBlocked(t, "go-sql-driver with TLS on both legs, a WHERE-less delete", err, "no-unfiltered-writes")
		var me *gomysql.MySQLError
		if errors.As(err, &me) && string(me.SQLState[:]) != "42000" {
			t.Errorf("SQLSTATE %s, want 42000", me.SQLState)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, _ := os.ReadFile(auditPath)
			if strings.Contains(string(b), `"client_tls":"TLS 1.3`) && strings.Contains(string(b), `"server_tls":"TLS 1.3`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no session_start with client_tls and server_tls in the audit trail:\n%s", b)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("upstream without TLS", func(t *testing.T) {
		plain := mariadbEnv(t) // scripts/test.sh's MariaDB has no certificate
		mport, _ := freePort()
		maddr := "127.0.0.1:" + strconv.Itoa(mport)
		d := mysqlDaemon(t, plain, "--upstream-tls", "require", "--metrics-listen", maddr)
		if res := tlsCLI(t, plain, d.addr, plain.User, "", nil, "-e", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "over TLS (upstream_tls)") {
			t.Errorf("upstream_tls require, a server without TLS: %s, want sqlfw's error", res)
		}
		if got := metricValue(t, maddr, `sqlfw_tls_handshake_failures_total{database="default",leg="server",reason="refused"}`); got != 1 {
			t.Errorf("server-leg failures, the server offers no TLS: %v, want 1", got)
		}
		d2 := mysqlDaemon(t, plain, "--upstream-tls", "prefer")
		if res := tlsCLI(t, plain, d2.addr, plain.User, "", nil, "-e", "select 'plain'"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "plain" {
			t.Errorf("upstream_tls prefer, a server without TLS: %s, want plaintext", res)
		}
	})
}

// TestMySQLProbeTakesNoSlot: with max_connections 1, a health probe that
// connects and holds the greeting does not keep a client out; a second
// client while one is logged in gets ERROR 1040 (08004).
func TestMySQLProbeTakesNoSlot(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my, "--max-connections", "1")
	probe, err := net.DialTimeout("tcp", d.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	probe.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := probe.Read(make([]byte, 256)); err != nil {
		t.Fatalf("the probe got no greeting: %v", err)
	}
	if res := tlsCLI(t, my, d.addr, my.User, "", nil, "-e", "select 'in'"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "in" {
		t.Errorf("a client while a probe holds the greeting: %s, want it served", res)
	}
	db := myDB(t, my, d.addr, true)
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.PingContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := tlsCLI(t, my, d.addr, my.User, "", nil, "-e", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "ERROR 1040 (08004)") {
		t.Errorf("a second client with max_connections 1: %s, want ERROR 1040 (08004)", res)
	}
}

// TestInterceptMySQLTLS: a client in an intercepted cgroup that keeps
// connecting to MariaDB's own address with --ssl-verify-server-cert gets
// sqlfwd's certificate (issued for the database's name) and is judged.
func TestInterceptMySQLTLS(t *testing.T) {
	needKernel(t)
	my := mariadbEnv(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca")
	cert, key := ca.issue(t, dir, "server", false) // for localhost and 127.0.0.1
	cg := childCgroup(t)
	d, err := startDaemonWrapped(inCgroup(cg), "--protocol", "mysql", "--upstream", my.addr(), "--intercept", "--cgroup", cg,
		"--tls-cert", cert, "--tls-key", key)
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
	table := "e2e_icept_tls_" + randomHex(t)
	tlsCLI(t, my, my.addr(), my.User, "", nil, "-e", "create table "+table+" (id int); insert into "+table+" values (1), (2)")
	t.Cleanup(func() { tlsCLI(t, my, my.addr(), my.User, "", nil, "-e", "drop table if exists "+table) })
	a := append(inCgroup(cg)[1:], tool(t, "mariadb"), "--no-defaults", "-u", my.User, "-N", "-B", "-h", my.Host, "-P", my.Port,
		"--protocol=tcp", "--ssl", "--ssl-ca="+ca.path, "--ssl-verify-server-cert", "--force", my.Database)
	res := runCmd(t, time.Minute, "status\ndelete from "+table+";\nselect count(*) from "+table+";\n", nil, "sh", a...)
	if !strings.Contains(res.Stdout, "Cipher in use is TLS") || !strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stdout, "\n2\n") {
		t.Errorf("mariadb --ssl-verify-server-cert to the database's own address, intercepted: %s; want TLS, the delete blocked and 2 rows", res)
	}
	if !strings.Contains(d.log(), `"via":"redirect"`) || !strings.Contains(d.log(), `"client_tls":"TLS 1.3`) {
		t.Errorf("the session was not intercepted over TLS:\n%s", tail(d.log(), 10))
	}
}

// TestMySQLTLSBadInput: plaintext after an SSL request is answered with
// ERROR 1043 in clear, a TLS ClientHello where the handshake response
// belongs is closed; each is one log line and a protocol failure in the
// metric, and the daemon serves the next TLS client.
func TestMySQLTLSBadInput(t *testing.T) {
	my := mariadbEnv(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca")
	cert, key := ca.issue(t, dir, "server", false)
	mport, _ := freePort()
	maddr := "127.0.0.1:" + strconv.Itoa(mport)
	d := mysqlDaemon(t, my, "--tls-cert", cert, "--tls-key", key, "--metrics-listen", maddr)
	greeted := func() net.Conn {
		c, err := net.DialTimeout("tcp", d.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		var h [4]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// an SSL request (CLIENT_PROTOCOL_41 | CLIENT_SSL | CLIENT_SECURE_CONNECTION), then a
	// handshake response in clear where the ClientHello belongs
	ssl := append([]byte{32, 0, 0, 1, 0x00, 0x8a, 0x00, 0x00, 0, 0, 0, 1, 45}, make([]byte, 23)...)
	c := greeted()
	c.Write(ssl)
	c.Write(append([]byte{40, 0, 0, 2, 0x00, 0x82, 0x00, 0x00, 0, 0, 0, 1, 45}, make([]byte, 23+14)...)) // 40-byte payload
	b, _ := io.ReadAll(c)
	if !strings.Contains(string(b), "#08S01") || !strings.Contains(string(b), "expected a TLS handshake") || len(b) < 5 || b[3] != 2 {
		t.Errorf("plaintext after the SSL request: got %q, want ERR 1043 (08S01) with sequence id 2", b)
	}
	// a ClientHello straight after the greeting
	c = greeted()
	tc := tls.Client(c, &tls.Config{RootCAs: caPool(t, ca), ServerName: "localhost"})
	if err := tc.Handshake(); err == nil {
		t.Error("a TLS handshake where the handshake response belongs succeeded")
	}
	if got := metricValue(t, maddr, `sqlfw_tls_handshake_failures_total{database="default",leg="client",reason="protocol"}`); got != 2 {
		t.Errorf("client-leg protocol failures: %v, want 2", got)
	}
	log := d.log()
	if n := strings.Count(log, "closing connection: TLS handshake failed"); n != 1 {
		t.Errorf("%d log lines for the plaintext after the SSL request, want 1:\n%s", n, tail(log, 10))
	}
	if n := strings.Count(log, "a TLS handshake where the handshake response belongs"); n != 1 {
		t.Errorf("%d log lines for the ClientHello, want 1:\n%s", n, tail(log, 10))
	}
	if res := tlsCLI(t, my, d.addr, my.User, "", []string{"--ssl", "--ssl-ca=" + ca.path, "--ssl-verify-server-cert"}, "-e", "select 'still here'"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "still here" {
		t.Errorf("a TLS client after the bad input: %s", res)
	}
}
