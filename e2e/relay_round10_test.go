package e2e

// The tenth round, through the relay (issue 21, classes 3, 8 and 9): an
// independent attacker's variants against sqlfwd in enforce in front of the
// MariaDB and PostgreSQL scripts/test.sh starts. Each attempt is proved by
// the server's own statement log (MariaDB's general log, PostgreSQL's
// log_statement = all) and by its effect, read on a direct connection.
// docs/policy.md, "Tenth round, through the relay", tallies them.

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// logFrom returns what MariaDB's general log holds after byte offset from,
// once a sentinel sent directly has reached it.
func logFrom(t *testing.T, my myEnv, from int) string {
	t.Helper()
	log := generalLog(t, my)
	if from > len(log) {
		return ""
	}
	return log[from:]
}

// generalLogSize is the general log's length now.
func generalLogSize(t *testing.T, my myEnv) int { return len(generalLog(t, my)) }

// switcher turns a sqlfwd that starts not enforcing the default policy into
// one that enforces it, each in its own way.
type switcher struct {
	name string
	// start starts the daemon; flip makes it enforce.
	start func(t *testing.T, my myEnv) *daemon
	flip  func(t *testing.T, d *daemon)
}

// configDaemon starts sqlfwd from a configuration file for MariaDB in
// mode, with the default policy, and returns it and a function that
// rewrites the file's mode.
func configDaemon(t *testing.T, my myEnv, mode string) (*daemon, func(mode string)) {
	t.Helper()
	needSqlfwd(t)
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ctl := filepath.Join(dir, "control.sock")
	cfg := filepath.Join(dir, "sqlfwd.yaml")
	write := func(mode string) {
		text := fmt.Sprintf("control_socket: %s\ndatabases:\n  - name: my\n    protocol: mysql\n    listen: %s\n    upstream: %s\n    mode: %s\n",
			ctl, addr, my.addr(), mode)
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(mode)
	d, err := startConfigDaemon(addr, ctl, "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sqlfwd log:\n%s", tail(d.log(), 30))
		}
		d.stop()
	})
	return d, write
}

