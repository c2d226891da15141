package pg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

func TestQueryText(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    string
		wantErr bool
	}{
		{"one statement", msg('Q', "select 1\x00"), "select 1", false},
		{"empty", msg('Q', "\x00"), "", false},
		{"unterminated", msg('Q', "select 1"), "", true},
		{"bytes after the zero", msg('Q', "select 1\x00x"), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := QueryText(tt.in)
			if (err != nil) != tt.wantErr || string(got) != tt.want {
				t.Fatalf("QueryText(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseFields(t *testing.T) {
	enc := func(p *pgproto3.Parse) []byte {
		b, err := p.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name      string
		in        []byte
		wantName  string
		wantQuery string
		wantErr   bool
	}{
		{"unnamed", enc(&pgproto3.Parse{Query: "select $1"}), "", "select $1", false},
		{"named with types", enc(&pgproto3.Parse{Name: "s1", Query: "select $1, $2", ParameterOIDs: []uint32{23, 25}}), "s1", "select $1, $2", false},
		{"no parameter count", msg('P', "s\x00select 1\x00"), "", "", true},
		{"types do not match count", msg('P', "s\x00select 1\x00\x00\x02\x00\x00\x00\x17"), "", "", true},
		{"unterminated name", msg('P', "s"), "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, q, err := ParseFields(tt.in)
			if (err != nil) != tt.wantErr || string(name) != tt.wantName || string(q) != tt.wantQuery {
				t.Fatalf("ParseFields(%q) = %q, %q, %v; want %q, %q, error %v", tt.in, name, q, err, tt.wantName, tt.wantQuery, tt.wantErr)
			}
		})
	}
}

func TestErrorRoundTrip(t *testing.T) {
	b := AppendError(nil, SeverityError, "42501", "sqlfw: statement blocked by rule r1", "detail", "hint")
	var e pgproto3.ErrorResponse
	if err := e.Decode(b[HeaderLen:]); err != nil {
		t.Fatal(err)
	}
	if e.Severity != "ERROR" || e.Code != "42501" || e.Message != "sqlfw: statement blocked by rule r1" || e.Detail != "detail" || e.Hint != "hint" {
		t.Fatalf("decoded %+v", e)
	}
	if got := string(ErrorField(b, 'C')); got != "42501" {
		t.Errorf("ErrorField C = %q, want 42501", got)
	}
	if got := ErrorField(b, 'W'); got != nil {
		t.Errorf("ErrorField W = %q, want nil", got)
	}
	if got := ErrorField(msg('E', "Cabc"), 'C'); got != nil {
		t.Errorf("ErrorField on an unterminated field = %q, want nil", got)
	}
}

func TestStartup(t *testing.T) {
	sm, err := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "alice", "database": "app"}}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ReadStartup(bytes.NewReader(sm), nil)
	if err != nil || !st.IsStartupMessage() {
		t.Fatalf("ReadStartup: %+v, %v", st, err)
	}
	got := map[string]string{}
	if err := StartupParams(st, func(n, v []byte) { got[string(n)] = string(v) }); err != nil {
		t.Fatal(err)
	}
	if got["user"] != "alice" || got["database"] != "app" || len(got) != 2 {
		t.Fatalf("params %v", got)
	}

	cancel := make([]byte, 16)
	binary.BigEndian.PutUint32(cancel, 16)
	binary.BigEndian.PutUint32(cancel[4:], CodeCancelRequest)
	binary.BigEndian.PutUint32(cancel[8:], 1234)
	binary.BigEndian.PutUint32(cancel[12:], 5678)
	st, err = ReadStartup(bytes.NewReader(cancel), make([]byte, 0, 8))
	if err != nil {
		t.Fatal(err)
	}
	key, err := CancelKey(st)
	if err != nil || !bytes.Equal(key, cancel[8:]) {
		t.Fatalf("CancelKey = %x, %v", key, err)
	}

	for _, n := range []uint32{0, 7, MaxStartupPacket + 1, 1 << 31} {
		b := binary.BigEndian.AppendUint32(nil, n)
		b = append(b, make([]byte, 8)...)
		if _, err := ReadStartup(bytes.NewReader(b), nil); !errors.Is(err, ErrFrame) {
			t.Errorf("startup length %d: got %v, want ErrFrame", n, err)
		}
	}
	bad := []byte{0, 0, 0, 12, 0, 3, 0, 0, 'u', 's', 'e', 'r'}
	st, err = ReadStartup(bytes.NewReader(bad), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := StartupParams(st, func(n, v []byte) {}); !errors.Is(err, ErrFrame) {
		t.Errorf("unterminated parameter: got %v, want ErrFrame", err)
	}
}

func TestCloseTarget(t *testing.T) {
	tests := []struct {
		name     string
		in       []byte
		wantKind byte
		wantName string
		wantErr  bool
	}{
		{"statement", msg('C', "Ss1\x00"), 'S', "s1", false},
		{"unnamed portal", msg('C', "P\x00"), 'P', "", false},
		{"bad kind", msg('C', "Xs\x00"), 0, "", true},
		{"unterminated", msg('C', "Ss1"), 0, "", true},
		{"empty", msg('C', ""), 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, n, err := CloseTarget(tt.in)
			if (err != nil) != tt.wantErr || k != tt.wantKind || string(n) != tt.wantName {
				t.Fatalf("CloseTarget(%q) = %q, %q, %v; want %q, %q, error %v", tt.in, k, n, err, tt.wantKind, tt.wantName, tt.wantErr)
			}
		})
	}
	portal, stmt, err := BindNames(AppendBind(nil, "p", "s"))
	if err != nil || string(portal) != "p" || string(stmt) != "s" {
		t.Fatalf("BindNames(AppendBind) = %q, %q, %v", portal, stmt, err)
	}
}

func TestCheckBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  []byte
		ok   bool
	}{
		{"Describe statement", msg('D', "Sstmt\x00"), true},
		{"Describe portal unnamed", msg('D', "P\x00"), true},
		{"Describe bad kind", msg('D', "Xs\x00"), false},
		{"Describe no terminator", msg('D', "Sstmt"), false},
		{"Describe trailing junk", msg('D', "Ss\x00junk"), false},
		{"Describe empty", msg('D', ""), false},
		{"Close statement", msg('C', "Sa\x00"), true},
		{"Execute", msg('E', "\x00\x00\x00\x00\x00"), true},
		{"Execute named", msg('E', "p1\x00\x00\x00\x00\x0a"), true},
		{"Execute short row count", msg('E', "\x00\x00\x00"), false},
		{"Execute no name", msg('E', "abcd"), false},
		{"Sync", msg('S', ""), true},
		{"Sync with body", msg('S', "x"), false},
		{"Flush with body", msg('H', "xx"), false},
		{"Terminate", msg('X', ""), true},
		{"CopyDone with body", msg('c', "x"), false},
		{"Bind not checked", msg('B', "anything"), true},
	} {
		err := CheckBody(tc.msg)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrFrame)) {
			t.Errorf("%s %x: got %v, want ok=%v", tc.name, tc.msg, err, tc.ok)
		}
	}
}
