package mysql

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// hx decodes a hex dump as the protocol documentation prints it (spaces
// and newlines ignored).
func hx(s string) []byte {
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		panic(err)
	}
	return b
}

func TestLenEnc(t *testing.T) {
	tests := []struct {
		v   uint64
		enc string
	}{
		{0, "00"}, {250, "fa"}, {251, "fcfb00"}, {0xffff, "fcffff"}, {0x10000, "fd000001"},
		{0xffffff, "fdffffff"}, {0x1000000, "fe0000000100000000"}, {1 << 63, "fe0000000000000080"},
	}
	for _, tc := range tests {
		got := AppendLenInt(nil, tc.v)
		if hex.EncodeToString(got) != tc.enc || LenIntSize(tc.v) != len(got) {
			t.Errorf("AppendLenInt(%d) = %x, want %s", tc.v, got, tc.enc)
		}
		v, rest, ok := ReadLenInt(append(got, 'x'))
		if !ok || v != tc.v || string(rest) != "x" {
			t.Errorf("ReadLenInt(%s) = %d %q %v", tc.enc, v, rest, ok)
		}
		for i := 0; i < len(got)-1; i++ {
			if _, _, ok := ReadLenInt(got[:i]); ok {
				t.Errorf("ReadLenInt(%x) of a truncated integer: ok", got[:i])
			}
		}
	}
	for _, b := range []byte{0xfb, 0xff} {
		if _, _, ok := ReadLenInt([]byte{b, 0, 0, 0, 0, 0, 0, 0, 0}); ok {
			t.Errorf("ReadLenInt(%x): ok", b)
		}
	}
	s := AppendLenString(nil, []byte("hello"))
	if got, rest, ok := ReadLenString(s); !ok || string(got) != "hello" || len(rest) != 0 {
		t.Errorf("ReadLenString = %q %v", got, ok)
	}
	if _, _, ok := ReadLenString(s[:4]); ok {
		t.Error("ReadLenString of a truncated string: ok")
	}
}

// The greeting of MySQL 5.5.2 from MySQL's protocol documentation
// (Protocol::HandshakeV10, example).
var mysqlGreeting = hx(`36 00 00 00 0a 35 2e 35 2e 32 2d 6d 32 00 52 00
00 00 22 3d 4e 50 29 75 39 56 00 ff ff 08 02 00
00 00 00 00 00 00 00 00 00 00 00 00 00 29 64 40
52 5c 55 78 7a 7c 21 29 4b 00`)

// mariadbGreeting builds what MariaDB 10.11 sends: version with the 5.5.5-
// prefix, CLIENT_MYSQL clear, extended capabilities in the reserved bytes.
func mariadbGreeting(caps Caps) []byte {
	p := []byte{ProtocolVersion10}
	p = append(p, "5.5.5-10.11.6-MariaDB-0+deb12u1\x00"...)
	p = append(p, 0x2a, 0, 0, 0)                // connection id 42
	p = append(p, "abcdefgh"...)                // scramble part 1
	p = append(p, 0, byte(caps), byte(caps>>8)) // filler, lower caps
	p = append(p, 45, 2, 0, byte(caps>>16), byte(caps>>24), 21)
	p = append(p, 0, 0, 0, 0, 0, 0)
	p = append(p, byte(caps>>32), byte(caps>>40), byte(caps>>48), byte(caps>>56))
	p = append(p, "ijklmnopqrst\x00"...)
	p = append(p, "mysql_native_password\x00"...)
	return pkt(0, p...)
}

