package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lib/pq"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	path string // PEM of the CA certificate
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	path := filepath.Join(dir, name+".pem")
	os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	return &testCA{cert: cert, key: key, path: path}
}

// issue writes a leaf certificate and key signed by ca; client leaves are
// for client authentication (CommonName = the database user).
func (ca *testCA) issue(t *testing.T, dir, name string, client bool) (certPath, keyPath string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.DNSNames, tmpl.IPAddresses = []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certPath, keyPath = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certPath, keyPath
}

func tlsDSN(port int, extra string) string {
	return fmt.Sprintf("host=localhost port=%d user=%s dbname=%s connect_timeout=5 %s", port, pg.User, pg.Database, extra)
}

// TestTLSClientLeg: sqlfwd terminates the client's TLS (SSLRequest 'S'),
// judges the statements and relays them; psql with sslmode=require and
// verify-full, pgx, pgbench over TLS; a blocked statement gets 42501 over
// TLS; tls.require refuses plaintext; a reload rotates the certificate
// under a live session.
func TestTLSClientLeg(t *testing.T) {
	needSqlfwd(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca1")
	cert, key := ca.issue(t, dir, "server", false)
	// the files sqlfwd reads; rotated below
	live, liveKey := filepath.Join(dir, "live.crt"), filepath.Join(dir, "live.key")
	copyFile(t, cert, live)
	copyFile(t, key, liveKey)
	d := ownDaemon(t, "--tls-cert", live, "--tls-key", liveKey, "--tls-require")
	port := portOf(t, d.addr)

	for _, mode := range []string{"sslmode=require", "sslmode=verify-full sslrootcert=" + ca.path} {
		res := psqlDSN(t, tlsDSN(port, mode), "-Atc", "select 'over tls'")
		if res.Exit != 0 || strings.TrimSpace(res.Stdout) != "over tls" {
			t.Errorf("psql %s: %s", mode, res)
		}
		res = psqlDSN(t, tlsDSN(port, mode), "-v", "VERBOSITY=verbose", "-c", "delete from tls_t")
		if !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("psql %s, a denied statement: %s, want %s", mode, res, codeBlocked)
		}
	}
	// psql's own view of the connection
	if res := psqlDSN(t, tlsDSN(port, "sslmode=require"), "-c", `\conninfo`); !strings.Contains(res.Stdout, "SSL connection (protocol: TLSv1.3") {
		t.Errorf("psql \\conninfo over sqlfwd: %s, want an SSL connection with TLS 1.3", res)
	}
	// a wrong CA is refused by the client
	other := newTestCA(t, dir, "other")
	if res := psqlDSN(t, tlsDSN(port, "sslmode=verify-full sslrootcert="+other.path), "-c", "select 1"); res.Exit == 0 {
		t.Errorf("verify-full against another CA connected: %s", res)
	}
	// tls.require: plaintext is refused with a clear error
	if res := psqlDSN(t, tlsDSN(port, "sslmode=disable"), "-c", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "accepts TLS connections only") {
		t.Errorf("sslmode=disable with tls.require: %s, want the refusal", res)
	}

	// pgx
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, ctx, tlsDSN(port, "sslmode=verify-full sslrootcert="+ca.path))
	if !c.PgConn().Conn().(interface{ ConnectionState() tls.ConnectionState }).ConnectionState().HandshakeComplete {
		t.Error("pgx: no TLS handshake")
	}
	_, err := c.Exec(ctx, "delete from tls_t")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeBlocked {
		t.Errorf("pgx over TLS, a denied statement: %v, want %s", err, codeBlocked)
	}
	var one int
	if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("pgx over TLS after the block: %v", err)
	}
	if res := runToolPath(t, filepath.Join(binDir, "fwctl"), "connections", "--json", "--control-socket", d.control); !strings.Contains(res.Stdout, `"client_tls": "TLS 1.3`) {
		t.Errorf("fwctl connections does not show the client leg's TLS: %s", res)
	}

	// pgbench -S over TLS
	directExec(t, "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
	t.Cleanup(func() {
		directExec(t, "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
	})
	conn := []string{"-h", pg.Host, "-p", strconv.Itoa(pg.Port), "-U", pg.User}
	if res := runTool(t, 2*time.Minute, "", nil, "pgbench", append(append([]string{"-i", "-s", "1", "-q"}, conn...), pg.Database)...); res.Exit != 0 {
		t.Fatalf("pgbench -i: %s", res)
	}
	bench := runTool(t, time.Minute, "", []string{"PGSSLMODE=require"}, "pgbench", "-S", "-n", "-c", "2", "-T", "3", "-h", "localhost", "-p", strconv.Itoa(port), "-U", pg.User, pg.Database)
	if bench.Exit != 0 || !strings.Contains(bench.Stdout, "number of failed transactions: 0") {
		t.Errorf("pgbench -S over TLS: %s", bench)
	}

	// rotate: a new certificate from another CA, then a reload
	ca2 := newTestCA(t, dir, "ca2")
	cert2, key2 := ca2.issue(t, dir, "server2", false)
	copyFile(t, cert2, live)
	copyFile(t, key2, liveKey)
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := psqlDSN(t, tlsDSN(port, "sslmode=verify-full sslrootcert="+ca2.path), "-Atc", "select 'rotated'")
		if res.Exit == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the reload the new certificate is not served: %s", res)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := c.QueryRow(ctx, "select 2").Scan(&one); err != nil || one != 2 {
		t.Errorf("the session opened before the rotation: %v, want it to go on", err)
	}
	if strings.Contains(d.log(), "PRIVATE KEY") {
		t.Error("the daemon log carries key material")
	}
}

