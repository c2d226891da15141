package mysql

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"slices"

	"github.com/pingcap/tidb/pkg/parser"

	"github.com/sqlfw/sqlfw/engine"
)

// Dialect is MySQL's and MariaDB's SQL for the engine: engine.New(policy,
// mysql.Dialect, opts).
var Dialect engine.Dialect = myDialect{}

// myDialect holds no state: a session's sql_mode and character set come
// with each text (engine.Session.Lex), and facts depend on the text alone.
type myDialect struct{}

func (myDialect) Name() string { return "mysql" }

// Read returns the text TiDB's parser reads as the server reads sql in a
// session with lexing state l (lex.go).
func (myDialect) Read(sql []byte, l *engine.LexState) ([]byte, string, string, bool) {
	return lexRead(sql, l)
}

func (myDialect) Prescan(text string, stopBytes int) engine.LexStats {
	return prescan(text, stopBytes)
}

func (myDialect) Analyze(text string, lex engine.LexStats) *engine.TextFacts {
	return analyze(text, lex)
}

// Fingerprint is the first 8 bytes of TiDB's statement digest (a SHA-256
// of the normalized text: literals, IN lists and VALUES rows folded).
func (myDialect) Fingerprint(stmt string) uint64 {
	d := parser.DigestHash(stmt)
	if d == nil {
		return 0
	}
	b := d.Bytes()
	if len(b) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// Normalize is TiDB's: literals become ?.
func (myDialect) Normalize(stmt string) (string, error) {
	return parser.Normalize(stmt, "ON"), nil
}

// Objects are the object types of MySQL's DDL and DCL (ddl.go).
func (myDialect) Objects() []string { return slices.Clone(objectNames) }

// Fills reports the match keys whose facts this dialect fills. It does not
// fill languages (MySQL's routines are SQL or, in MariaDB, a SONAME: that
// is loads_code), extensions (MySQL has plugins: objects: [plugin] and
// loads_code) and role_attributes (MySQL roles have none). unparsed_body
// is the text of a PREPARE ... FROM 'text' or EXECUTE IMMEDIATE that could
// not be parsed; routine bodies TiDB cannot parse make the statement a
// parse error (unparsed.go).
func (myDialect) Fills(key string) bool {
	switch key {
	case "languages", "extensions", "role_attributes":
		return false
	}
	return true
}

//go:embed default_policy.yaml
var defaultPolicyYAML []byte

var defaultPolicy = func() *engine.Policy {
	p, err := engine.ParsePolicy(defaultPolicyYAML)
	if err == nil {
		err = p.Check(Dialect)
	}
	if err != nil {
		panic("mysql: embedded default policy: " + err.Error())
	}
	return p
}()

// DefaultPolicy returns the embedded default policy (default_policy.yaml).
func DefaultPolicy() *engine.Policy { return defaultPolicy }

// DefaultPolicyYAML returns the text of the embedded default policy, for
// operators who want to start their own from it.
func DefaultPolicyYAML() []byte { return bytes.Clone(defaultPolicyYAML) }
