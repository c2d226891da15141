package e2e

// Benign MySQL/MariaDB traffic through sqlfwd (enforce, embedded default
// policy) and the adversarial faces of the same features (issue 21, class
// 8): a GBK application, MariaDB's EXECUTE IMMEDIATE, mariadb-dump and its
// reload. engine/mysql/testdata/adversarial/17-benign.tsv, 18-multibyte.tsv
// and 19-immediate.tsv hold the statements; these tests add the server.

import (
	"encoding/hex"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/mysql"
)

// gbkZhongwen is 中文 in GBK.
const gbkZhongwen = "\xd6\xd0\xce\xc4"

// TestMySQLGBKApplication: a client in gbk (the mariadb CLI with
// --default-character-set=gbk) creates, inserts and selects Chinese text
// through sqlfwd: nothing is blocked, and a direct utf8mb4 connection reads
// 中文 from the table. The classic GBK escape bypass (addslashes turns
// %bf%27 into %bf%5c%27, which gbk reads as one character and a quote) is
// read as the server reads it and blocked, as is a lone lead byte: neither
// reaches the general log, and the table keeps its rows.
func TestMySQLGBKApplication(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "gbk_" + randomHex(t)
	table := "e2e_gbk_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	t.Cleanup(func() { _, _ = direct.Exec("drop table if exists " + table) })
	gbk := func(sql string) psqlResult {
		t.Helper()
		return mariadbCLI(t, my, d.addr, "--default-character-set=gbk", "-e", sql)
	}
	if r := gbk("create table " + table + " (id int primary key, name varchar(20) character set utf8mb4)"); r.Exit != 0 {
		t.Fatalf("create table through sqlfwd in gbk: %s", r)
	}
	if r := gbk("insert into " + table + " values (1, '" + gbkZhongwen + "'), (2, 'plain')"); r.Exit != 0 {
		t.Fatalf("insert of gbk text through sqlfwd: %s", r)
	}
	var name string
	if err := direct.QueryRow("select name from " + table + " where id = 1").Scan(&name); err != nil || name != "中文" {
		t.Errorf("the row inserted in gbk, read in utf8mb4: %q, %v; want 中文", name, err)
	}
	if r := gbk("select id from " + table + " where name = '" + gbkZhongwen + "'"); r.Exit != 0 || strings.TrimSpace(r.Stdout) != "1" {
		t.Errorf("select by gbk text through sqlfwd: %s, want 1", r)
	}
	if r := gbk("select name from " + table + " where id = 1"); r.Exit != 0 || strings.TrimSpace(r.Stdout) != gbkZhongwen {
		t.Errorf("select of the gbk text through sqlfwd: %q, want %q", r.Stdout, gbkZhongwen)
	}
	for _, tc := range []struct{ name, sql, rule string }{
		{"0xbf5c then a quote", "delete from " + table + " where name = '\xbf\\' or 1=1 -- " + marker + "_5c'", "no-unfiltered-writes"},
		{"0xbf5c then a quote, in a select", "select * from " + table + " where name = '\xbf\\' or 1=1 -- " + marker + "_sel'", "no-tautology"},
		{"a lone lead byte", "delete from " + table + " where name = '\xbf' or 1=1 -- " + marker + "_lone'", "client-charset-invalid"},
	} {
		r := gbk(tc.sql)
		if r.Exit == 0 || !strings.Contains(r.Stderr, "ERROR 1227 (42000)") || !strings.Contains(r.Stderr, tc.rule) {
			t.Errorf("%s in gbk: %s, want ERROR 1227 naming %s", tc.name, r, tc.rule)
		}
	}
	// The same trick is one harmless string in utf8mb4, as the server reads it.
	if r := mariadbCLI(t, my, d.addr, "-e", "select count(*) from "+table+" where id = '\xbf\\' or 1=1 -- '"); r.Exit != 0 || strings.TrimSpace(r.Stdout) != "0" {
		t.Errorf("the 0xbf5c text in a utf8mb4 session (one string): %s, want 0", r)
	}
	var n int
	if err := direct.QueryRow("select count(*) from " + table).Scan(&n); err != nil || n != 2 {
		t.Errorf("rows after the attempts: %d, %v; want 2", n, err)
	}
	mustNotReach(t, my, marker)
	if st := stats(t, d); st.Databases[0].ParseErrors != 0 {
		t.Errorf("%d parse errors in the gbk session, want 0", st.Databases[0].ParseErrors)
	}
}

