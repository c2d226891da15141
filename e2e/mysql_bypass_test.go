package e2e

// Attempts to get a statement past sqlfwd to MariaDB that the engine did
// not judge as the server runs it, with a raw protocol client: every one is
// checked in the server's general log, not only in the client's error.

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// myRaw is a MySQL protocol client that writes packets as told, pipelined
// or not, without CLIENT_DEPRECATE_EOF.
type myRaw struct {
	t     *testing.T
	c     net.Conn
	nonce []byte
	// caps are sent in the handshake response: rawCaps unless changed.
	caps uint32
}

// rawCaps: long password, with db, 4.1, transactions, secure connection,
// multi-statements and multi-results, plugin auth.
const rawCaps = 1<<0 | 1<<3 | 1<<9 | 1<<13 | 1<<15 | 1<<16 | 1<<17 | 1<<19

// dialRaw connects and reads the greeting.
func dialRaw(t *testing.T, addr string) *myRaw {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := &myRaw{t: t, c: c, caps: rawCaps}
	g := r.read()
	// the nonce: 8 bytes after the version and connection id, 12 more
	// after the capabilities, character set, status and reserved bytes
	v := bytes.IndexByte(g[5:], 0)
	p := g[5+v+1:]
	r.nonce = append(append([]byte(nil), p[4:12]...), p[31:43]...)
	return r
}

func (r *myRaw) read() []byte {
	r.t.Helper()
	var h [4]byte
	if _, err := io.ReadFull(r.c, h[:]); err != nil {
		r.t.Fatalf("reading a packet: %v", err)
	}
	b := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	if _, err := io.ReadFull(r.c, b); err != nil {
		r.t.Fatalf("reading a packet: %v", err)
	}
	return append(h[:], b...)
}

// packet is one packet (less than 16 MiB) with sequence id seq.
func rawPacket(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

func rawQuery(sql string) []byte { return rawPacket(0, append([]byte{0x03}, sql...)) }

func (r *myRaw) write(b ...[]byte) {
	r.t.Helper()
	if _, err := r.c.Write(bytes.Join(b, nil)); err != nil {
		r.t.Fatal(err)
	}
}

func nativeScramble(nonce []byte, password string) []byte {
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

// handshake is the handshake response for user (mysql_native_password
// against the greeting's nonce) with collation id charset.
func (r *myRaw) handshake(user, password, db string, charset byte) []byte {
	p := binary.LittleEndian.AppendUint32(nil, r.caps)
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, charset)
	p = append(p, make([]byte, 23)...)
	p = append(append(p, user...), 0)
	sc := nativeScramble(r.nonce, password)
	p = append(append(p, byte(len(sc))), sc...)
	p = append(append(p, db...), 0)
	p = append(p, "mysql_native_password\x00"...)
	return rawPacket(1, p)
}

// auth reads the server's authentication packets up to its OK, answering
// auth switches for password.
func (r *myRaw) auth(password string) {
	r.t.Helper()
	for {
		m := r.read()
		switch m[4] {
		case 0x00:
			return
		case 0xfe:
			rest := m[5:]
			i := bytes.IndexByte(rest, 0)
			r.write(rawPacket(m[3]+1, nativeScramble(rest[i+1:], password)))
		default:
			r.t.Fatalf("authentication: %q", m)
		}
	}
}

// result reads one command's answer: "OK", rawErr's "ERR ..." or the
// rows, each as its column values joined by "|", rows by ";". It follows
// SERVER_MORE_RESULTS_EXISTS, joining the results by " / ".
func (r *myRaw) result() string {
	r.t.Helper()
	var out []string
	for {
		m := r.read()
		var status uint16
		switch m[4] {
		case 0x00:
			out = append(out, "OK")
			i := 5
			for range 2 { // affected rows, last insert id
				i += lenencSize(m[i])
			}
			status = binary.LittleEndian.Uint16(m[i:])
		case 0xff:
			return strings.Join(append(out, rawErr(m)), " / ")
		default:
			var rows []string
			for eofs := 0; eofs < 2; {
				m = r.read()
				if m[4] == 0xff {
					return strings.Join(append(out, rawErr(m)), " / ")
				}
				if m[4] == 0xfe && len(m) < 13 {
					eofs++
					status = binary.LittleEndian.Uint16(m[7:])
					continue
				}
				if eofs == 1 {
					rows = append(rows, rawRow(m[4:]))
				}
			}
			out = append(out, strings.Join(rows, ";"))
		}
		if status&8 == 0 { // SERVER_MORE_RESULTS_EXISTS
			return strings.Join(out, " / ")
		}
	}
}

// rawErr is "ERR <code> <sqlstate> <message>".
func rawErr(m []byte) string {
	return fmt.Sprintf("ERR %d %s %s", binary.LittleEndian.Uint16(m[5:]), m[8:13], m[13:])
}

func lenencSize(b byte) int {
	switch b {
	case 0xfc:
		return 3
	case 0xfd:
		return 4
	case 0xfe:
		return 9
	}
	return 1
}

// rawRow reads a text-protocol row of short values.
func rawRow(p []byte) string {
	var cols []string
	for len(p) > 0 {
		if p[0] == 0xfb {
			cols = append(cols, "NULL")
			p = p[1:]
			continue
		}
		n := int(p[0])
		cols = append(cols, string(p[1:1+n]))
		p = p[1+n:]
	}
	return strings.Join(cols, "|")
}

// wantRawBlocked wants sqlfw's ERR 1227 naming rule.
func wantRawBlocked(t *testing.T, what, got, rule string) {
	t.Helper()
	if !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:") || !strings.Contains(got, rule) {
		t.Errorf("%s: got %q, want sqlfw's ERR 1227 naming rule %s", what, got, rule)
	}
}

