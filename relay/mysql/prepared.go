package mysql

// The verdict memory of prepared statements. A COM_STMT_PREPARE is judged
// when it is sent; if it passes, its text and verdict take a slot, which
// the server's PREPARE_OK gives its statement id. COM_STMT_EXECUTE,
// _BULK_EXECUTE and _FETCH of that id are decided by the slot: allowed
// when the prepare was (a denied prepare only reaches the server when the
// mode does not enforce it), re-judged when the policy was reloaded since,
// so that a reload that denies a statement also stops its prepared
// executions. An id no slot holds was never prepared through sqlfw, or
// its prepare was blocked: the command is answered with
// ER_UNKNOWN_STMT_HANDLER and not sent. MariaDB's "last prepared" id
// (0xffffffff, sent with its COM_STMT_PREPARE before the PREPARE_OK)
// names the last prepare the client sent; after a blocked prepare it names
// nothing, so that it cannot reach the statement prepared before.
//
// Slots are few (a connection's prepared statements; the server bounds
// them with max_prepared_stmt_count) and reused with their text buffers,
// so an application that prepares, executes and closes a statement per
// query (go-sql-driver/mysql with interpolateParams=false) allocates
// nothing in the steady state; a lookup is a scan of the slots.

import (
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

type slotState uint8

const (
	slotFree      slotState = iota
	slotPreparing           // sent, no PREPARE_OK yet
	slotReady               // the server gave it id
)

type stmtSlot struct {
	state slotState
	// gen counts the slot's uses, so that the PREPARE_OK of a prepare
	// whose slot was closed and taken again before the answer (a
	// pipelining client) does not name the new one.
	gen uint32
	id  uint32
	v   engine.Verdict
	// eng judged v; text is toServer's alone (written at the prepare,
	// read when it is re-judged), so it is read without mu.
	eng  *engine.Engine
	text []byte
	// lex and db are the lexing state and database the prepare was
	// judged in: the server keeps the statement as parsed then and runs it
	// in that database, so a re-judgement uses them (toServer's, as text),
	// except for lex.AutoCreateUser, which the execution's sql_mode
	// decides: it is the one v was last judged with.
	lex engine.LexState
	db  string
	// What an execution may change, found in text once at the prepare
	// rather than at every execution (toServer's, as text): exLex, the
	// lexing state (a prepared SET NAMES or SET sql_mode), with the
	// character set exCharset; exSchema, the database (a prepared USE,
	// exSchemaChange).
	exLex, exSchemaChange bool
	exCharset, exSchema   string
	exGrant               grantMode // what it leaves NO_AUTO_CREATE_USER at (lexstate.go)
	// calls: the statement calls a routine, which may EXECUTE any
	// SQL-level prepared statement (sqlprepare.go).
	calls bool
	// params is the parameter count the PREPARE_OK gave (under mu);
	// types the types the last execution bound, long the bitmap of the
	// parameters sent by COM_STMT_SEND_LONG_DATA since (toServer's): what
	// a COM_STMT_EXECUTE's parameter block is read with (execparams.go).
	params uint16
	types  []byte
	long   []byte
}

// memo is guarded by the session's mu, except as said of stmtSlot.text.
type memo struct {
	slots []stmtSlot
	// last is the slot of the last COM_STMT_PREPARE sent, -1 when none
	// or when it was blocked.
	last int
	// names are the SQL-level prepared statements (sqlprepare.go).
	names names
}

// memoBlocked records that the last prepare the client sent was blocked.
func (s *session) memoBlocked() {
	s.mu.Lock()
	s.memo.last = -1
	s.mu.Unlock()
}

// memoPrepare takes a slot for a prepare being sent and returns it with
// its generation.
func (s *session) memoPrepare(sql []byte, v engine.Verdict, eng *engine.Engine, e *engine.SessionEffects, calls bool) (int, uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &s.memo
	i := 0
	for i < len(m.slots) && m.slots[i].state != slotFree {
		i++
	}
	if i == len(m.slots) {
		m.slots = append(m.slots, stmtSlot{})
	}
	sl := &m.slots[i]
	sl.gen++
	sl.state, sl.id, sl.v, sl.eng = slotPreparing, 0, v, eng
	sl.params, sl.types, sl.long = 0, sl.types[:0], sl.long[:0]
	sl.text = append(sl.text[:0], sql...)
	sl.lex, sl.db = s.sess.Lex, s.sess.Database
	sl.exLex, sl.exCharset, sl.exGrant = e.Names, e.Charset, e.Grant
	sl.exSchema, sl.exSchemaChange = e.Schema, e.SchemaChange
	sl.calls = calls
	m.last = i
	return i, sl.gen
}

// memoLookup returns the slot of a statement id (or of "last prepared").
func (s *session) memoLookup(id uint32) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &s.memo
	if id == wire.StmtLastPrepared {
		if m.last >= 0 && m.slots[m.last].state != slotFree {
			return m.last, true
		}
		return -1, false
	}
	for i := range m.slots {
		if sl := &m.slots[i]; sl.state == slotReady && sl.id == id {
			return i, true
		}
	}
	return -1, false
}