func TestParseHandshake(t *testing.T) {
	h, err := ParseHandshake(FirstFragment(mysqlGreeting))
	if err != nil {
		t.Fatal(err)
	}
	if h.ProtocolVersion != 10 || string(h.ServerVersion) != "5.5.2-m2" || h.ConnectionID != 0x52 ||
		string(h.AuthData1) != "\x22\x3d\x4e\x50\x29\x75\x39\x56" || h.Caps != 0xffff || h.Charset != 8 ||
		h.Status != StatusAutocommit || h.MariaDB || len(h.AuthData2) != 13 || h.AuthPlugin != nil {
		t.Fatalf("MySQL 5.5 greeting: %+v", h)
	}

	caps := Caps(0xfffe) | CapMultiStatements | CapPluginAuth | CapDeprecateEOF | CapSessionTrack |
		CapMariaDBProgress | CapMariaDBStmtBulkOperations | CapMariaDBCacheMetadata | CapMariaDBComMulti
	caps &^= CapLongPassword
	g := mariadbGreeting(caps)
	h, err = ParseHandshake(FirstFragment(g))
	if err != nil {
		t.Fatal(err)
	}
	if !h.MariaDB || string(h.Version()) != "10.11.6-MariaDB-0+deb12u1" || h.ConnectionID != 42 || h.Caps != caps ||
		h.Charset != 45 || string(h.AuthPlugin) != "mysql_native_password" || string(h.AuthData2) != "ijklmnopqrst\x00" {
		t.Fatalf("MariaDB greeting: %+v", h)
	}
	offered := h.Strip(DefaultStrip)
	if offered != caps {
		t.Fatalf("Strip returned %x, want %x", offered, caps)
	}
	h2, err := ParseHandshake(FirstFragment(g))
	if err != nil {
		t.Fatal(err)
	}
	if want := caps &^ DefaultStrip; h2.Caps != want || h.Caps != want {
		t.Fatalf("after Strip: %x (recorded %x), want %x", h2.Caps, h.Caps, want)
	}
	if !h2.Caps.Has(CapCompress) || h2.Caps.Has(CapZstdCompression) || h2.Caps.Has(CapSSL) || !h2.Caps.Has(CapMariaDBCacheMetadata) || h2.Caps.Has(CapMariaDBComMulti) {
		t.Fatalf("stripped the wrong flags: %x", h2.Caps)
	}

	for _, bad := range [][]byte{nil, {9}, {10, 'x'}, FirstFragment(mysqlGreeting)[:20], FirstFragment(mysqlGreeting)[:40]} {
		if _, err := ParseHandshake(bad); !errors.Is(err, ErrFrame) {
			t.Errorf("ParseHandshake(%x): %v", bad, err)
		}
	}
}

// The response of MySQL's protocol documentation
// (Protocol::HandshakeResponse41, example).
var mysqlResponse = hx(`54 00 00 01 8d a6 0f 00 00 00 00 01 08 00 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 70 61 6d 00 14 ab 09 ee f6 bc b1 32
3e 61 14 38 65 c0 99 1d 95 7d 75 d4 47 74 65 73
74 00 6d 79 73 71 6c 5f 6e 61 74 69 76 65 5f 70
61 73 73 77 6f 72 64 00`)

