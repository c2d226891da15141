package pg

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/pg/pgtest"
)

// fatalLast reads every message up to the close and wants the last one to
// be FATAL 08P01: whatever the server sent before may come first.
type fatalLast struct{}

func (fatalLast) Play(c net.Conn) error {
	var last []byte
	for {
		var h [5]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
				return err
			}
			break
		}
		n := int(h[1])<<24 | int(h[2])<<16 | int(h[3])<<8 | int(h[4])
		m := make([]byte, 1+n)
		copy(m, h[:])
		if _, err := io.ReadFull(c, m[5:]); err != nil {
			return err
		}
		last = m
	}
	var e pgproto3.ErrorResponse
	if len(last) < 5 || last[0] != 'E' || e.Decode(last[5:]) != nil || e.Severity != "FATAL" || e.Code != sqlstateProtocolViolation {
		return fmt.Errorf("last message before the close %q, want FATAL 08P01", last)
	}
	if e.Message != msgPasswordAfterAuth {
		return fmt.Errorf("message %q, want %q", e.Message, msgPasswordAfterAuth)
	}
	return nil
}

// A password message ('p': password, SASL and GSS responses) is relayed only
// as the answer to one of the server's Authentication requests. After
// AuthenticationOk the client gets PostgreSQL's own FATAL 08P01 for it and
// the session closes: the server never sees it, nor anything that came
// with it. One sent ahead of the request it answers waits for it.
func TestPasswordMessageOnlyAsAnswer(t *testing.T) {
	askPassword := enc(&pgproto3.AuthenticationCleartextPassword{})
	password := enc(&pgproto3.PasswordMessage{Password: "s3cret"})
	stray := enc(&pgproto3.PasswordMessage{Password: "Q\x00\x00\x00\x0dselect 1\x00"})
	saslAsk := enc(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	saslInitial := enc(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")})
	saslContinue := enc(&pgproto3.AuthenticationSASLContinue{Data: []byte("r=abcdef,s=c2FsdA==,i=4096")})
	saslResponse := enc(&pgproto3.SASLResponse{Data: []byte("c=biws,r=abcdef,p=cHJvb2Y=")})
	saslFinal := enc(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=c2lnbmF0dXJl")})
	startup := pgtest.ExpectStartup(wantPacket(startupMessage))
	for _, tc := range []struct {
		name           string
		server, client []pgtest.Step
	}{
		{"after trust authentication",
			[]pgtest.Step{startup, pgtest.Send(helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(startupMessage), pgtest.ExpectAll(helloMessages), pgtest.Send(stray), fatalLast{}}},
		{"after trust authentication, one byte at a time",
			[]pgtest.Step{startup, pgtest.Send(helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(startupMessage), pgtest.ExpectAll(helloMessages), pgtest.SendBytewise(stray), fatalLast{}}},
		{"behind a Query in one write: nothing of the write is sent",
			[]pgtest.Step{startup, pgtest.Send(helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(startupMessage), pgtest.ExpectAll(helloMessages), pgtest.Send(pgtest.Query("select 1"), stray), fatalLast{}}},
		{"a second answer to a password request",
			[]pgtest.Step{startup, pgtest.Send(askPassword), pgtest.Expect(password), pgtest.Send(helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(startupMessage), pgtest.Expect(askPassword), pgtest.Send(password), pgtest.ExpectAll(helloMessages),
				pgtest.Send(stray), fatalLast{}}},
		{"a second answer in the write of the first",
			[]pgtest.Step{startup, pgtest.Send(askPassword), pgtest.Expect(password), pgtest.Send(helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(startupMessage), pgtest.Expect(askPassword), pgtest.Send(password, stray), fatalLast{}}},
		{"a password sent ahead of the request waits for it",
			[]pgtest.Step{startup, pgtest.Send(askPassword), pgtest.Expect(password), pgtest.Send(helloMessages), pgtest.Expect(terminate)},
			[]pgtest.Step{pgtest.Send(startupMessage, password), pgtest.Expect(askPassword), pgtest.ExpectAll(helloMessages),
				pgtest.Send(terminate), pgtest.ExpectClosed()}},
		{"a password sent ahead of trust authentication",
			[]pgtest.Step{startup, pgtest.Send(helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(startupMessage, stray), fatalLast{}}},
		{"SCRAM's two answers, then a third after AuthenticationSASLFinal",
			[]pgtest.Step{startup, pgtest.Send(saslAsk), pgtest.Expect(saslInitial), pgtest.Send(saslContinue), pgtest.Expect(saslResponse),
				pgtest.Send(saslFinal, helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(startupMessage), pgtest.Expect(saslAsk), pgtest.SendBytewise(saslInitial), pgtest.Expect(saslContinue),
				pgtest.Send(saslResponse), pgtest.Expect(saslFinal), pgtest.ExpectAll(helloMessages), pgtest.Send(stray), fatalLast{}}},
		{"SCRAM's final answer and a stray one in one write, before AuthenticationSASLFinal",
			[]pgtest.Step{startup, pgtest.Send(saslAsk), pgtest.Expect(saslInitial), pgtest.Send(saslContinue), pgtest.Expect(saslResponse),
				pgtest.Send(saslFinal, helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(startupMessage), pgtest.Expect(saslAsk), pgtest.Send(saslInitial), pgtest.Expect(saslContinue),
				pgtest.Send(saslResponse, stray), fatalLast{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPiped(t)
			p.session(t, tc.server, tc.client)
			want := uint64(1)
			if tc.name == "a password sent ahead of the request waits for it" {
				want = 0
			}
			if n := p.count(relay.ProtocolErrors); n != want {
				t.Errorf("protocol errors counted: %d, want %d", n, want)
			}
		})
	}
}