// TestTLSClientCertificates: with tls.client_ca a client needs a
// certificate from that CA.
func TestTLSClientCertificates(t *testing.T) {
	needSqlfwd(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca")
	cert, key := ca.issue(t, dir, "server", false)
	clientCert, clientKey := ca.issue(t, dir, pg.User, true)
	mport, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	maddr := "127.0.0.1:" + strconv.Itoa(mport)
	d := ownDaemon(t, "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", ca.path, "--metrics-listen", maddr)
	port := portOf(t, d.addr)
	if res := psqlDSN(t, tlsDSN(port, "sslmode=require"), "-c", "select 1"); res.Exit == 0 {
		t.Errorf("no client certificate: %s, want refused", res)
	}
	rogue := newTestCA(t, dir, "rogue")
	rc, rk := rogue.issue(t, dir, "mallory", true)
	if res := psqlDSN(t, tlsDSN(port, "sslmode=require sslcert="+rc+" sslkey="+rk), "-c", "select 1"); res.Exit == 0 {
		t.Errorf("a certificate from another CA: %s, want refused", res)
	}
	if res := psqlDSN(t, tlsDSN(port, "sslmode=require sslcert="+clientCert+" sslkey="+clientKey), "-Atc", "select 'with cert'"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "with cert" {
		t.Errorf("a certificate from the CA: %s", res)
	}
	if !strings.Contains(d.log(), "TLS handshake failed") {
		t.Errorf("no log line for the refused handshakes:\n%s", tail(d.log(), 10))
	}
	// both refusals counted by cause
	if got := metricValue(t, maddr, `sqlfw_tls_handshake_failures_total{database="default",leg="client",reason="certificate"}`); got != 2 {
		t.Errorf("client-leg failures for a certificate: got %v, want 2", got)
	}
}

// metricValue scrapes one series from sqlfwd's /metrics (-1 when absent).
func metricValue(t *testing.T, addr, series string) float64 {
	t.Helper()
	var body string
	for range 50 {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// TestTLSUpstreamRefused: upstream_tls require against a server without
// TLS gets the client a clear 08006; prefer goes on in plaintext.
func TestTLSUpstreamRefused(t *testing.T) {
	needSqlfwd(t)
	mport, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	maddr := "127.0.0.1:" + strconv.Itoa(mport)
	d := ownDaemon(t, "--upstream-tls", "require", "--metrics-listen", maddr)
	res := psqlDSN(t, dsn("127.0.0.1", portOf(t, d.addr), pg.User, ""), "-c", "select 1")
	if res.Exit == 0 || !strings.Contains(res.Stderr, "over TLS") {
		t.Errorf("upstream_tls require, server without TLS: %s, want the 08006 error", res)
	}
	if got := metricValue(t, maddr, `sqlfw_tls_handshake_failures_total{database="default",leg="server",reason="refused"}`); got != 1 {
		t.Errorf("server-leg failures, the server declined TLS: got %v, want 1", got)
	}
	d2 := ownDaemon(t, "--upstream-tls", "prefer")
	if res := psqlDSN(t, dsn("127.0.0.1", portOf(t, d2.addr), pg.User, ""), "-Atc", "select 'plain'"); res.Exit != 0 {
		t.Errorf("upstream_tls prefer, server without TLS: %s, want plaintext", res)
	}
}

// psqlDSN runs psql with a whole connection string.
func psqlDSN(t *testing.T, conninfo string, args ...string) psqlResult {
	t.Helper()
	return runTool(t, 60*time.Second, "", nil, "psql", append([]string{"-X", "-d", conninfo}, args...)...)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTLSDirectAndChannelBinding: a client that opens with TLS (PostgreSQL
// 17's sslnegotiation=direct, ALPN postgresql) is served; without the ALPN
// it is refused. A client that requires SCRAM channel binding through the
// terminating sqlfwd fails with libpq's own clear error (the binding cannot
// reach the server), and without that requirement SCRAM works over TLS.
func TestTLSDirectAndChannelBinding(t *testing.T) {
	needSqlfwd(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca")
	cert, key := ca.issue(t, dir, "server", false)
	d := ownDaemon(t, "--tls-cert", cert, "--tls-key", key)
	port := portOf(t, d.addr)

	startup := func(alpn []string) (byte, error) {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", d.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: alpn})
		if err != nil {
			return 0, err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		msg := []byte{0, 0, 0, 0, 0, 3, 0, 0}
		msg = append(msg, "user\x00"+pg.User+"\x00database\x00"+pg.Database+"\x00\x00"...)
		msg[3] = byte(len(msg))
		if _, err := c.Write(msg); err != nil {
			return 0, err
		}
		var b [1]byte
		_, err = c.Read(b[:])
		return b[0], err
	}
	if typ, err := startup([]string{"postgresql"}); err != nil || typ != 'R' {
		t.Errorf("direct TLS with ALPN postgresql: first message %q, %v; want an authentication message", typ, err)
	}
	if typ, err := startup(nil); err == nil && typ == 'R' {
		t.Error("direct TLS without ALPN was served")
	}

	scram := fmt.Sprintf("host=localhost port=%d user=%s password=%s dbname=%s connect_timeout=5 sslmode=require", port, pg.ScramUser, pg.ScramPassword, pg.Database)
	if res := psqlDSN(t, scram+" channel_binding=require", "-c", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "channel binding") {
		t.Errorf("channel_binding=require through sqlfwd: %s, want libpq's channel-binding error", res)
	}
	if res := psqlDSN(t, scram, "-Atc", "select current_user"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != pg.ScramUser {
		t.Errorf("SCRAM over TLS (channel_binding=prefer): %s", res)
	}
}

// TestTLSUpstreamVerified turns TLS on in the test PostgreSQL (certificate
// from a test CA, reloaded), then: sqlfwd with upstream_tls verify-full
// reaches it over TLS (pg_stat_ssl says so) and judges as ever; against
// another CA the client gets 08006.
// serverTLS turns TLS on in the test PostgreSQL (a certificate for
// localhost from a test CA, reloaded) until the test ends, and returns the
// CA and a directory for more files.
func serverTLS(t *testing.T) (*testCA, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sqlfw-pgtls-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	ca := newTestCA(t, dir, "pgca")
	cert, key := ca.issue(t, dir, "pgserver", false)
	if u, err := userLookup("postgres"); err == nil {
		os.Chown(cert, u, -1)
		os.Chown(key, u, -1)
	}
	directExec(t, fmt.Sprintf("ALTER SYSTEM SET ssl_cert_file = '%s'", cert))
	directExec(t, fmt.Sprintf("ALTER SYSTEM SET ssl_key_file = '%s'", key))
	directExec(t, "ALTER SYSTEM SET ssl = on")
	directExec(t, "SELECT pg_reload_conf()")
	t.Cleanup(func() {
		directExec(t, "ALTER SYSTEM RESET ssl")
		directExec(t, "ALTER SYSTEM RESET ssl_cert_file")
		directExec(t, "ALTER SYSTEM RESET ssl_key_file")
		directExec(t, "SELECT pg_reload_conf()")
	})
	return ca, dir
}

func TestTLSUpstreamVerified(t *testing.T) {
	needSqlfwd(t)
	ca, dir := serverTLS(t)
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	d := ownDaemon(t, "--upstream-tls", "verify-full", "--upstream-ca", ca.path, "--upstream-server-name", "localhost", "--audit-log", auditPath)
	url := dsn("127.0.0.1", portOf(t, d.addr), pg.User, "")
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := psqlDSN(t, url, "-Atc", "select ssl from pg_stat_ssl where pid = pg_backend_pid()")
		if res.Exit == 0 && strings.TrimSpace(res.Stdout) == "t" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("through sqlfwd with upstream_tls verify-full: %s, want the server leg on TLS", res)
		}
		time.Sleep(200 * time.Millisecond) // the server's reload is asynchronous
	}
	if res := psqlDSN(t, url, "-v", "VERBOSITY=verbose", "-c", "delete from tls_up_t"); !strings.Contains(res.Stderr, codeBlocked) {
		t.Errorf("a denied statement with TLS upstream: %s, want %s", res, codeBlocked)
	}
	// the audit trail's session_start says the server leg's TLS
	deadline = time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(auditPath)
		if strings.Contains(string(b), `"event":"session_start"`) && strings.Contains(string(b), `"server_tls":"TLS 1.3`) {
			if strings.Contains(string(b), `"client_tls"`) {
				t.Errorf("the audit trail names TLS for a plaintext client leg:\n%s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit trail has no session_start with server_tls:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	other := newTestCA(t, dir, "other")
	d2 := ownDaemon(t, "--upstream-tls", "verify-full", "--upstream-ca", other.path, "--upstream-server-name", "localhost")
	if res := psqlDSN(t, dsn("127.0.0.1", portOf(t, d2.addr), pg.User, ""), "-c", "select 1"); res.Exit == 0 || !strings.Contains(res.Stderr, "over TLS") {
		t.Errorf("upstream_tls verify-full against another CA: %s, want 08006", res)
	}
	if !strings.Contains(d2.log(), "certificate") {
		t.Errorf("the log does not say why the server leg failed:\n%s", tail(d2.log(), 5))
	}
}

func userLookup(name string) (int, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(u.Uid)
}

// TestTLSThroughInterception: a client that keeps connecting to the
// database's own address with sslmode=verify-full, intercepted, gets
// sqlfwd's certificate for the database's name and is judged.
func TestTLSThroughInterception(t *testing.T) {
	needKernel(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca")
	cert, key := ca.issue(t, dir, "server", false) // for localhost and 127.0.0.1
	cg := childCgroup(t)
	d := startIntercepting(t, cg, "--tls-cert", cert, "--tls-key", key)
	freshTable(t, "tls_icept_t", 1, 2)
	conninfo := fmt.Sprintf("host=localhost hostaddr=127.0.0.1 port=%d user=%s dbname=%s sslmode=verify-full sslrootcert=%s connect_timeout=5", pg.Port, pg.User, pg.Database, ca.path)
	args := append(inCgroup(cg)[1:], tool(t, "psql"), "-X", "-d", conninfo, "-v", "VERBOSITY=verbose", "-c", `\conninfo`, "-c", "delete from tls_icept_t")
	res := runCmd(t, time.Minute, "", nil, "sh", args...)
	if !strings.Contains(res.Stdout, "SSL connection") || !strings.Contains(res.Stderr, codeBlocked) {
		t.Errorf("psql verify-full to the database's own address, intercepted: %s; want TLS and the statement blocked", res)
	}
	if got := directInts(t, "select count(*) from tls_icept_t"); got[0] != 2 {
		t.Errorf("rows: %v, want 2", got)
	}
	if !strings.Contains(d.log(), `"via":"redirect"`) {
		t.Errorf("the session was not intercepted:\n%s", tail(d.log(), 10))
	}
}

// TestTLSLibPQ: lib/pq with sslmode=verify-full through sqlfwd: a denied
// statement gets 42501, an allowed one its answer, with and without
// parameters (simple and extended protocol).
func TestTLSLibPQ(t *testing.T) {
	needSqlfwd(t)
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca")
	cert, key := ca.issue(t, dir, "server", false)
	d := ownDaemon(t, "--tls-cert", cert, "--tls-key", key, "--tls-require")
	db, err := sql.Open("postgres", tlsDSN(portOf(t, d.addr), "sslmode=verify-full sslrootcert="+ca.path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRow("select $1::text", "tls with lib/pq").Scan(&got); err != nil || got != "tls with lib/pq" {
		t.Fatalf("lib/pq over TLS: %q, %v", got, err)
	}
	_, err = db.Exec("delete from tls_pq_t")
	var pe *pq.Error
	if !errors.As(err, &pe) || string(pe.Code) != codeBlocked {
		t.Errorf("lib/pq over TLS, a denied statement: %v, want %s", err, codeBlocked)
	}
}

// TestTLSBothLegsSCRAM: with TLS on both legs the server offers SCRAM
// channel binding (SCRAM-SHA-256-PLUS), which cannot cross a terminating
// sqlfwd: the client would bind to sqlfwd's certificate, the server checks
// its own. sqlfwd does not offer PLUS to its client, and answers a client
// that supports binding (libpq's default channel_binding=prefer sends the
// gs2 flag "y", which the server refuses as a downgrade) with its own clear
// error instead of the server's. channel_binding=disable works, and so does
// a password-less (trust) user with the default.
func TestTLSBothLegsSCRAM(t *testing.T) {
	needSqlfwd(t)
	ca, dir := serverTLS(t)
	cert, key := ca.issue(t, dir, "sqlfwd", false)
	d := ownDaemon(t, "--tls-cert", cert, "--tls-key", key, "--upstream-tls", "require")
	port := portOf(t, d.addr)
	scram := fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=%s connect_timeout=5 sslmode=require", port, pg.ScramUser, pg.ScramPassword, pg.Database)

	// the server's reload is asynchronous: wait until the server leg is TLS
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := psqlDSN(t, scram+" channel_binding=disable", "-Atc", "select ssl from pg_stat_ssl where pid = pg_backend_pid()")
		if res.Exit == 0 && strings.TrimSpace(res.Stdout) == "t" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SCRAM with channel_binding=disable, TLS on both legs: %s, want the server leg on TLS", res)
		}
		time.Sleep(200 * time.Millisecond)
	}
	res := psqlDSN(t, scram, "-c", "select 1")
	if res.Exit == 0 || !strings.Contains(res.Stderr, "sqlfw") || !strings.Contains(res.Stderr, "channel binding") || !strings.Contains(res.Stderr, "channel_binding=disable") {
		t.Errorf("SCRAM with the default channel_binding=prefer, TLS on both legs: %s\nwant sqlfw's error naming channel binding and channel_binding=disable", res)
	}
	res = psqlDSN(t, scram+" channel_binding=require", "-c", "select 1")
	if res.Exit == 0 || !strings.Contains(res.Stderr, "channel binding") {
		t.Errorf("channel_binding=require, TLS on both legs: %s, want libpq's error that no channel binding is offered", res)
	}
	trust := fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s connect_timeout=5 sslmode=require", port, pg.User, pg.Database)
	if res := psqlDSN(t, trust, "-Atc", "select 1"); res.Exit != 0 {
		t.Errorf("trust user, TLS on both legs: %s", res)
	}
	if strings.Contains(d.log(), pg.ScramPassword) {
		t.Errorf("the password is in sqlfwd's log")
	}
	if !strings.Contains(d.log(), "channel binding") {
		t.Errorf("sqlfwd's log does not say why it refused:\n%s", tail(d.log(), 5))
	}

	// With the server's own certificate and key, sqlfwd's TLS session
	// binds to the same certificate: PLUS stays on offer and works.
	own := ownDaemon(t, "--tls-cert", filepath.Join(dir, "pgserver.crt"), "--tls-key", filepath.Join(dir, "pgserver.key"), "--upstream-tls", "require")
	bound := fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=%s connect_timeout=5 sslmode=require channel_binding=require", portOf(t, own.addr), pg.ScramUser, pg.ScramPassword, pg.Database)
	if res := psqlDSN(t, bound, "-Atc", "select current_user"); res.Exit != 0 || strings.TrimSpace(res.Stdout) != pg.ScramUser {
		t.Errorf("channel_binding=require through sqlfwd presenting the server's own certificate: %s", res)
	}
}