// TestMySQLCharsetTablesAgree checks engine/mysql's multibyte conversion
// against MariaDB's own character sets: every one- to three-byte sequence
// that Read accepts as one character in a string is one character to the
// server too (a space, never a trail byte, separates them), and the server
// converts none of them to an ASCII character. Where the two tables map a
// character to different non-ASCII characters, the count is logged (the
// reading of the text is the same; docs/policy.md says so).
func TestMySQLCharsetTablesAgree(t *testing.T) {
	my := mariadbEnv(t)
	db := myDirect(t, my)
	for _, cs := range []string{"gbk", "gb2312", "big5", "sjis", "cp932", "euckr", "ujis", "eucjpms"} {
		t.Run(cs, func(t *testing.T) {
			var seqs [][]byte
			var want []string
			var single [256]bool // the bytes Read accepts as a character on their own
			try := func(seq []byte) {
				text := "SELECT '" + string(seq) + "'"
				read, _, _, ok := mysql.Dialect.Read([]byte(text), &engine.LexState{ClientEncoding: cs})
				if !ok {
					return
				}
				s := strings.TrimSuffix(strings.TrimPrefix(string(read), "SELECT '"), "'")
				if n := utf8.RuneCountInString(s); n != 1 {
					// Two characters: a single-byte one (sjis's half-width
					// katakana, which are no lead byte to the server either)
					// and the next byte.
					if n != 2 || len(seq) != 2 || !single[seq[0]] {
						t.Fatalf("%x: Read gave %q, not one character", seq, s)
					}
					return
				}
				if len(seq) == 1 {
					single[seq[0]] = true
				}
				seqs = append(seqs, seq)
				want = append(want, s)
			}
			for a := 0x80; a < 0x100; a++ {
				try([]byte{byte(a)})
				for b := 1; b < 0x100; b++ {
					if b == ' ' {
						continue // the separator below
					}
					try([]byte{byte(a), byte(b)})
				}
			}
			for b := 0xa1; b < 0xff && (cs == "ujis" || cs == "eucjpms"); b++ {
				for c := 0xa1; c < 0xff; c++ {
					try([]byte{0x8f, byte(b), byte(c)}) // EUC-JP's SS3
				}
			}
			if len(seqs) < 100 {
				t.Fatalf("Read accepts %d characters of %s: the test cannot fail", len(seqs), cs)
			}
			var all []byte
			for _, s := range seqs {
				all = append(append(all, s...), ' ')
			}
			var got string
			if err := db.QueryRow("SELECT HEX(CONVERT(_" + cs + " X'" + hex.EncodeToString(all) + "' USING utf8mb4))").Scan(&got); err != nil {
				t.Fatal(err)
			}
			b, err := hex.DecodeString(got)
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(strings.TrimSuffix(string(b), " "), " ")
			if len(parts) != len(seqs) {
				t.Fatalf("the server read %d characters where Read read %d", len(parts), len(seqs))
			}
			differ, unmapped := 0, 0
			for i, p := range parts {
				r, size := utf8.DecodeRuneInString(p)
				switch {
				case p == "?":
					unmapped++ // one character the server has no Unicode for
				case size != len(p):
					t.Errorf("%x: the server read %q, more than one character", seqs[i], p)
				case r < 0x80:
					t.Errorf("%x: the server converts it to ASCII %q, Read accepts it as %q", seqs[i], p, want[i])
				case p != want[i]:
					differ++
				}
			}
			t.Logf("%s: %d characters, %d mapped otherwise by the server, %d with no Unicode mapping on the server", cs, len(seqs), differ, unmapped)
		})
	}
}