// memoUse returns the verdict that decides an execution of slot i, judged
// again (and reported, judged true) when the engine has been replaced
// since, and whether it blocks.
func (s *session) memoUse(i int) (v engine.Verdict, blocked, judged bool) {
	s.mu.Lock()
	sl := &s.memo.slots[i]
	v, eng := sl.v, sl.eng
	s.mu.Unlock()
	if cur := s.env.Engine(); cur != eng || sl.lex.AutoCreateUser != s.sess.Lex.AutoCreateUser {
		judged = true
		// The policy was reloaded: judge the statement as it would be now,
		// as it was prepared. Or the session's sql_mode changed whether a
		// GRANT creates its grantee, which the server decides when it
		// executes the statement.
		s.memo.slots[i].lex.AutoCreateUser = s.sess.Lex.AutoCreateUser
		lex, db := s.sess.Lex, s.sess.Database
		s.sess.Lex, s.sess.Database = s.memo.slots[i].lex, s.memo.slots[i].db
		v, eng = s.judge(s.memo.slots[i].text, observeExecute)
		s.sess.Lex, s.sess.Database = lex, db
		s.mu.Lock()
		sl = &s.memo.slots[i]
		sl.v, sl.eng = v, eng
		s.mu.Unlock()
	}
	if s.relexed(i) {
		// the server may prepare it again in the session's character set
		// of now (sqlprepare.go relexed): judged so too
		judged = true
		lex, db := s.sess.Lex, s.sess.Database
		s.sess.Lex, s.sess.Database = s.memo.slots[i].lex, s.memo.slots[i].db
		s.sess.Lex.ClientEncoding, s.sess.Lex.AutoCreateUser = lex.ClientEncoding, lex.AutoCreateUser
		now, _ := s.judge(s.memo.slots[i].text, observeExecute)
		s.sess.Lex, s.sess.Database = lex, db
		v = s.stronger(v, now)
	}
	return v, s.enforced(&v), judged
}

// relexed reports whether the server, preparing slot i's statement again,
// would read it otherwise than at its prepare (lexstate.go sameLexing).
func (s *session) relexed(i int) bool {
	sl := &s.memo.slots[i] // lex is toServer's
	return !sameLexing(sl.lex.SQLMode, sl.lex.ClientEncoding, &s.sess.Lex)
}

// memoBound judges an execution of slot i with the values of its
// parameter block (nil: values not known), as it was prepared (lexing
// state, database), and reports it.
func (s *session) memoBound(i int, e *wire.ExecuteParams) engine.Verdict {
	vals := engine.UnknownParams
	if e != nil {
		vals = boundValues{&execSource{e: *e}} // a copy: e stays on its caller's stack
	}
	return s.memoValues(i, vals)
}

// memoValues judges an execution of slot i with vals.
func (s *session) memoValues(i int, vals engine.ParamValues) engine.Verdict {
	sl := &s.memo.slots[i] // text, lex and db are toServer's
	sess := s.sess
	sess.Lex, sess.Database = sl.lex, sl.db
	sess.Lex.AutoCreateUser = s.sess.Lex.AutoCreateUser // the server's, at execution
	eng := s.env.Engine()
	j := relay.StartJudging(eng, s.meter, &sess)
	v := eng.JudgeBound(sl.text, &sess, vals)
	j.End(s.meter, s.obs, &v, observeExecute)
	if s.relexed(i) {
		// and in the session's character set of now (memoUse)
		sess.Lex.ClientEncoding = s.sess.Lex.ClientEncoding
		j := relay.StartJudging(eng, s.meter, &sess)
		now := eng.JudgeBound(sl.text, &sess, vals)
		j.End(s.meter, s.obs, &now, observeExecute)
		v = s.stronger(v, now)
	}
	return v
}

// maxBulkJudged bounds the rows of a COM_STMT_BULK_EXECUTE judged each
// with its values; past it the rows are judged as values not known (which
// holds for any of them).
const maxBulkJudged = 64

// memoBulk judges a COM_STMT_BULK_EXECUTE of slot i row by row: the
// strongest verdict of its rows.
func (s *session) memoBulk(i int, bk *wire.BulkParams) engine.Verdict {
	if bk.Rows > maxBulkJudged {
		return s.memoBound(i, nil)
	}
	var v engine.Verdict
	first := true
	bk.Each(func(r wire.BulkRow) bool {
		rv := s.memoValues(i, boundValues{&rowSource{r: r}})
		if first {
			v, first = rv, false
		} else {
			v = s.stronger(v, rv)
		}
		return !s.enforced(&v)
	})
	return v
}

// memoClose frees slot i: COM_STMT_CLOSE has no answer.
func (s *session) memoClose(i int) {
	s.mu.Lock()
	s.memo.free(i)
	s.mu.Unlock()
}

// prepared gives slot i, if it is still generation gen's, its statement
// id (under mu).
func (m *memo) prepared(i int, gen, id uint32, params uint16) {
	if sl := &m.slots[i]; sl.state == slotPreparing && sl.gen == gen {
		sl.state, sl.id, sl.params = slotReady, id, params
		for j := range m.slots {
			// the server holds one statement under an id: a slot that
			// still has it was freed on the server in a way sqlfw missed,
			// and must not lend the new one its verdict
			if j != i && m.slots[j].state == slotReady && m.slots[j].id == id {
				m.free(j)
			}
		}
	}
}

// failed frees slot i if it is still generation gen's: its prepare failed
// (under mu).
func (m *memo) failed(i int, gen uint32) {
	if m.slots[i].gen == gen {
		m.free(i)
	}
}

// free frees slot i (under mu).
func (m *memo) free(i int) {
	sl := &m.slots[i]
	sl.state, sl.id, sl.v, sl.eng = slotFree, 0, engine.Verdict{}, nil
	if m.last == i {
		m.last = -1
	}
}

// reset frees every slot: the server forgot them (COM_RESET_CONNECTION,
// COM_CHANGE_USER).
func (m *memo) reset() {
	for i := range m.slots {
		m.free(i)
	}
	m.names.reset()
}
