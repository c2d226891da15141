package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDebBooted installs the Debian package on a booted systemd, as an
// operator would: a Debian bookworm machine under systemd-nspawn
// (scripts/nspawn.sh; its root cached in /var/cache/sqlfw-test) with
// PostgreSQL 15 and MariaDB 10.11 started by their own units. It builds the
// package twice (`make deb`, two versions), installs the older one, enables
// sqlfwd.service with no configuration file and checks, with the machine's
// clients run as transient units of its systemd (so in the cgroups the unit
// intercepts):
//
//   - the unit runs as sqlfw with exactly the capabilities its file names
//     (CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON, and CAP_SETUID/CAP_SETGID for
//     connecting to a socket as the client), no new privileges and a
//     seccomp filter;
//   - on every local path to each server (TCP 127.0.0.1 and ::1, the unix
//     socket by /run, by /var/run and through a symlink any user can make;
//     psql's and mariadb's defaults) a SELECT is answered and a
//     WHERE-less DELETE is blocked by sqlfw: the rows stay (counted on a
//     connection from outside the machine's cgroups, which nothing
//     intercepts) and the DELETE is not in the server's own statement log,
//     where the SELECT is;
//   - the journal names every path it protects, and a path it does not
//     protect in a line that says so;
//   - `systemctl reload` of an edited configuration applies it live, and of a
//     broken one fails and keeps the configuration in force
//     (docs/operations.md);
//   - installing the newer package restarts the daemon, which keeps blocking;
//   - sqlfwd-listener.service with no configuration fails and stays failed;
//   - removing the package stops it, leaves no pinned program, and the
//     clients reach their servers directly.
//
// It needs root, systemd-nspawn and a cached or buildable root, and runs
// under `make booted` (SQLFW_BOOTED=1); docs/testing.md says what it costs.
func TestDebBooted(t *testing.T) {
	if os.Getenv("SQLFW_BOOTED") != "1" {
		t.Skip("skipping: the booted package test runs with `make booted` (SQLFW_BOOTED=1; docs/testing.md)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("SQLFW_BOOTED=1 needs root (systemd-nspawn)")
	}
	debs := t.TempDir()
	oldDeb, newDeb, oldVer, newVer := buildTwoDebs(t, debs)

	m := bootMachine(t, debs)
	m.setupServers(t)

	if !t.Run("install", func(t *testing.T) {
		res := m.exec(t, "apt-get install -y -q /mnt/sqlfw/"+filepath.Base(oldDeb)+" && systemctl enable --now sqlfwd.service")
		if res.Exit != 0 {
			t.Fatalf("installing the package and enabling sqlfwd.service: %s\njournal:\n%s", res, m.journal(t, ""))
		}
		if st := m.sh(t, "systemctl is-active sqlfwd.service; systemctl is-enabled sqlfwd.service"); st != "active\nenabled" {
			t.Fatalf("sqlfwd.service after enable --now: %q, want active and enabled\njournal:\n%s", st, m.journal(t, ""))
		}
		if out := m.sh(t, "test -e /etc/sqlfw/sqlfwd.yaml && echo present || echo absent"); out != "absent" {
			t.Errorf("/etc/sqlfw/sqlfwd.yaml is %s after the install, want none (zero configuration)", out)
		}
	}) {
		return
	}

	t.Run("unit", func(t *testing.T) { m.checkUnitProcess(t) })
	t.Run("paths", func(t *testing.T) {
		// discovery's first scan ran before READY; give a rescan (5 s) a
		// chance to find what the first missed
		time.Sleep(6 * time.Second)
		m.checkPaths(t, "zero-config")
	})
	t.Run("journal", func(t *testing.T) { m.checkJournalSaysWhatItProtects(t) })
	t.Run("reload", func(t *testing.T) { m.checkReload(t) })
	t.Run("fail_closed", func(t *testing.T) { m.checkFailClosed(t) })
	t.Run("upgrade", func(t *testing.T) { m.checkUpgrade(t, newDeb, oldVer, newVer) })
	t.Run("listener unit without configuration", func(t *testing.T) { m.checkListenerUnit(t) })
	t.Run("remove", func(t *testing.T) { m.checkRemove(t) })
}

// buildTwoDebs runs `make deb` twice with two versions, the second newer by
// Debian's ordering, and moves both packages into dir.
func buildTwoDebs(t *testing.T, dir string) (oldDeb, newDeb, oldVer, newVer string) {
	t.Helper()
	base, err := exec.Command("bash", "../scripts/deb-version.sh").Output()
	if err != nil {
		t.Fatalf("scripts/deb-version.sh: %v", err)
	}
	b := strings.TrimSpace(string(base))
	oldVer, newVer = b+"+boot1", b+"+boot2"
	build := func(ver string) string {
		cmd := exec.Command("make", "--no-print-directory", "deb", "DEBVERSION="+ver, "VERSION="+ver)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make deb DEBVERSION=%s: %v\n%s", ver, err, out)
		}
		debs, _ := filepath.Glob("../dist/sqlfw_" + ver + "_*.deb")
		if len(debs) != 1 {
			t.Fatalf("make deb DEBVERSION=%s made %v, want one dist/sqlfw_%s_*.deb", ver, debs, ver)
		}
		dst := filepath.Join(dir, filepath.Base(debs[0]))
		if out, err := exec.Command("mv", debs[0], dst).CombinedOutput(); err != nil {
			t.Fatalf("mv %s: %v %s", debs[0], err, out)
		}
		return dst
	}
	oldDeb, newDeb = build(oldVer), build(newVer)
	if out, err := exec.Command("dpkg", "--compare-versions", newVer, "gt", oldVer).CombinedOutput(); err != nil {
		t.Fatalf("%s is not newer than %s for dpkg: %v %s", newVer, oldVer, err, out)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return oldDeb, newDeb, oldVer, newVer
}

// machine is a booted Debian under systemd-nspawn (scripts/nspawn.sh).
type machine struct {
	name string
}

func bootMachine(t *testing.T, bind string) *machine {
	t.Helper()
	m := &machine{name: fmt.Sprintf("sqlfwb-%d", os.Getpid())}
	if res := runCmd(t, 10*time.Minute, "", nil, "bash", "../scripts/nspawn.sh", "image"); res.Exit != 0 {
		t.Fatalf("scripts/nspawn.sh image: %s", res)
	}
	t.Cleanup(func() {
		if res := runCmd(t, 2*time.Minute, "", nil, "bash", "../scripts/nspawn.sh", "stop", m.name); res.Exit != 0 {
			t.Errorf("scripts/nspawn.sh stop %s: %s", m.name, res)
		}
	})
	owner := []string{"SQLFW_NSPAWN_OWNER=" + strconv.Itoa(os.Getpid())}
	if res := runCmd(t, 2*time.Minute, "", owner, "bash", "../scripts/nspawn.sh", "start", m.name, bind); res.Exit != 0 {
		t.Fatalf("scripts/nspawn.sh start: %s", res)
	}
	return m
}

// exec runs a shell script as root in the machine's namespaces but outside
// its cgroups: nothing sqlfwd attaches to intercepts it (setup, and the
// direct checks of rows and logs).
func (m *machine) exec(t *testing.T, script string) psqlResult {
	t.Helper()
	return runCmd(t, 3*time.Minute, "", nil, "bash", "../scripts/nspawn.sh", "exec", m.name, "sh", "-c", script)
}

// sh is exec that must succeed; it returns the trimmed standard output.
func (m *machine) sh(t *testing.T, script string) string {
	t.Helper()
	res := m.exec(t, script)
	if res.Exit != 0 {
		t.Fatalf("in the machine: %s: %s", script, res)
	}
	return strings.TrimSpace(res.Stdout)
}

// client runs argv as a transient unit of the machine's systemd: a process
// in the machine's cgroups, as a user's program is.
func (m *machine) client(t *testing.T, argv ...string) psqlResult {
	t.Helper()
	return runCmd(t, 2*time.Minute, "", nil, "bash", append([]string{"../scripts/nspawn.sh", "run", m.name}, argv...)...)
}

const (
	bootPGLog = "/var/log/postgresql/postgresql-15-main.log"
	bootMyLog = "/var/log/mysql/general.log"
	bootPW    = "bootpw"
)

// setupServers turns on both servers' statement logs (restarting them with
// their units), makes MariaDB listen on ::1 too (PostgreSQL's localhost
// default already does), and creates the shop database with three rows in
// items and an account app that logs in with a password over TCP and the
// unix socket (PostgreSQL: a pg_hba.conf line before Debian's peer lines),
// for both servers. All of it on direct connections.
func (m *machine) setupServers(t *testing.T) {
	t.Helper()
	m.sh(t, `set -e
systemctl is-active postgresql@15-main.service mariadb.service
echo "log_statement = 'all'" > /etc/postgresql/15/main/conf.d/sqlfw-test.conf
printf '[mariadbd]\nbind-address = 127.0.0.1,::1\ngeneral_log = 1\ngeneral_log_file = `+bootMyLog+`\n' > /etc/mysql/mariadb.conf.d/90-sqlfw-test.cnf
install -d -o mysql -g adm -m 2750 /var/log/mysql
sed -i '1i local shop app scram-sha-256' /etc/postgresql/15/main/pg_hba.conf
systemctl restart postgresql@15-main.service mariadb.service
mkdir -p /var/tmp/sqlfw-alias
ln -sf /run/postgresql/.s.PGSQL.5432 /var/tmp/sqlfw-alias/.s.PGSQL.5432
ln -sf /run/mysqld/mysqld.sock /var/tmp/sqlfw-alias/mysqld.sock
runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 <<'EOF'
CREATE ROLE app LOGIN PASSWORD '`+bootPW+`';
CREATE DATABASE shop OWNER app;
\c shop
CREATE TABLE items (id int);
INSERT INTO items VALUES (1), (2), (3);
ALTER TABLE items OWNER TO app;
EOF
mariadb <<'EOF'
CREATE DATABASE shop;
CREATE TABLE shop.items (id int);
INSERT INTO shop.items VALUES (1), (2), (3);
CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY '`+bootPW+`';
CREATE USER 'app'@'::1' IDENTIFIED BY '`+bootPW+`';
CREATE USER 'app'@'localhost' IDENTIFIED BY '`+bootPW+`';
GRANT ALL ON shop.* TO 'app'@'localhost';
GRANT ALL ON shop.* TO 'app'@'127.0.0.1';
GRANT ALL ON shop.* TO 'app'@'::1';
EOF
`)
}

// bootPath is one way a local client reaches a server, with the client's
// argv for a statement.
type bootPath struct {
	name     string
	protocol string // postgres or mysql
	// journal: how the daemon's log names it (an address or a socket)
	journal string
	argv    func(sql string) []string
}

// otherName reports whether p names its socket by a name sqlfwd does not
// redirect (checkOtherName): a user's symlink.
func (p bootPath) otherName() bool { return strings.Contains(p.name, "through a symlink") }

func bootPaths() []bootPath {
	psqlTCP := func(host string) func(string) []string {
		return func(sql string) []string {
			return []string{"env", "PGPASSWORD=" + bootPW, "psql", "-X", "-At", "-h", host, "-U", "app", "-d", "shop", "-c", sql}
		}
	}
	myTCP := func(host string) func(string) []string {
		return func(sql string) []string {
			return []string{"mariadb", "--comments", "-N", "-h", host, "-u", "app", "-p" + bootPW, "shop", "-e", sql}
		}
	}
	mySocket := func(path string) func(string) []string {
		return func(sql string) []string {
			return []string{"mariadb", "--comments", "-N", "-S", path, "-u", "app", "-p" + bootPW, "shop", "-e", sql}
		}
	}
	return []bootPath{
		{"postgres tcp 127.0.0.1", "postgres", "127.0.0.1:5432", psqlTCP("127.0.0.1")},
		{"postgres tcp ::1", "postgres", "[::1]:5432", psqlTCP("::1")},
		// psql's default: the unix socket in /var/run/postgresql, peer
		// authentication as the postgres user (Debian's pg_hba.conf)
		{"postgres unix socket (psql's default, as postgres)", "postgres", "/run/postgresql/.s.PGSQL.5432", func(sql string) []string {
			return []string{"runuser", "-u", "postgres", "--", "psql", "-X", "-At", "-d", "shop", "-c", sql}
		}},
		// the same socket by both its names (/var/run is a symlink to /run),
		// with a password, so that interception is seen apart from peer
		// authentication
		{"postgres unix socket /run/postgresql, password", "postgres", "/run/postgresql/.s.PGSQL.5432", psqlTCP("/run/postgresql")},
		{"postgres unix socket /var/run/postgresql, password", "postgres", "/run/postgresql/.s.PGSQL.5432", psqlTCP("/var/run/postgresql")},
		// names the kernel resolves from the client's directories, and a
		// doubled slash: redirected (bpf/unix.c protected_rel, normalize_path)
		{"postgres unix socket by /proc/self/cwd from its directory, password", "postgres", "/run/postgresql/.s.PGSQL.5432", func(sql string) []string {
			return append([]string{"sh", "-c", `cd /run/postgresql && exec "$@"`, "sh"}, psqlTCP("/proc/self/cwd")(sql)...)
		}},
		{"postgres unix socket //run/postgresql, password", "postgres", "/run/postgresql/.s.PGSQL.5432", psqlTCP("//run/postgresql")},
		// a symlink to the socket that any user may make (here in /var/tmp)
		{"postgres unix socket through a symlink, password", "postgres", "/run/postgresql/.s.PGSQL.5432", psqlTCP("/var/tmp/sqlfw-alias")},
		{"mariadb tcp 127.0.0.1", "mysql", "127.0.0.1:3306", myTCP("127.0.0.1")},
		{"mariadb tcp ::1", "mysql", "[::1]:3306", myTCP("::1")},
		// mariadb's default as root: the socket /run/mysqld/mysqld.sock,
		// unix_socket authentication (Debian's root@localhost). --comments
		// (the client strips them by default) keeps the marker in the text.
		{"mariadb unix socket (mariadb's default, as root)", "mysql", "/run/mysqld/mysqld.sock", func(sql string) []string {
			return []string{"mariadb", "--comments", "-N", "shop", "-e", sql}
		}},
		{"mariadb unix socket /run/mysqld, password", "mysql", "/run/mysqld/mysqld.sock", mySocket("/run/mysqld/mysqld.sock")},
		{"mariadb unix socket /var/run/mysqld, password", "mysql", "/run/mysqld/mysqld.sock", mySocket("/var/run/mysqld/mysqld.sock")},
		{"mariadb unix socket by a relative name from its directory, password", "mysql", "/run/mysqld/mysqld.sock", func(sql string) []string {
			return append([]string{"sh", "-c", `cd /run/mysqld && exec "$@"`, "sh"}, mySocket("mysqld.sock")(sql)...)
		}},
		{"mariadb unix socket /run/./mysqld//mysqld.sock, password", "mysql", "/run/mysqld/mysqld.sock", mySocket("/run/./mysqld//mysqld.sock")},
		{"mariadb unix socket through a symlink, password", "mysql", "/run/mysqld/mysqld.sock", mySocket("/var/tmp/sqlfw-alias/mysqld.sock")},
	}
}

var bootMarkers int

func bootMarker(kind string) string {
	bootMarkers++
	return fmt.Sprintf("sqlfwboot_%d_%d_%s", os.Getpid(), bootMarkers, kind)
}

// count reads the rows of a table directly (outside the machine's cgroups).
func (m *machine) count(t *testing.T, protocol, table string) int {
	t.Helper()
	var out string
	if protocol == "postgres" {
		out = m.sh(t, "runuser -u postgres -- psql -X -At -d shop -c 'SELECT count(*) FROM "+table+"'")
	} else {
		out = m.sh(t, "mariadb -N shop -e 'SELECT count(*) FROM "+table+"'")
	}
	n, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("count of %s: %q", table, out)
	}
	return n
}

