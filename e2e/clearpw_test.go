package e2e

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTLSClearPasswordRefused: the client leg is TLS, the server leg
// plaintext to an upstream named by a host name (which may resolve
// anywhere: sqlfwd takes it for one off the host), and the server asks the
// role for its password in clear (pg_hba password; scripts/pg.sh's
// clear_user). psql gets sqlfw's FATAL instead of the request and never
// sends the password: it is neither in sqlfwd's log nor a session in the
// server's statement log. Over a plaintext client leg the client chose
// clear text: the login passes.
func TestTLSClearPasswordRefused(t *testing.T) {
	needSqlfwd(t)
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	if addrs, err := net.LookupHost(host); err != nil || !slices.Contains(addrs, "127.0.0.1") {
		t.Skipf("the host name %q does not resolve to 127.0.0.1 (%v %v): no name for the test server", host, addrs, err)
	}
	const user, password = "clear_user", "clear_s3cret"
	if res := psqlDSN(t, fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s password=wrong sslmode=disable connect_timeout=5", pg.Port, user, pg.Database), "-c", "select 1"); !strings.Contains(res.Stderr, "password authentication failed") {
		t.Skipf("no %s with pg_hba password on the test server (a cluster scripts/pg.sh made before it had one): %s", user, res)
	}
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca")
	cert, key := ca.issue(t, dir, "server", false)
	d := ownDaemon(t, "--upstream", net.JoinHostPort(host, strconv.Itoa(pg.Port)), "--tls-cert", cert, "--tls-key", key)
	port := portOf(t, d.addr)
	conninfo := func(ssl string) string {
		return fmt.Sprintf("host=localhost port=%d user=%s dbname=%s password=%s connect_timeout=5 %s", port, user, pg.Database, password, ssl)
	}
	marker := "clearpw_" + randomHex(t)
	res := psqlDSN(t, conninfo("sslmode=require"), "-Atc", "select '"+marker+"_tls'")
	if res.Exit == 0 || !strings.Contains(res.Stderr, "sqlfw: the database server asks for the password in clear") {
		t.Errorf("psql over TLS to a clear server leg with password authentication: %s, want sqlfw's refusal", res)
	}
	res = psqlDSN(t, conninfo("sslmode=disable"), "-Atc", "select '"+marker+"_plain'")
	if res.Exit != 0 || strings.TrimSpace(res.Stdout) != marker+"_plain" {
		t.Errorf("psql in clear: %s, want the login to pass", res)
	}
	log := d.log()
	if !strings.Contains(log, "refusing connection: the server asks for the password in clear") {
		t.Errorf("sqlfwd's log has no refusal:\n%s", log)
	}
	if strings.Contains(log, password) {
		t.Errorf("the password is in sqlfwd's log:\n%s", log)
	}
	sl := serverLog(t)
	if strings.Contains(sl, marker+"_tls") || !strings.Contains(sl, marker+"_plain") {
		t.Errorf("server log: the TLS session's statement present %v, the plaintext one's %v; want absent and present",
			strings.Contains(sl, marker+"_tls"), strings.Contains(sl, marker+"_plain"))
	}
}
