package mysql

// The parameter block of COM_STMT_EXECUTE (and MariaDB's
// COM_STMT_BULK_EXECUTE rows, wire.ParseBulk), checked before the command is
// forwarded: it must hold every value the server will read for the
// statement's parameters (wire.ParseExecute), with the types the block
// binds or the last execution bound, and without the values sent by
// COM_STMT_SEND_LONG_DATA. A block that does not is answered as MariaDB
// answers it, ER_WRONG_ARGUMENTS, and never reaches the server; the
// connection stays usable, as it does on the server, and the refusal is
// logged and counted as a protocol error. The parameter count is the
// server's, from the PREPARE_OK: an execution of MariaDB's last prepared id
// sent before that answer waits for it.

import (
	"encoding/binary"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// executeParams reads the parameter block of COM_STMT_EXECUTE payload p for
// slot; false: it is malformed. What it binds is remembered only once the
// execution is sent (paramsSent).
func (s *session) executeParams(p []byte, slot int) (wire.ExecuteParams, bool) {
	s.mu.Lock()
	params := int(s.memo.slots[slot].params)
	s.mu.Unlock()
	sl := &s.memo.slots[slot] // types and long are toServer's
	e, err := wire.ParseExecute(p, params, sl.types, sl.long, s.caps)
	if err != nil {
		s.env.Observer.Count(relay.ProtocolErrors, 1)
		s.log.Warn("COM_STMT_EXECUTE refused: its parameter block does not hold the statement's parameters", "params", params, "bytes", len(p))
		return e, false
	}
	return e, true
}

// paramsSent records what an execution of slot that is being sent binds:
// the types it binds (newTypes) for the executions after it, and that
// the long data sent before it is spent (the server forgets it after an
// execution; not bulk's, which refuses long data). An execution sqlfw
// refuses or blocks never reaches the server, which keeps the types and
// long data it had: so must the reader, else it reads the next block
// otherwise than the server (a parameter the server takes from its long
// data read from the block: e2e TestRound10LongDataKept).
func (s *session) paramsSent(slot int, types []byte, newTypes, execute bool) {
	sl := &s.memo.slots[slot] // types and long are toServer's
	if newTypes {
		sl.types = append(sl.types[:0], types...)
	}
	if execute {
		sl.long = sl.long[:0]
	}
}

// bulkParams reads the rows of COM_STMT_BULK_EXECUTE payload p for slot,
// as executeParams reads a COM_STMT_EXECUTE's block (what it binds is
// remembered by paramsSent); false: malformed, or
// values sent by COM_STMT_SEND_LONG_DATA are pending (a bulk row carries
// every value, and what the server makes of both is not followed).
func (s *session) bulkParams(p []byte, slot int) (wire.BulkParams, bool) {
	s.mu.Lock()
	params := int(s.memo.slots[slot].params)
	s.mu.Unlock()
	sl := &s.memo.slots[slot] // types and long are toServer's
	bk, err := wire.ParseBulk(p, params, sl.types)
	pendingLong := false
	for _, b := range sl.long {
		pendingLong = pendingLong || b != 0
	}
	if err != nil || pendingLong {
		s.env.Observer.Count(relay.ProtocolErrors, 1)
		s.log.Warn("COM_STMT_BULK_EXECUTE refused: its rows do not hold the statement's parameters", "params", params, "bytes", len(p))
		return bk, false
	}
	return bk, true
}

// longData marks the parameter a COM_STMT_SEND_LONG_DATA sends: its value
// is not in the next execution's block.
func (s *session) longData(p []byte, slot int) {
	if len(p) < 7 {
		return
	}
	i := int(binary.LittleEndian.Uint16(p[5:7]))
	s.mu.Lock()
	params := int(s.memo.slots[slot].params)
	s.mu.Unlock()
	if i >= params {
		return // the server refuses the execution
	}
	sl := &s.memo.slots[slot]
	for len(sl.long) <= i/8 {
		sl.long = append(sl.long, 0)
	}
	sl.long[i/8] |= 1 << (i % 8)
}

// executesUnprepared reports whether m is a COM_STMT_EXECUTE of MariaDB's
// last prepared id whose PREPARE_OK has not come.
func (s *session) executesUnprepared(m []byte) bool {
	if len(m) < wire.HeaderLen+5 || m[wire.HeaderLen] != wire.ComStmtExecute {
		return false
	}
	if binary.LittleEndian.Uint32(m[wire.HeaderLen+1:]) != wire.StmtLastPrepared {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastPreparing()
}

// lastPreparing: the last prepare sent is unanswered (under mu).
func (s *session) lastPreparing() bool {
	m := &s.memo
	return m.last >= 0 && m.slots[m.last].state == slotPreparing
}

// awaitPrepared waits until the last prepare sent has its answer; it
// reports false when the session closed instead.
func (s *session) awaitPrepared() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.lastPreparing() && !s.closed {
		s.authEnded.Wait()
	}
	return !s.closed
}