// mustNotReach fails for every marker the general log holds.
func mustNotReach(t *testing.T, my myEnv, markers ...string) {
	t.Helper()
	log := generalLog(t, my)
	for _, m := range markers {
		if strings.Contains(log, m) {
			t.Errorf("the server ran a statement sqlfw did not judge as it ran:\n%s", linesWith(log, m))
		}
	}
}

// TestMySQLCommandsDuringAuthentication: a command pipelined behind the
// handshake response, or behind a COM_CHANGE_USER and its auth answer (an
// empty password needs no nonce), reached the server unjudged: sqlfwd
// forwarded everything as authentication rounds until the server's OK.
func TestMySQLCommandsDuringAuthentication(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "authpipe_" + randomHex(t)
	table := "e2e_authpipe_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + table + " (id int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
	if _, err := direct.Exec("insert into " + table + " values (1), (2)"); err != nil {
		t.Fatal(err)
	}

	count := func(r *myRaw) {
		t.Helper()
		r.write(rawQuery("select count(*) from " + table))
		if got := r.result(); got != "2" {
			t.Errorf("rows after the attempt: %q, want 2", got)
		}
	}
	t.Run("COM_CHANGE_USER", func(t *testing.T) {
		r := dialRaw(t, d.addr)
		r.write(r.handshake(my.User, "", my.Database, 45))
		r.auth("")
		cu := append([]byte{0x11}, my.User...)
		cu = append(cu, 0, 0) // no auth data: the server switches
		cu = append(append(cu, my.Database...), 0)
		cu = append(cu, 45, 0)
		cu = append(cu, "mysql_native_password\x00"...)
		r.write(rawPacket(0, cu), rawPacket(2, nil), rawQuery("delete from "+table+" /* "+marker+" change_user */"))
		if m := r.read(); m[4] != 0xfe {
			t.Fatalf("COM_CHANGE_USER: %q, want an auth switch", m)
		}
		if m := r.read(); m[4] != 0x00 {
			t.Fatalf("COM_CHANGE_USER: %q, want OK", m)
		}
		wantRawBlocked(t, "a DELETE sent behind COM_CHANGE_USER", r.result(), "no-unfiltered-writes")
		count(r)
	})
	t.Run("handshake", func(t *testing.T) {
		r := dialRaw(t, d.addr)
		r.write(r.handshake(my.User, "", my.Database, 45), rawQuery("delete from "+table+" /* "+marker+" handshake */"))
		r.auth("")
		wantRawBlocked(t, "a DELETE sent with the handshake response", r.result(), "no-unfiltered-writes")
		count(r)
	})
	mustNotReach(t, my, marker)
}

// TestMySQLLexStateChanges: ways to change the client character set or
// sql_mode without sqlfwd seeing it, after which it read a text otherwise
// than the server: "'\xbf\\' or 1=1 -- '" is one string to a UTF-8
// reader and, in gbk, a string ending after the two-byte character 0xbf5c
// followed by OR 1=1; "'x\\' or 1=1 -- '" likewise under
// NO_BACKSLASH_ESCAPES. Each attempt must be blocked and absent from the
// general log, and the table keep its rows.
func TestMySQLLexStateChanges(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "lexstate_" + randomHex(t)
	table := "e2e_lexstate_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + table + " (id int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
	gbk := func(name string) string {
		return "delete from " + table + " where id = '\xbf\\' or 1=1 -- " + marker + " " + name + "'"
	}
	const sessionTrack = 1 << 23
	for _, tc := range []struct {
		name      string
		caps      uint32
		collation byte
		setup     func(r *myRaw)
		attack    string
		// owed: answers setup left unread (commands pipelined with the
		// attack)
		owed int
	}{
		{"session tracking turned off", rawCaps | sessionTrack, 45, func(r *myRaw) {
			r.exec("set session_track_system_variables = ''")
			r.exec("set names gbk")
		}, gbk("tracking"), 0},
		{"SET NAMES with vertical tabs", rawCaps, 45, func(r *myRaw) {
			r.exec("set\vnames\vgbk")
		}, gbk("vt"), 0},
		{"pipelined behind SET sql_mode", rawCaps, 45, func(r *myRaw) {
			r.write(rawQuery("set sql_mode = 'NO_BACKSLASH_ESCAPES'"))
		}, "delete from " + table + " where id = 'x\\' or 1=1 -- " + marker + " set_pipelined'", 1},
		{"pipelined behind an EXECUTE of SET sql_mode", rawCaps, 45, func(r *myRaw) {
			r.exec("prepare s from 'set sql_mode = \\'NO_BACKSLASH_ESCAPES\\''")
			r.write(rawQuery("execute s"))
		}, "delete from " + table + " where id = 'x\\' or 1=1 -- " + marker + " execute_pipelined'", 1},
		{"EXECUTE of a PREPAREd SET NAMES", rawCaps, 45, func(r *myRaw) {
			r.exec("prepare s from 'set names gbk'")
			r.exec("set names utf8mb4")
			r.exec("execute s")
		}, gbk("execute"), 0},
		{"COM_STMT_EXECUTE of a prepared SET NAMES", rawCaps, 45, func(r *myRaw) {
			r.write(rawPacket(0, append([]byte{0x16}, "set names gbk"...)))
			ok := r.read()
			if ok[4] != 0 {
				t.Fatalf("COM_STMT_PREPARE: %q", ok)
			}
			id := ok[5:9]
			r.write(rawPacket(0, append(append([]byte{0x17}, id...), 0, 1, 0, 0, 0)))
			if got := r.result(); got != "OK" {
				t.Fatalf("COM_STMT_EXECUTE: %q", got)
			}
		}, gbk("stmt_execute"), 0},
		{"COM_CHANGE_USER to gbk_chinese_nopad_ci", rawCaps, 45, func(r *myRaw) {
			cu := append([]byte{0x11}, my.User...)
			cu = append(cu, 0, 0)
			cu = append(append(cu, my.Database...), 0)
			cu = append(cu, 0x1c, 0x04) // 1052
			cu = append(cu, "mysql_native_password\x00"...)
			r.write(rawPacket(0, cu))
			r.auth("")
		}, gbk("change_user"), 0},
		{"COM_RESET_CONNECTION back to the handshake's gbk", rawCaps, 28, func(r *myRaw) {
			r.exec("set names utf8mb4")
			r.write(rawPacket(0, []byte{0x1f}))
			if got := r.result(); got != "OK" {
				t.Fatalf("COM_RESET_CONNECTION: %q", got)
			}
		}, gbk("reset"), 0},
		{"NO_BACKSLASH_ESCAPES after sql_mode was tracked", rawCaps | sessionTrack, 45, func(r *myRaw) {
			r.exec("set session_track_system_variables = 'sql_mode'")
			r.exec("set sql_mode = ''")
			r.exec("set session_track_system_variables = ''")
			r.exec("set sql_mode = 'NO_BACKSLASH_ESCAPES'")
		}, "delete from " + table + " where id = 'x\\' or 1=1 -- " + marker + " nbe'", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := direct.Exec("delete from " + table + " where id > 0"); err != nil {
				t.Fatal(err)
			}
			if _, err := direct.Exec("insert into " + table + " values (1), (2)"); err != nil {
				t.Fatal(err)
			}
			r := dialRaw(t, d.addr)
			r.caps = tc.caps
			r.write(r.handshake(my.User, "", my.Database, tc.collation))
			r.auth("")
			tc.setup(r)
			r.write(rawQuery(tc.attack))
			for range tc.owed {
				if got := r.result(); strings.HasPrefix(got, "ERR") {
					t.Fatalf("setup: %s", got)
				}
			}
			if got := r.result(); !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:") {
				t.Errorf("%q: got %q, want sqlfw's ERR 1227", tc.attack, got)
			}
			r.write(rawQuery("select count(*) from " + table))
			if got := r.result(); got != "2" {
				t.Errorf("rows after the attempt: %q, want 2", got)
			}
		})
	}
	mustNotReach(t, my, marker)
}

