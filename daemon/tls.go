package daemon

// The TLS configurations a database's sessions use: the config package
// builds them from the certificates (config/tls.go), and the sessions run
// the handshakes (relay/pg/tls.go).

import (
	"crypto/tls"
	"sync/atomic"
)

// dbTLS holds a database's built TLS configurations; a reload swaps them.
type dbTLS struct {
	server atomic.Pointer[tls.Config] // client leg (nil: no TLS)
	client atomic.Pointer[tls.Config] // server leg (nil: disable)
}