// waitCount waits until the daemon's log holds s n times.
func waitCount(t *testing.T, d *daemon, s string, n int) {
	t.Helper()
	for i := 0; strings.Count(d.log(), s) < n; i++ {
		if i > 200 {
			t.Fatalf("the daemon never logged %q %d times:\n%s", s, n, tail(d.log(), 10))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func switchers() []switcher {
	defaultPolicy := filepath.Join("..", "engine", "mysql", "default_policy.yaml")
	var cfgWrite func(string)
	return []switcher{
		{"fwctl mode enforce from monitor",
			func(t *testing.T, my myEnv) *daemon { return mysqlDaemon(t, my, "--mode", "monitor") },
			func(t *testing.T, d *daemon) {
				if r := fwctl(t, d, "mode", "enforce"); r.Exit != 0 {
					t.Fatalf("fwctl mode enforce: %s", r)
				}
			}},
		{"fwctl mode enforce from detect",
			func(t *testing.T, my myEnv) *daemon { return mysqlDaemon(t, my, "--mode", "detect") },
			func(t *testing.T, d *daemon) {
				if r := fwctl(t, d, "mode", "enforce"); r.Exit != 0 {
					t.Fatalf("fwctl mode enforce: %s", r)
				}
			}},
		{"the configuration's mode, fwctl reload",
			func(t *testing.T, my myEnv) *daemon {
				d, w := configDaemon(t, my, "monitor")
				cfgWrite = w
				return d
			},
			func(t *testing.T, d *daemon) {
				cfgWrite("enforce")
				if r := fwctl(t, d, "reload"); r.Exit != 0 || !strings.Contains(r.Stdout, "mode=enforce") {
					t.Fatalf("fwctl reload: %s", r)
				}
			}},
		{"the configuration's mode, SIGHUP",
			func(t *testing.T, my myEnv) *daemon {
				d, w := configDaemon(t, my, "detect")
				cfgWrite = w
				return d
			},
			func(t *testing.T, d *daemon) {
				cfgWrite("enforce")
				n := strings.Count(d.log(), "configuration reloaded")
				if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
				waitCount(t, d, "configuration reloaded", n+1)
			}},
		{"a policy reload that denies",
			func(t *testing.T, my myEnv) *daemon {
				pol := filepath.Join(t.TempDir(), "policy.yaml")
				if err := os.WriteFile(pol, []byte("version: 1\non_parse_error: allow\nrules: []\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				d := mysqlDaemon(t, my, "--policy", pol)
				t.Setenv("REL21E_POLICY", pol)
				return d
			},
			func(t *testing.T, d *daemon) {
				b, err := os.ReadFile(defaultPolicy)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(os.Getenv("REL21E_POLICY"), b, 0o644); err != nil {
					t.Fatal(err)
				}
				if r := fwctl(t, d, "reload"); r.Exit != 0 {
					t.Fatalf("fwctl reload: %s", r)
				}
			}},
	}
}

// attempt is one try at running what the server holds under a name after
// the switch: its text (a COM_QUERY unless raw) and whether the server
// itself may refuse it (then its ERR, not sqlfw's, may be the answer, and
// it may reach the log).
type attempt struct {
	name, sql  string
	serverMay  bool
	raw        func(r *myRaw) string
	wantResult string // a benign attempt's answer ("" for an attack)
}

// TestRound10PreparedNamesAcrossSwitch: names prepared while sqlfwd did not
// enforce (monitor, detect, a permissive policy), each switched to enforce
// in its own way (fwctl mode, the configuration's mode by fwctl reload and
// by SIGHUP, a policy reload), then run by every spelling an attacker has:
// the name's case, quoting, comments, a stacked or pipelined EXECUTE, SET
// STATEMENT ... FOR, EXECUTE IMMEDIATE, a compound statement, a procedure,
// COM_STMT_PREPARE of EXECUTE and of compound statements that EXECUTE it;
// and binary statements (a DELETE, a CALL) prepared before the switch. FROM a variable (set before, in the same
// text, by SELECT ... INTO, by CONCAT), FROM an expression. None runs: the
// rows stay, and no attempt sqlfw refused is in the general log.
func TestRound10PreparedNamesAcrossSwitch(t *testing.T) {
	my := mariadbEnv(t)
	for _, sw := range switchers() {
		t.Run(sw.name, func(t *testing.T) {
			f := newPrepFixture(t, my)
			d := sw.start(t, my)
			direct := myDB(t, my, my.addr(), true)
			n := f.name
			tbl := f.table
			del := "DELETE FROM " + tbl
			proc := n("proc")
			if _, err := direct.Exec("create procedure " + proc + "() execute " + n("del")); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = direct.Exec("drop procedure " + proc) })

			r := f.login(d.addr)
			for _, s := range []string{
				"PREPARE " + n("del") + " FROM '" + del + "'",
				"PREPARE " + strings.ToUpper(n("up")) + " FROM '" + del + "'",
				"PREPARE `" + n("q") + "` FROM '" + del + "'",
				"SET @" + n("v1") + " = '" + del + "'",
				"PREPARE " + n("var") + " FROM @" + n("v1"),
				"SET @" + n("v2") + " = '" + del + "'; PREPARE " + n("stk") + " FROM @" + n("v2"),
				"SELECT '" + del + "' INTO @" + n("v3"),
				"PREPARE " + n("into") + " FROM @" + n("v3"),
				"SET @" + n("v4") + " = CONCAT('DELETE ', 'FROM " + tbl + "')",
				"PREPARE " + n("cat") + " FROM @" + n("v4"),
				"PREPARE " + n("expr") + " FROM CONCAT('DELETE FROM ', '" + tbl + "')",
				"PREPARE " + n("hex") + " FROM 0x" + fmt.Sprintf("%X", del),
				"PREPARE " + n("k") + " FROM '" + del + "'",
				"PREPARE " + n("later") + " FROM '" + del + "'",
				"PREPARE " + n("ok") + " FROM 'SELECT 1'",
			} {
				if got := r.query(s); !strings.HasPrefix(got, "OK") {
					t.Fatalf("%s before the switch: %q", s, got)
				}
			}
			binID, _ := r.stmtPrepare(del + " /* binary */")
			callID, _ := r.stmtPrepare("CALL " + proc + "()")
			if got := f.rows(); got != 3 {
				t.Fatalf("rows before the switch: %d", got)
			}
			sw.flip(t, d)
			from := generalLogSize(t, my)

			kelvin := strings.Replace(n("k"), "k", "\u212a", 1)
			attempts := []attempt{
				{name: "EXECUTE", sql: "EXECUTE " + n("del")},
				{name: "the name in upper case", sql: "EXECUTE " + strings.ToUpper(n("del"))},
				{name: "a name prepared in upper case, in lower", sql: "EXECUTE " + n("up")},
				{name: "quoted", sql: "EXECUTE `" + n("del") + "`"},
				{name: "a name prepared quoted, unquoted", sql: "EXECUTE " + n("q")},
				{name: "a comment between", sql: "EXECUTE/**/" + n("del")},
				{name: "a trailing semicolon", sql: "execute " + n("del") + ";"},
				{name: "behind a SELECT", sql: "SELECT 1; EXECUTE " + n("del")},
				{name: "in an executable comment", sql: "/*!EXECUTE " + n("del") + " */"},
				{name: "in a versioned executable comment", sql: "/*!100000 EXECUTE " + n("del") + " */"},
				{name: "MariaDB's executable comment", sql: "/*M!EXECUTE " + n("del") + " */"},
				{name: "SET STATEMENT ... FOR", sql: "SET STATEMENT max_statement_time=100 FOR EXECUTE " + n("del")},
				{name: "with USING", sql: "EXECUTE " + n("del") + " USING 1", serverMay: true},
				{name: "FROM a variable", sql: "EXECUTE " + n("var")},
				{name: "FROM a variable set in the same text", sql: "EXECUTE " + n("stk")},
				{name: "FROM a variable set by SELECT INTO", sql: "EXECUTE " + n("into")},
				{name: "FROM a variable set by CONCAT", sql: "EXECUTE " + n("cat")},
				{name: "FROM an expression", sql: "EXECUTE " + n("expr")},
				{name: "FROM a hex literal", sql: "EXECUTE " + n("hex")},
				{name: "a CALL of a procedure that EXECUTEs it", sql: "CALL " + proc + "()"},
				{name: "EXECUTE IMMEDIATE of EXECUTE", sql: "EXECUTE IMMEDIATE 'EXECUTE " + n("del") + "'", serverMay: true},
				{name: "EXECUTE IMMEDIATE of the CALL", sql: "EXECUTE IMMEDIATE 'CALL " + proc + "()'"},
				{name: "in a compound statement", sql: "BEGIN NOT ATOMIC EXECUTE " + n("del") + "; END"},
				{name: "in an IF", sql: "IF 1 THEN EXECUTE " + n("del") + "; END IF"},
				{name: "COM_STMT_PREPARE of EXECUTE", raw: func(r *myRaw) string {
					r.write(rawPacket(0, append([]byte{0x16}, "EXECUTE "+n("del")...)))
					return r.result()
				}, serverMay: true},
				{name: "COM_STMT_PREPARE of SET STATEMENT ... FOR EXECUTE", raw: func(r *myRaw) string {
					r.write(rawPacket(0, append([]byte{0x16}, "SET STATEMENT max_statement_time=100 FOR EXECUTE "+n("del")...)))
					return r.result()
				}, serverMay: true},
				{name: "COM_STMT_PREPARE and COM_STMT_EXECUTE of a compound statement that EXECUTEs it", raw: func(r *myRaw) string {
					return r.stmtRun("BEGIN NOT ATOMIC EXECUTE " + n("del") + "; END")
				}},
				{name: "COM_STMT_PREPARE and COM_STMT_EXECUTE of an IF that EXECUTEs it", raw: func(r *myRaw) string {
					return r.stmtRun("IF 1 THEN EXECUTE " + n("del") + "; END IF")
				}},
				{name: "COM_STMT_EXECUTE of a DELETE prepared by COM_STMT_PREPARE", raw: func(r *myRaw) string {
					r.write(rawPacket(0, append(append([]byte{0x17}, binID...), 0, 1, 0, 0, 0)))
					return r.result()
				}},
				{name: "COM_STMT_EXECUTE of a CALL of the procedure, prepared by COM_STMT_PREPARE", raw: func(r *myRaw) string {
					r.write(rawPacket(0, append(append([]byte{0x17}, callID...), 0, 1, 0, 0, 0)))
					return r.result()
				}},
				{name: "pipelined behind a SELECT", raw: func(r *myRaw) string {
					r.write(rawQuery("SELECT 1"), rawQuery("EXECUTE "+n("del")))
					if got := r.result(); got != "1" {
						return "the SELECT: " + got
					}
					return r.result()
				}},
				{name: "a name in another letter the case-folding of Go makes ASCII (KELVIN SIGN)", raw: func(r *myRaw) string {
					if got := r.query("PREPARE " + kelvin + " FROM 'SELECT 1'"); got != "OK" {
						return "the PREPARE of the Kelvin name: " + got
					}
					return r.query("EXECUTE " + n("k"))
				}},
				{name: "after a re-PREPARE of another name", raw: func(r *myRaw) string {
					r.query("PREPARE " + n("other") + " FROM 'SELECT 2'")
					return r.query("EXECUTE " + n("later"))
				}},
				{name: "a benign name", sql: "EXECUTE " + n("ok"), wantResult: "1"},
			}
			for _, a := range attempts {
				var got string
				if a.raw != nil {
					got = a.raw(r)
				} else {
					got = r.query(a.sql)
				}
				switch {
				case a.wantResult != "":
					if got != a.wantResult {
						t.Errorf("%s: %q, want %q", a.name, got, a.wantResult)
					}
				case strings.HasPrefix(got, "ERR 1227 42000 sqlfw:"):
				case a.serverMay && strings.HasPrefix(got, "ERR "):
					t.Logf("%s: the server refused it: %s", a.name, got)
				default:
					t.Errorf("%s: %q, want sqlfw's ERR 1227", a.name, got)
				}
				if got := f.rows(); got != 3 {
					t.Fatalf("%s: the rows are %d, want 3: it ran", a.name, got)
				}
				if got := r.query("SELECT 7"); got != "7" {
					t.Fatalf("%s: the session after it: %q", a.name, got)
				}
			}
			// the server logs an execution as "Execute\t" and the text it
			// ran: none names the table (the benign SELECT 1 does not)
			log := logFrom(t, my, from)
			for _, l := range strings.Split(log, "\n") {
				if strings.Contains(l, tbl) && (strings.Contains(l, "Execute\t") || strings.Contains(l, "\tQuery\t")) {
					t.Errorf("after the switch the server ran: %s", l)
				}
			}
			for _, s := range []string{"EXECUTE " + n("del"), "EXECUTE " + n("var"), "CALL " + proc} {
				for _, l := range strings.Split(linesWith(log, s), "\n") {
					if l != "" && !strings.Contains(l, "Prepare\t") {
						t.Errorf("after the switch the server was sent: %s", l)
					}
				}
			}
		})
	}
}

// changeUser sends COM_CHANGE_USER to user with password (a wrong one when
// wrong) and returns the server's last answer: "OK" or the ERR.
func (r *myRaw) changeUser(my myEnv, user, password string, wrong bool) string {
	r.t.Helper()
	cu := append([]byte{0x11}, user...)
	sc := nativeScramble(r.nonce, password)
	if wrong {
		sc = make([]byte, 20)
	}
	cu = append(append(cu, 0, byte(len(sc))), sc...)
	cu = append(append(cu, my.Database...), 0)
	cu = append(cu, 45, 0)
	cu = append(cu, "mysql_native_password\x00"...)
	r.write(rawPacket(0, cu))
	for {
		m := r.read()
		switch m[4] {
		case 0x00:
			return "OK"
		case 0xff:
			return rawErr(m)
		case 0xfe:
			rest := m[5:]
			i := strings.IndexByte(string(rest), 0)
			sc := nativeScramble(rest[i+1:], password)
			if wrong {
				sc = make([]byte, 20)
			}
			r.write(rawPacket(m[3]+1, sc))
		default:
			r.t.Fatalf("COM_CHANGE_USER: %q", m)
		}
	}
}

// TestRound10FailedChangeUser: a COM_CHANGE_USER the server refuses still
// resets the session (MariaDB's THD::change_user runs before the
// authentication): sql_mode and the character set go back to the global
// ones, every prepared statement is gone, and only the user and the
// database are restored. A session that set NO_BACKSLASH_ESCAPES or ANSI_QUOTES and
// then failed a change of user sends a text that reads as two harmless
// strings in its old sql_mode and as a stacked DELETE in the server's.
// The server's reset is shown on a direct connection first.
func TestRound10FailedChangeUser(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	f := newPrepFixture(t, my)
	marker := "failcu_" + f.marker

	// what MariaDB does
	r := f.login(my.addr())
	r.query("SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
	r.query("PREPARE " + f.name("s") + " FROM 'SELECT 1'")
	if got := r.changeUser(my, my.PWUser, my.PWPassword, true); !strings.HasPrefix(got, "ERR 1045") {
		t.Fatalf("direct: COM_CHANGE_USER with a wrong password: %q, want ERR 1045", got)
	}
	if got := r.query("SELECT @@sql_mode LIKE '%NO_BACKSLASH_ESCAPES%', current_user() LIKE '" + my.User + "@%', @@character_set_client = @@global.character_set_client"); got != "0|1|1" {
		t.Fatalf("direct: after the refused change of user, (NO_BACKSLASH_ESCAPES in sql_mode, the old user, the global character set): %q, want 0|1|1", got)
	}
	if got := r.query("EXECUTE " + f.name("s")); !strings.HasPrefix(got, "ERR 1243") {
		t.Fatalf("direct: EXECUTE after the refused change of user: %q, want ERR 1243 (the statement is gone)", got)
	}

	for _, tc := range []struct{ name, set, text string }{
		{"NO_BACKSLASH_ESCAPES", "SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')",
			`SELECT 'a\' , ' ; DELETE FROM ` + f.table + ` /* ` + marker + `_nbe */; -- '`},
		{"ANSI_QUOTES", "SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')",
			`SELECT "a\" , " ; DELETE FROM ` + f.table + ` /* ` + marker + `_ansi */; -- "`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.login(d.addr)
			if got := r.query(tc.set); got != "OK" {
				t.Fatalf("%s: %q", tc.set, got)
			}
			if got := r.changeUser(my, my.PWUser, my.PWPassword, true); !strings.HasPrefix(got, "ERR 1045") {
				t.Fatalf("COM_CHANGE_USER with a wrong password: %q, want ERR 1045", got)
			}
			got := r.query(tc.text)
			if !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:") {
				t.Errorf("the text read otherwise by the server's sql_mode: %q, want sqlfw's ERR 1227", got)
			}
			if n := f.rows(); n != 3 {
				t.Errorf("rows: %d, want 3", n)
			}
			if got := r.query("SELECT 1"); got != "1" {
				t.Errorf("a text without quotes after it: %q, want 1", got)
			}
			if got := r.query("SELECT 'x'"); got != "x" {
				t.Errorf("a text with quotes after that: %q, want x", got)
			}
		})
	}
	mustNotReach(t, my, marker)

	// the statements the refused change of user removed are forgotten
	r = f.login(d.addr)
	if got := r.query("PREPARE " + f.name("s") + " FROM 'SELECT 1'"); got != "OK" {
		t.Fatalf("PREPARE: %q", got)
	}
	r.write(rawPacket(0, append([]byte{0x16}, "SELECT 2"...)))
	if m := r.read(); m[4] != 0 {
		t.Fatalf("COM_STMT_PREPARE: %q", m)
	} else {
		r.read()
		r.read()
	}
	r.changeUser(my, my.PWUser, my.PWPassword, true)
	wantRawBlocked(t, "EXECUTE after the refused change of user", r.query("EXECUTE "+f.name("s")), "session-memory")
}

// pgStartup dials addr and sends a StartupMessage for user, with more
// messages in the same write; it returns the frontend and the connection.
func pgStartup(t *testing.T, addr, user string, more ...pgproto3.FrontendMessage) (*pgproto3.Frontend, net.Conn) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(hangBound))
	fe := pgproto3.NewFrontend(c, c)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": user, "database": pg.Database}})
	for _, m := range more {
		fe.Send(m)
	}
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	return fe, c
}

