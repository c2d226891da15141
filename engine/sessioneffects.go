package engine

// What a statement changes in the session, as its dialect reads the text:
// the relay follows a session's character set, sql_mode, database and
// SQL-level prepared names from what the server says where it says it, and
// from the statement where it does not. The reading of the statement is
// SQL and so the dialect's (engine/mysql sessioneffects.go,
// engine/pgsql sessioneffects.go); the relay asks Engine.SessionEffects
// and applies the answer when the server's reply confirms it.

// GrantMode is what an sql_mode says of a GRANT to an account that does
// not exist, which creates it unless NO_AUTO_CREATE_USER is in force
// (LexState.AutoCreateUser); as a statement's, what it leaves the
// session's at.
type GrantMode uint8

const (
	// GrantSame: the statement leaves it as it was; as the session's:
	// the login's, the global sql_mode, which sqlfw assumes holds
	// NO_AUTO_CREATE_USER (the server's default).
	GrantSame    GrantMode = iota
	GrantKept              // NO_AUTO_CREATE_USER is in force
	GrantCreates           // it is not: a GRANT creates its grantee
	GrantUnknown           // sql_mode was set to what sqlfw cannot know (a variable, an expression)
)

// CharsetUnknown is the character set of a session whose SET NAMES (or
// the like) sqlfw could not read.
const CharsetUnknown = "unknown"

// SessionEffects is what one text, sent as a query or prepared, may change
// in the session as its text says. The zero value changes nothing. It is
// returned by value and holds no allocation but the strings it names.
type SessionEffects struct {
	// Names: the text names what changes the lexing state (sql_mode, the
	// character set), so that, run or executed, it may change it.
	Names bool
	// Executes: the text may run a prepared statement (EXECUTE), whose
	// own text may change the lexing state.
	Executes bool
	// Prepares: the text may PREPARE a text that changes the lexing state
	// without naming it (FROM a literal that names it, a variable, an
	// expression), so that the session's later EXECUTEs may change it.
	Prepares bool
	// Charset is the client character set the text sets as it says: ""
	// when it does not, CharsetUnknown when it may and sqlfw cannot know
	// to what.
	Charset string
	// Grant is what the text leaves NO_AUTO_CREATE_USER at.
	Grant GrantMode
	// Schema is the database a USE sets, when SchemaChange.
	Schema       string
	SchemaChange bool
	// SessionOpLead: the text's first word is PREPARE, EXECUTE,
	// DEALLOCATE or DROP (a statement about prepared statements, which a
	// server does not prepare by protocol).
	SessionOpLead bool
	// MayDefine: a text the engine could not read may have defined a
	// name the session runs later (PREPARE, DECLARE).
	MayDefine bool
}

// Lex reports whether a text sent as a query may change the lexing state,
// so that what is sent before its answer is read as unconfirmed: it names
// it, may execute a prepared statement, or runs SQL assembled at run time
// (dynamic: Verdict.DynamicSQL).
func (e *SessionEffects) Lex(dynamic bool) bool { return e.Names || e.Executes || dynamic }

// A SessionEffector is a Dialect whose statements change session state the
// relay follows from their text.
type SessionEffector interface {
	// SessionEffects reads sql for what it changes in the session. dynamic
	// is the text's Verdict.DynamicSQL. No parse: a byte reading of the
	// forms the server's answer does not report.
	SessionEffects(sql []byte, dynamic bool) SessionEffects
	// ReportedGrant is what an sql_mode the server reported (session
	// tracking) says of NO_AUTO_CREATE_USER, and whether it holds
	// ANSI_QUOTES.
	ReportedGrant(mode []byte) (grant GrantMode, ansiQuotes bool)
	// DatabaseName is the session's database as the server names one the
	// protocol sends (a login's, a change of database by command).
	DatabaseName(name []byte) string
}

// SessionEffects is what sql changes in the session as the engine's
// dialect reads it; the zero value for a dialect that reads nothing so.
func (e *Engine) SessionEffects(sql []byte, dynamic bool) SessionEffects {
	if se := e.effector; se != nil {
		return se.SessionEffects(sql, dynamic)
	}
	return SessionEffects{}
}

// ReportedGrant is what a reported sql_mode says (SessionEffector); a
// dialect without one has no sql_mode: GrantSame, no ANSI_QUOTES.
func (e *Engine) ReportedGrant(mode []byte) (GrantMode, bool) {
	if se := e.effector; se != nil {
		return se.ReportedGrant(mode)
	}
	return GrantSame, false
}

// DatabaseName is the session's database as the server names name, sent
// by the protocol (SessionEffector); name itself for a dialect without one.
func (e *Engine) DatabaseName(name []byte) string {
	if se := e.effector; se != nil {
		return se.DatabaseName(name)
	}
	return string(name)
}