// TestMySQLExecuteImmediate: MariaDB's EXECUTE IMMEDIATE of a constant runs
// through sqlfwd as the statement it holds; one that deletes every row, and
// text assembled at run time, are blocked and never reach the server.
func TestMySQLExecuteImmediate(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "immediate_" + randomHex(t)
	table := "e2e_immediate_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + table + " (id int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
	if r := mariadbCLI(t, my, d.addr, "-e", "EXECUTE IMMEDIATE 'SELECT 41+1'"); r.Exit != 0 || strings.TrimSpace(r.Stdout) != "42" {
		t.Errorf("EXECUTE IMMEDIATE 'SELECT 41+1': %s, want 42", r)
	}
	if r := mariadbCLI(t, my, d.addr, "-e", "EXECUTE IMMEDIATE 'INSERT INTO "+table+" VALUES (?), (?)' USING 1, 2"); r.Exit != 0 {
		t.Errorf("EXECUTE IMMEDIATE of an INSERT USING: %s", r)
	}
	for _, tc := range []struct{ sql, rule string }{
		{"EXECUTE IMMEDIATE 'DELETE FROM " + table + " /* " + marker + "_all */'", "no-unfiltered-writes"},
		{"EXECUTE IMMEDIATE CONCAT('DELETE FROM ', '" + table + " /* " + marker + "_concat */')", "no-dynamic-sql"},
		{"EXECUTE IMMEDIATE 'SELECT authentication_string FROM mysql.user /* " + marker + "_cred */'", "no-credential-tables"},
	} {
		r := mariadbCLI(t, my, d.addr, "-e", tc.sql)
		if r.Exit == 0 || !strings.Contains(r.Stderr, "ERROR 1227 (42000)") || !strings.Contains(r.Stderr, tc.rule) {
			t.Errorf("%s: %s, want ERROR 1227 naming %s", tc.sql, r, tc.rule)
		}
	}
	var n int
	if err := direct.QueryRow("select count(*) from " + table).Scan(&n); err != nil || n != 2 {
		t.Errorf("rows: %d, %v; want the 2 inserted", n, err)
	}
	mustNotReach(t, my, marker)
}

// dumpDatabase makes a database with what a DBA dumps: tables with rows
// (text with quotes, backslashes and Chinese), a foreign key, a view, a
// trigger, a procedure, a function and an event, all defined by the test's
// account, which mariadb-dump writes as DEFINER=account.
func dumpDatabase(t *testing.T, my myEnv, name string) {
	t.Helper()
	script := strings.ReplaceAll(`DROP DATABASE IF EXISTS DB; CREATE DATABASE DB; USE DB;
CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(50) NOT NULL, price DECIMAL(10,2), KEY k_name (name)) DEFAULT CHARSET=utf8mb4;
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, tid INT, note TEXT, FOREIGN KEY (tid) REFERENCES t(id) ON DELETE CASCADE);
INSERT INTO t (name, price) VALUES ('apple', 1.5), ('中文', 2.25), ('it''s', NULL), ('back\\slash', 3);
CREATE VIEW v AS SELECT id, name FROM t WHERE price > 1;
DELIMITER //
CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW BEGIN INSERT INTO audit (tid, note) VALUES (NEW.id, 'ins'); END//
CREATE PROCEDURE p(IN x INT) BEGIN SELECT * FROM t WHERE id = x; END//
CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC RETURN x * 2//
CREATE EVENT ev ON SCHEDULE EVERY 1 DAY DISABLE DO DELETE FROM audit WHERE id < 0//
DELIMITER ;
INSERT INTO t (name, price) VALUES ('pear', 4);
`, "DB", name)
	if r := runTool(t, time.Minute, script, nil, "mariadb", "--no-defaults", "-h", my.Host, "-P", my.Port, "-u", my.User, "--skip-ssl"); r.Exit != 0 {
		t.Fatalf("creating %s directly: %s", name, r)
	}
}

// mariadbDump runs mariadb-dump against addr; the server's host line and
// the completion time are cut, so that two dumps compare.
func mariadbDump(t *testing.T, my myEnv, addr string, args ...string) psqlResult {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	r := runTool(t, 2*time.Minute, "", nil, "mariadb-dump", append([]string{"--no-defaults", "-h", host, "-P", port, "-u", my.User, "--skip-ssl"}, args...)...)
	r.Stdout = regexp.MustCompile(`(?m)^-- (Host|Dump completed).*$`).ReplaceAllString(r.Stdout, "")
	return r
}

// TestMySQLDumpReload: mariadb-dump of a database with tables, rows, a
// view, a trigger and routines, through sqlfwd, is the dump taken directly
// (--routines --triggers --single-transaction); its reload through sqlfwd
// with the mariadb client by the same user (DEFINER = the session's own
// user: engine/mysql definer.go) dumps again as the original. With --events
// the event meets no-scheduled-sql, as the policy says, and the rest of the
// reload goes on with --force.
//
// With the catalog in force (a monitoring account's catalog connection,
// myCatalogDaemon) the same holds: the dump's view, trigger and routines,
// and the writes the reload sends while the source's trigger and routines
// are in the catalog, are judged by what they do and pass.
func TestMySQLDumpReload(t *testing.T) {
	my := mariadbEnv(t)
	t.Run("text", func(t *testing.T) { mysqlDumpReload(t, my, mysqlDaemon(t, my)) })
	t.Run("catalog", func(t *testing.T) {
		mysqlDumpReload(t, my, myCatalogDaemon(t, my, policyWith(t, mysql.DefaultPolicyYAML(), "", "")))
	})
}

func mysqlDumpReload(t *testing.T, my myEnv, d *daemon) {
	src, dst := "e2e_dump_src_"+randomHex(t), "e2e_dump_dst_"+randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	t.Cleanup(func() {
		_, _ = direct.Exec("drop database if exists " + src)
		_, _ = direct.Exec("drop database if exists " + dst)
	})
	dumpDatabase(t, my, src)
	args := []string{"--routines", "--triggers", "--single-transaction"}
	want := mariadbDump(t, my, my.addr(), append(args, src)...)
	if want.Exit != 0 {
		t.Fatalf("mariadb-dump directly: %s", want)
	}
	got := mariadbDump(t, my, d.addr, append(args, src)...)
	if got.Exit != 0 || got.Stdout != want.Stdout {
		t.Fatalf("mariadb-dump through sqlfwd (exit %d, stderr %s) differs from the direct dump:\n--- through sqlfwd:\n%s\n--- direct:\n%s", got.Exit, got.Stderr, got.Stdout, want.Stdout)
	}
	if _, err := direct.Exec("create database " + dst); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(d.addr)
	reload := runTool(t, 2*time.Minute, got.Stdout, nil, "mariadb", "--no-defaults", "-h", host, "-P", port, "-u", my.User, "--skip-ssl", dst)
	if reload.Exit != 0 || reload.Stderr != "" {
		t.Fatalf("reload of the dump through sqlfwd: %s", reload)
	}
	again := mariadbDump(t, my, my.addr(), append(args, dst)...)
	again.Stdout = strings.ReplaceAll(again.Stdout, dst, src) // the dump's comments name the database
	if again.Exit != 0 || again.Stdout != want.Stdout {
		t.Errorf("the database reloaded through sqlfwd does not dump as the original:\n--- reloaded:\n%s\n--- original:\n%s", again.Stdout, want.Stdout)
	}
	var rows int
	if err := direct.QueryRow(fmt.Sprintf("select count(*) from %s.t where name in ('中文', 'it''s', 'back\\\\slash')", dst)).Scan(&rows); err != nil || rows != 3 {
		t.Errorf("the reloaded rows with quotes, a backslash and Chinese: %d, %v; want 3", rows, err)
	}
	if st := stats(t, d); st.Databases[0].Denied != 0 || st.Databases[0].ParseErrors != 0 {
		t.Errorf("sqlfw stats after the dump and reload: %d denied, %d parse errors; want 0\n%s", st.Databases[0].Denied, st.Databases[0].ParseErrors, tail(d.log(), 20))
	}
	// With --events the dump holds the event, which no-scheduled-sql
	// denies on the reload, as the policy says; --force restores the rest.
	withEvents := mariadbDump(t, my, d.addr, append(args, "--events", src)...)
	if withEvents.Exit != 0 || !strings.Contains(withEvents.Stdout, "EVENT `ev`") {
		t.Fatalf("mariadb-dump --events through sqlfwd: exit %d, %s", withEvents.Exit, withEvents.Stderr)
	}
	dst2 := dst + "_ev"
	t.Cleanup(func() { _, _ = direct.Exec("drop database if exists " + dst2) })
	if _, err := direct.Exec("create database " + dst2); err != nil {
		t.Fatal(err)
	}
	reload = runTool(t, 2*time.Minute, withEvents.Stdout, nil, "mariadb", "--no-defaults", "-h", host, "-P", port, "-u", my.User, "--skip-ssl", "--force", dst2)
	if errs := strings.Count(reload.Stderr, "ERROR"); errs != 1 || !strings.Contains(reload.Stderr, "ERROR 1227 (42000)") || !strings.Contains(reload.Stderr, "no-scheduled-sql") {
		t.Errorf("reload of the dump with --events: %d errors, want the event's no-scheduled-sql alone\n%s", errs, reload.Stderr)
	}
	again = mariadbDump(t, my, my.addr(), append(args, dst2)...)
	if again.Stdout = strings.ReplaceAll(again.Stdout, dst2, src); again.Stdout != want.Stdout {
		t.Errorf("the database reloaded with --events but its event does not dump as the original without events:\n%s", again.Stdout)
	}
	var events int
	if err := direct.QueryRow("select count(*) from information_schema.events where event_schema = ?", dst2).Scan(&events); err != nil || events != 0 {
		t.Errorf("events created by the reload: %d, %v; want 0", events, err)
	}
}

// TestMySQLRefresh: COM_REFRESH (mysql_refresh(), which older clients'
// mysqladmin and mysqldump -F send; MariaDB 10.11's own tools send FLUSH
// statements) is judged as the FLUSH statements its bits amount to:
// REFRESH_STATUS and REFRESH_TABLES pass in enforce mode, REFRESH_LOG meets
// no-server-signals and never reaches the server (the general log's Refresh
// lines); in monitor mode it reaches the server, as without sqlfwd. The
// FLUSH statements mariadb-admin and mariadb-dump -F send are judged alike.
func TestMySQLRefresh(t *testing.T) {
	my := mariadbEnv(t)
	refreshes := func() int {
		t.Helper()
		return strings.Count(generalLog(t, my), " Refresh\t")
	}
	refresh := func(addr string, bits byte) string {
		t.Helper()
		r := dialRaw(t, addr)
		r.write(r.handshake(my.User, "", my.Database, 45))
		r.auth("")
		r.write(rawPacket(0, []byte{0x07, bits}))
		return r.result()
	}
	d := mysqlDaemon(t, my)
	before := refreshes()
	for _, bits := range []byte{0x10, 0x04, 0x14} {
		if got := refresh(d.addr, bits); got != "OK" {
			t.Errorf("COM_REFRESH %#x through sqlfwd: %q, want OK", bits, got)
		}
	}
	if after := refreshes(); after != before+3 {
		t.Errorf("the general log has %d Refresh commands after three allowed ones, want %d", after, before+3)
	}
	for _, bits := range []byte{0x02, 0x12, 0x80} {
		wantRawBlocked(t, fmt.Sprintf("COM_REFRESH %#x", bits), refresh(d.addr, bits), "no-server-signals")
	}
	if after := refreshes(); after != before+3 {
		t.Errorf("the general log has %d Refresh commands after the blocked ones, want %d", after, before+3)
	}
	mon := mysqlDaemon(t, my, "--mode", "monitor")
	if got := refresh(mon.addr, 0x02); got != "OK" {
		t.Errorf("COM_REFRESH REFRESH_LOG through sqlfwd in monitor mode: %q, want OK", got)
	}
	if after := refreshes(); after != before+4 {
		t.Errorf("the general log has %d Refresh commands after monitor mode's, want %d", after, before+4)
	}
	host, port, _ := net.SplitHostPort(d.addr)
	admin := func(cmd string) psqlResult {
		return runTool(t, time.Minute, "", nil, "mariadb-admin", "--no-defaults", "-h", host, "-P", port, "-u", my.User, "--skip-ssl", cmd)
	}
	if r := admin("flush-status"); r.Exit != 0 {
		t.Errorf("mariadb-admin flush-status through sqlfwd: %s", r)
	}
	if r := admin("flush-logs"); r.Exit == 0 || !strings.Contains(r.Stderr, "no-server-signals") {
		t.Errorf("mariadb-admin flush-logs through sqlfwd: %s, want it blocked by no-server-signals", r)
	}
	if r := mariadbDump(t, my, d.addr, "-F", my.Database); r.Exit == 0 || !strings.Contains(r.Stderr, "no-server-signals") {
		t.Errorf("mariadb-dump -F through sqlfwd: exit %d %s, want it stopped by no-server-signals", r.Exit, r.Stderr)
	}
}
