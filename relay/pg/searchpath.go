package pg

// The session's search_path, by which the engine's catalog resolves
// unqualified names (engine/catalog.go, Session.SearchPath). PostgreSQL does
// not report it (no ParameterStatus before version 18), so toServer
// follows it from what the session sends: the startup message's
// search_path (or the login role's default, which the catalog reads); a
// simple Query that is nothing but SET search_path = constants, or RESET
// search_path, sent when the session is idle with every earlier message
// answered (so it runs in a transaction of its own, and a SET of a valid
// list cannot fail) and not blocked. Anything else whose verdict says it
// changes or may change the path (Verdict.ChangesPath: SET LOCAL, a SET in
// a transaction block, set_config, SET ROLE, a routine whose body sets it,
// a text the engine could not read) makes it unknown until the next such
// SET; a Parse of one, or a FunctionCall, makes it unknown for the rest of
// the session, since the statement may run again at any Execute. With the
// path unknown the engine judges every schema's object of a name.

import (
	"github.com/sqlfw/sqlfw/engine"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// settled reports whether every message sent has its ReadyForQuery and the
// session is outside a transaction block.
func (s *session) settled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outstanding == 0 && byte(s.txStatus.Load()) == wire.TxIdle
}

// followPath updates the session's search path after judging msg, whose
// verdict v says it changes the path (or msg is a FunctionCall).
func (s *session) followPath(msg []byte, v engine.Verdict, eng *engine.Engine, blocked, settled bool) {
	if blocked {
		return // the server runs a poison in its place
	}
	switch msg[0] {
	case wire.MsgQuery:
		if settled && !s.pathLost {
			if sql, err := wire.QueryText(msg); err == nil {
				if p, ok := eng.SearchPathSet(sql, &s.sess); ok {
					s.sess.SearchPath = p
					return
				}
			}
		}
	default:
		s.pathLost = true
	}
	s.sess.SearchPath = ""
}
