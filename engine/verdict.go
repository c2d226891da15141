package engine

import (
	"net/netip"
	"time"
)

// Action is what a rule asks for when it matches.
type Action uint8

const (
	// ActionAllow lets the statement through without a record beyond counters.
	ActionAllow Action = iota
	// ActionDeny blocks the statement (in enforce mode; other modes only report it).
	ActionDeny
	// ActionLog lets the statement through and asks for it to be recorded.
	ActionLog
	// ActionDenyClose blocks the statement like ActionDeny and then closes
	// the client connection: for rules whose match means the session is
	// hostile. In monitor and detect mode it is reported, like a deny.
	ActionDenyClose
)

func (a Action) String() string {
	switch a {
	case ActionAllow:
		return "allow"
	case ActionDeny:
		return "deny"
	case ActionLog:
		return "log"
	case ActionDenyClose:
		return "deny_and_close"
	}
	return "unknown"
}

// Denies reports whether the action blocks the statement in enforce mode
// (ActionDeny and ActionDenyClose).
func (a Action) Denies() bool { return a == ActionDeny || a == ActionDenyClose }

// Verdict is the engine's answer for one protocol message (a simple Query,
// which may hold several statements, or one Parse). RuleID and Reason are
// static strings from the policy, plus measured numbers for limit rules:
// they never contain the statement's literals, so they are safe to log and
// to send to the client.
type Verdict struct {
	Action Action
	// RuleID names the rule that decided; "" when no rule matched.
	RuleID string
	// Reason is a short, literal-free explanation for the operator.
	Reason string
	// Mode is the mode the policy asks for this verdict: the deciding rule's
	// `mode:`, else the policy's `mode:`, else "" (use the configured mode).
	// A live override (fwctl mode) takes precedence over it.
	Mode Mode
	// Statements is the number of statements in the judged text.
	Statements int
	// ParseError is true when the parser rejected the text; Action then
	// follows the policy's on_parse_error setting, or a deny rule that
	// what the dialect is sure of in the text matches (RuleID names it).
	ParseError bool
	// SessionOps is true when the text prepares, executes, deallocates,
	// declares, fetches from or closes a named statement or cursor:
	// (*Engine).SQLOps lists what.
	SessionOps bool
	// DynamicSQL is true when a statement of the text runs SQL text
	// assembled at run time (the dynamic_sql fact: MySQL's PREPARE ...
	// FROM a variable, MariaDB's PREPARE FROM an expression or EXECUTE
	// IMMEDIATE of one): what it runs, and so whether it changes how the
	// server lexes the session's later text (SET NAMES gbk), cannot be
	// known from the text (relay/mysql lexstate.go).
	DynamicSQL bool
	// ChangesSchema is true when a statement of the text is DDL (creates,
	// alters or drops an object): the daemon then reads the database's
	// catalog again (catalog.go).
	ChangesSchema bool
	// BareParams is true when a statement of the text has a parameter
	// that stands alone as a condition (StmtFacts.BareParams), or is a
	// write its parameters may make the same for every row
	// (StmtFacts.ParamWrite): an execution is judged with the values
	// bound (JudgeBound).
	BareParams bool
	// ChangesPath is true when a statement of the text changes, or may
	// change, PostgreSQL's search_path (StmtFacts.PathChange): the relay
	// follows a plain SET (Engine.SearchPathSet) and otherwise stops
	// knowing the session's path (Session.SearchPath "").
	ChangesPath bool
}

// Session is what the engine knows about the connection a statement came
// from. The daemon fills it once per connection, except At.
type Session struct {
	User        string
	Database    string
	Application string
	ClientAddr  netip.Addr
	// Process identifies the client process when interception saw it.
	Process ProcessInfo
	// At is when the statement arrived. The daemon sets it per statement
	// only when (*Policy).UsesTime() is true; time windows and rate limits
	// need it, and a rule with either does not apply while it is zero.
	At time.Time
	// Lex is the state the server lexes the statement with (LexState);
	// the relay sets it per message from what the server reported, and
	// the dialect's Read turns the text into what the server lexes.
	Lex LexState
	// SearchPath is PostgreSQL's search_path in force as the relay followed
	// it (the value SET search_path takes, as `a, "B", $user`), by which
	// the catalog resolves the statement's unqualified names
	// (catalog.go): SearchPathDefault for the login role's default, read
	// from the catalog; "" when it is not known, and then every schema's
	// object of a name is judged.
	SearchPath string
	// SchemaPending: the session let DDL through in a transaction that
	// has not ended, which the catalog (read over another connection)
	// cannot see yet: a body's names are not qualified by its own
	// search_path for it (catalog.go ownPath; relay/pg sets it).
	SchemaPending bool
}

// SearchPathDefault is Session.SearchPath for a session whose search_path
// is the login role's default (ALTER ROLE / ALTER DATABASE ... SET
// search_path, else the server's setting), as the catalog read it.
const SearchPathDefault = "\x00default"

// ProcessInfo is the client process behind a connection, from interception.
type ProcessInfo struct {
	// Known is false when the connection was not intercepted (or the
	// process could not be identified); rules scoped by process then do
	// not apply.
	Known bool
	Tgid  uint32
	UID   uint32
	// Comm is the process's command name (up to 15 bytes, as in /proc).
	Comm string
	// Cgroup is the cgroup v2 path, e.g. /system.slice/billing.service.
	Cgroup string
}