// pgUntil reads messages until one satisfying stop (returned), or the
// close (nil); it collects every ErrorResponse.
func pgUntil(t *testing.T, fe *pgproto3.Frontend, stop func(pgproto3.BackendMessage) bool) (pgproto3.BackendMessage, []pgproto3.ErrorResponse) {
	t.Helper()
	var errs []pgproto3.ErrorResponse
	for {
		m, err := fe.Receive()
		if err != nil {
			return nil, errs
		}
		if e, ok := m.(*pgproto3.ErrorResponse); ok {
			errs = append(errs, *e)
		}
		if stop != nil && stop(m) {
			return m, errs
		}
	}
}

func isReady(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.ReadyForQuery); return ok }

// wantPFatal wants PostgreSQL's own answer to a 'p' after authentication,
// FATAL 08P01 "invalid frontend message type 112", then the close.
func wantPFatal(t *testing.T, what string, fe *pgproto3.Frontend) {
	t.Helper()
	_, errs := pgUntil(t, fe, nil)
	if len(errs) == 0 || errs[len(errs)-1].Severity != "FATAL" || errs[len(errs)-1].Code != "08P01" ||
		!strings.Contains(errs[len(errs)-1].Message, "invalid frontend message type 112") {
		t.Errorf("%s: errors %+v before the close, want FATAL 08P01 invalid frontend message type 112", what, errs)
	}
}

