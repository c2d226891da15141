package mysql

// A MySQL session is two loops over one client and one server socket, after
// a start that both legs share (start: the greeting, the handshake
// response).
//
// toServer reads the client's packets whole with a wire/mysql Framer and
// decides each command before any of it is sent: a command that passes
// stays pending in the framer and goes to the server with the rest of the
// read in one write; a blocked one is cut out (the bytes before it are
// sent) and answered with an ERR. Every command the server will answer is
// queued, in order, before it is written; so is every ERR sqlfw answers
// while the server still owes answers to earlier commands, so that the
// client reads the replies in the order it sent the commands.
//
// toClient reads the server's packets with a Framer that hands over only
// what the current command's Response wants (in a result set: the 0xfe and
// 0xff packets that may end it), feeds them to the Response and forwards
// everything. When a response is complete it settles what the command
// changed (a statement id, the schema, the user, the transaction state),
// writes the response to the client, and then writes the ERR replies queued
// behind it.
//
// Between the loops: the queue and the statement memo under mu; the client
// leg's framing phase (command, authentication rounds, LOCAL INFILE upload)
// in phase, which toClient moves on before the client can see the packet
// that moves it.

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// Error numbers and SQLSTATEs sqlfw answers with: the server's own for the
// same situation (include/mysqld_error.h), so that clients classify them
// as they would the server's.
const (
	// errBlocked is ER_SPECIFIC_ACCESS_DENIED_ERROR: a statement or
	// command the policy blocks. Clients treat it as a permission error:
	// not retried, the connection kept.
	errBlocked      = 1227
	sqlstateBlocked = "42000"
	// errUnknownStmt is ER_UNKNOWN_STMT_HANDLER: a statement id the
	// client never prepared through sqlfw (or whose prepare was blocked).
	errUnknownStmt = 1243
	// errHandshake is ER_HANDSHAKE_ERROR: a handshake sqlfw cannot relay
	// (TLS where none is configured, compression, a malformed packet, a
	// failed server-leg TLS handshake).
	errHandshake      = 1043
	sqlstateHandshake = "08S01"
	errMalformed      = 1835 // ER_MALFORMED_PACKET
	// errPacketTooLarge is ER_NET_PACKET_TOO_LARGE, what the server
	// answers a packet longer than max_allowed_packet with (before login
	// too, as soon as the header claims it), in its words; it then closes.
	errPacketTooLarge = 1153
	msgPacketTooLarge = "sqlfw: Got a packet bigger than 'max_allowed_packet' bytes"
	// errWrongArguments is ER_WRONG_ARGUMENTS, MariaDB's answer to a
	// COM_STMT_EXECUTE whose parameter block it reads past the end of
	// (insert_params); the connection stays usable.
	errWrongArguments = 1210
	// errUnsupportedPS is ER_UNSUPPORTED_PS, the server's answer to a
	// COM_STMT_PREPARE of PREPARE, EXECUTE or DEALLOCATE PREPARE.
	errUnsupportedPS  = 1295
	msgUnsupportedPS  = "sqlfw: This command is not supported in the prepared statement protocol yet"
	msgWrongArguments = "sqlfw: incorrect arguments to mysqld_stmt_execute: the parameter block does not hold the prepared statement's parameters"
	errOutOfResources = 1041 // ER_OUT_OF_RESOURCES
	errUnknown        = 1105 // ER_UNKNOWN_ERROR: the server cannot be reached
	errConCount       = 1040 // ER_CON_COUNT_ERROR: a relay.Refusal
	sqlstateConCount  = "08004"
	errServerShutdown = 1053 // ER_SERVER_SHUTDOWN
	sqlstateShutdown  = "08S01"
	sqlstateGeneral   = "HY000"
	preAuthMaxPacket  = 64<<10 + 1024 // connection attributes (wire.MaxConnectAttrs) and the rest of a handshake response
	ruleCommand       = "mysql-command"
	reasonCommand     = "a command applications never send (replication, server administration) is not relayed"
	ruleUnknownStmt   = "mysql-statement-id"
	reasonUnknownStmt = "the statement id was not prepared through sqlfw"
	msgUnknownStmt    = "sqlfw: unknown prepared statement handler: it was not prepared through sqlfw, or its prepare was blocked"
	observeQuery      = 'Q'
	observePrepare    = 'P'
	observeExecute    = 'E'
	observeCommand    = 'C'
	phaseCommand      = 0
	phaseAuth         = 1
	phaseInfile       = 2 // + the sequence id the upload starts at
)

