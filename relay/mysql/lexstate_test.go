package mysql

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay/relaytest"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// lexDialect denies every text whose lexing state is not the default,
// naming the state in its rule id: the tests read what the session told
// the engine.
type lexDialect struct{ relaytest.Dialect }

func (lexDialect) Read(sql []byte, l *engine.LexState) ([]byte, string, string, bool) {
	switch {
	case bytes.HasPrefix(sql, []byte("grant")) && l.AutoCreateUser:
		return nil, "autocreate", "", false
	case !bytes.HasPrefix(sql, []byte("select")):
	case l.Unconfirmed:
		return nil, "unconfirmed", "", false
	case l.ClientEncoding != "" && l.ClientEncoding != "utf8mb4":
		return nil, "charset-" + l.ClientEncoding, "", false
	case l.SQLMode != "":
		return nil, "mode-" + l.SQLMode, "", false
	case l.AutoCreateUser:
		return nil, "autocreate", "", false
	}
	return sql, "", "", true
}

// trackedOK is an OK whose session state reports system variable name's
// new value.
func trackedOK(seq int, status uint16, name, value string) []byte {
	p := []byte{0, 0, 0}
	p = binary.LittleEndian.AppendUint16(p, status|wire.StatusSessionStateChanged)
	p = append(p, 0, 0, 0) // warnings, empty info
	v := wire.AppendLenInt(nil, uint64(len(name)))
	v = append(v, name...)
	v = wire.AppendLenInt(v, uint64(len(value)))
	v = append(v, value...)
	change := append([]byte{wire.TrackSystemVariables}, wire.AppendLenInt(nil, uint64(len(v)))...)
	change = append(change, v...)
	p = wire.AppendLenInt(p, uint64(len(change)))
	return pkt(seq, append(p, change...)...)
}

