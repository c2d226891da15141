package e2e

import (
	"bytes"
	"database/sql"
	"net"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// TestMySQLHandshakeAsServerReads: sqlfwd reads a client's handshake
// response as MariaDB does, so that the engine judges the session of the
// user and database the server logged in, not of what a crafted response
// shows a naive parser.
//
//   - A user sent as 'root' (quoted) logs in as root: MariaDB takes the
//     quotes off. A rule scoped to root applies to it; the statement never
//     reaches the server (its general log).
//   - CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA without
//     CLIENT_SECURE_CONNECTION: MariaDB reads a zero-terminated auth
//     response, a parser by the book a length-encoded one. The response
//     07 00 "mysql" 00 "sqlfw" 00 logs in to the database mysql (auth
//     "\x07", then the database) while the book reads the seven bytes
//     as the auth response and sqlfw as the database. sqlfwd refuses it
//     with ER_HANDSHAKE_ERROR.
func TestMySQLHandshakeAsServerReads(t *testing.T) {
	my := mariadbEnv(t)
	pol := policyFile(t, `rules:
  - id: root-reads-nothing
    action: deny
    reason: this user may not run statements through sqlfw in this test
    users: [`+my.User+`]
    match: {}
`)
	d := mysqlDaemon(t, my, "--policy", pol)

	t.Run("quoted user", func(t *testing.T) {
		marker := "quoted_user_" + randomHex(t)
		cfg := gomysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "'"+my.User+"'", "tcp", d.addr, my.Database
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var got string
		err = db.QueryRow("select '" + marker + "'").Scan(&got)
		wantMyBlocked(t, "a statement as user '"+my.User+"' (quoted)", err, "root-reads-nothing")
		if log := generalLog(t, my); strings.Contains(log, marker) {
			t.Errorf("the statement of the quoted user reached the server:\n%s", linesWith(log, marker))
		}
	})

	t.Run("length-encoded auth response without secure connection", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", d.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		r := &myRaw{t: t, c: c} // mysql_bypass_test.go
		read := r.read
		write := func(seq byte, payload []byte) { t.Helper(); r.write(rawPacket(seq, payload)) }
		onMysql := func(log string) int {
			return strings.Count(log, "@localhost on mysql") + strings.Count(log, "@127.0.0.1 on mysql")
		}
		before := onMysql(generalLog(t, my))
		read() // the greeting
		// long password, with db, 4.1, transactions, plugin auth,
		// length-encoded auth data; no secure connection
		var caps uint32 = 1<<0 | 1<<3 | 1<<9 | 1<<13 | 1<<19 | 1<<21
		hello := []byte{byte(caps), byte(caps >> 8), byte(caps >> 16), byte(caps >> 24), 0, 0, 0, 1, 45}
		hello = append(hello, make([]byte, 23)...)
		hello = append(append(hello, my.User...), 0)
		hello = append(hello, "\x07\x00mysql\x00"+my.Database+"\x00"...)
		write(1, hello)
		m := read()
		if m[4] == 0xfe { // before the fix: MariaDB asks for its plugin, and logs in
			write(m[3]+1, nil)
			m = read()
		}
		if m[4] != 0xff || !bytes.Contains(m, []byte("08S01")) || !bytes.Contains(m, []byte("sqlfw:")) {
			t.Errorf("a handshake response MariaDB reads another database from: got %q, want sqlfw's ERR 1043 (08S01)", m)
		}
		if log := generalLog(t, my); onMysql(log) != before {
			t.Errorf("the server logged the crafted session in to mysql:\n%s", linesWith(log, " on mysql"))
		}
	})
}
