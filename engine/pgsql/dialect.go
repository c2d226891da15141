package pgsql

import (
	"bytes"
	_ "embed"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// Dialect is PostgreSQL's SQL for the engine: engine.New(policy,
// pgsql.Dialect, opts). It is also an engine.Shaper (shape.go), an
// engine.Starter (startup.go) and an engine.Fastpather.
var Dialect engine.Dialect = pgDialect{}

// pgDialect holds no state: the lexing state of a session comes with each
// text (engine.Session.Lex), and facts depend on the text alone.
type pgDialect struct{}

func (pgDialect) Name() string { return "postgresql" }

// Read returns the text the server lexes under l (lexstate.go).
func (pgDialect) Read(sql []byte, l *engine.LexState) ([]byte, string, string, bool) {
	if readsAsIs(l) {
		return sql, "", "", true
	}
	return lexRead(sql, l)
}

func (pgDialect) Prescan(text string, stopBytes int) engine.LexStats { return prescan(text, stopBytes) }

func (pgDialect) Analyze(text string, lex engine.LexStats) *engine.TextFacts {
	return analyzeLex(text, lex)
}

// Fingerprint is pg_query's fingerprint of the statement.
func (pgDialect) Fingerprint(stmt string) uint64 {
	fp, err := pg_query.FingerprintToUInt64(stmt)
	if err != nil {
		return 0
	}
	return fp
}

// Normalize is pg_query's: literals become $1, $2, ...
func (pgDialect) Normalize(stmt string) (string, error) { return pg_query.Normalize(stmt) }

// Objects are PostgreSQL's object types (OBJECT_* in lower case: ddl.go).
func (pgDialect) Objects() []string { return slices.Clone(objectNames) }

// Fills: the PostgreSQL walker fills every fact a match key reads.
func (pgDialect) Fills(key string) bool { return true }

// Large-object functions that libpq's lo_* client API invokes through the
// fast-path FunctionCall message. OIDs from PostgreSQL's
// src/include/catalog/pg_proc.dat (checked against a PostgreSQL 15 server).
var fastpathAllowed = map[uint32]string{
	715:  "lo_create",
	952:  "lo_open",
	953:  "lo_close",
	954:  "loread",
	955:  "lowrite",
	956:  "lo_lseek",
	957:  "lo_creat",
	958:  "lo_tell",
	964:  "lo_unlink",
	1004: "lo_truncate",
	3170: "lo_lseek64",
	3171: "lo_tell64",
	3172: "lo_truncate64",
}

const (
	fastpathRuleID = "fastpath-function"
	fastpathReason = "fast-path function calls are limited to the client large-object API; others bypass statement inspection"
)

// Fastpath allows only the large-object functions libpq's lo_* API uses,
// because the call carries no SQL to inspect.
func (pgDialect) Fastpath(fnOID uint32) (ruleID, reason string) {
	if _, ok := fastpathAllowed[fnOID]; ok {
		return "", ""
	}
	return fastpathRuleID, fastpathReason
}

//go:embed default_policy.yaml
var defaultPolicyYAML []byte

var defaultPolicy = func() *engine.Policy {
	p, err := engine.ParsePolicy(defaultPolicyYAML)
	if err == nil {
		err = p.Check(Dialect)
	}
	if err != nil {
		panic("pgsql: embedded default policy: " + err.Error())
	}
	return p
}()

// DefaultPolicy returns the embedded default policy (default_policy.yaml).
func DefaultPolicy() *engine.Policy { return defaultPolicy }

// DefaultPolicyYAML returns the text of the embedded default policy, for
// operators who want to start their own from it.
func DefaultPolicyYAML() []byte { return bytes.Clone(defaultPolicyYAML) }

// ImplicitSchema is pg_catalog for an unqualified pg_* name: PostgreSQL
// searches pg_catalog first, whatever the search path
// (engine.ImplicitSchemer).
func (pgDialect) ImplicitSchema(name string) string {
	if strings.HasPrefix(name, "pg_") {
		return "pg_catalog"
	}
	return ""
}
