package mysql

// The session against a real MariaDB (scripts/mariadb.sh; skipped unless
// SQLFW_MY_PORT is set) with go-sql-driver/mysql and the mariadb CLI, the
// engine judging with relaytest.Dialect. The daemon's own path is e2e's.

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// mariadb serves sessions on a local listener in front of the test MariaDB
// and returns the listener's address.
func mariadb(t *testing.T) (*harness, string) {
	t.Helper()
	port := os.Getenv("SQLFW_MY_PORT")
	if port == "" {
		t.Skip("SQLFW_MY_PORT not set: run scripts/test.sh, or eval \"$(scripts/mariadb.sh env)\"")
	}
	h := newHarness(t)
	var d net.Dialer
	h.Env.Dial = d.DialContext
	h.Env.Limits.BufferBytes = 32 << 10
	h.Env.Limits.MaxMessageBytes = 64 << 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := net.JoinHostPort(envOr("SQLFW_MY_HOST", "127.0.0.1"), port)
	h.WG.Add(1)
	go func() {
		defer h.WG.Done()
		for id := uint64(1); ; id++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.WG.Add(1)
			go func() {
				defer h.WG.Done()
				h.Proto.Serve(&h.Env, &relay.Conn{Client: c, ID: id, Via: relay.ViaListen, Upstream: relay.Upstream{Network: "tcp", Addr: up}})
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return h, ln.Addr().String()
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func openDB(t *testing.T, addr string, interpolate bool) *sql.DB {
	t.Helper()
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = envOr("SQLFW_MY_USER", "root"), "tcp", addr, envOr("SQLFW_MY_DATABASE", "sqlfw")
	cfg.InterpolateParams = interpolate
	cfg.MultiStatements = true
	cfg.AllowAllFiles = true
	cfg.MaxAllowedPacket = 0
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func wantBlocked(t *testing.T, err error, rule string) {
	t.Helper()
	var me *gomysql.MySQLError
	if !errors.As(err, &me) || me.Number != errBlocked || string(me.SQLState[:]) != "42000" || !strings.Contains(me.Message, rule) {
		t.Errorf("got %v, want error %d (42000) naming rule %s", err, errBlocked, rule)
	}
}

const mariadbPolicy = `
rules:
  - {id: no-delete, action: deny, match: {kind: [delete]}}
`

func TestMariaDBDriver(t *testing.T) {
	h, addr := mariadb(t)
	h.Eng.Store(testEngine(t, mariadbPolicy))
	// values longer than a packet need the server's leave
	if _, err := openDB(t, addr, false).Exec("set global max_allowed_packet = 67108864"); err != nil {
		t.Fatal(err)
	}
	for _, interpolate := range []bool{false, true} {
		t.Run(fmt.Sprintf("interpolateParams=%v", interpolate), func(t *testing.T) {
			db := openDB(t, addr, interpolate)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
				if err := conn.QueryRowContext(ctx, "select count(*) from relay_t where id > ?", 0).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			exec("drop table if exists relay_t")
			exec("create table relay_t (id int primary key, v longtext)")
			exec("insert into relay_t values (?, ?)", 1, "one")
			exec("insert into relay_t values (2, 'two'); insert into relay_t values (3, 'three')")
			// a blocked statement (a blocked prepare without interpolation)
			_, err = conn.ExecContext(ctx, "delete from relay_t where id = ?", 1)
			wantBlocked(t, err, "no-delete")
			_, err = conn.ExecContext(ctx, "select 1; delete from relay_t")
			wantBlocked(t, err, "no-delete")
			if n := count(); n != 3 {
				t.Errorf("rows after the blocks: %d, want 3", n)
			}
			// a transaction around a block stays open and commits
			exec("begin")
			exec("insert into relay_t values (?, ?)", 4, "four")
			_, err = conn.ExecContext(ctx, "delete from relay_t")
			wantBlocked(t, err, "no-delete")
			exec("insert into relay_t values (?, ?)", 5, "five")
			exec("commit")
			if n := count(); n != 5 {
				t.Errorf("rows after the transaction: %d, want 5", n)
			}
			// a large result: 64 rows of 1 MiB and one value longer than a
			// packet (16 MiB continuation fragments)
			var total, long int
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
			var v []byte
			if err := conn.QueryRowContext(ctx, "select concat(repeat('y', 20971520), ?)", "z").Scan(&v); err != nil {
				t.Fatal(err)
			}
			long = len(v)
			if total != 64<<20 || long != 20<<20+1 {
				t.Errorf("results of %d and %d bytes, want %d and %d", total, long, 64<<20, 20<<20+1)
			}
			// LOAD DATA LOCAL INFILE
			f := t.TempDir() + "/rows.tsv"
			if err := os.WriteFile(f, []byte("10\tten\n11\televen\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			exec("load data local infile '" + f + "' into table relay_t")
			if n := count(); n != 7 {
				t.Errorf("rows after LOAD DATA LOCAL: %d, want 7", n)
			}
		})
	}
}

// The mariadb CLI: one statement, several with -e, a file with source.
func TestMariaDBCLI(t *testing.T) {
	h, addr := mariadb(t)
	h.Eng.Store(testEngine(t, mariadbPolicy))
	host, port, _ := net.SplitHostPort(addr)
	cli := func(args ...string) (string, error) {
		cmd := exec.Command("mariadb", append([]string{"--no-defaults", "-h", host, "-P", port, "-u", envOr("SQLFW_MY_USER", "root"),
			"--skip-ssl", "-N", "-B", envOr("SQLFW_MY_DATABASE", "sqlfw")}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := cli("-e", "select 41+1"); err != nil || strings.TrimSpace(out) != "42" {
		t.Errorf("mariadb -e 'select 41+1': %q %v, want 42", out, err)
	}
	out, err := cli("-e", "drop table if exists relay_cli; create table relay_cli (id int); insert into relay_cli values (1); delete from relay_cli; select 'not reached'")
	if err == nil || !strings.Contains(out, "ERROR 1227 (42000)") || !strings.Contains(out, "no-delete") || strings.Contains(out, "not reached") {
		t.Errorf("mariadb -e with a blocked statement: %q %v, want ERROR 1227 (42000) naming no-delete and the rest not run", out, err)
	}
	f := t.TempDir() + "/script.sql"
	if err := os.WriteFile(f, []byte("insert into relay_cli values (2);\nselect count(*) from relay_cli;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := cli("-e", "source "+f); err != nil || strings.TrimSpace(out) != "2" {
		t.Errorf("mariadb -e 'source FILE': %q %v, want 2", out, err)
	}
}

// nativeScramble is mysql_native_password's answer to nonce:
// SHA1(password) XOR SHA1(nonce, SHA1(SHA1(password))).
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

// COM_CHANGE_USER through the relay: its authentication rounds pass, and
// the session's user changes, with the rules scoped to it.
func TestMariaDBChangeUser(t *testing.T) {
	h, addr := mariadb(t)
	h.Eng.Store(testEngine(t, "rules:\n  - {id: no-select-for-pw-user, action: deny, users: ["+envOr("SQLFW_MY_PW_USER", "sqlfw_user")+"], match: {kind: [select]}}\n"))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	read := func() []byte {
		t.Helper()
		m, err := readPkt(c)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// authRounds answers auth switches with mysql_native_password until
	// the OK, and fails on an ERR.
	authRounds := func(password string) {
		t.Helper()
		for {
			m := read()
			switch m[4] {
			case wire.HeaderOK:
				return
			case wire.AuthSwitchRequest:
				plugin, data, _ := wire.ParseAuthSwitch(m[4:])
				if string(plugin) != "mysql_native_password" {
					t.Fatalf("auth switch to %q", plugin)
				}
				_, _ = c.Write(pkt(wire.Seq(m)+1, nativeScramble(data, password)...))
			default:
				t.Fatalf("authentication: got %q", m)
			}
		}
	}
	g := read()
	hs, err := wire.ParseHandshake(g[4:])
	if err != nil {
		t.Fatal(err)
	}
	if hs.Caps.Has(wire.CapSSL) || hs.Caps.Has(wire.CapZstdCompression) {
		t.Errorf("the greeting offers SSL or zstd compression: %#x", uint64(hs.Caps))
	}
	nonce := append(append([]byte(nil), hs.AuthData1...), hs.AuthData2...)
	caps := wire.CapProtocol41 | wire.CapSecureConnection | wire.CapPluginAuth | wire.CapConnectWithDB | wire.CapTransactions | wire.CapLongPassword
	p := binary.LittleEndian.AppendUint32(nil, uint32(caps))
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, 45)
	p = append(p, make([]byte, 23)...)
	p = append(p, envOr("SQLFW_MY_USER", "root")...)
	p = append(p, 0, 0) // empty password
	p = append(p, envOr("SQLFW_MY_DATABASE", "sqlfw")...)
	p = append(p, 0)
	p = append(p, "mysql_native_password\x00"...)
	_, _ = c.Write(pkt(1, p...))
	authRounds("")
	queryOne := func(q string) []byte {
		t.Helper()
		_, _ = c.Write(query(q))
		var last []byte
		for i := 0; ; i++ {
			m := read()
			if m[4] == wire.HeaderERR {
				return m
			}
			if m[4] == wire.HeaderEOF && len(m) < 13 {
				if i > 2 {
					return last
				}
				continue
			}
			last = m
		}
	}
	if m := queryOne("select current_user()"); !strings.Contains(string(m), "root@") {
		t.Fatalf("current_user: %q", m)
	}
	pw := envOr("SQLFW_MY_PW_PASSWORD", "sqlfw_pass")
	cu := []byte{wire.ComChangeUser}
	cu = append(cu, envOr("SQLFW_MY_PW_USER", "sqlfw_user")...)
	cu = append(cu, 0, 20)
	cu = append(cu, nativeScramble(nonce, pw)...)
	cu = append(cu, "mysql\x00"...)
	cu = append(cu, 45, 0)
	cu = append(cu, "mysql_native_password\x00"...)
	_, _ = c.Write(pkt(0, cu...))
	authRounds(pw)
	if m := queryOne("select current_user()"); m[4] != wire.HeaderERR || !strings.Contains(string(m), "no-select-for-pw-user") {
		t.Errorf("after COM_CHANGE_USER a select: got %q, want it blocked by the rule scoped to the new user", m)
	}
	if m := queryOne("show grants"); !strings.Contains(string(m), "sqlfw_user") {
		t.Errorf("show grants after COM_CHANGE_USER: %q", m)
	}
	var s relay.Session
	s = h.Session()
	if i := s.Info(); i.User != envOr("SQLFW_MY_PW_USER", "sqlfw_user") || i.DBName != "mysql" {
		t.Errorf("Info after COM_CHANGE_USER: %+v", i)
	}
}
