package mysql

import (
	"bytes"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// lexDialect denies every text whose lexing state is not the default,
// naming the state in its rule id: the tests read what the session told
// the engine.
type lexDialect struct{ testDialect }

func (lexDialect) Read(sql []byte, l *engine.LexState) ([]byte, string, string, bool) {
	switch {
	case !bytes.HasPrefix(sql, []byte("select")):
	case l.Unconfirmed:
		return nil, "unconfirmed", "", false
	case l.ClientEncoding != "":
		return nil, "charset-" + l.ClientEncoding, "", false
	case l.SQLMode != "":
		return nil, "mode-" + l.SQLMode, "", false
	}
	return sql, "", "", true
}

func TestLexState(t *testing.T) {
	setMode := "set sql_mode = 'NO_BACKSLASH_ESCAPES'"
	for _, tc := range []struct {
		name           string
		caps           wire.Caps
		collation      byte
		server, client []step
	}{
		{"sql_mode from the status flags", clientCaps, 45,
			[]step{expect(query(setMode)), send(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
				expect(query("set sql_mode = ''")), send(ok(1, autocommit)), expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query(setMode)), expect(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "mode-NO_BACKSLASH_ESCAPES"),
				send(query("set sql_mode = ''")), expect(ok(1, autocommit)), send(query("select 1")), expect(resultSet(autocommit))}},
		{"MariaDB's ANSI_QUOTES flag", clientCaps, 45,
			[]step{expect(query("set sql_mode = 'ANSI'")), send(ok(1, autocommit|wire.StatusAnsiQuotes)), expectClosed()},
			[]step{send(query("set sql_mode = 'ANSI'")), expect(ok(1, autocommit|wire.StatusAnsiQuotes)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "mode-ANSI_QUOTES")}},
		{"the handshake's character set", clientCaps, 28, []step{expectClosed()},
			[]step{send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-gbk")}},
		{"SET NAMES read without session tracking", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET NAMES sjis")), send(ok(1, autocommit)), expect(query("set names /*x*/ latin1")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("SET NAMES sjis")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-sjis"),
				send(query("set names /*x*/ latin1")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-unknown")}},
		{"a text sent before the answer to a SET is unconfirmed", clientCaps, 45,
			[]step{expect(query("set names utf8mb4")), send(ok(1, autocommit)), expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query("set names utf8mb4"), query("select 2")), expect(ok(1, autocommit)), expectErr(1, errBlocked, "42000", "unconfirmed"),
				send(query("select 1")), expect(resultSet(autocommit))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			p, err := engine.ParsePolicy([]byte("rules: []\n"))
			if err != nil {
				t.Fatal(err)
			}
			e, err := engine.New(p, lexDialect{}, engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			h.eng.Store(e)
			hello := handshakeResponse(tc.caps, "app", "shop")
			hello[4+8] = tc.collation
			h.run(t, append([]step{send(greeting(serverCaps)), expect(hello), send(ok(2, autocommit))}, tc.server...),
				append([]step{expectFunc(checkGreeting), send(hello), expect(ok(2, autocommit))}, tc.client...))
		})
	}
}
