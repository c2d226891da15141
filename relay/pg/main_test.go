package pg

import (
	"os"
	"testing"

	"github.com/sqlfw/sqlfw/discover"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/pgsql"
	"github.com/sqlfw/sqlfw/protocol"
	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/relaytest"
	wirepg "github.com/sqlfw/sqlfw/wire/pg"
)

// The proxy the tests run (proxy_test.go) builds its configuration's
// defaults and engine through config, which reads the protocol table: it
// holds this relay's entry. protocol/builtin, which the binaries register,
// cannot be imported from here (it imports this package); the real
// PostgreSQL dialect judges, as in sqlfwd, though the relay never imports
// it outside tests.
func TestMain(m *testing.M) {
	// the toy dialect's harness reads what a text changes in the session
	// as PostgreSQL's dialect does (engine.SessionEffector)
	relaytest.Sessions = pgsql.Dialect.(engine.SessionEffector)
	protocol.Register(protocol.Protocol{
		Name: "postgres", Title: "PostgreSQL", DefaultPort: DefaultPort,
		NewRelay: func() relay.Protocol { return New() },
		Dialect:  pgsql.Dialect, DefaultPolicy: pgsql.DefaultPolicy, DefaultPolicyYAML: pgsql.DefaultPolicyYAML,
		MaxMessageBytes: wirepg.DefaultMaxMessage, BufferBytes: wirepg.DefaultBufferSize,
		ALPN: []string{"postgresql"}, Discover: discover.Postgres,
		Lex: func(map[string]string) (engine.LexState, error) { return engine.LexState{}, nil },
	})
	os.Exit(m.Run())
}
