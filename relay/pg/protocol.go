package pg

import (
	"net"

	"github.com/sqlfw/sqlfw/relay"
)

// DefaultPort is where PostgreSQL listens unless told otherwise.
const DefaultPort = 5432

// Protocol is the PostgreSQL relay (a relay.Protocol): it serves sessions
// and routes cancel requests between them. A daemon has one, so that a
// CancelRequest reaches the session it names whichever database's listener
// it arrives on.
type Protocol struct {
	cancels cancelKeys
}

// Refuse answers a client turned away before its session starts with a
// FATAL error.
func (p *Protocol) Refuse(conn net.Conn, r *relay.Refusal) {
	code := sqlstateTooManyConnections
	switch r.Reason {
	case relay.ShuttingDown:
		code = sqlstateAdminShutdown
	case relay.Unavailable:
		code = sqlstateCannotConnectNow
	}
	writeFatal(conn, code, r.Msg)
}

// New returns a PostgreSQL relay.
func New() *Protocol { return &Protocol{} }
