package daemon

// The protocols sqlfwd relays. This is the one file of the daemon that
// names a protocol: everything else knows relay.Protocol and relay.Session.

import (
	_ "github.com/go-sql-driver/mysql" // the catalog connection's driver (catalog.go)
	_ "github.com/jackc/pgx/v5/stdlib" // the catalog connection's driver (catalog.go)

	"github.com/sqlfw/sqlfw/discover"
	"github.com/sqlfw/sqlfw/engine"
	mysqlsql "github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/engine/pgsql"
	"github.com/sqlfw/sqlfw/relay"
	myrelay "github.com/sqlfw/sqlfw/relay/mysql"
	"github.com/sqlfw/sqlfw/relay/pg"
)

// protocol is one protocol's entry.
type protocol struct {
	// name is the configuration's protocol: value.
	name string
	// relay makes the protocol's relay; a daemon makes one and serves
	// every database of the protocol with it.
	relay func() relay.Protocol
	// dialect reads the protocol's SQL for the engine; defaultPolicy is the
	// policy of a database that names none.
	dialect       engine.Dialect
	defaultPolicy func() *engine.Policy
	// discover is what discovery calls the protocol's servers.
	discover discover.Protocol
	// defaultPort is where its servers listen unless told otherwise (the
	// table says it so that a protocol is described in one place; nothing
	// in the daemon needs it yet).
	defaultPort uint16
	// catalogDriver is the database/sql driver of the catalog connection
	// (catalog.go).
	catalogDriver string
}

var protocols = []protocol{
	{
		name:          "postgres",
		relay:         func() relay.Protocol { return pg.New() },
		dialect:       pgsql.Dialect,
		defaultPolicy: pgsql.DefaultPolicy,
		discover:      discover.Postgres,
		defaultPort:   pg.DefaultPort,
		catalogDriver: "pgx",
	},
	{
		// MySQL and MariaDB
		name:          "mysql",
		relay:         func() relay.Protocol { return myrelay.New() },
		dialect:       mysqlsql.Dialect,
		defaultPolicy: mysqlsql.DefaultPolicy,
		discover:      discover.MySQL,
		defaultPort:   myrelay.DefaultPort,
		catalogDriver: "mysql",
	},
}

// protocolNamed returns the entry of a configured protocol name.
func protocolNamed(name string) (protocol, bool) {
	for _, p := range protocols {
		if p.name == name {
			return p, true
		}
	}
	return protocol{}, false
}

// protocolDiscovered returns the entry of a protocol discovery found.
func protocolDiscovered(d discover.Protocol) (protocol, bool) {
	for _, p := range protocols {
		if p.discover == d {
			return p, true
		}
	}
	return protocol{}, false
}