// TestRound10PGPasswordMessage: a password message after authentication,
// in the forms an attacker has: pipelined behind a trust login's
// StartupMessage, behind an MD5 login's own answer, in the middle of an
// extended-protocol batch, in a COPY FROM STDIN's data, sent a byte at a
// time, empty. Each gets FATAL 08P01 and the close; the server never sees
// it nor anything of the read it came in (its log has no "type 112" and no
// marker), and the COPY's row is not in the table.
func TestRound10PGPasswordMessage(t *testing.T) {
	needSqlfwd(t)
	d := sharedDaemon(t)
	marker := "pmsg_" + randomHex(t)
	table := "e2e_pmsg_" + randomHex(t)
	directExec(t, "create table "+table+" (v text)")
	t.Cleanup(func() { directExec(t, "drop table if exists "+table) })
	before := len(serverLog(t))
	p := &pgproto3.PasswordMessage{Password: "x"}
	q := func(s string) *pgproto3.Query { return &pgproto3.Query{String: "select '" + marker + "_" + s + "'"} }

	t.Run("behind a trust login's StartupMessage", func(t *testing.T) {
		fe, _ := pgStartup(t, d.addr, pg.User, p, q("trust"))
		wantPFatal(t, "a 'p' pipelined with the startup", fe)
	})
	t.Run("behind an MD5 login's answer", func(t *testing.T) {
		fe, _ := pgStartup(t, d.addr, pg.MD5User)
		m, _ := pgUntil(t, fe, func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.AuthenticationMD5Password); return ok })
		md5m, ok := m.(*pgproto3.AuthenticationMD5Password)
		if !ok {
			t.Fatalf("no MD5 request: %T", m)
		}
		inner := md5.Sum([]byte(pg.MD5Password + pg.MD5User))
		outer := md5.Sum(append([]byte(hex.EncodeToString(inner[:])), md5m.Salt[:]...))
		fe.Send(&pgproto3.PasswordMessage{Password: "md5" + hex.EncodeToString(outer[:])})
		fe.Send(p)
		fe.Send(q("md5"))
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		wantPFatal(t, "a second 'p' behind the MD5 answer", fe)
	})
	t.Run("in an extended batch", func(t *testing.T) {
		fe, _ := pgStartup(t, d.addr, pg.User)
		pgUntil(t, fe, isReady)
		fe.Send(&pgproto3.Parse{Query: "select '" + marker + "_ext'"})
		fe.Send(&pgproto3.Bind{})
		fe.Send(p)
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		wantPFatal(t, "a 'p' between Bind and Execute", fe)
	})
	t.Run("in COPY FROM STDIN", func(t *testing.T) {
		fe, _ := pgStartup(t, d.addr, pg.User)
		pgUntil(t, fe, isReady)
		fe.Send(&pgproto3.Query{String: "copy " + table + " from stdin"})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		if m, _ := pgUntil(t, fe, func(m pgproto3.BackendMessage) bool { _, ok := m.(*pgproto3.CopyInResponse); return ok }); m == nil {
			t.Fatal("no CopyInResponse")
		}
		fe.Send(&pgproto3.CopyData{Data: []byte(marker + "_copy\n")})
		fe.Send(p)
		fe.Send(&pgproto3.CopyDone{})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		_, errs := pgUntil(t, fe, nil)
		if len(errs) == 0 {
			t.Errorf("a 'p' inside COPY data: no error before the close")
		}
	})
	t.Run("a byte at a time", func(t *testing.T) {
		fe, c := pgStartup(t, d.addr, pg.User)
		pgUntil(t, fe, isReady)
		b, _ := (&pgproto3.PasswordMessage{Password: marker + "_bytes"}).Encode(nil)
		for i := range b {
			if _, err := c.Write(b[i : i+1]); err != nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		wantPFatal(t, "a 'p' written a byte at a time", fe)
	})
	t.Run("empty", func(t *testing.T) {
		_, c := pgStartup(t, d.addr, pg.User)
		fe := pgproto3.NewFrontend(c, c)
		pgUntil(t, fe, isReady)
		qb, _ := q("e").Encode(nil)
		if _, err := c.Write(append([]byte{'p', 0, 0, 0, 4}, qb...)); err != nil {
			t.Fatal(err)
		}
		wantPFatal(t, "an empty 'p'", fe)
	})
	log := serverLog(t)[before:]
	for _, s := range []string{"type 112", "unexpected message type 0x70", marker} {
		if strings.Contains(log, s) {
			t.Errorf("the server saw the stray message or its read:\n%s", linesWith(log, s))
		}
	}
	if got := directInts(t, "select count(*) from "+table); got[0] != 0 {
		t.Errorf("rows copied: %v, want 0", got)
	}
}

// stmtPrepare sends COM_STMT_PREPARE of sql and returns its statement id
// and parameter count, reading the definitions after the PREPARE_OK.
func (r *myRaw) stmtPrepare(sql string) ([]byte, int) {
	r.t.Helper()
	r.write(rawPacket(0, append([]byte{0x16}, sql...)))
	ok := r.read()
	if ok[4] != 0 {
		r.t.Fatalf("COM_STMT_PREPARE %q: %s", sql, rawErr(ok))
	}
	cols, params := int(ok[9])|int(ok[10])<<8, int(ok[11])|int(ok[12])<<8
	n := 0
	if params > 0 {
		n += params + 1
	}
	if cols > 0 {
		n += cols + 1
	}
	for range n {
		r.read()
	}
	return append([]byte(nil), ok[5:9]...), params
}

// stmtRun prepares sql by COM_STMT_PREPARE and executes it without
// parameters, returning the first refusal (sqlfw's or the server's) or the
// execution's answer.
func (r *myRaw) stmtRun(sql string) string {
	r.t.Helper()
	r.write(rawPacket(0, append([]byte{0x16}, sql...)))
	ok := r.read()
	if ok[4] != 0 {
		return rawErr(ok)
	}
	cols, params := int(ok[9])|int(ok[10])<<8, int(ok[11])|int(ok[12])<<8
	n := 0
	if params > 0 {
		n += params + 1
	}
	if cols > 0 {
		n += cols + 1
	}
	for range n {
		r.read()
	}
	r.write(rawPacket(0, append(append([]byte{0x17}, ok[5:9]...), 0, 1, 0, 0, 0)))
	return r.result()
}