func TestLexState(t *testing.T) {
	setMode := "set sql_mode = 'NO_BACKSLASH_ESCAPES'"
	cuGBK := pkt(0, append([]byte{wire.ComChangeUser}, "app\x00\x00shop\x00\x1c\x04mysql_native_password\x00\x00"...)...)
	reset := pkt(0, wire.ComResetConnection)
	for _, tc := range []struct {
		name           string
		caps           wire.Caps
		collation      byte
		server, client []step
	}{
		{"sql_mode from the status flags", clientCaps, 45,
			[]step{expect(query(setMode)), send(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
				expect(query("set sql_mode = 'NO_AUTO_CREATE_USER'")), send(ok(1, autocommit)), expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query(setMode)), expect(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "mode-NO_BACKSLASH_ESCAPES"),
				send(query("set sql_mode = 'NO_AUTO_CREATE_USER'")), expect(ok(1, autocommit)), send(query("select 1")), expect(resultSet(autocommit))}},
		{"MariaDB's ANSI_QUOTES flag", clientCaps, 45,
			[]step{expect(query("set sql_mode = 'ANSI'")), send(ok(1, autocommit|wire.StatusAnsiQuotes)), expectClosed()},
			[]step{send(query("set sql_mode = 'ANSI'")), expect(ok(1, autocommit|wire.StatusAnsiQuotes)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "mode-ANSI_QUOTES")}},
		{"the handshake's character set", clientCaps, 28, []step{expectClosed()},
			[]step{send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-gbk")}},
		{"SET NAMES read without session tracking", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET NAMES sjis")), send(ok(1, autocommit)), expect(query("set names /*x*/ latin1")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("SET NAMES sjis")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-sjis"),
				send(query("set names /*x*/ latin1")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-latin1")}},
		// mysqltest (no session tracking), main.ctype_cp932 and main.ctype_latin1:
		// reading the variable is no change; SET character_set_client and a
		// trailing ";" are read as the server reads them; a variable's value
		// stays unknown.
		{"mysqltest's character set sequence without session tracking", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET @old_character_set_client= @@character_set_client")), send(ok(1, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit)),
				expect(query("SET character_set_client= 'gbk';")), send(ok(1, autocommit)),
				expect(query("SET NAMES latin1;")), send(ok(1, autocommit)),
				expect(query("SET @@character_set_client= @old_character_set_client")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("SET @old_character_set_client= @@character_set_client")), expect(ok(1, autocommit)),
				send(query("select 1")), expect(resultSet(autocommit)),
				send(query("SET character_set_client= 'gbk';")), expect(ok(1, autocommit)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-gbk"),
				send(query("SET NAMES latin1;")), expect(ok(1, autocommit)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-latin1"),
				send(query("SET @@character_set_client= @old_character_set_client")), expect(ok(1, autocommit)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-unknown")}},
		{"a failed SET character_set_client changes nothing", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET character_set_client = gbk")), send(wire.AppendErr(nil, 1, 1115, "42000", "Unknown character set")), expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query("SET character_set_client = gbk")), expect(wire.AppendErr(nil, 1, 1115, "42000", "Unknown character set")),
				send(query("select 1")), expect(resultSet(autocommit))}},
		{"a text sent before the answer to a SET is unconfirmed", clientCaps, 45,
			[]step{expect(query("set names utf8mb4")), send(ok(1, autocommit)), expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query("set names utf8mb4"), query("select 2")), expect(ok(1, autocommit)), expectErr(1, errBlocked, "42000", "unconfirmed"),
				send(query("select 1")), expect(resultSet(autocommit))}},
		// Ways the state changed without sqlfw seeing it (found by review):
		{"a text pipelined behind SET sql_mode is unconfirmed", clientCaps, 45,
			[]step{expect(query(setMode)), send(ok(1, autocommit|wire.StatusNoBackslashEscapes)), expectClosed()},
			[]step{send(query(setMode), query("select 2")), expect(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
				expectErr(1, errBlocked, "42000", "unconfirmed")}},
		{"a text pipelined behind an EXECUTE is unconfirmed", clientCaps, 45,
			[]step{expect(query("PREPARE s FROM set sql_mode = 'NO_BACKSLASH_ESCAPES'")), send(ok(1, autocommit)),
				expect(query("EXECUTE s")), send(ok(1, autocommit|wire.StatusNoBackslashEscapes)), expectClosed()},
			[]step{send(query("PREPARE s FROM set sql_mode = 'NO_BACKSLASH_ESCAPES'")), expect(ok(1, autocommit)),
				send(query("EXECUTE s"), query("select 2")), expect(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
				expectErr(1, errBlocked, "42000", "unconfirmed")}},
		{"SET NAMES with vertical tabs", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET\vNAMES\vgbk")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("SET\vNAMES\vgbk")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-gbk")}},
		{"EXECUTE IMMEDIATE of SET NAMES", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("EXECUTE IMMEDIATE 'SET NAMES gbk'")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("EXECUTE IMMEDIATE 'SET NAMES gbk'")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-gbk")}},
		{"EXECUTE IMMEDIATE of a SET NAMES it cannot read", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("EXECUTE IMMEDIATE 'SET NAMES ''gbk'''")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("EXECUTE IMMEDIATE 'SET NAMES ''gbk'''")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-unknown")}},
		{"SET NAMES under session tracking that reports nothing", clientCaps, 45,
			[]step{expect(query("set session_track_system_variables = ''")), send(ok(1, autocommit)),
				expect(query("SET NAMES gbk")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("set session_track_system_variables = ''")), expect(ok(1, autocommit)),
				send(query("SET NAMES gbk")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-gbk")}},
		{"EXECUTE of a PREPAREd SET NAMES", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("PREPARE s FROM 'SET NAMES gbk'")), send(ok(1, autocommit)),
				expect(query("set names utf8mb4")), send(ok(1, autocommit)), expect(query("EXECUTE s")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("PREPARE s FROM 'SET NAMES gbk'")), expect(ok(1, autocommit)),
				send(query("set names utf8mb4")), expect(ok(1, autocommit)),
				send(query("EXECUTE s")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-unknown")}},
		{"EXECUTE of a name whose text cannot change the lexing state: what is pipelined behind it is read as now", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("PREPARE s FROM 'DO 1'")), send(ok(1, autocommit)),
				expect(query("EXECUTE s")), expect(query("select 'x'")), send(ok(1, autocommit)), send(resultSet(autocommit))},
			[]step{send(query("PREPARE s FROM 'DO 1'")), expect(ok(1, autocommit)),
				send(query("EXECUTE s"), query("select 'x'")), expect(ok(1, autocommit)), expect(resultSet(autocommit))}},
		{"EXECUTE IMMEDIATE of text assembled at run time", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("EXECUTE IMMEDIATE CONCAT('SET NA','MES gbk')")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("EXECUTE IMMEDIATE CONCAT('SET NA','MES gbk')")), expect(ok(1, autocommit)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-unknown")}},
		{"EXECUTE of a statement PREPAREd FROM an expression", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("PREPARE s FROM CONCAT('SET NA','MES gbk')")), send(ok(1, autocommit)),
				expect(query("set names utf8mb4")), send(ok(1, autocommit)), expect(query("EXECUTE s")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("PREPARE s FROM CONCAT('SET NA','MES gbk')")), expect(ok(1, autocommit)),
				send(query("set names utf8mb4")), expect(ok(1, autocommit)),
				send(query("EXECUTE s")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-unknown")}},
		{"COM_STMT_EXECUTE of a prepared SET NAMES", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(prepare("SET NAMES gbk")), send(prepareOK(7)), expect(execute(7)), send(ok(1, autocommit)), expectClosed()},
			[]step{send(prepare("SET NAMES gbk")), expect(prepareOK(7)), send(execute(7)), expect(ok(1, autocommit)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-gbk")}},
		{"COM_CHANGE_USER's character set", clientCaps, 45,
			[]step{expect(cuGBK), send(ok(1, autocommit)), expectClosed()},
			[]step{send(cuGBK), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-gbk")}},
		{"a COM_CHANGE_USER the server refuses leaves sql_mode not known until an OK or EOF says it, the character set until SET NAMES", clientCaps, 45,
			[]step{expect(query(setMode)), send(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
				expect(cuGBK), send(pkt(1, append([]byte{0xff, 0x15, 0x04, '#', '2', '8', '0', '0', '0'}, "Access denied"...)...)),
				expect(query("do 1")), send(ok(1, autocommit)), expect(query("set names utf8mb4")), send(ok(1, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query(setMode)), expect(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
				send(cuGBK), expectErr(1, 1045, "28000", "Access denied"),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "unconfirmed"),
				send(query("do 1")), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-unknown"),
				send(query("set names utf8mb4")), expect(ok(1, autocommit)), send(query("select 1")), expect(resultSet(autocommit))}},
		{"COM_RESET_CONNECTION goes back to the login's character set", clientCaps, 28,
			[]step{expect(query("set names utf8mb4")), send(ok(1, autocommit)), expect(query("select 1")), send(resultSet(autocommit)),
				expect(reset), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("set names utf8mb4")), expect(ok(1, autocommit)), send(query("select 1")), expect(resultSet(autocommit)),
				send(reset), expect(ok(1, autocommit)), send(query("select 1")), expectErr(1, errBlocked, "42000", "charset-gbk")}},
		// NO_AUTO_CREATE_USER, which no status flag reports (issue 21).
		{"sql_mode without NO_AUTO_CREATE_USER read without session tracking", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET sql_mode = ''")), send(ok(1, autocommit)),
				expect(query("SET @@session.sql_mode = 'traditional'")), send(ok(1, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit)),
				expect(query("SET SESSION sql_mode = 'STRICT_TRANS_TABLES'")), send(ok(1, autocommit)),
				expect(query("SET sql_mode = DEFAULT")), send(ok(1, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit)), expectClosed()},
			[]step{send(query("SET sql_mode = ''")), expect(ok(1, autocommit)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "autocreate"),
				send(query("SET @@session.sql_mode = 'traditional'")), expect(ok(1, autocommit)),
				send(query("select 1")), expect(resultSet(autocommit)),
				send(query("SET SESSION sql_mode = 'STRICT_TRANS_TABLES'")), expect(ok(1, autocommit)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "autocreate"),
				send(query("SET sql_mode = DEFAULT")), expect(ok(1, autocommit)),
				send(query("select 1")), expect(resultSet(autocommit))}},
		{"sql_mode from a variable is unknown", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET @old = @@sql_mode")), send(ok(1, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit)),
				expect(query("SET sql_mode = @old")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("SET @old = @@sql_mode")), expect(ok(1, autocommit)),
				send(query("select 1")), expect(resultSet(autocommit)),
				send(query("SET sql_mode = @old")), expect(ok(1, autocommit)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "autocreate")}},
		{"SET GLOBAL sql_mode leaves the session's", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET GLOBAL sql_mode = ''")), send(ok(1, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit)), expectClosed()},
			[]step{send(query("SET GLOBAL sql_mode = ''")), expect(ok(1, autocommit)),
				send(query("select 1")), expect(resultSet(autocommit))}},
		{"a failed text that sets sql_mode leaves it unknown", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET sql_mode = ''; SELECT nonsense")), send(wire.AppendErr(nil, 1, 1054, "42S22", "Unknown column")), expectClosed()},
			[]step{send(query("SET sql_mode = ''; SELECT nonsense")), expect(wire.AppendErr(nil, 1, 1054, "42S22", "Unknown column")),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "autocreate")}},
		{"a failed SET sql_mode of a literal leaves it unknown too", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET sql_mode = 'TRADITIONAL,nonsense'")), send(wire.AppendErr(nil, 1, 1231, "42000", "Variable 'sql_mode' can't be set")), expectClosed()},
			[]step{send(query("SET sql_mode = 'TRADITIONAL,nonsense'")), expect(wire.AppendErr(nil, 1, 1231, "42000", "Variable 'sql_mode' can't be set")),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "autocreate")}},
		{"sql_mode under session tracking", clientCaps, 45,
			[]step{expect(query("SET sql_mode = @v")), send(trackedOK(1, autocommit, "sql_mode", "STRICT_TRANS_TABLES,NO_AUTO_CREATE_USER")),
				expect(query("select 1")), send(resultSet(autocommit)),
				expect(query("SET sql_mode = 'TRADITIONAL'")), send(trackedOK(1, autocommit, "sql_mode", "STRICT_TRANS_TABLES")), expectClosed()},
			[]step{send(query("SET sql_mode = @v")), expect(trackedOK(1, autocommit, "sql_mode", "STRICT_TRANS_TABLES,NO_AUTO_CREATE_USER")),
				send(query("select 1")), expect(resultSet(autocommit)),
				send(query("SET sql_mode = 'TRADITIONAL'")), expect(trackedOK(1, autocommit, "sql_mode", "STRICT_TRANS_TABLES")),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "autocreate")}},
		{"EXECUTE of a PREPAREd SET sql_mode", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("PREPARE s FROM 'SET sql_mode = \"TRADITIONAL\"'")), send(ok(1, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit)),
				expect(query("EXECUTE s")), send(ok(1, autocommit)), expectClosed()},
			[]step{send(query("PREPARE s FROM 'SET sql_mode = \"TRADITIONAL\"'")), expect(ok(1, autocommit)),
				send(query("select 1")), expect(resultSet(autocommit)),
				send(query("EXECUTE s")), expect(ok(1, autocommit)),
				send(query("grant 1")), expectErr(1, errBlocked, "42000", "autocreate")}},
		{"COM_STMT_EXECUTE of a prepared SET sql_mode", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(prepare("SET sql_mode = ''")), send(prepareOK(7)), expect(execute(7)), send(ok(1, autocommit)), expectClosed()},
			[]step{send(prepare("SET sql_mode = ''")), expect(prepareOK(7)), send(execute(7)), expect(ok(1, autocommit)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "autocreate")}},
		{"COM_RESET_CONNECTION goes back to the global sql_mode", clientCaps &^ wire.CapSessionTrack, 45,
			[]step{expect(query("SET sql_mode = ''")), send(ok(1, autocommit)), expect(reset), send(ok(1, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit)), expectClosed()},
			[]step{send(query("SET sql_mode = ''")), expect(ok(1, autocommit)), send(reset), expect(ok(1, autocommit)),
				send(query("select 1")), expect(resultSet(autocommit))}},
		{"the NO_BACKSLASH_ESCAPES flag after sql_mode was tracked", clientCaps, 45,
			[]step{expect(query("set sql_mode = ''")), send(trackedOK(1, autocommit, "sql_mode", "")),
				expect(query(setMode)), send(ok(1, autocommit|wire.StatusNoBackslashEscapes)), expectClosed()},
			[]step{send(query("set sql_mode = ''")), expect(trackedOK(1, autocommit, "sql_mode", "")),
				send(query(setMode)), expect(ok(1, autocommit|wire.StatusNoBackslashEscapes)),
				send(query("select 1")), expectErr(1, errBlocked, "42000", "mode-NO_BACKSLASH_ESCAPES")}},
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
			h.Eng.Store(e)
			hello := handshakeResponse(tc.caps, "app", "shop")
			hello[4+8] = tc.collation
			h.run(t, append([]step{send(greeting(serverCaps)), expect(hello), send(ok(2, autocommit))}, tc.server...),
				append([]step{expectFunc(checkGreeting), send(hello), expect(ok(2, autocommit))}, tc.client...))
		})
	}
}

// A collation id the server does not know (MySQL 8's 255, utf8mb4_0900_ai_ci,
// on MariaDB 10.11) makes the server use its default character set, the
// greeting's: a latin1 default is not read as UTF-8.
func TestLexStateUnknownCollation(t *testing.T) {
	for _, tc := range []struct {
		name            string
		greeting, login byte
		want            string // the lexDialect's rule for "select 1", "" allowed
	}{
		{"255 on a latin1 MariaDB", 8, 255, "charset-unknown"},
		{"255 on a gbk MariaDB", 28, 255, "charset-unknown"},
		{"0 on a gbk MariaDB", 28, 0, "charset-gbk"},
		{"255 on a utf8mb4 MariaDB", 45, 255, ""},
		{"a known id", 28, 45, ""},
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
			h.Eng.Store(e)
			g := greeting(serverCaps)
			g[42] = tc.greeting
			hello := handshakeResponse(clientCaps, "app", "shop")
			hello[4+8] = tc.login
			answer := expect(resultSet(autocommit))
			srv := []step{send(g), expect(hello), send(ok(2, autocommit)), expect(query("select 1")), send(resultSet(autocommit))}
			if tc.want != "" {
				answer = expectErr(1, errBlocked, "42000", tc.want)
				srv = append(srv[:3], expectClosed())
			}
			h.run(t, srv, []step{expectFunc(func([]byte) error { return nil }), send(hello), expect(ok(2, autocommit)), send(query("select 1")), answer})
		})
	}
}

// TestVersionID: a greeting's version as executable comments number it.
func TestVersionID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"10.11.19-MariaDB-0+deb12u1", 101119},
		{"8.0.36", 80036},
		{"5.7.44-log", 50744},
		{"11.4.2-MariaDB", 110402},
		{"10.11", 0},
		{"x.y.z", 0},
		{"", 0},
		{"1000.1.1", 0},
		{"10.100.1", 0},
	} {
		if got := versionID([]byte(tc.in)); got != tc.want {
			t.Errorf("versionID(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
