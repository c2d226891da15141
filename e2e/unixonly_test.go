package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestZeroConfigUnixOnly: servers with no TCP listener at all — MariaDB
// 10.11 with skip-networking on the mariadb client's default socket,
// PostgreSQL 15 with listen_addresses=” in psql's default directory —
// run as their own users in cgroups of their own, are found by their
// sockets alone by sqlfwd run as the unit's user with no configuration,
// and protected (unix interception needs no TCP port): each client's
// default path is judged — a count answered and in the server's log, a
// WHERE-less DELETE blocked, absent from the log, the rows kept — and
// neither is said to be not protected.
func TestZeroConfigUnixOnly(t *testing.T) {
	needKernel(t)
	for _, b := range []string{"setpriv", "mariadbd", "mariadb-install-db", "mariadb"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("skipping: %s is not installed", b)
		}
	}
	for _, u := range []string{"mysql", "postgres"} {
		if _, err := user.Lookup(u); err != nil {
			t.Skipf("skipping: no %s user", u)
		}
	}
	if c, err := net.Dial("unix", "/run/mysqld/mysqld.sock"); err == nil {
		c.Close()
		t.Skip("skipping: a MariaDB already listens on /run/mysqld/mysqld.sock")
	}
	cg := childCgroup(t)
	my := startMariaDBAsMysql(t, siblingCgroup(t, cg, "mariadb"), "--skip-networking")
	pgs := startPGAsPostgres(t, siblingCgroup(t, cg, "postgresql"), "-c", "listen_addresses=")
	for what, port := range map[string]int{"MariaDB": my.port, "PostgreSQL": pgs.port} {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			t.Fatalf("%s listens on TCP port %d: the test's premise is a server with a unix socket only", what, port)
		}
	}

	d, err := startDiscoveringWrapped(t, append(inCgroup(cg), unitWrap(t)...), cg, nil)
	if err != nil {
		t.Fatal(err)
	}
	myName, pgName := "mysql-unix-mysqld", fmt.Sprintf("postgres-unix-%d", pgs.port)
	pgSock := fmt.Sprintf("/var/run/postgresql/.s.PGSQL.%d", pgs.port)
	for i := 0; ; i++ {
		log := d.log()
		if logHas(log, `"msg":"discovery: found and protecting"`, `"database":"`+myName+`"`, `"unix_socket":"/run/mysqld/mysqld.sock"`) &&
			logHas(log, `"msg":"discovery: found and protecting"`, `"database":"`+pgName+`"`, `"unix_socket":"`+pgSock+`"`) &&
			strings.Count(log, `"msg":"intercepting unix socket"`) >= 2 {
			break
		}
		if i > 200 {
			t.Fatalf("the unix-only servers were not found and protected:\n%s", tail(log, 30))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, sock := range []string{"/run/mysqld/mysqld.sock", pgSock} {
		for _, l := range strings.Split(d.log(), "\n") {
			if strings.Contains(l, "not protected") && strings.Contains(l, sock) && !strings.Contains(l, "other names") {
				t.Errorf("%s is said not protected: %s", sock, l)
			}
		}
	}
	fwctl := filepath.Join(binDir, "fwctl")
	if res := runToolPath(t, fwctl, "status", "--control-socket", d.control); res.Exit != 0 || !strings.Contains(res.Stdout, myName) || !strings.Contains(res.Stdout, pgName) {
		t.Errorf("fwctl status does not list both unix-only servers:\n%s", res)
	}

	table := "uo_" + randomHex(t)
	my.exec(t, "create table zcdb."+table+" (id int); insert into zcdb."+table+" values (1), (2), (3)")
	defer my.exec(t, "drop table zcdb."+table)
	sel := "select count(*) from " + table + " where id > 0"
	if res := my.client(t, cg, sel); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
		t.Errorf("mariadb (default socket) %q: %s, want 3", sel, res)
	}
	del := "delete from " + table
	if res := my.client(t, cg, del); !strings.Contains(res.Stderr, "ERROR 1227 (42000)") || !strings.Contains(res.Stderr, "sqlfw:") {
		t.Errorf("mariadb (default socket) %q: %s, want sqlfw's ERROR 1227", del, res)
	}
	glog := my.generalLog(t)
	if !strings.Contains(glog, sel) || strings.Contains(glog, del) {
		t.Errorf("MariaDB's general log: the select there %v (want true), the delete there %v (want false)", strings.Contains(glog, sel), strings.Contains(glog, del))
	}
	if n := my.exec(t, "select count(*) from zcdb."+table); strings.TrimSpace(n) != "3" {
		t.Errorf("MariaDB rows left %q, want 3", n)
	}

	pgs.exec(t, "create table "+table+" (id int); insert into "+table+" values (1), (2), (3)")
	defer pgs.exec(t, "drop table "+table)
	if res := pgs.psqlDefault(t, cg, sel); res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
		t.Errorf("psql (default socket directory) %q: %s, want 3", sel, res)
	}
	pdel := "delete from " + table + " /* uo_" + randomHex(t) + " */"
	if res := pgs.psqlDefault(t, cg, pdel); !strings.Contains(res.Stderr, codeBlocked) {
		t.Errorf("psql (default socket directory) %q: %s, want %s", pdel, res, codeBlocked)
	}
	b, _ := os.ReadFile(filepath.Join(pgs.dir, "server.log"))
	if !strings.Contains(string(b), sel) || strings.Contains(string(b), pdel) {
		t.Errorf("PostgreSQL's statement log: the select there %v (want true), the delete there %v (want false)", strings.Contains(string(b), sel), strings.Contains(string(b), pdel))
	}
	if n := pgs.exec(t, "select count(*) from "+table); strings.TrimSpace(n) != "3" {
		t.Errorf("PostgreSQL rows left %q, want 3", n)
	}
}
