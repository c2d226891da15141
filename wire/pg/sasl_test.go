package pg

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Messages encoded by pgproto3 (pgx's own encoder), read back here.
func TestSASLMechanismsAndStrip(t *testing.T) {
	msg, err := (&pgproto3.AuthenticationSASL{AuthMechanisms: []string{SCRAMSHA256Plus, SCRAMSHA256}}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := SASLMechanisms(msg, func(n []byte) { got = append(got, string(n)) }); err != nil || strings.Join(got, ",") != "SCRAM-SHA-256-PLUS,SCRAM-SHA-256" {
		t.Fatalf("mechanisms: %v %v", got, err)
	}
	out, dropped, err := AppendSASLWithout([]byte("x"), msg, SCRAMSHA256Plus)
	if err != nil || !dropped || out[0] != 'x' {
		t.Fatalf("strip: %q %v %v", out, dropped, err)
	}
	var back pgproto3.AuthenticationSASL
	if err := back.Decode(out[1+HeaderLen:]); err != nil || strings.Join(back.AuthMechanisms, ",") != SCRAMSHA256 {
		t.Fatalf("stripped message decodes to %v, %v; want only SCRAM-SHA-256", back.AuthMechanisms, err)
	}
	if n := int(out[2])<<24 | int(out[3])<<16 | int(out[4])<<8 | int(out[5]); n != len(out)-2 {
		t.Errorf("stripped length field %d, want %d", n, len(out)-2)
	}
	plain, _ := (&pgproto3.AuthenticationSASL{AuthMechanisms: []string{SCRAMSHA256}}).Encode(nil)
	if out, dropped, err := AppendSASLWithout(nil, plain, SCRAMSHA256Plus); err != nil || dropped || string(out) != string(plain) {
		t.Errorf("no PLUS offered: got %q %v %v, want the message unchanged", out, dropped, err)
	}
	for name, bad := range map[string][]byte{
		"not SASL":     {'R', 0, 0, 0, 8, 0, 0, 0, 0},
		"unterminated": {'R', 0, 0, 0, 11, 0, 0, 0, 10, 'S', 'C'},
		"trailing":     {'R', 0, 0, 0, 12, 0, 0, 0, 10, 0, 'x', 0},
		"short":        {'R', 0, 0, 0, 4},
	} {
		if _, _, err := AppendSASLWithout(nil, bad, SCRAMSHA256Plus); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: got %v, want ErrFrame", name, err)
		}
	}
}

func TestParseSASLInitial(t *testing.T) {
	for _, tt := range []struct {
		mech, data string
		binding    byte
	}{
		{SCRAMSHA256, "n,,n=,r=abc", 'n'},
		{SCRAMSHA256, "y,,n=,r=abc", 'y'},
		{SCRAMSHA256Plus, "p=tls-server-end-point,,n=,r=abc", 'p'},
		{"OTHER", "opaque", 0},
	} {
		msg, err := (&pgproto3.SASLInitialResponse{AuthMechanism: tt.mech, Data: []byte(tt.data)}).Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		si, err := ParseSASLInitial(msg)
		if err != nil || string(si.Mechanism) != tt.mech || si.Binding != tt.binding {
			t.Errorf("%s %q: got %s %q %v, want binding %q", tt.mech, tt.data, si.Mechanism, si.Binding, err, tt.binding)
		}
	}
	for name, bad := range map[string][]byte{
		"no mechanism": {'p', 0, 0, 0, 9, 0, 0, 0, 0, 0},
		"length":       {'p', 0, 0, 0, 13, 'M', 0, 0, 0, 0, 9, 'n', ',', ','},
		"gs2":          {'p', 0, 0, 0, 12, 'M', 0, 0, 0, 0, 3, 'p', ',', ','},
	} {
		if _, err := ParseSASLInitial(bad); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: got %v, want ErrFrame", name, err)
		}
	}
}
