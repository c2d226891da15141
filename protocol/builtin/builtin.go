// Package builtin registers the protocols built into sqlfwd, in the order
// the table lists them: PostgreSQL, then MySQL and MariaDB. It is the one
// package that imports every protocol's relay, wire package and dialect;
// cmd/sqlfwd and cmd/fwctl call Register first thing in main (tests of
// the packages that need real protocols, in TestMain). Registration is an
// explicit call, not an init function's side effect, so nothing depends on
// the order packages initialise in (package protocol's doc).
package builtin

import (
	// the catalog connections' database/sql drivers (CatalogDriver)
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"fmt"
	"strings"
	"sync"

	"github.com/sqlfw/sqlfw/discover"
	"github.com/sqlfw/sqlfw/engine"
	mysqlsql "github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/engine/pgsql"
	"github.com/sqlfw/sqlfw/protocol"
	"github.com/sqlfw/sqlfw/relay"
	myrelay "github.com/sqlfw/sqlfw/relay/mysql"
	"github.com/sqlfw/sqlfw/relay/pg"
	wiremysql "github.com/sqlfw/sqlfw/wire/mysql"
	wirepg "github.com/sqlfw/sqlfw/wire/pg"
)

// Protocols is the table: every protocol sqlfwd speaks.
func Protocols() []protocol.Protocol {
	return []protocol.Protocol{
		{
			Name:              "postgres",
			Title:             "PostgreSQL",
			DefaultPort:       pg.DefaultPort,
			NewRelay:          func() relay.Protocol { return pg.New() },
			Dialect:           pgsql.Dialect,
			DefaultPolicy:     pgsql.DefaultPolicy,
			DefaultPolicyYAML: pgsql.DefaultPolicyYAML,
			MaxMessageBytes:   wirepg.DefaultMaxMessage,
			BufferBytes:       wirepg.DefaultBufferSize,
			// PostgreSQL 17's direct TLS negotiation names its protocol.
			ALPN:          []string{"postgresql"},
			Discover:      discover.Postgres,
			CatalogDriver: "pgx", // daemon/catalog.go's blank import
			LexSettings:   []string{"standard_conforming_strings", "client_encoding"},
			Lex:           pgLex,
		},
		{
			// MySQL and MariaDB
			Name:              "mysql",
			Title:             "MySQL/MariaDB",
			DefaultPort:       myrelay.DefaultPort,
			NewRelay:          func() relay.Protocol { return myrelay.New() },
			Dialect:           mysqlsql.Dialect,
			DefaultPolicy:     mysqlsql.DefaultPolicy,
			DefaultPolicyYAML: mysqlsql.DefaultPolicyYAML,
			MaxMessageBytes:   wiremysql.DefaultMaxPacket,
			BufferBytes:       wiremysql.DefaultBufferSize,
			AllowableCommands: myReplicationCommands(),
			// MySQL clients send no ALPN: none is listed.
			Discover:      discover.MySQL,
			CatalogDriver: "mysql",
			LexSettings:   []string{"sql_mode", "client_encoding"},
			Lex:           myLex,
		},
	}
}

var once sync.Once

// Register registers Protocols with package protocol; calls after the
// first do nothing.
func Register() { once.Do(func() { protocol.Register(Protocols()...) }) }

// myReplicationCommands are the commands a replica needs, which the relay
// refuses unless allow_commands names them.
func myReplicationCommands() []string {
	var out []string
	for c := 0; c < 256; c++ {
		if wiremysql.IsReplication(byte(c)) {
			out = append(out, wiremysql.CommandName(byte(c)))
		}
	}
	return out
}

// pgLex: standard_conforming_strings on (default) or off, client_encoding
// as PostgreSQL spells it (default UTF8).
func pgLex(s map[string]string) (engine.LexState, error) {
	var lex engine.LexState
	for k, v := range s {
		switch k {
		case "standard_conforming_strings":
			switch strings.ToLower(v) {
			case "on", "true", "1":
			case "off", "false", "0":
				lex.NonStandardStrings = true
			default:
				return lex, fmt.Errorf("standard_conforming_strings: want on or off, got %q", v)
			}
		case "client_encoding":
		default:
			return lex, fmt.Errorf("%s is not a setting PostgreSQL lexes by", k)
		}
	}
	enc := "UTF8"
	if v, ok := s["client_encoding"]; ok {
		enc = v
	}
	canon, ok := pgsql.CanonicalEncoding(enc)
	if !ok {
		return lex, fmt.Errorf("client_encoding: %q is not an encoding PostgreSQL knows", enc)
	}
	lex.ClientEncoding = canon
	return lex, nil
}

// myLex: sql_mode as the server reports it (default the server's), the
// character set of character_set_client (default the engine's).
func myLex(s map[string]string) (engine.LexState, error) {
	var lex engine.LexState
	for k, v := range s {
		switch k {
		case "sql_mode":
			lex.SQLMode = v
		case "client_encoding":
			lex.ClientEncoding = strings.ToLower(v)
		default:
			return lex, fmt.Errorf("%s is not a setting MySQL lexes by", k)
		}
	}
	return lex, nil
}
