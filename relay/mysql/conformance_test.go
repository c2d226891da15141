package mysql

import (
	"fmt"
	"testing"

	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/relaytest"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// TestConformance runs the MySQL relay through relaytest's suite.
func TestConformance(t *testing.T) { relaytest.TestRelay(t, peer{}) }

// peer is MySQL's words for the suite.
type peer struct{}

func (peer) New() relay.Protocol        { return New() }
func (peer) Framing() relaytest.Framing { return readPkt }
func (peer) Query(sql string) []byte    { return query(sql) }
func (peer) Done() []byte               { return ok(1, autocommit) }
func (peer) IdleClosed() relaytest.Step {
	return expectErr(0, errClientInteractionTimeout, "HY000", "idle")
}
func (peer) TooLarge() relaytest.Step {
	return expectErr(1, errPacketTooLarge, "08S01", "max_allowed_packet")
}
func (peer) Blocked(rule string) (x, a, c relaytest.Step) {
	none := relaytest.Do(func() {}) // nothing of it reaches the server
	return none, none, expectErr(1, errBlocked, "42000", rule)
}

// Login: each TLS leg adds its SSL request (sequence id 1) before the
// handshake response on that leg, so the ids differ until the OK.
func (peer) Login(legs relaytest.Legs) (server, client []relaytest.Step) {
	cliSeq, srvSeq := 1, 1
	cliCaps, srvCaps := clientCaps, clientCaps
	server = []relaytest.Step{send(greeting(serverCaps))}
	client = []relaytest.Step{expectFunc(func([]byte) error { return nil })}
	if legs.Client != nil {
		cliSeq, cliCaps = 2, clientCaps|wire.CapSSL
		client = append(client, send(sslRequest(clientCaps)), startTLS(legs.Client, false))
	}
	if legs.Server != nil {
		srvSeq, srvCaps = 2, clientCaps|wire.CapSSL
		server = append(server, expect(sqlfwSSLRequest(handshakeResponse(srvCaps, "app", "shop"))), startTLS(legs.Server, true))
	}
	server = append(server, expect(withSeq(handshakeResponse(srvCaps, "app", "shop"), srvSeq)), send(ok(srvSeq+1, autocommit)))
	client = append(client, send(withSeq(handshakeResponse(cliCaps, "app", "shop"), cliSeq)), expect(ok(cliSeq+1, autocommit)))
	return server, client
}

// TLSRequest: the greeting offers TLS, the client sends its SSL request.
func (peer) TLSRequest() (server, client []relaytest.Step) {
	return []relaytest.Step{send(greeting(serverCaps)), expectClosed()},
		[]relaytest.Step{expectFunc(func(m []byte) error {
			if h, err := wire.ParseHandshake(m[4:]); err != nil || !h.Caps.Has(wire.CapSSL) {
				return fmt.Errorf("greeting %q without CLIENT_SSL (%v)", m, err)
			}
			return nil
		}), send(sslRequest(clientCaps))}
}
