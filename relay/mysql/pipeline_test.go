package mysql

import (
	"fmt"
	"testing"

	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// A command a client sends before the authentication exchange has ended
// (with its handshake response, or behind a COM_CHANGE_USER and its auth
// answer, in one write) is judged like any other once the server's OK
// arrives: it is never forwarded as an authentication round, which the
// server would read as a command after its OK.
func TestCommandsDuringAuthentication(t *testing.T) {
	t.Run("after the handshake response", func(t *testing.T) {
		hello := handshakeResponse(clientCaps, "app", "shop")
		h := newHarness(t)
		h.run(t, []step{send(greeting(serverCaps)), expect(hello), send(ok(2, autocommit)),
			expect(query("select 1")), send(resultSet(autocommit))},
			[]step{expectFunc(checkGreeting), send(hello, query("delete from t")), expect(ok(2, autocommit)),
				expectErr(1, errBlocked, "42000", "no-delete"),
				send(query("select 1")), expect(resultSet(autocommit))})
	})
	t.Run("after COM_CHANGE_USER", func(t *testing.T) {
		srv, cli := login()
		cu := pkt(0, append([]byte{wire.ComChangeUser}, "admin\x00\x00other\x00\x2d\x00mysql_native_password\x00\x00"...)...)
		switchReq := pktS(1, wire.AuthSwitchRequest, "mysql_native_password\x00abcdefghijklmnopqrst\x00")
		answer := pkt(2) // an empty password needs no nonce: sent before the switch request
		h := newHarness(t)
		h.run(t, append(srv,
			expect(cu), send(switchReq), expect(answer), send(ok(3, autocommit)),
			expect(query("select 1")), send(resultSet(autocommit))),
			append(cli,
				send(cu, answer, query("delete from t")), expect(switchReq), expect(ok(3, autocommit)),
				expectErr(1, errBlocked, "42000", "no-delete"),
				send(query("select 1")), expect(resultSet(autocommit))))
	})
}

// The session's database follows USE without session tracking (the text
// in its simple form), a prepared USE's COM_STMT_EXECUTE and COM_INIT_DB,
// and a command sent before such a change is answered waits for the
// answer: rules scoped to a database see the database it runs in.
func TestDatabaseChanges(t *testing.T) {
	const policy = `
rules:
  - {id: no-mysql-schema, action: deny, databases: [mysql], match: {}}
`
	hello := handshakeResponse(clientCaps&^wire.CapSessionTrack, "app", "shop")
	for _, tc := range []struct {
		name           string
		server, client []step
	}{
		{"USE without session tracking",
			[]step{expect(query("use mysql")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("use mysql")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "no-mysql-schema")}},
		{"a query pipelined behind COM_INIT_DB",
			[]step{expect(pktS(0, wire.ComInitDB, "mysql")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(pktS(0, wire.ComInitDB, "mysql"), query("select 1")), expect(ok(1, autocommit)),
				expectErr(1, errBlocked, "42000", "no-mysql-schema")}},
		{"a query pipelined behind USE",
			[]step{expect(query("USE `mysql`;")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("USE `mysql`;"), query("select 1")), expect(ok(1, autocommit)),
				expectErr(1, errBlocked, "42000", "no-mysql-schema")}},
		{"COM_STMT_EXECUTE of a prepared USE",
			[]step{expect(prepare("use mysql")), send(prepareOK(3)), expect(execute(3)), send(ok(1, autocommit)), expectClosed()},
			[]step{send(prepare("use mysql")), expect(prepareOK(3)), send(execute(3), query("select 1")), expect(ok(1, autocommit)),
				expectErr(1, errBlocked, "42000", "no-mysql-schema")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.Eng.Store(testEngine(t, policy))
			h.run(t, append([]step{send(greeting(serverCaps)), expect(hello), send(ok(2, autocommit))}, tc.server...),
				append([]step{expectFunc(checkGreeting), send(hello), expect(ok(2, autocommit))}, tc.client...))
		})
	}
}

// COM_FIELD_LIST is judged as the SHOW COLUMNS it amounts to: a rule
// scoped to the database (or naming the table) sees it.
func TestFieldListJudged(t *testing.T) {
	const policy = `
rules:
  - {id: no-mysql-schema, action: deny, databases: [mysql], match: {}}
`
	srv, cli := login()
	fieldList := pktS(0, wire.ComFieldList, "user\x00%")
	eof := pkt(1, 0xfe, 0, 0, 2, 0)
	h := newHarness(t)
	h.Eng.Store(testEngine(t, policy))
	h.run(t, append(srv, expect(fieldList), send(eof), expect(pktS(0, wire.ComInitDB, "mysql")), send(ok(1, autocommit)), expectClosed()),
		append(cli, send(fieldList), expect(eof), send(pktS(0, wire.ComInitDB, "mysql")), expect(ok(1, autocommit)),
			send(fieldList), expectErr(1, errBlocked, "42000", "no-mysql-schema")))
}

// COM_REFRESH (mysqladmin flush-*, mariadb-dump -F) is judged as the FLUSH
// and RESET statements its bits stand for: FLUSH STATUS passes, FLUSH LOGS
// and RESET MASTER meet the rule on signals_server, also as one bit of
// several; in monitor mode the server gets it and answers.
func TestRefreshJudged(t *testing.T) {
	const policy = `
rules:
  - {id: no-server-signals, action: deny, match: {effects: [signals_server]}}
`
	refresh := func(bits byte) []byte { return pkt(0, wire.ComRefresh, bits) }
	for _, tc := range []struct {
		name    string
		bits    byte
		blocked bool
	}{
		{"FLUSH STATUS", wire.RefreshStatus, false},
		{"FLUSH TABLES", wire.RefreshTables, false},
		{"no bit", 0, false},
		{"FLUSH LOGS", wire.RefreshLog, true},
		{"FLUSH PRIVILEGES", wire.RefreshGrant, true},
		{"RESET MASTER", wire.RefreshMaster, true},
		{"FLUSH STATUS and LOGS", wire.RefreshStatus | wire.RefreshLog, true},
		{"the thread cache (no statement the engine parses)", wire.RefreshThreads, true},
	} {
		for _, monitor := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s monitor=%v", tc.name, monitor), func(t *testing.T) {
				h := newHarness(t)
				h.Eng.Store(testEngine(t, policy))
				h.Enforce.Store(!monitor)
				srv, cli := login()
				if tc.blocked && !monitor {
					h.run(t, append(srv, expectClosed()),
						append(cli, send(refresh(tc.bits)), expectErr(1, errBlocked, "42000", "")))
					return
				}
				h.run(t, append(srv, expect(refresh(tc.bits)), send(ok(1, autocommit)), expectClosed()),
					append(cli, send(refresh(tc.bits)), expect(ok(1, autocommit))))
			})
		}
	}
}
