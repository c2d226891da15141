package mysql

import (
	"net"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// DefaultPort is where MySQL and MariaDB listen unless told otherwise.
const DefaultPort = 3306

// Protocol is the MySQL relay (a relay.Protocol). It holds nothing across
// sessions: MySQL cancels with KILL QUERY on another connection, which is
// a statement like any other.
type Protocol struct{}

// New returns a MySQL relay.
func New() *Protocol { return &Protocol{} }

// Refuse answers a client turned away before its session starts with the
// ERR a server sends instead of its greeting (sequence id 0).
func (p *Protocol) Refuse(conn net.Conn, r *relay.Refusal) {
	code, state := refusalCode(r)
	writeErr(conn, 0, code, state, r.Msg)
}

// refusalCode is the error code and SQLSTATE of a refusal.
func refusalCode(r *relay.Refusal) (uint16, string) {
	switch r.Reason {
	case relay.ShuttingDown:
		return errServerShutdown, sqlstateShutdown
	case relay.Unavailable:
		return errUnknown, sqlstateGeneral
	}
	return errConCount, sqlstateConCount
}

// writeErr writes one ERR packet to conn, bounded in time: the session is
// ending and a client that does not read must not hold it.
func writeErr(conn net.Conn, seq int, code uint16, sqlstate, msg string) {
	relay.WriteLast(conn, errPacket(seq, code, sqlstate, msg))
}

// errPacket is one ERR packet.
func errPacket(seq int, code uint16, sqlstate, msg string) []byte {
	return wire.AppendErr(nil, seq, code, sqlstate, msg)
}