var (
	// wantNothing passes every packet over (a LOCAL INFILE upload, which
	// the server asked for: only its empty last packet matters, and the
	// Framer always returns empty packets).
	wantNothing = new([256]bool)
	wantAll     = wire.WantAll
)

// pending is a command the server will answer, or a reply sqlfw owes the
// client, in the order the client sent them.
type pending struct {
	// local: sqlfw answers (reply), the server never saw the command.
	local bool
	cmd   byte
	// seq is the sequence id the answer starts at.
	seq int
	// slot and gen are the statement memo slot of a COM_STMT_PREPARE.
	slot int
	gen  uint32
	// user and schema are what a COM_INIT_DB or COM_CHANGE_USER sets
	// when the server accepts it; schema also a USE's (useSchema).
	user, schema string
	// schemaChange: the command changes the session's database; the
	// commands after it wait for its answer (schemaInFlight).
	schemaChange bool
	// lex: the statement may change the lexing state (lexstate.go);
	// charset is the character set it sets by its text, grant what it
	// leaves NO_AUTO_CREATE_USER at.
	lex     bool
	charset string
	grant   grantMode
	// nameOps: what a COM_QUERY does to SQL-level prepared statements
	// once the server has run it (sqlprepare.go).
	nameOps []nameOp
	// a local reply: its error and whether the session closes after it.
	code       uint16
	sqlstate   string
	msg        string
	closeAfter bool
}

type session struct {
	// Legs are the client and the server leg: writes counted, the
	// client's serialised, closed once.
	relay.Legs
	env   *relay.Env
	conn  *relay.Conn
	id    uint64
	log   *slog.Logger
	obs   relay.SessionObserver
	meter relay.Meter
	begun time.Time
	// caps are the negotiated capabilities (the client's, within what the
	// greeting offered); set before the loops start.
	caps wire.Caps
	// sess is toServer's: what the engine knows of the connection.
	sess engine.Session
	// cfr is the client's framer, made at the start and used by toServer;
	// cfrShift is what it adds to the client's ids until authentication
	// ends (tls.go).
	cfr      *wire.Framer
	cfrShift int
	sfr      *wire.Framer
	// ccomp and scomp are the legs' compression when the session is
	// compressed (compress.go; nil otherwise); regionCmd is toServer's:
	// what it writes next to the server begins with a command.
	ccomp, scomp *compConn
	regionCmd    bool

	// phase is the client leg's framing: phaseCommand, phaseAuth, or
	// phaseInfile plus the upload's first sequence id.
	phase atomic.Uint32
	// loginChanged: user, schema or the lexing state (under mu) changed
	// since toServer last copied them into sess.
	loginChanged atomic.Bool
	// lexInFlight counts the commands sent that may change the lexing
	// state and are not answered yet.
	lexInFlight atomic.Int32
	// lexStale: the server's sql_mode changed without a status to say to
	// what (a COM_CHANGE_USER it refused: lexstate.go), until an answer
	// that ends with OK or EOF brings the flags.
	lexStale atomic.Bool
	// schemaInFlight counts the commands sent that change the session's
	// database and are not answered yet: a command read meanwhile waits
	// (on authEnded) so that it is judged in the database it runs in.
	schemaInFlight atomic.Int32
	// authEnded (on mu) is signalled when an authentication exchange ends
	// (the phase leaves phaseAuth), when schemaInFlight drops, or when the
	// session closes: toServer waits on it with a command the client sent
	// before.
	authEnded sync.Cond

	mu sync.Mutex
	// queue[head:] is what is owed to the client, oldest first.
	queue []pending
	head  int
	// reply is the buffer local replies are built in.
	reply []byte
	// fieldSQL is toServer's buffer for the statements a COM_FIELD_LIST
	// or COM_REFRESH amounts to.
	fieldSQL []byte
	// cmd is toServer's: the command its handler is deciding (commands.go).
	cmd cmdPacket
	// user, schema and app are the login as the server last accepted it.
	user, schema, app string
	// tlsInfo describes the client's and the server's leg, clientCert
	// the client's certificate (Info).
	tlsInfo          [2]string
	clientCert       string
	inTx             bool
	draining, closed bool
	lex              lexState
	// reading: toServer has read from the client and not yet written what
	// it read; a drain then leaves the close to it.
	reading bool
	memo    memo

	idle relay.IdleTimer
	// leaveOpen is set by toServer when it stops after a deny_and_close
	// verdict whose reply is queued: toClient closes the session once the
	// client has it.
	leaveOpen bool
	// authPlugin is the authentication plugin in use (clearpw.go): the
	// greeting's, the client's, the last AuthSwitchRequest's.
	authPlugin []byte
}

