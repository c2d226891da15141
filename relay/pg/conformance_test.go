package pg

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/pg/pgtest"
	"github.com/sqlfw/sqlfw/relay/relaytest"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// TestConformance runs the PostgreSQL relay through relaytest's suite.
func TestConformance(t *testing.T) { relaytest.TestRelay(t, peer{}) }

// peer is PostgreSQL's words for the suite.
type peer struct{}

var sslRequestMsg = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

func (peer) New() relay.Protocol        { return New() }
func (peer) Framing() relaytest.Framing { return pgtest.ReadMessage }
func (peer) Query(sql string) []byte    { return query(sql) }
func (peer) Done() []byte               { return selectDone }
func (peer) IdleClosed() relaytest.Step { return expectFatal(sqlstateIdleSession) }
func (peer) TooLarge() relaytest.Step   { return expectFatal(sqlstateProtocolViolation) }

// Blocked: the server gets the poison in the statement's place and fails
// it; the client gets sqlfw's error and the ReadyForQuery.
func (peer) Blocked(rule string) (x, a, c relaytest.Step) {
	poison := new(string)
	return poisonOf(wire.MsgQuery, poison), syntaxError(poison), relaytest.Steps(blockedBy(rule), pgtest.Expect(readyIdle))
}

// Login: an SSLRequest answered 'S' and the handshake on each TLS leg,
// then the startup message and trust authentication.
func (peer) Login(legs relaytest.Legs) (server, client []relaytest.Step) {
	if legs.Client != nil {
		client = append(client, pgtest.Send(sslRequestMsg), pgtest.ExpectByte('S'), relaytest.StartTLS(legs.Client, false))
	}
	if legs.Server != nil {
		server = append(server, pgtest.ExpectStartup(wantPacket(sslRequestMsg)), pgtest.Send([]byte{'S'}), relaytest.StartTLS(legs.Server, true))
	}
	srv, cli := startupSteps()
	return append(server, srv...), append(client, cli...)
}

// TLSRequest: the SSLRequest answered 'S'; the server is not dialled
// before the startup message.
func (peer) TLSRequest() (server, client []relaytest.Step) {
	return nil, []relaytest.Step{pgtest.Send(sslRequestMsg), pgtest.ExpectByte('S')}
}

// expectFatal expects a FATAL ErrorResponse with code.
func expectFatal(code string) relaytest.Step {
	return pgtest.ExpectFunc(func(msg []byte) error {
		var e pgproto3.ErrorResponse
		if msg[0] != wire.MsgErrorResponse || e.Decode(msg[wire.HeaderLen:]) != nil || e.Severity != "FATAL" || e.Code != code {
			return fmt.Errorf("got %q, want FATAL %s", msg, code)
		}
		return nil
	})
}
