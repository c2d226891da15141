package pg

import (
	"crypto/tls"
	"fmt"
	"net"
	"testing"

	"github.com/sqlfw/sqlfw/relay/relaytest"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/pg/pgtest"
)

// tlsThen runs the TLS handshake as the client, then its steps inside it.
type tlsThen []pgtest.Step

func (s tlsThen) Play(c net.Conn) error {
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	return (&pgtest.Script{Steps: s}).Run(tc)
}

// TestScriptedClearPasswordRefused: the client leg is TLS, the server leg
// plaintext to an upstream off the host (RefuseClearPassword). The
// server's request for the password in clear never reaches the client,
// which gets FATAL 28000 instead and so never sends its password; with
// the operator's opt-in (RefuseClearPassword false), or on a plaintext
// client leg, the exchange passes untouched.
func TestScriptedClearPasswordRefused(t *testing.T) {
	sslRequest := []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}
	askPassword := enc(&pgproto3.AuthenticationCleartextPassword{})
	askMD5 := enc(&pgproto3.AuthenticationMD5Password{Salt: [4]byte{1, 2, 3, 4}})
	password := enc(&pgproto3.PasswordMessage{Password: "s3cret"})
	refused := pgtest.ExpectFunc(func(msg []byte) error {
		var e pgproto3.ErrorResponse
		if msg[0] != 'E' || e.Decode(msg[5:]) != nil || e.Severity != "FATAL" || e.Code != "28000" {
			return fmt.Errorf("got %q, want FATAL 28000", msg)
		}
		return nil
	})
	cases := []struct {
		name      string
		refuse    bool // RefuseClearPassword
		clientTLS bool
		ask       []byte
		want      bool // refused
	}{
		{"tls client, clear server, off host", true, true, askPassword, true},
		{"opted in", false, true, askPassword, false},
		{"plaintext client", true, false, askPassword, false},
		{"md5 is not clear text", true, true, askMD5, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPiped(t)
			cfg := relaytest.SelfSigned(t)
			p.env.ClientTLS = func() *tls.Config { return cfg }
			up := relay.Upstream{Network: "tcp", Addr: p.cfg.Upstream, RefuseClearPassword: c.refuse}
			server := []pgtest.Step{pgtest.ExpectStartup(wantPacket(startupMessage)), pgtest.Send(c.ask)}
			inner := []pgtest.Step{pgtest.Send(startupMessage)}
			if c.want {
				server = append(server, pgtest.ExpectClosed()) // no password
				inner = append(inner, refused, pgtest.ExpectClosed())
			} else {
				server = append(server, pgtest.Expect(password), pgtest.Send(helloMessages), pgtest.Expect(terminate))
				inner = append(inner, pgtest.Expect(c.ask), pgtest.Send(password), pgtest.ExpectAll(helloMessages),
					pgtest.Send(terminate), pgtest.ExpectClosed())
			}
			client := []pgtest.Step{pgtest.Send(sslRequest)}
			if c.clientTLS {
				client = append(client, pgtest.ExpectByte('S'), tlsThen(inner))
			} else {
				p.env.ClientTLS = func() *tls.Config { return nil }
				client = append(client, pgtest.ExpectByte('N'))
				client = append(client, inner...)
			}
			srv, srvDone := play(t, &pgtest.Script{Steps: server})
			p.dials <- srv
			cli, cliDone := play(t, &pgtest.Script{Steps: client})
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.proto.Serve(&p.env, &relay.Conn{Client: cli, ID: 1, Via: relay.ViaListen, Upstream: up})
			}()
			if err := <-cliDone; err != nil {
				t.Errorf("client: %v", err)
			}
			if err := <-srvDone; err != nil {
				t.Errorf("server: %v", err)
			}
			if got := p.count(relay.ConnRefused) == 1; got != c.want {
				t.Errorf("refused %v, want %v", got, c.want)
			}
		})
	}
}