// Serve runs one session: the dial, the greeting, the handshake response
// and admission, then the two relay loops, which carry the authentication
// exchange first.
func (p *Protocol) Serve(env *relay.Env, c *relay.Conn) {
	defer c.Client.Close()
	s := &session{Legs: relay.Legs{Client: c.Client, Obs: env.Observer}, env: env, conn: c, id: c.ID, begun: time.Now()}
	s.meter = env.Meter(s.id)
	s.log = c.Logger(env.Log)
	s.memo.last = -1
	s.authEnded.L = &s.mu
	release, ok := s.start()
	if !ok {
		if s.Server != nil {
			s.Server.Close()
		}
		for _, fr := range []*wire.Framer{s.cfr, s.sfr} {
			if fr != nil {
				fr.Close()
			}
		}
		return
	}
	defer release()
	defer s.obs.Close()
	defer s.cfr.Close()
	defer s.sfr.Close()
	if s.ccomp != nil {
		defer s.ccomp.release()
		defer s.scomp.release()
	}
	s.log.Debug("session started", "application", s.app)
	relay.RunLoops(s.toServer, s.toClient)
	s.log.Debug("session ended")
}

// readPacket reads fr's next packet whole (headers included), wanting any.
func readPacket(fr *wire.Framer) ([]byte, error) {
	for {
		fr.Expect(wire.SeqAny)
		m, err := fr.Next(wantAll)
		if err != nil || m != nil {
			return m, err
		}
		if err := fr.Fill(); err != nil {
			return nil, err
		}
	}
}

// Info describes the session for fwctl connections and the audit trail.
func (s *session) Info() relay.Info {
	s.mu.Lock()
	user, schema := s.user, s.schema
	s.mu.Unlock()
	return relay.Info{ID: s.id, Database: s.env.Database, Client: s.Client.RemoteAddr().String(), Via: s.conn.Via,
		Process: s.conn.Process, User: user, DBName: schema, Application: s.app, Since: s.begun,
		ClientTLS: s.tlsInfo[0], ServerTLS: s.tlsInfo[1], ClientCert: s.clientCert}
}

// Close closes both connections now.
func (s *session) Close() { s.closeBoth() }

// Drain closes the session now if it is idle (no command outstanding, no
// transaction open), or when it next becomes idle.
func (s *session) Drain() {
	s.mu.Lock()
	s.draining = true
	idle := s.idleLocked()
	s.mu.Unlock()
	if idle {
		s.log.Info("session closed by drain")
		s.closeBoth()
	}
}

