package mysql

// The commands after login, one handler each (vitess's Handler, a table
// rather than one switch): toServer's command reads a command packet
// whole and hands it to the handler of its first byte, which decides it
// before any of it is sent. A command that passes stays pending in the
// framer and goes to the server with the rest of the read; one the server
// will answer is queued first (expect), in the order the client sent it.
// A blocked command is cut out and answered with sqlfw's ERR in its place
// among the server's answers (block, dropAnswer).

import (
	"errors"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// cmdPacket is the command being decided (toServer's, reused): the framer
// it is pending in, the packet and its payload, the sequence id its answer
// starts at, and what is queued for it when it goes to the server.
type cmdPacket struct {
	fr   *wire.Framer
	m, p []byte
	seq  int
	next pending
}

// handler decides the command in s.cmd. queued: it goes to the server,
// which answers it (s.cmd.next is queued); a command the handler cut out
// and answered, or one the server does not answer, is not queued. ok is
// false when the session must end.
type handler func(s *session) (queued, ok bool)

// handlers are the commands relayed; any other (replication, server
// administration) is refused (comRefused) unless allow_commands names it.
var handlers = [256]handler{
	wire.ComQuery:            (*session).comQuery,
	wire.ComStmtPrepare:      (*session).comStmtPrepare,
	wire.ComStmtExecute:      (*session).comStmtExecute,
	wire.ComStmtBulkExecute:  (*session).comStmtExecute,
	wire.ComStmtFetch:        (*session).comStmtExecute,
	wire.ComStmtReset:        (*session).comStmtReset,
	wire.ComStmtSendLongData: (*session).comStmtSendLongData,
	wire.ComStmtClose:        (*session).comStmtClose,
	wire.ComInitDB:           (*session).comInitDB,
	wire.ComChangeUser:       (*session).comChangeUser,
	wire.ComQuit:             (*session).comQuit,
	wire.ComResetConnection:  (*session).comResetConnection,
	wire.ComFieldList:        (*session).comFieldList,
	wire.ComRefresh:          (*session).comRefresh,
	wire.ComSetOption:        (*session).comPass,
	wire.ComPing:             (*session).comPass,
	wire.ComStatistics:       (*session).comPass,
}

// command decides one command packet m: it stays pending (forwarded with
// the rest of the read) or is cut out and answered. It reports false when
// the session must end.
func (s *session) command(fr *wire.Framer, m []byte) bool {
	if len(m) == wire.HeaderLen {
		s.protocolError(errors.New("empty command packet"))
		return false
	}
	s.syncLogin()
	// A command of 16 MiB or more is joined in a buffer of its own:
	// rare enough not to keep one per session.
	p := wire.Payload(m, nil)
	c := &s.cmd
	c.fr, c.m, c.p = fr, m, p
	c.seq = (wire.LastSeq(m) + 1) & 0xff
	c.next = pending{cmd: p[0], seq: c.seq, slot: -1}
	h := handlers[p[0]]
	if h == nil {
		h = (*session).comRefused
	}
	queued, ok := h(s)
	if ok && queued {
		ok = s.expect(c.next)
	}
	return ok
}

// fail ends the session after a malformed command.
func (s *session) fail(err error) (queued, ok bool) {
	s.protocolError(err)
	return false, false
}

// cutOut is a handler's result for a command it cut out and answered, or
// the session ends (ok false).
func cutOut(ok bool) (queued, okOut bool) { return false, ok }

// blocked cuts the command out and answers it with sqlfw's ERR for v.
func (s *session) blocked(v *engine.Verdict) (queued, ok bool) {
	return cutOut(s.block(s.cmd.fr, s.cmd.m, s.cmd.seq, v))
}

// refuse cuts the command out and answers it with the reply p.
func (s *session) refuse(p pending) (queued, ok bool) {
	p.seq = s.cmd.seq
	return cutOut(s.dropAnswer(s.cmd.fr, s.cmd.m, p))
}

// comQuery: COM_QUERY, judged by the engine (every statement of a
// multi-statement text). What it changes in the session (the character
// set, sql_mode, the database, SQL-level prepared names) is applied when
// the server says OK (settle).
func (s *session) comQuery() (queued, ok bool) {
	c := &s.cmd
	sql, err := wire.QueryText(c.p, s.caps)
	if err != nil {
		return s.fail(err)
	}
	s.meter.HoldStatement() // timing
	v, eng := s.judge(sql, observeQuery)
	if v.SessionOps {
		// PREPARE, EXECUTE, DEALLOCATE, CALL (sqlprepare.go)
		v, c.next.nameOps = s.namesJudged(sql, v, eng)
	}
	if s.enforced(&v) {
		return s.blocked(&v)
	}
	e := eng.SessionEffects(sql, v.DynamicSQL)
	c.next.lex, c.next.charset, c.next.grant = s.lex.queryCharset(&e, v.DynamicSQL)
	c.next.schema, c.next.schemaChange = e.Schema, e.SchemaChange
	return true, true
}

// comStmtPrepare: COM_STMT_PREPARE, judged by the engine and remembered
// for the executions of the statement id the server gives it
// (prepared.go).
func (s *session) comStmtPrepare() (queued, ok bool) {
	c := &s.cmd
	sql, err := wire.PrepareText(c.p)
	if err != nil {
		return s.fail(err)
	}
	s.meter.HoldStatement() // timing
	v, eng := s.judge(sql, observePrepare)
	e := eng.SessionEffects(sql, false)
	calls := false
	if v.SessionOps {
		var unsupported bool
		if calls, unsupported = prepareCalls(eng, sql, &s.sess, &e); unsupported {
			// the server refuses it too, in every mode: answered as it
			// answers, so that a client falls back to COM_QUERY as it
			// would (mysqltest --ps-protocol)
			s.obs.Judged(unsupportedPS, observePrepare, time.Now(), 0)
			s.memoBlocked()
			return s.refuse(pending{code: errUnsupportedPS, sqlstate: sqlstateGeneral, msg: msgUnsupportedPS})
		}
	}
	if s.enforced(&v) {
		s.memoBlocked()
		return s.blocked(&v)
	}
	c.next.slot, c.next.gen = s.memoPrepare(sql, v, eng, &e, calls)
	return true, true
}

// stmtSlot finds the memo slot of the statement id a COM_STMT_* command
// names. found is false when the command was handled: a malformed one
// (ok false), or an id never prepared through sqlfw, answered with the
// server's error when the server answers the command (answers) and
// dropped when it does not.
func (s *session) stmtSlot(answers bool) (slot int, found, ok bool) {
	c := &s.cmd
	id, err := wire.StmtID(c.p)
	if err != nil {
		s.protocolError(err)
		return 0, false, false
	}
	if slot, found = s.memoLookup(id); found {
		return slot, true, true
	}
	if !answers {
		return 0, false, s.drop(c.fr, c.m) // the server would not answer either
	}
	v := engine.Verdict{Action: engine.ActionDeny, RuleID: ruleUnknownStmt, Reason: reasonUnknownStmt, Statements: 1}
	s.obs.Judged(v, observeExecute, time.Now(), 0)
	_, ok = s.refuse(pending{code: errUnknownStmt, sqlstate: sqlstateGeneral, msg: msgUnknownStmt})
	return 0, false, ok
}

// comStmtExecute: COM_STMT_EXECUTE, COM_STMT_BULK_EXECUTE and
// COM_STMT_FETCH, decided by what the statement's prepare was (prepared.go),
// re-judged after a reload, by the values bound to a bare parameter
// (bound.go), and only with a parameter block that holds the statement's
// parameters (execparams.go).
func (s *session) comStmtExecute() (queued, ok bool) {
	slot, found, ok := s.stmtSlot(true)
	if !found {
		return false, ok
	}
	c := &s.cmd
	cmd := c.next.cmd
	s.meter.HoldStatement() // timing
	v, blocked, judged := s.memoUse(slot)
	if !judged && cmd != wire.ComStmtFetch {
		// an execution (a FETCH continues one): counted with the
		// prepare's verdict
		s.obs.Applied(v, observeExecute, time.Now())
	}
	if s.memo.slots[slot].calls && cmd != wire.ComStmtFetch {
		// a prepared CALL may EXECUTE any SQL-level name, and
		// PREPARE any (sqlprepare.go forgetNames)
		if v = s.stronger(v, s.callVerdict(0)); s.enforced(&v) {
			blocked = true
		}
		c.next.nameOps = forgetNames
	}
	if blocked {
		return s.blocked(&v)
	}
	wrong := pending{code: errWrongArguments, sqlstate: sqlstateGeneral, msg: msgWrongArguments}
	switch cmd {
	case wire.ComStmtBulkExecute:
		bk, ok := s.bulkParams(c.p, slot)
		if !ok {
			return s.refuse(wrong)
		}
		if v.BareParams {
			// each row's values decide (bound.go)
			if v = s.memoBulk(slot, &bk); s.enforced(&v) {
				return s.blocked(&v)
			}
		}
		s.paramsSent(slot, bk.Types, bk.NewTypes, false)
	case wire.ComStmtExecute:
		e, ok := s.executeParams(c.p, slot)
		if !ok {
			return s.refuse(wrong)
		}
		if v.BareParams {
			// a condition that is a parameter on its own: decided
			// by the value bound (bound.go)
			if v = s.memoBound(slot, &e); s.enforced(&v) {
				return s.blocked(&v)
			}
		}
		s.paramsSent(slot, e.Types, e.NewTypes, true)
	}
	if sl := &s.memo.slots[slot]; cmd != wire.ComStmtFetch {
		// a prepared SET NAMES or SET sql_mode, a prepared USE
		// (memoPrepare read the text)
		c.next.lex, c.next.charset, c.next.grant = sl.exLex, sl.exCharset, sl.exGrant
		c.next.schema, c.next.schemaChange = sl.exSchema, sl.exSchemaChange
	}
	return true, true
}

// comStmtReset: COM_STMT_RESET forgets the long data sent for the
// statement.
func (s *session) comStmtReset() (queued, ok bool) {
	slot, found, ok := s.stmtSlot(true)
	if !found {
		return false, ok
	}
	s.memo.slots[slot].long = s.memo.slots[slot].long[:0]
	return true, true
}

// comStmtSendLongData: a parameter's value sent ahead of the execution
// (execparams.go); the server does not answer it.
func (s *session) comStmtSendLongData() (queued, ok bool) {
	slot, found, ok := s.stmtSlot(false)
	if found {
		s.longData(s.cmd.p, slot)
	}
	return false, ok
}

// comStmtClose: the statement is forgotten; the server does not answer.
func (s *session) comStmtClose() (queued, ok bool) {
	slot, found, ok := s.stmtSlot(false)
	if found {
		s.memoClose(slot)
	}
	return false, ok
}

// comInitDB: COM_INIT_DB changes the database once the server accepts it;
// the commands after it wait for that answer (schemaInFlight).
func (s *session) comInitDB() (queued, ok bool) {
	schema, err := wire.InitDBSchema(s.cmd.p)
	if err != nil {
		return s.fail(err)
	}
	s.cmd.next.schema, s.cmd.next.schemaChange = s.env.Engine().DatabaseName(schema), true
	return true, true
}

// comChangeUser: COM_CHANGE_USER, a new login on the connection: its
// authentication rounds follow, up to the server's OK or ERR, and the
// user, database and lexing state start afresh when it succeeds.
func (s *session) comChangeUser() (queued, ok bool) {
	c := &s.cmd
	cu, err := wire.ParseChangeUser(c.p, s.caps)
	if err != nil {
		return s.fail(err)
	}
	if clearPlugin(cu.AuthPlugin) && len(cu.AuthResponse) > 0 && s.clearRefused() {
		s.refuseClear(cu.AuthPlugin)
		return s.refuse(pending{code: errAccessDenied, sqlstate: sqlstateAccessDenied, msg: msgClearPassword, closeAfter: true})
	}
	if len(cu.AuthPlugin) > 0 {
		s.authPlugin = append(s.authPlugin[:0], cu.AuthPlugin...)
	}
	c.next.user, c.next.schema = string(cu.User), s.env.Engine().DatabaseName(cu.Database)
	// the server starts the lexing state afresh (lexSettle)
	c.next.lex, c.next.charset = true, s.lex.clientCharset(cu.Charset)
	// its authentication rounds follow, up to the server's OK or ERR
	s.phase.Store(phaseAuth)
	return true, true
}

// comQuit: no answer; the server closes.
func (s *session) comQuit() (queued, ok bool) { return false, true }

// comResetConnection: back to the login's character set and the default
// sql_mode (lexSettle), the statements forgotten (settle).
func (s *session) comResetConnection() (queued, ok bool) {
	s.cmd.next.lex = true
	return true, true
}

// comFieldList: the column definitions of a table, judged as the SHOW
// COLUMNS it amounts to (the wildcard only narrows it).
func (s *session) comFieldList() (queued, ok bool) {
	table, err := wire.FieldListTable(s.cmd.p)
	if err != nil {
		return s.fail(err)
	}
	b := append(s.fieldSQL[:0], "SHOW COLUMNS FROM `"...)
	for _, c := range table {
		if c == '`' {
			b = append(b, '`')
		}
		b = append(b, c)
	}
	s.fieldSQL = append(b, '`')
	s.meter.HoldStatement() // timing
	if v, _ := s.judge(s.fieldSQL, observeQuery); s.enforced(&v) {
		return s.blocked(&v)
	}
	return true, true
}

// comRefresh: mysqladmin's and mariadb-dump -F's FLUSH, judged as the
// statements its bits amount to; its answer is an OK or ERR.
func (s *session) comRefresh() (queued, ok bool) {
	sql, err := wire.RefreshStatements(s.fieldSQL[:0], s.cmd.p)
	if err != nil {
		return s.fail(err)
	}
	s.fieldSQL = sql
	if len(sql) > 0 {
		s.meter.HoldStatement() // timing
		if v, _ := s.judge(s.fieldSQL, observeQuery); s.enforced(&v) {
			return s.blocked(&v)
		}
	}
	return true, true
}

// comPass: COM_SET_OPTION, COM_PING, COM_STATISTICS pass as they are.
func (s *session) comPass() (queued, ok bool) { return true, true }

// comRefused: a command applications never send (replication, server
// administration), refused whatever the mode, since the relay could not
// follow its answer; a replica's through sqlfwd passes when
// allow_commands names it (a dump's events are followed up to its EOF or
// ERR: wire.Response).
func (s *session) comRefused() (queued, ok bool) {
	cmd := s.cmd.next.cmd
	if wire.IsReplication(cmd) && s.allowed(cmd) {
		s.log.Info("replication command relayed (allow_commands)", "command", wire.CommandName(cmd))
		return true, true
	}
	v := engine.Verdict{Action: engine.ActionDeny, RuleID: ruleCommand, Reason: reasonCommand, Statements: 1}
	s.obs.Judged(v, observeCommand, time.Now(), 0)
	s.log.Warn("command refused", "command", wire.CommandName(cmd))
	return s.refuse(pending{code: errBlocked, sqlstate: sqlstateBlocked,
		msg: "sqlfw: " + wire.CommandName(cmd) + " is not relayed by the firewall"})
}

// allowed reports whether the configuration's allow_commands names cmd.
func (s *session) allowed(cmd byte) bool {
	for _, name := range s.env.AllowCommands {
		if c, ok := wire.CommandByName(name); ok && c == cmd {
			return true
		}
	}
	return false
}