// TestRound10ExecuteBlocks: COM_STMT_EXECUTE parameter blocks an attacker
// writes, for a statement of two parameters: cut at every byte, a
// new-params-bound flag of 2, no types on the first execution, types for
// one parameter, a string whose length runs past the end, a length byte
// the protocol does not have. Each is answered with ER_WRONG_ARGUMENTS by
// sqlfw, never reaches the server (no Execute line), and the session goes
// on. A block with bytes after its last value runs, as MariaDB runs it
// (it reads no further): the general log shows the values sqlfw read.
func TestRound10ExecuteBlocks(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	f := newPrepFixture(t, my)
	r := f.login(d.addr)
	marker := "blocks_" + f.marker
	id, params := r.stmtPrepare("select ?, ? /* " + marker + " */")
	if params != 2 {
		t.Fatalf("params: %d", params)
	}
	header := append(append([]byte{0x17}, id...), 0, 1, 0, 0, 0)
	blk := func(b ...byte) []byte { return append(append([]byte(nil), header...), b...) }
	// 7 (LONGLONG) and 'ab' (VAR_STRING)
	whole := blk(0, 1, 0x08, 0, 0xfd, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2, 'a', 'b')
	bad := map[string][]byte{
		"flag 2":                     blk(0, 2, 0x08, 0, 0xfd, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2, 'a', 'b'),
		"no types, first execution":  blk(0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2, 'a', 'b'),
		"types for one parameter":    blk(0, 1, 0x08, 0, 7, 0, 0, 0, 0, 0, 0, 0),
		"a string past the end":      blk(0, 1, 0x08, 0, 0xfd, 0, 7, 0, 0, 0, 0, 0, 0, 0, 9, 'a', 'b'),
		"length byte 0xfb":           blk(0, 1, 0x08, 0, 0xfd, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0xfb, 'a', 'b'),
		"length byte 0xff":           blk(0, 1, 0x08, 0, 0xfd, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0xff, 'a', 'b'),
		"a 2-byte length cut":        blk(0, 1, 0x08, 0, 0xfd, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0xfc, 2),
		"a date whose length is cut": blk(0, 1, 0x08, 0, 0x0a, 0, 7, 0, 0, 0, 0, 0, 0, 0, 4, 0xe8, 7),
	}
	for k := len(header); k < len(whole); k++ {
		bad[fmt.Sprintf("cut at byte %d of %d", k, len(whole))] = whole[:k]
	}
	for name, b := range bad {
		r.write(rawPacket(0, b))
		if got := r.result(); !strings.HasPrefix(got, "ERR 1210 HY000 sqlfw:") {
			t.Errorf("%s: %q, want sqlfw's ERR 1210", name, got)
		}
		if got := r.query("SELECT 5"); got != "5" {
			t.Fatalf("%s: the session after it: %q", name, got)
		}
	}
	if l := linesWith(generalLog(t, my), marker); strings.Contains(l, "Execute\t") {
		t.Errorf("the server executed refused blocks:\n%s", l)
	}
	// whole, then whole with bytes after it: both run, with 7 and 'ab'
	for _, b := range [][]byte{whole, append(append([]byte(nil), whole...), 0x08, 9, 9, 9)} {
		r.write(rawPacket(0, b))
		if m := r.read(); m[4] != 2 {
			t.Fatalf("a whole block: %q, want two columns", m)
		}
		for eofs := 0; eofs < 2; {
			if m := r.read(); m[4] == 0xfe && len(m) < 13 {
				eofs++
			}
		}
	}
	if n := strings.Count(generalLog(t, my), "Execute\tselect 7, 'ab' /* "+marker); n != 2 {
		t.Errorf("the general log has %d executions with 7 and 'ab', want 2:\n%s", n, linesWith(generalLog(t, my), marker))
	}
}

// TestRound10HalfClose: a client that pipelines and then shuts down its
// write side gets every answer, in order, then the close, however its
// commands are mixed: a large result, a blocked DELETE (sqlfw's ERR in its
// place), a multi-statement text, a COM_STMT_PREPARE and an execution of
// MariaDB's last prepared id sent before the PREPARE_OK, a SQL-level
// PREPARE and EXECUTE, a sleep; and a last command sent only in part is
// never forwarded. The general log shows each allowed command once and
// neither the DELETE nor the partial one; the rows stay.
func TestRound10HalfClose(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	f := newPrepFixture(t, my)
	m := "halfclose10_" + f.marker
	r := f.login(d.addr)
	prep := append([]byte{0x16}, "select ? + 1 /* "+m+"_bin */"...)
	// COM_STMT_EXECUTE of the last prepared id, LONGLONG 41
	exec := []byte{0x17, 0xff, 0xff, 0xff, 0xff, 0, 1, 0, 0, 0, 0, 1, 0x08, 0, 41, 0, 0, 0, 0, 0, 0, 0}
	partial := rawQuery("select '" + m + "_partial'")
	r.write(
		rawQuery("select count(*) from seq_1_to_3000 /* "+m+"_a */"),
		rawQuery("select seq from seq_1_to_2000 where seq > 1998 /* "+m+"_rows */"),
		rawQuery("delete from "+f.table+" /* "+m+"_delete */"),
		rawQuery("select 1 /* "+m+"_multi1 */; select 2 /* "+m+"_multi2 */"),
		rawPacket(0, prep),
		rawPacket(0, exec),
		rawQuery("PREPARE "+f.name("hc")+" FROM 'SELECT 3 /* "+m+"_sqlprep */'"),
		rawQuery("EXECUTE "+f.name("hc")),
		rawQuery("select sleep(0.3), 'late' /* "+m+"_sleep */"),
		partial[:len(partial)-3],
	)
	if err := r.c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"3000", "1999;2000", "", "1 / 2"} {
		got := r.result()
		if want == "" {
			wantRawBlocked(t, "the DELETE", got, "no-unfiltered-writes")
		} else if got != want {
			t.Errorf("answer %d: %q, want %q", i+1, got, want)
		}
	}
	if ok := r.read(); ok[4] != 0 {
		t.Fatalf("the COM_STMT_PREPARE: %q", ok)
	}
	for range 4 { // the parameter and the column, each with its EOF
		r.read()
	}
	if cols := r.read(); cols[4] != 1 {
		t.Fatalf("the execution of the last prepared id: %q", cols)
	}
	for eofs := 0; eofs < 2; {
		if p := r.read(); p[4] == 0xfe && len(p) < 13 {
			eofs++
		}
	}
	for i, want := range []string{"OK", "3", "0|late"} {
		if got := r.result(); got != want {
			t.Errorf("answer %d after the binary ones: %q, want %q", i+7, got, want)
		}
	}
	rawEOF(t, r.c, "after the answers")
	log := generalLog(t, my)
	for _, s := range []string{"_a */", "_rows */", "_multi1", "_multi2", "_bin */", "_sqlprep", "_sleep"} {
		if !strings.Contains(log, m+s) {
			t.Errorf("the server never ran %s", s)
		}
	}
	if l := linesWith(log, m+"_bin"); !strings.Contains(l, "Execute\tselect 41 + 1") {
		t.Errorf("the execution of the last prepared id is not in the log:\n%s", l)
	}
	mustNotReach(t, my, m+"_delete", m+"_partial")
	if n := f.rows(); n != 3 {
		t.Errorf("rows: %d, want 3", n)
	}
}

