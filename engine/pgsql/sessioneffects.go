package pgsql

import (
	"bytes"

	"github.com/sqlfw/sqlfw/engine"
)

// SessionEffects reads sql for what it changes in the session
// (engine.SessionEffector): for PostgreSQL, whose server reports its
// settings and whose search_path the engine reads from the facts
// (searchpath.go), only whether a text the engine could not read may
// have defined a name (MayDefine: PREPARE, DECLARE).
func (pgDialect) SessionEffects(sql []byte, _ bool) engine.SessionEffects {
	return engine.SessionEffects{MayDefine: mentionsDefinition(sql)}
}

// ReportedGrant: PostgreSQL has no sql_mode (and no GRANT that creates a
// role).
func (pgDialect) ReportedGrant([]byte) (engine.GrantMode, bool) { return engine.GrantSame, false }

// DatabaseName is the database as the server names it: as sent.
func (pgDialect) DatabaseName(name []byte) string { return string(name) }

// mentionsDefinition reports whether sql contains PREPARE or DECLARE in any
// case: a text the engine could not read may then have defined a name.
func mentionsDefinition(sql []byte) bool {
	for i := 0; i+7 <= len(sql); i++ {
		if c := sql[i] | 0x20; c != 'p' && c != 'd' {
			continue
		}
		w := sql[i : i+7]
		if bytes.EqualFold(w, []byte("prepare")) || bytes.EqualFold(w, []byte("declare")) {
			return true
		}
	}
	return false
}
