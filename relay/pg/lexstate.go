package pg

// The lexing state of a PostgreSQL session: the standard_conforming_strings
// and client_encoding the server reads the next message with (engine/pgsql
// lexstate.go says why they matter).
//
// The server reports both in ParameterStatus, at startup and, whenever one
// changes, before the ReadyForQuery that ends the message that changed it
// (PostgreSQL 14 and later report at ReadyForQuery, older ones at once).
// Anything that executes can change them: SET, set_config() in a SELECT, a
// function or trigger that does either, the end of a transaction that undoes
// one. So the values reported are the state only once every message sent
// that may execute something has its ReadyForQuery back; until then the
// state is unconfirmed, and the engine denies any text whose reading depends
// on it. A simple Query is lexed whole before its first statement runs, so
// the state when it is sent applies to all of its statements.
//
// toClient writes reported and ready; toServer reads them and owns need.
// The values are stored before ready is incremented, so a toServer that
// sees ready >= need also sees every report that came before.

import (
	"sync/atomic"

	"github.com/sqlfw/sqlfw/engine"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

type lexTracker struct {
	// reported is the state from the ParameterStatus messages seen;
	// replaced, never modified (toClient's).
	reported atomic.Pointer[engine.LexState]
	// ready counts the server's ReadyForQuery messages, the one ending
	// the startup phase included (toClient's).
	ready atomic.Uint64
	// need is the ReadyForQuery count at which every message sent so far
	// that may change the state has been answered (toServer's). The
	// startup phase, which applies startup options and role and database
	// defaults, is the first.
	need uint64
}

func (t *lexTracker) init() {
	t.reported.Store(&engine.LexState{})
	t.need = 1
}

// state is the lexing state for the next message toServer sends.
func (t *lexTracker) state() engine.LexState {
	unconfirmed := t.ready.Load() < t.need
	st := *t.reported.Load()
	st.Unconfirmed = unconfirmed
	return st
}

// sent records that toServer passes on a message that may execute
// something (Query, FunctionCall, Bind, Execute) after syncPoints sync
// points since startup: the state is known again once the ReadyForQuery of
// the next sync point, at or after the message, has come.
func (t *lexTracker) sent(syncPoints uint64) {
	t.need = max(t.need, syncPoints+2) // +1 for this sync point, +1 for startup's
}

// parameterStatus records a ParameterStatus from the server.
func (t *lexTracker) parameterStatus(msg []byte) {
	name, value, err := wire.ParameterStatusFields(msg)
	if err != nil {
		return
	}
	st := *t.reported.Load()
	switch string(name) {
	case "standard_conforming_strings":
		st.NonStandardStrings = string(value) != "on"
	case "client_encoding":
		if string(value) == st.ClientEncoding {
			return
		}
		st.ClientEncoding = string(value)
	default:
		return
	}
	t.reported.Store(&st)
}

// readyForQuery records a ReadyForQuery, after the messages before it.
func (t *lexTracker) readyForQuery() { t.ready.Add(1) }
