package pg

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

func TestParameterStatusFields(t *testing.T) {
	msg, _ := (&pgproto3.ParameterStatus{Name: "client_encoding", Value: "SJIS"}).Encode(nil)
	name, value, err := ParameterStatusFields(msg)
	if err != nil || string(name) != "client_encoding" || string(value) != "SJIS" {
		t.Fatalf("got %q %q %v", name, value, err)
	}
	for _, bad := range [][]byte{
		{'S', 0, 0, 0, 4},
		{'S', 0, 0, 0, 7, 'a', 0, 'b'},
		{'S', 0, 0, 0, 9, 'a', 0, 'b', 0, 'c'},
	} {
		if _, _, err := ParameterStatusFields(bad); !errors.Is(err, ErrFrame) {
			t.Errorf("%q: err %v, want ErrFrame", bad, err)
		}
	}
}
