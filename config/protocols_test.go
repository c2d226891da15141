package config

// config reads every protocol fact from the protocol table and names no
// protocol, so its tests register a table of their own: two protocols
// with the configuration's names and defaults of their own, over a
// dialect that reads every statement as a plain SELECT. The real table
// (protocol/builtin) is exercised where the binaries are: cmd/fwctl's
// tests validate the deploy/ examples and the shipped policies with it.

import (
	"os"
	"testing"

	"github.com/sqlfw/sqlfw/discover"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
	"github.com/sqlfw/sqlfw/relay"
)

func TestMain(m *testing.M) {
	pol := func() *engine.Policy {
		p, err := engine.ParsePolicy([]byte("version: 1\nrules:\n  - {id: no-ddl, action: deny, reason: test, match: {kind: [ddl]}}\n"))
		if err != nil {
			panic(err)
		}
		return p
	}
	yaml := func() []byte { return nil }
	lex := func(map[string]string) (engine.LexState, error) { return engine.LexState{}, nil }
	protocol.Register(
		protocol.Protocol{Name: "postgres", Title: "test postgres", DefaultPort: 1, NewRelay: func() relay.Protocol { return nil },
			Dialect: selectDialect{}, DefaultPolicy: pol, DefaultPolicyYAML: yaml, MaxMessageBytes: 1 << 20, BufferBytes: 4096,
			ALPN: []string{"postgresql"}, Discover: discover.Postgres, Lex: lex},
		protocol.Protocol{Name: "mysql", Title: "test mysql", DefaultPort: 2, NewRelay: func() relay.Protocol { return nil },
			Dialect: selectDialect{}, DefaultPolicy: pol, DefaultPolicyYAML: yaml, MaxMessageBytes: 2 << 20, BufferBytes: 8192,
			AllowableCommands: []string{"COM_REGISTER_SLAVE", "COM_BINLOG_DUMP", "COM_BINLOG_DUMP_GTID"},
			Discover:          discover.MySQL, Lex: lex},
	)
	os.Exit(m.Run())
}

// selectDialect reads every statement as one SELECT.
type selectDialect struct{}

func (selectDialect) Name() string { return "select-only" }
func (selectDialect) Read(sql []byte, _ *engine.LexState) ([]byte, string, string, bool) {
	return sql, "", "", true
}
func (selectDialect) Prescan(text string, _ int) engine.LexStats {
	return engine.LexStats{Bytes: len(text)}
}
func (selectDialect) Analyze(string, engine.LexStats) *engine.TextFacts {
	return &engine.TextFacts{Stmts: []engine.StmtFacts{{Kind: engine.KindSelect, Kinds: 1 << engine.KindSelect}}}
}
func (selectDialect) Fingerprint(stmt string) uint64        { return uint64(len(stmt)) }
func (selectDialect) Normalize(stmt string) (string, error) { return stmt, nil }
func (selectDialect) Objects() []string                     { return nil }
func (selectDialect) Fills(string) bool                     { return true }
