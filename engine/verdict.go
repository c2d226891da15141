package engine

import "net/netip"

// Action is what a rule asks for when it matches.
type Action uint8

const (
	// ActionAllow lets the statement through without a record beyond counters.
	ActionAllow Action = iota
	// ActionDeny blocks the statement (in enforce mode; other modes only report it).
	ActionDeny
	// ActionLog lets the statement through and asks for it to be recorded.
	ActionLog
)

func (a Action) String() string {
	switch a {
	case ActionAllow:
		return "allow"
	case ActionDeny:
		return "deny"
	case ActionLog:
		return "log"
	}
	return "unknown"
}

// Verdict is the engine's answer for one protocol message (a simple Query,
// which may hold several statements, or one Parse). RuleID and Reason are
// static strings from the policy: they never contain the statement's
// literals, so they are safe to log and to send to the client.
type Verdict struct {
	Action Action
	// RuleID names the rule that decided; "" when no rule matched.
	RuleID string
	// Reason is a short, literal-free explanation for the operator.
	Reason string
	// Statements is the number of statements in the judged text.
	Statements int
	// ParseError is true when the parser rejected the text; Action then
	// follows the policy's on_parse_error setting.
	ParseError bool
}

// Session is what the engine knows about the connection a statement came
// from. The daemon fills it once per connection.
type Session struct {
	User        string
	Database    string
	Application string
	ClientAddr  netip.Addr
}
