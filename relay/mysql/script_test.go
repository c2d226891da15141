package mysql

// Scripted-peer tests: the session between two scripts, the client's and
// the server's, over net.Pipe or loopback TCP (relaytest): each step sends
// bytes or expects the next packet.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
	mydialect "github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/relaytest"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// The kit is relaytest's: its scripts, harness and toy dialect (which
// reads just enough SQL for the session's decisions: no dialect package is
// imported, layers_test.go); these are its MySQL words.

type step = relaytest.Step

var (
	send         = relaytest.Send
	sendBytewise = relaytest.SendBytewise
	startTLS     = relaytest.StartTLS
	closeWrite   = relaytest.CloseWrite
	tcpPair      = relaytest.TCPPair
	testEngine   = relaytest.Engine
	newPKI       = relaytest.NewPKI
)

type testPKI = relaytest.PKI

// harness serves MySQL sessions between two scripts.
type harness struct{ *relaytest.Harness }

func newHarness(t *testing.T) *harness { return &harness{relaytest.NewHarness(t, New())} }

func (h *harness) run(t *testing.T, server, client []step) relay.Session {
	t.Helper()
	return h.Run(t, server, client)
}

func (h *harness) count(c relay.Counter) uint64 { return h.Counted(c) }

// readPkt reads one packet whole (header and payload).
func readPkt(c io.Reader) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	b := make([]byte, 4+n)
	copy(b, h[:])
	_, err := io.ReadFull(c, b[4:])
	return b, err
}

// expect reads the packets of want one by one and wants them byte for
// byte.
func expect(want []byte) step { return relaytest.Expect(readPkt, want) }

func expectFunc(check func([]byte) error) step { return relaytest.ExpectFunc(readPkt, check) }

// expectErr wants an ERR packet with sequence id seq, code and sqlstate
// whose message contains sub.
func expectErr(seq int, code uint16, state, sub string) step {
	return expectFunc(func(m []byte) error {
		e, err := wire.ParseErr(m[4:])
		if err != nil {
			return fmt.Errorf("got %q, want an ERR: %v", m, err)
		}
		if wire.Seq(m) != seq || e.Code != code || string(e.SQLState) != state || !strings.Contains(string(e.Message), sub) {
			return fmt.Errorf("got ERR seq %d %d #%s %q, want seq %d %d #%s containing %q", wire.Seq(m), e.Code, e.SQLState, e.Message, seq, code, state, sub)
		}
		return nil
	})
}

// expectClosed wants the peer to close.
func expectClosed() step { return relaytest.ExpectClosed() }

// Packets.

func pkt(seq int, payload ...byte) []byte {
	b, _ := wire.AppendPacket(nil, seq, payload)
	return b
}

func pktS(seq int, first byte, s string) []byte { return pkt(seq, append([]byte{first}, s...)...) }

const serverCaps = wire.CapFoundRows | wire.CapLongFlag | wire.CapConnectWithDB | wire.CapCompress | wire.CapLocalFiles |
	wire.CapProtocol41 | wire.CapSSL | wire.CapTransactions | wire.CapSecureConnection | wire.CapMultiStatements |
	wire.CapMultiResults | wire.CapPSMultiResults | wire.CapPluginAuth | wire.CapConnectAttrs | wire.CapPluginAuthLenencData |
	wire.CapSessionTrack | wire.CapDeprecateEOF | wire.CapMariaDBStmtBulkOperations | wire.CapMariaDBComMulti | wire.CapMariaDBProgress

// greeting is a MariaDB HandshakeV10 offering caps (CLIENT_MYSQL clear:
// the extended capabilities follow).
func greeting(caps wire.Caps) []byte {
	p := []byte{wire.ProtocolVersion10}
	p = append(p, "5.5.5-10.11.6-MariaDB\x00"...)
	p = binary.LittleEndian.AppendUint32(p, 42)
	p = append(p, "abcdefgh\x00"...)
	p = binary.LittleEndian.AppendUint16(p, caps.Lower())
	p = append(p, 45)
	p = binary.LittleEndian.AppendUint16(p, wire.StatusAutocommit)
	p = binary.LittleEndian.AppendUint16(p, caps.Upper())
	p = append(p, 21, 0, 0, 0, 0, 0, 0)
	p = binary.LittleEndian.AppendUint32(p, caps.Extended())
	p = append(p, "ijklmnopqrst\x00"...)
	p = append(p, "mysql_native_password\x00"...)
	return pkt(0, p...)
}