func TestParseHandshakeResponse(t *testing.T) {
	r, err := ParseHandshakeResponse(FirstFragment(mysqlResponse))
	if err != nil {
		t.Fatal(err)
	}
	if r.Caps != 0x000fa68d || r.MaxPacket != 1<<24 || r.Charset != 8 || string(r.User) != "pam" ||
		len(r.AuthResponse) != 20 || r.AuthResponse[0] != 0xab || string(r.Database) != "test" ||
		string(r.AuthPlugin) != "mysql_native_password" || r.SSLRequest {
		t.Fatalf("%+v", r)
	}

	// A MariaDB client with extended capabilities, lenenc auth data and
	// connection attributes.
	caps := CapProtocol41 | CapSecureConnection | CapPluginAuth | CapPluginAuthLenencData | CapConnectAttrs |
		CapConnectWithDB | CapMariaDBStmtBulkOperations
	p := []byte{byte(caps), byte(caps >> 8), byte(caps >> 16), byte(caps >> 24), 0, 0, 0, 0x40, 45}
	p = append(p, make([]byte, 19)...)
	p = append(p, byte(caps>>32), byte(caps>>40), byte(caps>>48), byte(caps>>56))
	p = append(p, "root\x00"...)
	p = AppendLenString(p, []byte("0123456789abcdefghij"))
	p = append(p, "sqlfw\x00client_ed25519\x00"...)
	var attrs []byte
	attrs = AppendLenString(attrs, []byte("_client_name"))
	attrs = AppendLenString(attrs, []byte("libmariadb"))
	attrs = AppendLenString(attrs, []byte("program_name"))
	attrs = AppendLenString(attrs, []byte("mariadb"))
	p = AppendLenString(p, attrs)
	r, err = ParseHandshakeResponse(p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Caps != caps || r.MaxPacket != 1<<30 || string(r.User) != "root" || string(r.AuthResponse) != "0123456789abcdefghij" ||
		string(r.Database) != "sqlfw" || string(r.AuthPlugin) != "client_ed25519" {
		t.Fatalf("%+v", r)
	}
	var got []string
	it := NewAttrs(r.ConnectAttrs)
	for it.Next() {
		got = append(got, string(it.Key)+"="+string(it.Value))
	}
	if it.Err() || strings.Join(got, ",") != "_client_name=libmariadb,program_name=mariadb" {
		t.Fatalf("attributes %q (err %v)", got, it.Err())
	}

	// zero-terminated auth response (neither lenenc nor secure connection)
	old := append(append([]byte{0x00, 0x02, 0, 0, 0, 0, 0, 1, 8}, make([]byte, 23)...), "u\x00pw\x00"...)
	if r, err := ParseHandshakeResponse(old); err != nil || string(r.AuthResponse) != "pw" {
		t.Fatalf("zero-terminated auth response: %+v %v", r, err)
	}

	ssl := hx(`20 00 00 01 05 ae 0f 00 00 00 00 01 21 00 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00`)
	if !IsSSLRequest(FirstFragment(ssl)) {
		t.Fatal("SSLRequest not recognised")
	}
	if r, err := ParseHandshakeResponse(FirstFragment(ssl)); err != nil || !r.SSLRequest || r.Charset != 0x21 {
		t.Fatalf("SSLRequest: %+v %v", r, err)
	}
	if IsSSLRequest(FirstFragment(mysqlResponse)) {
		t.Fatal("a full response taken for an SSLRequest")
	}

	big := AppendLenInt(nil, MaxConnectAttrs+1)
	big = append(big, make([]byte, MaxConnectAttrs+1)...)
	for name, bad := range map[string][]byte{
		"short":        p[:20],
		"no 4.1":       append([]byte{0, 0, 0, 0}, p[4:]...),
		"no user zero": p[:36],
		"auth":         p[:38],
		"attrs":        p[:len(p)-3],
		"attrs bound":  append(p[:len(p)-len(attrs)-1:len(p)-len(attrs)-1], big...),
	} {
		if _, err := ParseHandshakeResponse(bad); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAuthSwitch(t *testing.T) {
	p := append([]byte{0xfe}, "mysql_native_password\x00abcdefghijklmnopqrst\x00"...)
	plugin, data, err := ParseAuthSwitch(p)
	if err != nil || string(plugin) != "mysql_native_password" || len(data) != 21 {
		t.Fatalf("%q %q %v", plugin, data, err)
	}
	if _, _, err := ParseAuthSwitch([]byte{0x00}); err == nil {
		t.Fatal("OK taken for an auth switch")
	}
}

func TestCommands(t *testing.T) {
	q := append([]byte{ComQuery}, "select 1"...)
	if s, err := QueryText(q, 0); err != nil || string(s) != "select 1" {
		t.Fatalf("QueryText: %q %v", s, err)
	}
	// CLIENT_QUERY_ATTRIBUTES without attributes, and with one named "n"
	// (a VAR_STRING "v") and one NULL ("m")
	if s, err := QueryText(append([]byte{ComQuery, 0, 1}, "select 1"...), CapQueryAttributes); err != nil || string(s) != "select 1" {
		t.Fatalf("QueryText with no attributes: %q %v", s, err)
	}
	attrs := []byte{ComQuery, 2, 1, 0x02, 1, TypeVarString, 0, 1, 'n', TypeLongLong, 0, 1, 'm', 1, 'v'}
	if s, err := QueryText(append(attrs, "select 1"...), CapQueryAttributes); err != nil || string(s) != "select 1" {
		t.Fatalf("QueryText with attributes: %q %v", s, err)
	}
	longlong := []byte{ComQuery, 1, 1, 0, 1, TypeLongLong, 0, 1, 'n', 1, 2, 3, 4, 5, 6, 7, 8}
	if s, err := QueryText(append(longlong, "select 2"...), CapQueryAttributes); err != nil || string(s) != "select 2" {
		t.Fatalf("QueryText with a LONGLONG attribute: %q %v", s, err)
	}
	for i := 3; i < len(attrs); i++ {
		if _, err := QueryText(attrs[:i], CapQueryAttributes); err == nil {
			t.Errorf("QueryText of %x: no error", attrs[:i])
		}
	}
	if _, err := QueryText([]byte{ComPing}, 0); err == nil {
		t.Error("QueryText of COM_PING")
	}

	if s, err := PrepareText(hx(`16 53 45 4c 45 43 54 20 43 4f 4e 43 41 54 28 3f 2c 20 3f 29 20 41 53 20 63 6f 6c 31`)); err != nil ||
		string(s) != "SELECT CONCAT(?, ?) AS col1" {
		t.Fatalf("PrepareText: %q %v", s, err)
	}
	// COM_STMT_EXECUTE of MySQL's documentation: statement 1, no cursor,
	// one iteration, no parameters
	exec := hx(`17 01 00 00 00 00 01 00 00 00`)
	if id, err := StmtID(exec); err != nil || id != 1 {
		t.Fatalf("StmtID: %d %v", id, err)
	}
	if f, err := ExecuteFlags(exec); err != nil || f != CursorTypeNoCursor {
		t.Fatalf("ExecuteFlags: %d %v", f, err)
	}
	for _, tc := range []struct {
		p  []byte
		id uint32
	}{
		{[]byte{ComStmtClose, 1, 0, 0, 0}, 1},
		{[]byte{ComStmtReset, 2, 0, 0, 0}, 2},
		{[]byte{ComStmtSendLongData, 3, 0, 0, 0, 0, 0}, 3},
		{[]byte{ComStmtFetch, 4, 0, 0, 0, 10, 0, 0, 0}, 4},
		{[]byte{ComStmtExecute, 0xff, 0xff, 0xff, 0xff, 0, 1, 0, 0, 0}, StmtLastPrepared},
		{[]byte{ComStmtBulkExecute, 5, 0, 0, 0, 0x80, 0}, 5},
	} {
		if id, err := StmtID(tc.p); err != nil || id != tc.id {
			t.Errorf("StmtID(%x) = %d %v, want %d", tc.p, id, err, tc.id)
		}
		if _, err := StmtID(tc.p[:len(tc.p)-1]); err == nil {
			t.Errorf("StmtID(%x) of a truncated packet: no error", tc.p[:len(tc.p)-1])
		}
	}
	if _, err := StmtID([]byte{ComQuery, 1, 0, 0, 0}); err == nil {
		t.Error("StmtID of COM_QUERY")
	}
	if s, err := InitDBSchema(append([]byte{ComInitDB}, "sbtest"...)); err != nil || string(s) != "sbtest" {
		t.Fatalf("InitDBSchema: %q %v", s, err)
	}
	if s, err := FieldListTable(append([]byte{ComFieldList}, "t1\x00%"...)); err != nil || string(s) != "t1" {
		t.Fatalf("FieldListTable: %q %v", s, err)
	}
	if o, err := SetOption([]byte{ComSetOption, 1, 0}); err != nil || o != OptionMultiStatementsOff {
		t.Fatalf("SetOption: %d %v", o, err)
	}
	if _, err := SetOption([]byte{ComSetOption, 1}); err == nil {
		t.Fatal("SetOption of a truncated packet")
	}
	if CommandName(ComStmtBulkExecute) != "COM_STMT_BULK_EXECUTE" || CommandName(0x40) != "" ||
		!CommandTypes[ComQuery] || CommandTypes[0x40] {
		t.Fatal("command names")
	}
}

func TestChangeUser(t *testing.T) {
	caps := CapProtocol41 | CapSecureConnection | CapPluginAuth | CapConnectAttrs
	p := []byte{ComChangeUser}
	p = append(p, "bob\x00"...)
	p = append(p, 3, 'a', 'b', 'c')
	p = append(p, "db\x00"...)
	p = append(p, 45, 0)
	p = append(p, "mysql_native_password\x00"...)
	p = AppendLenString(p, AppendLenString(AppendLenString(nil, []byte("k")), []byte("v")))
	c, err := ParseChangeUser(p, caps)
	if err != nil || string(c.User) != "bob" || string(c.AuthResponse) != "abc" || string(c.Database) != "db" ||
		c.Charset != 45 || string(c.AuthPlugin) != "mysql_native_password" || len(c.ConnectAttrs) != 4 {
		t.Fatalf("%+v %v", c, err)
	}
	// the short form of old clients
	if c, err := ParseChangeUser([]byte("\x11bob\x00pw\x00db\x00"), CapProtocol41); err != nil || string(c.AuthResponse) != "pw" || string(c.Database) != "db" {
		t.Fatalf("short form: %+v %v", c, err)
	}
	for i := 1; i < 12; i++ {
		if _, err := ParseChangeUser(p[:i], caps); err == nil {
			t.Errorf("ParseChangeUser(%q): no error", p[:i])
		}
	}
}

func TestResponsePackets(t *testing.T) {
	caps := CapProtocol41 | CapTransactions
	ok, err := ParseOK(FirstFragment(hx(`07 00 00 02 00 00 00 02 00 00 00`)), caps)
	if err != nil || ok.AffectedRows != 0 || ok.Status != StatusAutocommit || ok.Warnings != 0 {
		t.Fatalf("OK: %+v %v", ok, err)
	}
	// affected 1, last insert id 300 (lenenc fc), in a transaction, one warning, info
	ok, err = ParseOK(append([]byte{0, 1, 0xfc, 0x2c, 0x01, 0x03, 0x00, 0x01, 0x00}, "Rows matched: 1"...), caps)
	if err != nil || ok.AffectedRows != 1 || ok.LastInsertID != 300 || ok.Status != StatusInTrans|StatusAutocommit ||
		ok.Warnings != 1 || string(ok.Info) != "Rows matched: 1" {
		t.Fatalf("OK: %+v %v", ok, err)
	}
	// session tracking: the schema became "test", sql_mode changed
	var st []byte
	st = append(st, TrackSchema)
	st = AppendLenString(st, AppendLenString(nil, []byte("test")))
	st = append(st, TrackSystemVariables)
	st = AppendLenString(st, AppendLenString(AppendLenString(nil, []byte("sql_mode")), []byte("ANSI_QUOTES")))
	st = append(st, TrackStateChange)
	st = AppendLenString(st, AppendLenString(nil, []byte("1")))
	p := []byte{0xfe, 0, 0, 0x02, 0x40, 0, 0}
	p = AppendLenString(p, nil)
	p = AppendLenString(p, st)
	ok, err = ParseOK(p, caps|CapSessionTrack)
	if err != nil || ok.Status != StatusAutocommit|StatusSessionStateChanged || !bytes.Equal(ok.SessionState, st) {
		t.Fatalf("OK with session state: %+v %v", ok, err)
	}
	it := NewSessionState(ok.SessionState)
	var got []string
	for it.Next() {
		switch it.Type {
		case TrackSchema:
			s, _ := it.Schema()
			got = append(got, "schema="+string(s))
		case TrackSystemVariables:
			n, v, _ := it.Variable()
			got = append(got, string(n)+"="+string(v))
		default:
			got = append(got, "type "+string('0'+it.Type))
		}
	}
	if it.Err() || strings.Join(got, ",") != "schema=test,sql_mode=ANSI_QUOTES,type 2" {
		t.Fatalf("session state %q (err %v)", got, it.Err())
	}
	// MariaDB sends no info string at all when it is empty
	if ok, err := ParseOK([]byte{0, 0, 0, 2, 0, 0, 0}, caps|CapSessionTrack); err != nil || ok.Status != StatusAutocommit {
		t.Fatalf("OK without info: %+v %v", ok, err)
	}
	for _, bad := range [][]byte{nil, {1}, {0}, {0, 0}, {0, 0, 0, 2}, {0, 0, 0, 2, 0, 0, 0, 5}} {
		if _, err := ParseOK(bad, caps|CapSessionTrack); err == nil {
			t.Errorf("ParseOK(%x): no error", bad)
		}
	}

	eof, err := ParseEOF(FirstFragment(hx(`05 00 00 05 fe 00 00 02 00`)))
	if err != nil || eof.Status != StatusAutocommit || eof.Warnings != 0 {
		t.Fatalf("EOF: %+v %v", eof, err)
	}
	if _, err := ParseEOF(make([]byte, 9)); err == nil {
		t.Fatal("9-byte EOF")
	}

	e, err := ParseErr(FirstFragment(hx(`17 00 00 01 ff 48 04 23 48 59 30 30 30 4e 6f 20
74 61 62 6c 65 73 20 75 73 65 64`)))
	if err != nil || e.Code != 1096 || string(e.SQLState) != "HY000" || string(e.Message) != "No tables used" {
		t.Fatalf("ERR: %+v %v", e, err)
	}
	// before the capabilities are agreed there is no SQLSTATE
	e, err = ParseErr(append([]byte{0xff, 0x10, 0x04}, "Too many connections"...))
	if err != nil || e.Code != 1040 || e.SQLState != nil || string(e.Message) != "Too many connections" {
		t.Fatalf("ERR without SQLSTATE: %+v %v", e, err)
	}

	if n, md, err := ParseColumnCount([]byte{3}, caps); err != nil || n != 3 || !md {
		t.Fatalf("column count: %d %v %v", n, md, err)
	}
	if n, md, err := ParseColumnCount([]byte{0xfc, 0x00, 0x01, 0}, caps|CapMariaDBCacheMetadata); err != nil || n != 256 || md {
		t.Fatalf("column count without metadata: %d %v %v", n, md, err)
	}
	if _, _, err := ParseColumnCount([]byte{0}, caps); err == nil {
		t.Fatal("zero columns")
	}
	if name, err := InfileName(FirstFragment(hx(`0c 00 00 01 fb 2f 65 74 63 2f 70 61 73 73 77 64`))); err != nil || string(name) != "/etc/passwd" {
		t.Fatalf("LOCAL INFILE: %q %v", name, err)
	}
	pok, err := ParsePrepareOK(FirstFragment(hx(`0c 00 00 01 00 01 00 00 00 01 00 02 00 00 00 00`)), caps)
	if err != nil || pok.StmtID != 1 || pok.Columns != 1 || pok.Params != 2 || !pok.Metadata {
		t.Fatalf("PREPARE_OK: %+v %v", pok, err)
	}
}

func TestAppendErr(t *testing.T) {
	want := hx(`17 00 00 01 ff 48 04 23 48 59 30 30 30 4e 6f 20
74 61 62 6c 65 73 20 75 73 65 64`)
	got := AppendErr(nil, 1, 1096, "HY000", "No tables used")
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendErr = %x, want %x", got, want)
	}
	long := AppendErr(nil, 3, 1, "42", strings.Repeat("m", 2000))
	e, err := ParseErr(FirstFragment(long))
	if err != nil || len(e.Message) != MaxErrMessage-1 || string(e.SQLState) != "42000" || Seq(long) != 3 {
		t.Fatalf("long message: %d bytes, state %q, %v", len(e.Message), e.SQLState, err)
	}
	buf := make([]byte, 0, 128)
	if n := testing.AllocsPerRun(100, func() { buf = AppendErr(buf[:0], 1, 1, "42000", "blocked by sqlfw rule r1") }); n != 0 {
		t.Fatalf("AppendErr allocates %v times", n)
	}
}

// A response read as a server that offered less reads it: the fields of
// flags the client claims and the server did not offer are not there.
func TestParseHandshakeResponseFor(t *testing.T) {
	claimed := CapProtocol41 | CapLongPassword | CapSecureConnection | CapPluginAuth | CapPluginAuthLenencData | CapConnectAttrs | CapConnectWithDB
	head := []byte{byte(claimed), byte(claimed >> 8), byte(claimed >> 16), byte(claimed >> 24), 0, 0, 0, 0x40, 45}
	head = append(head, make([]byte, 23)...)
	body := func(auth []byte) []byte {
		p := append(append([]byte(nil), head...), "app\x00"...)
		p = append(p, auth...)
		p = append(p, "shop\x00mysql_native_password\x00"...)
		return AppendLenString(p, AppendLenString(AppendLenString(nil, []byte("program_name")), []byte("evil")))
	}
	short := append([]byte{20}, "0123456789abcdefghij"...)
	for _, tc := range []struct {
		name            string
		p               []byte
		offered         Caps
		db, plugin, app string
		err             bool
	}{
		{"all offered", body(short), ^Caps(0), "shop", "mysql_native_password", "evil", false},
		{"no attributes offered", body(short), claimed &^ CapConnectAttrs, "shop", "mysql_native_password", "", false},
		{"no database, plugin or attributes offered", body(short), claimed &^ (CapConnectWithDB | CapPluginAuth | CapConnectAttrs), "", "", "", false},
		{"no database offered: the server reads shop as the plugin", body(short), claimed &^ (CapConnectWithDB | CapConnectAttrs), "", "shop", "", false},
		// 0xfc: a 2-byte length (3) when length-encoded, 252 bytes when not
		{"no length-encoded auth data offered", body([]byte{0xfc, 3, 0, 'a', 'b', 'c'}), claimed &^ CapPluginAuthLenencData, "", "", "", true},
		{"length-encoded auth data offered", body([]byte{0xfc, 3, 0, 'a', 'b', 'c'}), claimed, "shop", "mysql_native_password", "evil", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseHandshakeResponseFor(tc.p, tc.offered)
			if (err != nil) != tc.err {
				t.Fatalf("err %v, want error %v", err, tc.err)
			}
			if err != nil {
				return
			}
			var app string
			for it := NewAttrs(r.ConnectAttrs); it.Next(); {
				if string(it.Key) == "program_name" {
					app = string(it.Value)
				}
			}
			if string(r.Database) != tc.db || string(r.AuthPlugin) != tc.plugin || app != tc.app || r.Caps != claimed {
				t.Errorf("database %q plugin %q program_name %q caps %#x, want %q %q %q %#x", r.Database, r.AuthPlugin, app, uint64(r.Caps), tc.db, tc.plugin, tc.app, uint64(claimed))
			}
		})
	}
}

func TestLoginUser(t *testing.T) {
	for in, want := range map[string]string{"'root'": "root", "root": "root", "'": "'", "''": "", "'a": "'a", "a'": "a'"} {
		if got := string(LoginUser([]byte(in))); got != want {
			t.Errorf("LoginUser(%q) = %q, want %q", in, got, want)
		}
	}
}