func bootServerLog(protocol string) string {
	if protocol == "postgres" {
		return bootPGLog
	}
	return bootMyLog
}

// logHas reports whether the server's own statement log holds marker,
// waiting up to 5 s for it to appear when want is true.
func (m *machine) logHas(t *testing.T, protocol, marker string, want bool) bool {
	t.Helper()
	for i := 0; ; i++ {
		has := m.exec(t, "grep -q "+marker+" "+bootServerLog(protocol)).Exit == 0
		if has || !want || i >= 50 {
			return has
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkPaths sends on each path a SELECT that must be answered (and be in
// the server's log) and a WHERE-less DELETE that sqlfw must block (rows
// unchanged, not in the server's log).
func (m *machine) checkPaths(t *testing.T, phase string) {
	for _, p := range bootPaths() {
		t.Run(p.name, func(t *testing.T) { m.checkPath(t, p, phase) })
	}
}

func (m *machine) checkPath(t *testing.T, p bootPath, phase string) {
	t.Helper()
	if p.otherName() {
		m.checkOtherName(t, p, phase)
		return
	}
	sel := bootMarker("select")
	res := m.client(t, p.argv("SELECT count(*) /* "+sel+" */ FROM items")...)
	if res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" {
		t.Errorf("%s, %s: a SELECT count(*) through this path: %s, want 3 (the path does not reach the server)", phase, p.name, res)
	} else if !m.logHas(t, p.protocol, sel, true) {
		t.Errorf("%s, %s: the answered SELECT (%s) is not in %s", phase, p.name, sel, bootServerLog(p.protocol))
	}
	del := bootMarker("delete")
	before := m.count(t, p.protocol, "items")
	res = m.client(t, p.argv("DELETE /* "+del+" */ FROM items")...)
	after := m.count(t, p.protocol, "items")
	inLog := m.logHas(t, p.protocol, del, false)
	blocked := res.Exit != 0 && strings.Contains(res.Stderr, "sqlfw: statement blocked by rule")
	if !blocked || after != before || inLog {
		t.Errorf("%s, %s: DELETE without WHERE: %s\nrows %d -> %d, in the server's log: %v; want blocked by sqlfw, the rows kept, nothing logged",
			phase, p.name, res, before, after, inLog)
	}
	if after != before {
		m.restoreItems(t, p.protocol)
	}
}

// unixGuardUnavailable is the start of the line sqlfwd logs when the
// kernel cannot refuse other names of a protected unix socket
// (daemon/intercept.go unixGuardWarning).
const unixGuardUnavailable = "other names of a protected unix socket"

// checkOtherName checks a path that reaches a protected socket by another
// name than the one sqlfwd redirects (a user's symlink): the guard refuses
// the connect (nothing reaches the server) — or, where the kernel has no
// BPF LSM for the guard, sqlfwd's journal says that such names reach the
// server unjudged, and the test records the path as the said limitation.
func (m *machine) checkOtherName(t *testing.T, p bootPath, phase string) {
	t.Helper()
	del := bootMarker("delete")
	before := m.count(t, p.protocol, "items")
	res := m.client(t, p.argv("DELETE /* "+del+" */ FROM items")...)
	after := m.count(t, p.protocol, "items")
	inLog := m.logHas(t, p.protocol, del, false)
	if after != before {
		m.restoreItems(t, p.protocol)
	}
	refused := res.Exit != 0 && strings.Contains(res.Stderr, "Operation not permitted")
	if refused && after == before && !inLog {
		return
	}
	if j := m.journal(t, ""); strings.Contains(j, unixGuardUnavailable) && strings.Contains(j, "reach the server unjudged") {
		t.Logf("%s, %s: not protected, as sqlfwd's journal says (no guard program loads on this kernel): the DELETE ran (rows %d -> %d)", phase, p.name, before, after)
		return
	}
	t.Errorf("%s, %s: DELETE without WHERE: %s\nrows %d -> %d, in the server's log: %v; want the connect refused (Operation not permitted), or sqlfwd's journal saying other names reach the server unjudged",
		phase, p.name, res, before, after, inLog)
}

func (m *machine) restoreItems(t *testing.T, protocol string) {
	t.Helper()
	const sql = "DELETE FROM items; INSERT INTO items VALUES (1), (2), (3);"
	if protocol == "postgres" {
		m.sh(t, "runuser -u postgres -- psql -X -q -d shop -c '"+sql+"'")
	} else {
		m.sh(t, "mariadb shop -e '"+sql+"'")
	}
}

// journal returns sqlfwd.service's journal lines (message only), of one
// invocation when id is given.
func (m *machine) journal(t *testing.T, id string) string {
	t.Helper()
	sel := "-u sqlfwd.service"
	if id != "" {
		sel = "_SYSTEMD_INVOCATION_ID=" + id
	}
	return m.exec(t, "journalctl --no-pager -o cat "+sel).Stdout
}

func (m *machine) mainPID(t *testing.T) string {
	t.Helper()
	return m.sh(t, "systemctl show -p MainPID --value sqlfwd.service")
}

// checkUnitProcess reads the running daemon's credentials from /proc.
func (m *machine) checkUnitProcess(t *testing.T) {
	pid := m.mainPID(t)
	if pid == "0" || pid == "" {
		t.Fatalf("sqlfwd.service has no main process")
	}
	uid := m.sh(t, "id -u sqlfw")
	status := m.sh(t, "cat /proc/"+pid+"/status")
	field := func(name string) string {
		for _, l := range strings.Split(status, "\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				return strings.Join(strings.Fields(v), " ")
			}
		}
		return ""
	}
	if got, want := field("Uid"), strings.Repeat(uid+" ", 3)+uid; got != want {
		t.Errorf("sqlfwd's Uid: %q, want the sqlfw user's (%s) throughout", got, want)
	}
	// exactly the capabilities the installed unit names, each one known
	unitCaps := m.sh(t, "sed -n 's/^AmbientCapabilities=//p' /lib/systemd/system/sqlfwd.service")
	caps, err := capMask(unitCaps)
	if err != nil {
		t.Fatalf("the installed unit's AmbientCapabilities=%s: %v", unitCaps, err)
	}
	for _, f := range []string{"CapEff", "CapPrm", "CapBnd", "CapAmb"} {
		if got := field(f); got != caps {
			t.Errorf("sqlfwd's %s: %s, want %s (%s only, as the unit says)", f, got, caps, unitCaps)
		}
	}
	if got := field("NoNewPrivs"); got != "1" {
		t.Errorf("sqlfwd's NoNewPrivs: %q, want 1", got)
	}
	if got := field("Seccomp"); got != "2" {
		t.Errorf("sqlfwd's Seccomp: %q, want 2 (a filter)", got)
	}
	// its own mount namespace (ProtectSystem, PrivateTmp): not the machine's
	if a, b := m.sh(t, "readlink /proc/"+pid+"/ns/mnt"), m.sh(t, "readlink /proc/1/ns/mnt"); a == b {
		t.Errorf("sqlfwd runs in the machine's mount namespace (%s): no sandbox", a)
	}
	if st := m.sh(t, "systemctl show -p StatusText --value sqlfwd.service"); !strings.Contains(st, "serving") {
		t.Errorf("sqlfwd.service's status text %q does not say it serves", st)
	}
}

// capMask is /proc/PID/status's hexadecimal form of a list of capability
// names. Only the capabilities interception can justify are known: another
// in the unit fails the test until someone adds it here on purpose.
func capMask(names string) (string, error) {
	bits := map[string]uint{"CAP_SETGID": 6, "CAP_SETUID": 7, "CAP_NET_ADMIN": 12, "CAP_PERFMON": 38, "CAP_BPF": 39}
	var m uint64
	for _, n := range strings.Fields(names) {
		b, ok := bits[n]
		if !ok {
			return "", fmt.Errorf("%s is not one this test expects the unit to keep", n)
		}
		m |= 1 << b
	}
	if m == 0 {
		return "", fmt.Errorf("no capabilities")
	}
	return fmt.Sprintf("%016x", m), nil
}

// journalEntry is one JSON log line of sqlfwd's.
type journalEntry map[string]any

func (e journalEntry) str(k string) string {
	s, _ := e[k].(string)
	return s
}

func journalEntries(text string) []journalEntry {
	var es []journalEntry
	for _, l := range strings.Split(text, "\n") {
		if i := strings.IndexByte(l, '{'); i >= 0 {
			var e journalEntry
			if json.Unmarshal([]byte(l[i:]), &e) == nil {
				es = append(es, e)
			}
		}
	}
	return es
}

func sameSocket(a, b string) bool {
	norm := func(s string) string { return strings.Replace(s, "/var/run/", "/run/", 1) }
	return a != "" && norm(a) == norm(b)
}

// checkJournalSaysWhatItProtects wants every path named in a "found and
// protecting" line (its addresses or unix_socket), and a path missing there
// in a warning that says it is not protected.
func (m *machine) checkJournalSaysWhatItProtects(t *testing.T) {
	id := m.sh(t, "systemctl show -p InvocationID --value sqlfwd.service")
	text := m.journal(t, id)
	es := journalEntries(text)
	if len(es) == 0 {
		t.Fatalf("no JSON lines in sqlfwd.service's journal:\n%s", text)
	}
	for _, p := range bootPaths() {
		protected, warned := false, ""
		for _, e := range es {
			msg := e.str("msg")
			if strings.Contains(msg, "found and protecting") {
				if strings.Contains(e.str("addresses"), p.journal) || sameSocket(e.str("unix_socket"), p.journal) {
					protected = true
				}
			}
			if (e.str("level") == "WARN" || e.str("level") == "ERROR") && strings.Contains(strings.ToLower(msg+" "+fmt.Sprint(e)), "not protected") &&
				(strings.Contains(fmt.Sprint(e), p.journal) || strings.Contains(fmt.Sprint(e), strings.Replace(p.journal, "/run/", "/var/run/", 1))) {
				warned = msg
			}
		}
		switch {
		case protected && warned != "":
			t.Errorf("%s (%s): the journal says both that it is protected and %q", p.name, p.journal, warned)
		case !protected && warned == "":
			t.Errorf("%s (%s): the journal neither names it as protected nor warns that it is not:\n%s", p.name, p.journal, text)
		case !protected:
			t.Logf("%s (%s): not protected, and the journal says so: %q", p.name, p.journal, warned)
		}
	}
}

// bootConfig configures both servers explicitly, with every local path.
func bootConfig(pgMode string) string {
	return `databases:
  - name: pg
    protocol: postgres
    upstream: 127.0.0.1:5432
    intercept: app-host
    protect: ["127.0.0.1:5432", "[::1]:5432"]
    unix_socket: /run/postgresql/.s.PGSQL.5432
    mode: ` + pgMode + `
  - name: my
    protocol: mysql
    upstream: 127.0.0.1:3306
    intercept: app-host
    protect: ["127.0.0.1:3306", "[::1]:3306"]
    unix_socket: /run/mysqld/mysqld.sock
    mode: enforce
`
}

func (m *machine) writeConfig(t *testing.T, text string) {
	t.Helper()
	m.sh(t, "cat > /etc/sqlfw/sqlfwd.yaml <<'EOF'\n"+text+"EOF\n")
}

// checkReload: an operator writes a configuration (restart), edits a key
// that applies live (systemctl reload), then saves a broken file
// (systemctl reload must fail, the configuration in force stays).
func (m *machine) checkReload(t *testing.T) {
	m.writeConfig(t, bootConfig("enforce"))
	if res := m.exec(t, "systemctl restart sqlfwd.service"); res.Exit != 0 {
		t.Fatalf("systemctl restart with a configuration: %s\n%s", res, m.journal(t, ""))
	}
	t.Run("configured", func(t *testing.T) { m.checkPaths(t, "configured") })
	pgTCP := bootPaths()[0]
	pid := m.mainPID(t)

	// the edit: pg to monitor; a reload applies it live
	m.sh(t, "runuser -u postgres -- psql -X -q -d shop -c 'CREATE TABLE scratch (id int); INSERT INTO scratch VALUES (1); ALTER TABLE scratch OWNER TO app'")
	m.writeConfig(t, bootConfig("monitor"))
	if res := m.exec(t, "systemctl reload sqlfwd.service"); res.Exit != 0 {
		t.Errorf("systemctl reload of an edited, valid configuration: %s", res)
	}
	if p := m.mainPID(t); p != pid {
		t.Errorf("systemctl reload restarted sqlfwd (pid %s, was %s)", p, pid)
	}
	j := m.journal(t, "")
	applied := ""
	for _, e := range journalEntries(j) {
		if e.str("msg") == "configuration reloaded: applied live" {
			applied = e.str("keys")
		}
	}
	if !strings.Contains(applied, "mode") {
		t.Errorf("after the reload of mode: monitor, the journal does not say the mode was applied live (keys %q):\n%s", applied, tail(j, 20))
	}
	mon := bootMarker("monitor")
	res := m.client(t, pgTCP.argv("DELETE /* "+mon+" */ FROM scratch")...)
	if res.Exit != 0 || m.count(t, "postgres", "scratch") != 0 || !m.logHas(t, "postgres", mon, true) {
		t.Errorf("in monitor mode (reloaded), a DELETE without WHERE on pg: %s, rows %d; want it let through to the server",
			res, m.count(t, "postgres", "scratch"))
	}

	// the broken file: refused, monitor stays in force
	m.writeConfig(t, bootConfig("monitor")+"  - name: broken\n    protocol: postgres\n    mode: [\n")
	if res := m.exec(t, "systemctl reload sqlfwd.service"); res.Exit == 0 {
		t.Errorf("systemctl reload of a broken configuration exited 0: %s", res)
	}
	if st := m.sh(t, "systemctl is-active sqlfwd.service || true"); st != "active" {
		t.Fatalf("sqlfwd.service after the reload of a broken file: %s\n%s", st, tail(m.journal(t, ""), 30))
	}
	if p := m.mainPID(t); p != pid {
		t.Errorf("the reload of a broken file restarted sqlfwd (pid %s, was %s)", p, pid)
	}
	if res := m.exec(t, "fwctl reload"); res.Exit == 0 {
		t.Errorf("fwctl reload of a broken configuration exited 0: %s", res)
	}
	m.sh(t, "systemctl kill -s HUP --kill-who=main sqlfwd.service")
	time.Sleep(time.Second)
	if j := m.journal(t, ""); !strings.Contains(j, "reload failed: the configuration file is not valid, keeping the configuration in force") {
		t.Errorf("after a SIGHUP with a broken file, the journal lacks the line docs/operations.md names:\n%s", tail(j, 20))
	}
	if st := m.exec(t, "fwctl status"); !strings.Contains(st.Stdout, "the file on disk differs") {
		t.Errorf("fwctl status with a broken file on disk does not say it differs from the one in force: %s", st)
	}
	m.sh(t, "runuser -u postgres -- psql -X -q -d shop -c 'INSERT INTO scratch VALUES (1)'")
	mon = bootMarker("monitor")
	res = m.client(t, pgTCP.argv("DELETE /* "+mon+" */ FROM scratch")...)
	if res.Exit != 0 || !m.logHas(t, "postgres", mon, true) {
		t.Errorf("after the refused reload, pg is not in monitor mode any more (the configuration in force changed): %s", res)
	}

	// fixed again: enforce, reload, blocked
	m.writeConfig(t, bootConfig("enforce"))
	if res := m.exec(t, "systemctl reload sqlfwd.service"); res.Exit != 0 {
		t.Errorf("systemctl reload of the fixed configuration: %s", res)
	}
	m.checkPath(t, pgTCP, "reloaded to enforce")

	// back to zero configuration for the upgrade
	m.sh(t, "rm /etc/sqlfw/sqlfwd.yaml && systemctl restart sqlfwd.service")
}

// checkFailClosed: with fail_closed the unit starts (its user reaches its
// pin directory through the unit's BindPaths), judges, and once stopped
// leaves the pins on the host's bpffs refusing protected connects, until
// it starts again; sqlfwd --detach-pins as root removes them.
func (m *machine) checkFailClosed(t *testing.T) {
	m.writeConfig(t, "intercept:\n  fail_closed: true\n"+bootConfig("enforce"))
	if res := m.exec(t, "systemctl restart sqlfwd.service"); res.Exit != 0 {
		t.Fatalf("systemctl restart with fail_closed: %s\n%s", res, tail(m.journal(t, ""), 20))
	}
	pgTCP := bootPaths()[0]
	m.checkPath(t, pgTCP, "fail_closed")
	if j := m.journal(t, ""); !strings.Contains(j, `"fail_closed":true`) {
		t.Errorf("the journal does not say fail_closed is in force:\n%s", tail(j, 20))
	}
	m.sh(t, "systemctl stop sqlfwd.service")
	if n := m.sh(t, "ls /sys/fs/bpf/sqlfw | wc -l"); n == "0" {
		t.Errorf("after a stop with fail_closed, /sys/fs/bpf/sqlfw holds no pins")
	}
	sel := bootMarker("closed")
	if res := m.client(t, pgTCP.argv("SELECT count(*) /* "+sel+" */ FROM items")...); res.Exit == 0 || m.logHas(t, "postgres", sel, false) {
		t.Errorf("sqlfwd stopped with fail_closed: a SELECT through %s: %s; want it refused, not at the server", pgTCP.name, res)
	}
	if res := m.exec(t, "systemctl start sqlfwd.service"); res.Exit != 0 {
		t.Fatalf("systemctl start over the pins: %s\n%s", res, tail(m.journal(t, ""), 20))
	}
	m.checkPath(t, pgTCP, "fail_closed, started again")
	m.sh(t, "systemctl stop sqlfwd.service && sqlfwd --detach-pins && rm /etc/sqlfw/sqlfwd.yaml && systemctl start sqlfwd.service")
	if n := m.sh(t, "ls /sys/fs/bpf/sqlfw | wc -l"); n != "0" {
		t.Errorf("after sqlfwd --detach-pins, /sys/fs/bpf/sqlfw holds %s pins, want none", n)
	}
}

// checkUpgrade installs the newer package over the running one.
func (m *machine) checkUpgrade(t *testing.T, newDeb, oldVer, newVer string) {
	pid := m.mainPID(t)
	if res := m.exec(t, "apt-get install -y -q /mnt/sqlfw/"+filepath.Base(newDeb)); res.Exit != 0 {
		t.Fatalf("apt-get install of the newer package: %s", res)
	}
	if v := m.sh(t, "dpkg-query -W -f '${Version}' sqlfw"); v != newVer {
		t.Errorf("installed version %q after the upgrade, want %q", v, newVer)
	}
	if st := m.sh(t, "systemctl is-active sqlfwd.service || true"); st != "active" {
		t.Fatalf("sqlfwd.service after the upgrade: %s\n%s", st, tail(m.journal(t, ""), 30))
	}
	npid := m.mainPID(t)
	exe := m.sh(t, "readlink /proc/"+npid+"/exe")
	if npid == pid || strings.Contains(exe, "deleted") {
		t.Errorf("the upgrade did not restart sqlfwd: pid %s (was %s), running %s; the old build (%s) still serves", npid, pid, exe, oldVer)
	}
	started := ""
	for _, e := range journalEntries(m.journal(t, m.sh(t, "systemctl show -p InvocationID --value sqlfwd.service"))) {
		if e.str("msg") == "sqlfwd started" {
			started = e.str("version")
		}
	}
	if started != newVer {
		t.Errorf("the running daemon says it started as version %q, want %q", started, newVer)
	}
	m.checkPaths(t, "after the upgrade")
}

// checkListenerUnit starts sqlfwd-listener.service, which needs a
// configuration, without one: it must fail and stay failed, not restart
// every RestartSec (issue 23 item 7). sqlfwd.service (which it conflicts
// with) is started again afterwards.
func (m *machine) checkListenerUnit(t *testing.T) {
	m.sh(t, "rm -f /etc/sqlfw/sqlfwd.yaml")
	if res := m.exec(t, "systemctl start sqlfwd-listener.service"); res.Exit == 0 {
		t.Errorf("sqlfwd-listener.service started with no configuration file: %s", res)
	}
	time.Sleep(5 * time.Second) // two RestartSec
	st := map[string]string{}
	out := m.sh(t, "systemctl show -p ActiveState -p SubState -p NRestarts sqlfwd-listener.service")
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			st[k] = v
		}
	}
	if st["ActiveState"] == "active" || st["ActiveState"] == "activating" || st["SubState"] == "auto-restart" || st["NRestarts"] != "0" {
		t.Errorf("sqlfwd-listener.service without a configuration, 5 s later: %v, want it failed and not restarted\n%s",
			st, tail(m.exec(t, "journalctl --no-pager -o cat -u sqlfwd-listener.service").Stdout, 10))
	}
	m.exec(t, "systemctl stop sqlfwd-listener.service; systemctl reset-failed sqlfwd-listener.service")
	if res := m.exec(t, "systemctl start sqlfwd.service"); res.Exit != 0 {
		t.Errorf("sqlfwd.service does not start again after the listener unit: %s", res)
	}
}

