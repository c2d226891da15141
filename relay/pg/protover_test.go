package pg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/pg/pgtest"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// Protocol versions and extensions (protover.go), between scripted peers.

func startupV(minor uint32, extra map[string]string) []byte {
	params := map[string]string{"user": "app", "database": "shop"}
	for k, v := range extra {
		params[k] = v
	}
	return enc(&pgproto3.StartupMessage{ProtocolVersion: 3<<16 | minor, Parameters: params})
}

// negotiate is a NegotiateProtocolVersion as PostgreSQL sends it: the
// newest version whole (3<<16 | minor).
func negotiate(minor uint32, options ...string) []byte {
	return enc(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 3<<16 | minor, UnrecognizedOptions: options})
}

// asVersion is the startup packet as the server must get it: the same
// parameters, the code of another version.
func asVersion(pkt []byte, minor uint32) []byte {
	b := append([]byte(nil), pkt...)
	binary.BigEndian.PutUint32(b[4:], 3<<16|minor)
	return b
}

// fatalProtocol wants a FATAL 08P01 whose message has every one of words.
func fatalProtocol(words ...string) pgtest.Step {
	return pgtest.ExpectFunc(func(msg []byte) error {
		m := string(wire.ErrorField(msg, 'M'))
		if msg[0] != wire.MsgErrorResponse || string(wire.ErrorField(msg, 'C')) != "08P01" || string(wire.ErrorField(msg, 'S')) != "FATAL" {
			return fmt.Errorf("got %q, want FATAL 08P01", msg)
		}
		for _, w := range words {
			if !strings.Contains(m, w) {
				return fmt.Errorf("got %q, want a message with %q", m, w)
			}
		}
		return nil
	})
}

func TestScriptedProtocolVersions(t *testing.T) {
	v32 := startupV(2, nil)
	v35 := startupV(5, nil)
	ext := startupV(2, map[string]string{"_pq_.test_ext": "on"})
	ext2 := startupV(0, map[string]string{"_pq_.a": "1", "_pq_.b": "2"})
	for _, tc := range []struct {
		name           string
		server, client []pgtest.Step
	}{
		{"3.2 to a server that speaks it: both ways byte for byte",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(v32)), pgtest.Send(helloMessages), pgtest.Expect(terminate)},
			[]pgtest.Step{pgtest.Send(v32), pgtest.ExpectAll(helloMessages), pgtest.Send(terminate), pgtest.ExpectClosed()}},
		{"3.2 to PostgreSQL 14-17: their NegotiateProtocolVersion passes untouched",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(v32)), pgtest.Send(negotiate(0), helloMessages), pgtest.Expect(terminate)},
			[]pgtest.Step{pgtest.Send(v32), pgtest.Expect(negotiate(0)), pgtest.ExpectAll(helloMessages), pgtest.Send(terminate), pgtest.ExpectClosed()}},
		{"3.5 goes as 3.2; a server that takes it silently: sqlfwd says 3.2 first",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(asVersion(v35, 2))), pgtest.Send(helloMessages), pgtest.Expect(terminate)},
			[]pgtest.Step{pgtest.Send(v35), pgtest.Expect(negotiate(2)), pgtest.ExpectAll(helloMessages), pgtest.Send(terminate), pgtest.ExpectClosed()}},
		{"3.5 goes as 3.2; a 3.0 server's answer passes",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(asVersion(v35, 2))), pgtest.Send(negotiate(0), helloMessages), pgtest.Expect(terminate)},
			[]pgtest.Step{pgtest.Send(v35), pgtest.Expect(negotiate(0)), pgtest.ExpectAll(helloMessages), pgtest.Send(terminate), pgtest.ExpectClosed()}},
		{"3.5 bytewise, the server's answer split from its first request",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(asVersion(v35, 2))), pgtest.Send(enc(&pgproto3.AuthenticationCleartextPassword{})),
				pgtest.Expect(enc(&pgproto3.PasswordMessage{Password: "pw"})), pgtest.Send(helloMessages), pgtest.Expect(terminate)},
			[]pgtest.Step{pgtest.SendBytewise(v35), pgtest.Expect(negotiate(2)), pgtest.Expect(enc(&pgproto3.AuthenticationCleartextPassword{})),
				pgtest.Send(enc(&pgproto3.PasswordMessage{Password: "pw"})), pgtest.ExpectAll(helloMessages), pgtest.Send(terminate), pgtest.ExpectClosed()}},
		{"an extension the server does not recognise passes with its answer",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(ext)), pgtest.Send(negotiate(2, "_pq_.test_ext"), helloMessages), pgtest.Expect(terminate)},
			[]pgtest.Step{pgtest.Send(ext), pgtest.Expect(negotiate(2, "_pq_.test_ext")), pgtest.ExpectAll(helloMessages), pgtest.Send(terminate), pgtest.ExpectClosed()}},
		{"two extensions, both unrecognised, on 3.0",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(ext2)), pgtest.Send(negotiate(0, "_pq_.a", "_pq_.b"), helloMessages), pgtest.Expect(terminate)},
			[]pgtest.Step{pgtest.Send(ext2), pgtest.Expect(negotiate(0, "_pq_.a", "_pq_.b")), pgtest.ExpectAll(helloMessages), pgtest.Send(terminate), pgtest.ExpectClosed()}},
		{"an extension the server accepts silently ends the session",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(ext)), pgtest.Send(helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(ext), fatalProtocol("_pq_.test_ext", "cannot follow"), pgtest.ExpectClosed()}},
		{"an extension the server's answer leaves out (accepted) ends the session",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(ext2)), pgtest.Send(negotiate(0, "_pq_.a"), helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(ext2), fatalProtocol("_pq_.b"), pgtest.ExpectClosed()}},
		{"a server offering more than was asked ends the session",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(v32)), pgtest.Send(negotiate(3), helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(v32), fatalProtocol("3.3"), pgtest.ExpectClosed()}},
		{"the bare minor, as the documentation has it, passes too",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(v32)), pgtest.Send(enc(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0}), helloMessages), pgtest.Expect(terminate)},
			[]pgtest.Step{pgtest.Send(v32), pgtest.Expect(enc(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0})), pgtest.ExpectAll(helloMessages), pgtest.Send(terminate), pgtest.ExpectClosed()}},
		{"another major ends the session",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(v32)), pgtest.Send(enc(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 4 << 16}), helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(v32), fatalProtocol("4.0"), pgtest.ExpectClosed()}},
		{"a malformed NegotiateProtocolVersion ends the session",
			[]pgtest.Step{pgtest.ExpectStartup(wantPacket(v32)), pgtest.Send([]byte{'v', 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 1}, helloMessages), pgtest.ExpectClosed()},
			[]pgtest.Step{pgtest.Send(v32), fatalProtocol("NegotiateProtocolVersion"), pgtest.ExpectClosed()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPiped(t)
			p.session(t, tc.server, tc.client)
		})
	}
}