// TestRound10OversizedBeforeLogin: packets before login larger than sqlfw
// holds then, in the places an attacker has: the first packet (a header of
// 16 MiB, of 1 MiB, with another sequence id), and the answer to an
// authentication switch. Each gets ER_NET_PACKET_TOO_LARGE after its
// sequence id, then the close.
func TestRound10OversizedBeforeLogin(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	hdr := func(n int, seq byte) []byte { return []byte{byte(n), byte(n >> 8), byte(n >> 16), seq} }
	for _, tc := range []struct {
		name string
		seq  byte
		send func(r *myRaw) []byte
	}{
		{"1 MiB first packet", 1, func(*myRaw) []byte { return hdr(1<<20, 1) }},
		{"16 MiB first packet with sequence id 5", 5, func(*myRaw) []byte { return hdr(0xffffff, 5) }},
		{"a 16 MiB header and its first bytes", 1, func(*myRaw) []byte { return append(hdr(0xffffff, 1), make([]byte, 5000)...) }},
		{"the answer to an auth switch", 3, func(r *myRaw) []byte {
			h := r.handshake(my.PWUser, "", my.Database, 45)
			h = append(h[:len(h)-len("mysql_native_password\x00")], "caching_sha2_password\x00"...)
			h[0] = byte(len(h) - 4) // another plugin: the server switches to its own
			r.write(h)
			// the switch request (or, for an empty password, an ERR)
			m := r.read()
			if m[4] != 0xfe {
				r.t.Skipf("no auth switch: %q", m)
			}
			return append(hdr(200000, m[3]+1), make([]byte, 1000)...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, d.addr)
			r.write(tc.send(r))
			m := r.read()
			if m[4] != 0xff || !strings.HasPrefix(rawErr(m), "ERR 1153 08S01") {
				t.Errorf("got %q (sequence id %d), want ERR 1153 08S01", m, m[3])
			} else if m[3] != tc.seq+1 {
				t.Errorf("ERR 1153 with sequence id %d, want %d", m[3], tc.seq+1)
			}
			rawEOF(t, r.c, "after the ERR")
		})
	}
}

// TestRound10Multibyte: applications in gbk, big5, sjis and latin1
// through sqlfwd, the character set given in the handshake or by SET
// NAMES: their own text (with a character whose second byte is 0x5c, the
// backslash, where the set has one) is stored and found as a direct
// utf8mb4 connection reads it, and EXECUTE IMMEDIATE of a constant in it
// runs. The 0x5c tricks (a lead byte before the backslash an escaping
// client added, in a statement and inside a PREPARE's text) are read as
// the server reads them and denied; the rows stay and the general log has
// none of them.
func TestRound10Multibyte(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	for _, tc := range []struct {
		cs        string
		collation byte   // in the handshake; 0: SET NAMES after a utf8mb4 login
		text      string // in cs
		lead      string // a lead byte whose pair with 0x5c is one character ("" none)
	}{
		{"gbk", 28, "\xd6\xd0\xce\xc4\x81\x5c", "\xbf"},
		{"big5", 0, "\xa4\xa4\xa4\xe5\xb3\x5c", "\xb3"},
		{"sjis", 13, "\x93\xfa\x96\x7b\x83\x5c", "\x83"},
		{"latin1", 0, "caf\xe9", ""},
	} {
		t.Run(tc.cs, func(t *testing.T) {
			m := "mb_" + tc.cs + "_" + randomHex(t)
			table := "e2e_" + m
			if _, err := direct.Exec("create table " + table + " (id int, name varchar(20) character set utf8mb4)"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
			if _, err := direct.Exec("insert into " + table + " values (1, 'one'), (2, 'two')"); err != nil {
				t.Fatal(err)
			}
			r := dialRaw(t, d.addr)
			coll := tc.collation
			if coll == 0 {
				coll = 45
			}
			r.write(r.handshake(my.User, "", my.Database, coll))
			r.auth("")
			if tc.collation == 0 {
				if got := r.query("SET NAMES " + tc.cs); got != "OK" {
					t.Fatalf("SET NAMES %s: %q", tc.cs, got)
				}
			}
			if got := r.query("insert into " + table + " values (3, '" + tc.text + "')"); got != "OK" {
				t.Fatalf("insert of %s text: %q", tc.cs, got)
			}
			var name, want string
			if err := direct.QueryRow(fmt.Sprintf("select convert(unhex('%X') using %s)", tc.text, tc.cs)).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if err := direct.QueryRow("select name from " + table + " where id = 3").Scan(&name); err != nil || name != want || !utf8.ValidString(name) {
				t.Errorf("the %s text read in utf8mb4: %q, %v; want %q", tc.cs, name, err, want)
			}
			if got := r.query("select id from " + table + " where name = '" + tc.text + "'"); got != "3" {
				t.Errorf("select by the %s text: %q, want 3", tc.cs, got)
			}
			if got := r.query("select name from " + table + " where id = 3"); got != tc.text {
				t.Errorf("the %s text read back: %q, want %q", tc.cs, got, tc.text)
			}
			if got := r.query("EXECUTE IMMEDIATE 'SELECT id FROM " + table + " WHERE name = ''" + tc.text + "'''"); got != "3" {
				t.Errorf("EXECUTE IMMEDIATE of a constant with the %s text: %q, want 3", tc.cs, got)
			}
			if tc.lead != "" {
				for _, a := range []struct{ name, sql string }{
					{"a lead byte before an added backslash", "delete from " + table + " where name = '" + tc.lead + "\\' or 1=1 -- " + m + "_del'"},
					{"in a select", "select * from " + table + " where name = '" + tc.lead + "\\' or 1=1 -- " + m + "_sel'"},
					{"inside a PREPARE's text", "PREPARE " + strings.ReplaceAll(m, "-", "_") + " FROM 'delete from " + table + " where name = ''" + tc.lead + "\\'' or 1=1 -- " + m + "_prep'''"},
					{"inside EXECUTE IMMEDIATE", "EXECUTE IMMEDIATE 'delete from " + table + " where name = ''" + tc.lead + "\\'' or 1=1 -- " + m + "_imm'''"},
				} {
					got := r.query(a.sql)
					if !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:") {
						t.Errorf("%s in %s: %q, want sqlfw's ERR 1227", a.name, tc.cs, got)
					}
				}
			} else {
				// a byte latin1 reads as a space to the server, outside quotes
				got := r.query("select 1\xa0union select name from " + table + " /* " + m + "_a0 */")
				if !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:") {
					t.Errorf("0xa0 between tokens in latin1: %q, want sqlfw's ERR 1227", got)
				}
			}
			var n int
			if err := direct.QueryRow("select count(*) from " + table).Scan(&n); err != nil || n != 3 {
				t.Errorf("rows: %d, %v; want 3", n, err)
			}
			mustNotReach(t, my, m+"_")
		})
	}
}