// checkRemove removes the package: the daemon stops, no program stays
// pinned, and the clients reach their servers directly.
func (m *machine) checkRemove(t *testing.T) {
	if res := m.exec(t, "apt-get remove -y -q sqlfw"); res.Exit != 0 {
		t.Fatalf("apt-get remove sqlfw: %s", res)
	}
	if st := m.sh(t, "systemctl is-active sqlfwd.service || true"); st == "active" {
		t.Errorf("sqlfwd.service is still active after the package's removal")
	}
	if res := m.exec(t, "pgrep -x sqlfwd"); res.Exit == 0 {
		t.Errorf("an sqlfwd process runs after the package's removal: %s", res.Stdout)
	}
	// (maps.debug and progs.debug are the kernel's own, in every bpffs)
	if pins := m.sh(t, "find /sys/fs/bpf -mindepth 1 ! -name maps.debug ! -name progs.debug ! -path /sys/fs/bpf/sqlfw | head"); pins != "" {
		t.Errorf("pinned objects left in /sys/fs/bpf after the removal:\n%s", pins)
	}
	for _, p := range bootPaths() {
		sel := bootMarker("removed")
		res := m.client(t, p.argv("SELECT count(*) /* "+sel+" */ FROM items")...)
		if res.Exit != 0 || strings.TrimSpace(res.Stdout) != "3" || !m.logHas(t, p.protocol, sel, true) {
			t.Errorf("after the removal, %s: %s, want the SELECT answered by the server directly", p.name, res)
		}
	}
}