// cancelRequest is a CancelRequest packet with a key of any length.
func cancelRequest(pid uint32, secret []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(12+len(secret)))
	b = binary.BigEndian.AppendUint32(b, wire.CodeCancelRequest)
	b = binary.BigEndian.AppendUint32(b, pid)
	return append(b, secret...)
}

// PostgreSQL 18's cancel keys under protocol 3.2: BackendKeyData's secret
// of any length up to 256 bytes, kept whole; the CancelRequest carrying it
// reaches the session's upstream byte for byte, and one carrying only a
// part of it (or more) is dropped without a dial.
func TestScriptedLongCancelKeys(t *testing.T) {
	for _, n := range []int{4, 32, 256} {
		t.Run(fmt.Sprintf("%d-byte secret", n), func(t *testing.T) {
			secret := bytes.Repeat([]byte{0xa5}, n)
			for i := range secret {
				secret[i] ^= byte(i)
			}
			hello := enc(&pgproto3.AuthenticationOk{}, &pgproto3.BackendKeyData{ProcessID: 4242, SecretKey: secret}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
			startup := startupV(2, nil)
			cancel := cancelRequest(4242, secret)
			// another process id, the key one byte longer, and for a long
			// secret its first 4 bytes (a 3.0 key) and all but its last
			wrong := [][]byte{cancelRequest(4243, secret), cancelRequest(4242, append(append([]byte(nil), secret...), 0))}
			if n > 4 {
				wrong = append(wrong, cancelRequest(4242, secret[:4]), cancelRequest(4242, secret[:n-1]))
			}
			p := newPiped(t)
			inSession, cancelled, sessionDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
			go func() {
				defer close(sessionDone)
				p.session(t,
					[]pgtest.Step{pgtest.ExpectStartup(wantPacket(startup)), pgtest.Send(hello), pgtest.Expect(query("select 42")),
						waitFor(cancelled), pgtest.Send(selectDone), pgtest.Expect(terminate)},
					[]pgtest.Step{pgtest.Send(startup), pgtest.ExpectAll(hello), pgtest.Send(query("select 42")), signal(inSession),
						pgtest.ExpectAll(selectDone), pgtest.Send(terminate), pgtest.ExpectClosed()})
			}()
			<-inSession
			<-p.dialed
			for _, w := range wrong {
				c, done := play(t, &pgtest.Script{Steps: []pgtest.Step{pgtest.Send(w), pgtest.ExpectClosed()}})
				p.serve(c)
				if err := <-done; err != nil {
					t.Fatalf("cancel with a %d-byte key: %v", len(w)-12, err)
				}
			}
			up, upDone := play(t, &pgtest.Script{Steps: []pgtest.Step{pgtest.ExpectStartup(wantPacket(cancel))}})
			p.dials <- up
			c, done := play(t, &pgtest.Script{Steps: []pgtest.Step{pgtest.Send(cancel), pgtest.ExpectClosed()}})
			p.serve(c)
			if err := <-upDone; err != nil {
				t.Fatalf("the upstream's cancel connection: %v", err)
			}
			if err := <-done; err != nil {
				t.Fatalf("the cancelling client: %v", err)
			}
			if got := <-p.dialed; got != "tcp db.example:5432" {
				t.Errorf("the cancel went to %q, want the session's upstream", got)
			}
			select {
			case d := <-p.dialed:
				t.Errorf("a wrong key was dialled for: %s", d)
			default:
			}
			close(cancelled)
			<-sessionDone
			if got, want := p.count(relay.CancelRequests), uint64(len(wrong)+1); got != want {
				t.Errorf("%d cancel requests counted, want %d", got, want)
			}
		})
	}
}