func (s *session) idleLocked() bool {
	return !s.reading && s.head == len(s.queue) && !s.inTx && s.phase.Load() == phaseCommand
}

func (s *session) closeBoth() { s.CloseBoth(s.markClosed) }

// markClosed is closeBoth's, before the legs close: toServer stops waiting
// (authEnded).
func (s *session) markClosed() {
	s.mu.Lock()
	s.closed = true
	s.authEnded.Broadcast()
	s.mu.Unlock()
}

func (s *session) writeServer(b []byte) error {
	if s.scomp != nil && len(b) > 0 {
		s.scomp.beginCommand(s.regionCmd)
	}
	return s.WriteServer(b)
}

// expect queues a command the server will answer; it is called before the
// command is written.
func (s *session) expect(p pending) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.queue = append(s.queue, p)
	if p.lex {
		s.lexInFlight.Add(1)
	}
	if p.schemaChange {
		s.schemaInFlight.Add(1)
	}
	return true
}

// answer sends the client a reply of sqlfw's in the command's place: at
// once when the server owes nothing, else queued behind what it owes. It
// reports false when the session is over.
func (s *session) answer(p pending) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	p.local = true
	if s.head < len(s.queue) {
		s.queue = append(s.queue, p)
		return true
	}
	return s.writeLocalLocked(&p)
}

// writeLocalLocked writes a local reply (with mu held, so that it keeps its
// place among the server's answers). It reports false when the session
// ends with it.
func (s *session) writeLocalLocked(p *pending) bool {
	s.reply = wire.AppendErr(s.reply[:0], p.seq, p.code, p.sqlstate, p.msg)
	if err := s.WriteClient(s.reply); err != nil || p.closeAfter {
		go s.closeBoth() // closeBoth takes mu
		return false
	}
	return true
}

// blockedMsg is the message of a blocked statement's ERR. It names the rule
// and never the statement's text.
func blockedMsg(v *engine.Verdict, closing bool) string {
	rule := v.RuleID
	if rule == "" {
		rule = "unnamed"
	}
	msg := "sqlfw: statement blocked by rule " + rule
	if v.Statements > 1 {
		msg += " (none of the " + strconv.Itoa(v.Statements) + " statements in this query was run)"
	}
	if v.Reason != "" {
		msg += ": " + v.Reason
	}
	if closing {
		msg += "; closing the connection"
	}
	return msg
}

// judge asks the engine about a statement's text and reports the verdict.
func (s *session) judge(sql []byte, typ byte) (engine.Verdict, *engine.Engine) {
	eng := s.env.Engine()
	j := relay.StartJudging(eng, s.meter, &s.sess)
	s.sess.Lex.Unconfirmed = s.lexInFlight.Load() > 0 || s.lexStale.Load()
	v := eng.Judge(sql, &s.sess)
	j.End(s.meter, s.obs, &v, typ)
	return v, eng
}

// enforced reports whether v blocks the statement.
func (s *session) enforced(v *engine.Verdict) bool {
	return v.Action.Denies() && s.env.Enforces(v.Mode)
}

// syncLogin copies a login the server accepted into the engine's session.
func (s *session) syncLogin() {
	if !s.loginChanged.Swap(false) {
		return
	}
	s.mu.Lock()
	s.sess.User, s.sess.Database = s.user, s.schema
	s.sess.Lex.SQLMode, s.sess.Lex.ClientEncoding = s.lex.mode, s.lex.charset
	// (MySQL 8.0 never creates an account by GRANT, and its sql_mode has
	// no NO_AUTO_CREATE_USER: a SQL-level EXECUTE is judged again with
	// the server not known, sqlprepare.go)
	s.sess.Lex.AutoCreateUser = s.lex.autoCreate() && (s.sess.Lex.MariaDB || s.sess.Lex.ServerVersion < 80000)
	s.mu.Unlock()
}