const clientCaps = wire.CapLongFlag | wire.CapConnectWithDB | wire.CapLocalFiles | wire.CapProtocol41 | wire.CapTransactions |
	wire.CapSecureConnection | wire.CapMultiStatements | wire.CapMultiResults | wire.CapPSMultiResults | wire.CapPluginAuth |
	wire.CapConnectAttrs | wire.CapPluginAuthLenencData | wire.CapSessionTrack | wire.CapDeprecateEOF | wire.CapMariaDBStmtBulkOperations |
	wire.CapMariaDBProgress

// handshakeResponse is a client's HandshakeResponse41 for user and db.
func handshakeResponse(caps wire.Caps, user, db string) []byte {
	p := binary.LittleEndian.AppendUint32(nil, uint32(uint64(caps)))
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, 45)
	p = append(p, make([]byte, 19)...)
	p = binary.LittleEndian.AppendUint32(p, caps.Extended())
	p = append(p, user...)
	p = append(p, 0, 20)
	p = append(p, "01234567890123456789"...)
	p = append(p, db...)
	p = append(p, 0)
	p = append(p, "mysql_native_password\x00"...)
	attrs := wire.AppendLenInt(nil, 12)
	attrs = append(attrs, "program_name"...)
	attrs = wire.AppendLenInt(attrs, 4)
	attrs = append(attrs, "test"...)
	p = wire.AppendLenInt(p, uint64(len(attrs)))
	p = append(p, attrs...)
	return pkt(1, p...)
}

// ok is an OK packet with status.
func ok(seq int, status uint16) []byte {
	p := []byte{0, 0, 0}
	p = binary.LittleEndian.AppendUint16(p, status)
	return pkt(seq, append(p, 0, 0)...)
}

// progress is a MariaDB progress report (an ERR with error number 0xffff:
// stage 1 of 1, 16%, "ALT"), which ends no command.
func progress(seq int) []byte {
	return pkt(seq, append([]byte{0xff, 0xff, 0xff, 1, 1, 1, 0x10, 0, 0, 3}, "ALT"...)...)
}

func query(sql string) []byte { return pktS(0, wire.ComQuery, sql) }

// resultSet is a one-column, one-row text result under DEPRECATE_EOF.
func resultSet(status uint16) []byte {
	col := []byte{3, 'd', 'e', 'f', 0, 0, 0, 1, '1', 0, 0x0c, 0x3f, 0, 1, 0, 0, 0, 8, 0x81, 0, 0, 0, 0}
	end := []byte{0xfe, 0, 0}
	end = binary.LittleEndian.AppendUint16(end, status)
	end = append(end, 0, 0)
	return bytes.Join([][]byte{pkt(1, 1), pkt(2, col...), pkt(3, 1, '1'), pkt(4, end...)}, nil)
}

const autocommit = wire.StatusAutocommit

// login is both sides' steps up to the end of authentication (trust).
func login() (server, client []step) {
	hello := handshakeResponse(clientCaps, "app", "shop")
	return []step{send(greeting(serverCaps)), expect(hello), send(ok(2, autocommit))},
		[]step{expectFunc(checkGreeting), send(hello), expect(ok(2, autocommit))}
}

// checkGreeting wants the greeting without what the relay cannot follow.
func checkGreeting(m []byte) error {
	h, err := wire.ParseHandshake(m[4:])
	if err != nil {
		return err
	}
	if h.Caps&wire.DefaultStrip != 0 {
		return fmt.Errorf("greeting offers %#x, which the relay strips", uint64(h.Caps&wire.DefaultStrip))
	}
	if want := serverCaps &^ wire.DefaultStrip; h.Caps != want {
		return fmt.Errorf("greeting offers %#x, want %#x", uint64(h.Caps), uint64(want))
	}
	return nil
}

var errAny = errors.New("any")

// The relay follows what a text changes in the session as MySQL's dialect
// reads it (engine.SessionEffector), under the toy dialect's judging.
func init() { relaytest.Sessions = mydialect.Dialect.(engine.SessionEffector) }