// exec runs sql and wants it to succeed.
func (r *myRaw) exec(sql string) {
	r.t.Helper()
	r.write(rawQuery(sql))
	if got := r.result(); strings.HasPrefix(got, "ERR") {
		r.t.Fatalf("%s: %s", sql, got)
	}
}

// TestMySQLSingleByteCharsets: in a single-byte client character set some
// bytes above 0x7F are control characters or spaces to MariaDB's lexer and
// letters to the engine's parser: "--\x80" (cp1250) begins a comment that
// hid a quote, and "\xff" (cp866) separated words the engine read as one
// identifier, which read password hashes.
func TestMySQLSingleByteCharsets(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	marker := "sbcs_" + randomHex(t)
	table := "e2e_sbcs_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + table + " (id int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
	if _, err := direct.Exec("insert into " + table + " values (1), (2)"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		collation byte
		attack    string
	}{
		{"cp1250 --\\x80", 26, "select 1 --\x80 '\n; delete from " + table + " where id > 0 /* " + marker + " cp1250 */; -- '"},
		{"macroman --\\xcb", 39, "select 1 --\xcb '\n; delete from " + table + " where id > 0 /* " + marker + " macroman */; -- '"},
		{"cp866 \\xff", 36, "select user, password\xfffrom\xffmysql.user /* " + marker + " cp866 */"},
		{"latin1 \\xe9\\xa0", 8, "update " + table + " set id = 3 where b\xe9\xa0or(1) /* " + marker + " latin1 */"},
		// MySQL 8's utf8mb4_0900_ai_ci, which MariaDB 10.11 does not know:
		// the server's default (scripts/mariadb.sh: latin1) applies
		{"255 on a latin1 server", 255, "update " + table + " set id = 3 where b\xe9\xa0or(1) /* " + marker + " fallback */"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.collation == 255 {
				var cs string
				if err := direct.QueryRow("select @@global.character_set_client").Scan(&cs); err != nil || cs != "latin1" {
					t.Skipf("the server's default character set is %q (%v), not latin1", cs, err)
				}
			}
			r := dialRaw(t, d.addr)
			r.write(r.handshake(my.User, "", my.Database, tc.collation))
			r.auth("")
			r.write(rawQuery(tc.attack))
			if got := r.result(); !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:") {
				t.Errorf("%q: got %q, want sqlfw's ERR 1227", tc.attack, got)
			}
			r.write(rawQuery("select count(*) from " + table))
			if got := r.result(); got != "2" {
				t.Errorf("rows after the attempt: %q, want 2", got)
			}
		})
	}
	mustNotReach(t, my, marker)
}