// TestRound10Reprepare: MariaDB prepares a statement again when a table it
// uses has changed since (ALTER TABLE), and reads its text again in the
// session's character set of that moment, not that of the PREPARE (it
// keeps the PREPARE's sql_mode). A DELETE whose condition is one string in
// utf8mb4 is a DELETE of every row in gbk. Through sqlfwd, an execution
// after the session's character set changed is judged as the server may
// read the text then: denied, the rows stay, and the log has no execution
// of it; back in utf8mb4 it runs. After NO_BACKSLASH_ESCAPES the same kind
// of statement runs and deletes nothing, through sqlfwd and on the server
// (which keeps the mode), so that is no false positive.
func TestRound10Reprepare(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	nbe := "SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"
	for _, tc := range []struct {
		name    string
		binary  bool
		inner   string // the DELETE's text after FROM t
		set, re string
		blocked bool
	}{
		{"COM_STMT_PREPARE, then NO_BACKSLASH_ESCAPES: runs as prepared", true, `WHERE name = 'x\' OR 1=1 -- '`, nbe, "SET sql_mode = DEFAULT", false},
		{"PREPARE, then NO_BACKSLASH_ESCAPES: runs as prepared", false, `WHERE name = 'x\' OR 1=1 -- '`, nbe, "SET sql_mode = DEFAULT", false},
		{"PREPARE in utf8mb4, then gbk", false, "WHERE name = '\xe0\xa0\xbf\\' OR 1=1 -- '", "SET NAMES gbk", "SET NAMES utf8mb4", true},
		{"COM_STMT_PREPARE in utf8mb4, then gbk", true, "WHERE name = '\xe0\xa0\xbf\\' OR 1=1 -- '", "SET NAMES gbk", "SET NAMES utf8mb4", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPrepFixture(t, my)
			direct := myDB(t, my, my.addr(), true)
			if _, err := direct.Exec("alter table " + f.table + " add column name varchar(20) character set utf8mb4"); err != nil {
				t.Fatal(err)
			}
			r := f.login(d.addr)
			text := "DELETE FROM " + f.table + " " + tc.inner
			name := f.name("re")
			var id []byte
			execute := func() string {
				if tc.binary {
					r.write(rawPacket(0, append(append([]byte{0x17}, id...), 0, 1, 0, 0, 0)))
					return r.result()
				}
				return r.query("EXECUTE " + name)
			}
			if tc.binary {
				id, _ = r.stmtPrepare(text)
			} else if got := r.query("PREPARE " + name + " FROM '" + strings.ReplaceAll(strings.ReplaceAll(text, `\`, `\\`), "'", "''") + "'"); got != "OK" {
				t.Fatalf("PREPARE: %q", got)
			}
			// benign: the mode it was prepared in, after the change of table
			if _, err := direct.Exec("alter table " + f.table + " add column z1 int"); err != nil {
				t.Fatal(err)
			}
			if got := execute(); !strings.HasPrefix(got, "OK") {
				t.Fatalf("the execution in the mode it was prepared in: %q", got)
			}
			if got := r.query(tc.set); got != "OK" {
				t.Fatalf("%s: %q", tc.set, got)
			}
			if _, err := direct.Exec("alter table " + f.table + " add column z2 int"); err != nil {
				t.Fatal(err)
			}
			from := generalLogSize(t, my)
			got := execute()
			switch {
			case tc.blocked && !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:"):
				t.Errorf("the execution after %s: %q, want sqlfw's ERR 1227", tc.set, got)
			case !tc.blocked && !strings.HasPrefix(got, "OK"):
				t.Errorf("the execution after %s: %q, want it run", tc.set, got)
			}
			if n := f.rows(); n != 3 {
				t.Errorf("rows: %d, want 3", n)
			}
			if l := logFrom(t, my, from); tc.blocked && (strings.Contains(l, "EXECUTE "+name) || strings.Contains(l, "Execute\tDELETE")) {
				t.Errorf("the server ran it:\n%s", l)
			}
			if got := r.query(tc.re); got != "OK" {
				t.Fatalf("%s: %q", tc.re, got)
			}
			if got := execute(); !strings.HasPrefix(got, "OK") {
				t.Errorf("the execution back in the mode it was prepared in: %q", got)
			}
		})
	}
}

// TestRound10ExecuteTypes: a COM_STMT_EXECUTE binds each parameter with a
// type, and the types decide where the next value starts. MariaDB 10.11
// reads INT24, YEAR, BIT and GEOMETRY parameters as NULL without reading
// their bytes, and a date's length as a length-encoded integer; a reader
// that took four bytes for an INT24, or one length byte for a date, reads
// the next value from another place than the server. In UPDATE t SET name
// = ? WHERE ?, the WHERE's value sqlfw read was 0 (no row) where the server
// read 1 (every row). On a direct connection each block updates every row;
// through sqlfwd each is answered with ER_WRONG_ARGUMENTS and never sent
// (no Execute line, the rows keep their names), and blocks of the types it
// reads as the server does run with the values it read.
func TestRound10ExecuteTypes(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	one8 := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	z := func(n int) []byte { return make([]byte, n) }
	cat := func(b ...[]byte) []byte { return bytes.Join(b, nil) }
	for _, tc := range []struct {
		name string
		typ  byte
		// vals: the server reads the first value's bytes and then the
		// WHERE's, one8 (1); sqlfw's reader took more bytes for the first
		// and then zeros (0)
		vals []byte
	}{
		{"INT24", wire.TypeInt24, cat(one8, z(4))},                                                     // the reader took 4 bytes
		{"YEAR", wire.TypeYear, cat(one8, z(2))},                                                       // 2
		{"BIT", wire.TypeBit, cat(one8, z(2))},                                                         // a length 1 and its byte
		{"GEOMETRY", wire.TypeGeometry, cat(one8, z(2))},                                               // the same
		{"a DATE with a 2-byte length", wire.TypeDate, cat([]byte{0xfc, 0, 0}, one8, z(250))},          // 1 + 252
		{"a DATETIME with an 8-byte length", wire.TypeDateTime, cat([]byte{0xfe}, z(8), one8, z(246))}, // 1 + 254
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := tc.vals
			block := func(id []byte) []byte {
				b := append(append([]byte{0x17}, id...), 0, 1, 0, 0, 0)
				b = append(b, 0, 1, tc.typ, 0, wire.TypeLongLong, 0)
				return append(b, vals...)
			}
			run := func(addr string) (string, *prepFixture) {
				f := newPrepFixture(t, my)
				if _, err := direct.Exec("alter table " + f.table + " add column name varchar(20) default 'kept'"); err != nil {
					t.Fatal(err)
				}
				r := f.login(addr)
				id, _ := r.stmtPrepare("UPDATE " + f.table + " SET name = ? WHERE ? /* " + f.marker + " */")
				r.write(rawPacket(0, block(id)))
				return r.result(), f
			}
			got, f := run(my.addr())
			var n int
			if err := direct.QueryRow("select count(*) from " + f.table + " where name is null or name <> 'kept'").Scan(&n); err != nil || n != 3 {
				t.Fatalf("direct: %q, %d rows changed (%v); want every row: the block is no attack", got, n, err)
			}
			got, f = run(d.addr)
			if !strings.HasPrefix(got, "ERR 1210 HY000 sqlfw:") {
				t.Errorf("through sqlfwd: %q, want sqlfw's ERR 1210", got)
			}
			if err := direct.QueryRow("select count(*) from " + f.table + " where name = 'kept'").Scan(&n); err != nil || n != 3 {
				t.Errorf("through sqlfwd: %d rows kept their name (%v), want 3", n, err)
			}
			if l := linesWith(generalLog(t, my), f.marker); strings.Contains(l, "Execute\t") {
				t.Errorf("the server executed it:\n%s", l)
			}
		})
	}
}

// TestRound10LongDataKept: a parameter sent by COM_STMT_SEND_LONG_DATA
// stays the server's until an execution reaches it. An execution sqlfw
// blocks (its WHERE ? bound true) never does, so the server still holds the
// long data at the next one, and reads no bytes of that parameter from its
// block: a reader that had forgotten the long data read the next value
// from the wrong place (0 where the server read 257, and every row
// updated). The general log and the rows show the second execution
// blocked too; the same sequence straight to MariaDB updates every row.
func TestRound10LongDataKept(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	run := func(addr string) (first, second string, f *prepFixture) {
		f = newPrepFixture(t, my)
		if _, err := direct.Exec("alter table " + f.table + " add column name varchar(20) default 'kept'"); err != nil {
			t.Fatal(err)
		}
		r := f.login(addr)
		id, _ := r.stmtPrepare("UPDATE " + f.table + " SET name = ? WHERE ? /* " + f.marker + " */")
		// the first parameter's value by long data (no answer)
		r.write(rawPacket(0, append(append(append([]byte{0x18}, id...), 0, 0), "long"...)))
		header := append(append([]byte{0x17}, id...), 0, 1, 0, 0, 0)
		// p0 long, p1 LONGLONG 1: every row; blocked by sqlfw
		r.write(rawPacket(0, append(append([]byte(nil), header...), 0, 1, wire.TypeVarString, 0, wire.TypeLongLong, 0, 1, 0, 0, 0, 0, 0, 0, 0)))
		first = r.result()
		// the same types: the server takes p0 from the long data it still
		// holds and p1 from the first 8 bytes (257); a reader without the
		// long data reads a 1-byte p0 and then p1 = 0
		r.write(rawPacket(0, append(append([]byte(nil), header...), 0, 1, wire.TypeVarString, 0, wire.TypeLongLong, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0)))
		second = r.result()
		return first, second, f
	}
	first, second, f := run(my.addr())
	var n int
	if err := direct.QueryRow("select count(*) from " + f.table + " where name = 'long'").Scan(&n); err != nil || n != 3 {
		t.Fatalf("direct: %q then %q, %d rows named by the long data (%v); want every row", first, second, n, err)
	}
	first, second, f = run(d.addr)
	if !strings.HasPrefix(first, "ERR 1227 42000 sqlfw:") {
		t.Errorf("through sqlfwd, WHERE ? bound true: %q, want sqlfw's ERR 1227", first)
	}
	if !strings.HasPrefix(second, "ERR 1227 42000 sqlfw:") {
		t.Errorf("through sqlfwd, the execution after it: %q, want sqlfw's ERR 1227", second)
	}
	if err := direct.QueryRow("select count(*) from " + f.table + " where name = 'kept'").Scan(&n); err != nil || n != 3 {
		t.Errorf("through sqlfwd: %d rows kept their name (%v), want 3", n, err)
	}
	if l := linesWith(generalLog(t, my), f.marker); strings.Contains(l, "Execute\t") {
		t.Errorf("the server executed it:\n%s", l)
	}
}

// TestRound10BlockedBindsNoTypes: an execution that binds new types and
// that sqlfw blocks never reaches the server, which keeps the types bound
// before; a block after it that binds none is read by the server with
// those. A reader that took the blocked block's types read its WHERE ? as
// 0 where the server read 1<<56 and updated every row.
func TestRound10BlockedBindsNoTypes(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	direct := myDB(t, my, my.addr(), true)
	run := func(addr string) (answers []string, f *prepFixture) {
		f = newPrepFixture(t, my)
		if _, err := direct.Exec("alter table " + f.table + " add column name varchar(20) default 'kept'"); err != nil {
			t.Fatal(err)
		}
		r := f.login(addr)
		id, _ := r.stmtPrepare("UPDATE " + f.table + " SET name = ? WHERE ? /* " + f.marker + " */")
		header := append(append([]byte{0x17}, id...), 0, 1, 0, 0, 0)
		for _, b := range [][]byte{
			// VAR_STRING 'a', LONGLONG 0: no row
			{0, 1, wire.TypeVarString, 0, wire.TypeLongLong, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0},
			// TINY 2, LONGLONG 1: every row (sqlfw blocks it)
			{0, 1, wire.TypeTiny, 0, wire.TypeLongLong, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0},
			// no types: the server's VAR_STRING of 2 bytes, then 1<<56;
			// with the blocked one's TINY, 2 and then 0
			{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		} {
			r.write(rawPacket(0, append(append([]byte(nil), header...), b...)))
			answers = append(answers, r.result())
		}
		return answers, f
	}
	got, f := run(my.addr())
	var n int
	if err := direct.QueryRow("select count(*) from " + f.table + " where name <> 'kept'").Scan(&n); err != nil || n != 3 {
		t.Fatalf("direct: %q, %d rows renamed (%v); want every row", got, n, err)
	}
	got, f = run(d.addr)
	if !strings.HasPrefix(got[0], "OK") || !strings.HasPrefix(got[1], "ERR 1227 42000 sqlfw:") || !strings.HasPrefix(got[2], "ERR 1227 42000 sqlfw:") {
		t.Errorf("through sqlfwd: %q; want OK (no row), then sqlfw's ERR 1227 twice", got)
	}
	if err := direct.QueryRow("select count(*) from " + f.table + " where name = 'kept'").Scan(&n); err != nil || n != 3 {
		t.Errorf("through sqlfwd: %d rows kept their name (%v), want 3", n, err)
	}
	if l := linesWith(generalLog(t, my), f.marker); strings.Count(l, "Execute\t") != 1 {
		t.Errorf("the server executed %d of them, want the first alone:\n%s", strings.Count(l, "Execute\t"), l)
	}
}

// TestRound10DumpGBK: mariadb-dump of a gbk database through sqlfwd with
// --default-character-set=gbk (its /*!40101 SET NAMES ... */ and the rows'
// Chinese, a quote, a backslash and a character whose second byte is 0x5c
// in gbk) is the dump taken directly, and its reload through sqlfwd in gbk
// gives a table of the same checksum; nothing is blocked.
func TestRound10DumpGBK(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	src, dst := "e2e_gbkdump_"+randomHex(t), "e2e_gbkload_"+randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	t.Cleanup(func() {
		_, _ = direct.Exec("drop database if exists " + src)
		_, _ = direct.Exec("drop database if exists " + dst)
	})
	for _, s := range []string{"create database " + src + " character set gbk", "create database " + dst + " character set gbk",
		"create table " + src + ".t (id int primary key, name varchar(20)) character set gbk",
		"insert into " + src + ".t values (1, '中文'), (2, 'it''s'), (3, 'back\\\\slash'), (4, convert(unhex('815C') using gbk))"} {
		if _, err := direct.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	want := mariadbDump(t, my, my.addr(), "--default-character-set=gbk", src)
	got := mariadbDump(t, my, d.addr, "--default-character-set=gbk", src)
	if got.Exit != 0 || got.Stdout != want.Stdout || !strings.Contains(got.Stdout, "/*!40101 SET NAMES gbk */") {
		t.Fatalf("mariadb-dump in gbk through sqlfwd: exit %d, %s; differs from the direct dump or lacks its SET NAMES", got.Exit, got.Stderr)
	}
	host, port, _ := net.SplitHostPort(d.addr)
	reload := runTool(t, 2*time.Minute, got.Stdout, nil, "mariadb", "--no-defaults", "-h", host, "-P", port, "-u", my.User, "--skip-ssl",
		"--default-character-set=gbk", dst)
	if reload.Exit != 0 || reload.Stderr != "" {
		t.Fatalf("reload in gbk through sqlfwd: %s", reload)
	}
	var a, b, c, e string
	if err := direct.QueryRow("checksum table "+src+".t").Scan(&c, &a); err != nil {
		t.Fatal(err)
	}
	if err := direct.QueryRow("checksum table "+dst+".t").Scan(&e, &b); err != nil || a != b {
		t.Errorf("checksums: %s %s, %s (%v); want equal", a, b, e, err)
	}
	if st := stats(t, d); st.Databases[0].Denied != 0 || st.Databases[0].ParseErrors != 0 {
		t.Errorf("%d denied, %d parse errors; want 0", st.Databases[0].Denied, st.Databases[0].ParseErrors)
	}
}