// TestMySQLDatabaseScope: a rule scoped to a database (docs/policy.md
// suggests "databases: [mysql]" against unqualified reads of the mysql
// schema) judged statements in a database they did not run in: after USE
// without session tracking (MariaDB does not say), behind a pipelined
// COM_INIT_DB or USE, after "USE mysql;" in the same message, after a
// prepared USE.
func TestMySQLDatabaseScope(t *testing.T) {
	my := mariadbEnv(t)
	def, err := os.ReadFile(filepath.Join("..", "engine", "mysql", "default_policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policy := strings.Replace(string(def), "\nrules:\n", "\nrules:\n  - {id: no-mysql-schema, action: deny, reason: the mysql schema is off limits, databases: [mysql], match: {}}\n", 1)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	d := mysqlDaemon(t, my, "--policy", path)
	marker := "dbscope_" + randomHex(t)
	read := func(name string) string {
		return "select user, password from user /* " + marker + " " + name + " */"
	}
	const sessionTrack = 1 << 23
	for _, tc := range []struct {
		name string
		caps uint32
		run  func(r *myRaw) string
	}{
		{"USE without session tracking", rawCaps, func(r *myRaw) string {
			r.exec("use mysql")
			r.write(rawQuery(read("use")))
			return r.result()
		}},
		{"USE with a vertical tab", rawCaps, func(r *myRaw) string {
			r.exec("use\vmysql")
			r.write(rawQuery(read("use_vt")))
			return r.result()
		}},
		{"SET STATEMENT ... FOR USE", rawCaps, func(r *myRaw) string {
			r.write(rawQuery("set statement max_statement_time = 10 for use mysql"))
			if got := r.result(); strings.HasPrefix(got, "ERR") {
				return got
			}
			r.write(rawQuery(read("set_statement")))
			return r.result()
		}},
		{"pipelined COM_INIT_DB", rawCaps, func(r *myRaw) string {
			r.write(rawPacket(0, append([]byte{0x02}, "mysql"...)), rawQuery(read("init_db")))
			if got := r.result(); got != "OK" {
				t.Fatalf("COM_INIT_DB: %q", got)
			}
			return r.result()
		}},
		{"pipelined USE under session tracking", rawCaps | sessionTrack, func(r *myRaw) string {
			r.write(rawQuery("use mysql"), rawQuery(read("use_pipelined")))
			if got := r.result(); got != "OK" {
				t.Fatalf("USE: %q", got)
			}
			return r.result()
		}},
		{"USE and a statement in one message", rawCaps, func(r *myRaw) string {
			r.write(rawQuery("use mysql; " + read("use_multi")))
			return r.result()
		}},
		{"session_track_schema off", rawCaps | sessionTrack, func(r *myRaw) string {
			r.exec("set session_track_schema = off")
			r.exec("use `mysql`;")
			r.write(rawQuery(read("track_off")))
			return r.result()
		}},
		{"PREPARE of USE", rawCaps, func(r *myRaw) string {
			r.write(rawQuery("prepare s from 'use mysql'"))
			if got := r.result(); strings.HasPrefix(got, "ERR") {
				return got // refused: its EXECUTE would change the database unseen
			}
			r.exec("execute s")
			r.write(rawQuery(read("prepare")))
			return r.result()
		}},
		{"COM_FIELD_LIST in the mysql schema", rawCaps, func(r *myRaw) string {
			r.write(rawPacket(0, append([]byte{0x02}, "mysql"...)))
			if got := r.result(); got != "OK" {
				t.Fatalf("COM_INIT_DB: %q", got)
			}
			r.write(rawPacket(0, append([]byte{0x04}, "x_"+marker+"\x00%"...)))
			return r.result()
		}},
		{"COM_STMT_EXECUTE of a prepared USE", rawCaps, func(r *myRaw) string {
			r.write(rawPacket(0, append([]byte{0x16}, "use mysql"...)))
			ok := r.read()
			if ok[4] != 0 {
				t.Fatalf("COM_STMT_PREPARE: %q", ok)
			}
			r.write(rawPacket(0, append(append([]byte{0x17}, ok[5:9]...), 0, 1, 0, 0, 0)), rawQuery(read("stmt_execute")))
			if got := r.result(); got != "OK" {
				t.Fatalf("COM_STMT_EXECUTE: %q", got)
			}
			return r.result()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, d.addr)
			r.caps = tc.caps
			r.write(r.handshake(my.User, "", my.Database, 45))
			r.auth("")
			if got := tc.run(r); !strings.HasPrefix(got, "ERR 1227 42000 sqlfw:") {
				t.Errorf("got %q, want sqlfw's ERR 1227", got)
			}
		})
	}
	mustNotReach(t, my, marker)
}
