package mysql

import (
	"errors"
	"io"
	"net"
	"time"

	wire "github.com/sqlfw/sqlfw/wire/mysql"

	"github.com/sqlfw/sqlfw/relay"
)

// toClient: the server's packets followed with wire/mysql's Response,
// what a complete response changed settled before the client sees it (a
// statement id, the login, the database, the lexing state, the
// transaction), the response forwarded and then sqlfw's replies queued
// behind it.

// toClient relays the server's packets to the client, following each
// response.
func (s *session) toClient() {
	defer s.closeBoth()
	fr := s.sfr
	r := wire.NewResponse(s.caps)
	r.BeginAuth()
	var cur pending // the command being answered (cmd 0 while authenticating)
	// owed: cur is queue[head], a command the client sent
	authing, owed := true, false
	for {
		if err := fr.Fill(); err != nil {
			switch {
			case authing && relay.IsTimeout(err):
				s.log.Warn("closing connection: authentication did not finish in time", "timeout", s.env.Limits.AuthTimeout)
				s.Tell(errPacket(0, errUnknown, sqlstateGeneral, "sqlfw: the database server did not finish authentication in time"))
			case errors.Is(err, wire.ErrCompressed):
				s.ServerMalformed(s.log, "packet", err)
			case !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed):
				s.log.Debug("server read ended", "err", err)
			}
			return
		}
		s.meter.ResponseArrived() // timing
		for {
			if r.Done() {
				if fr.Buffered() == 0 {
					break
				}
				if cur, owed = s.nextCommand(); owed {
					r.Begin(cur.cmd)
					fr.Expect(cur.seq)
				} else {
					// Nothing is owed: a packet the server sends on its
					// own (an ERR before it closes the connection).
					cur = pending{cmd: wire.ComPing, slot: -1}
					r.Begin(wire.ComPing)
					fr.Expect(wire.SeqAny)
				}
				authing = cur.cmd == wire.ComChangeUser
			}
			if authing || r.Infile() {
				// the client's packets move the ids on
				fr.Expect(wire.SeqAny)
			}
			m, err := fr.Next(r.Want())
			if err != nil {
				s.ServerMalformed(s.log, "packet", err)
				return
			}
			if m == nil {
				break
			}
			wasInfile := r.Infile()
			done, err := r.Feed(m)
			if err != nil {
				s.env.Observer.Count(relay.ProtocolErrors, 1)
				s.log.Error("closing connection: the server's answer cannot be followed", "command", wire.CommandName(cur.cmd), "err", err)
				return
			}
			if authing && !done && !s.clearAuthRound(fr, m) {
				return
			}
			if r.Infile() {
				if !wasInfile {
					// the file request, before the client can see it;
					// not again on a progress report during the upload
					// (MariaDB's, an ERR 0xffff that ends nothing), which
					// may come after the client's empty packet ended it
					s.phase.Store(phaseInfile + uint32((wire.LastSeq(m)+1)&0xff))
				}
				continue
			}
			if !done {
				continue
			}
			login := false // the login's exchange ends here
			if authing {
				_ = s.Server.SetReadDeadline(time.Time{})
				authing = false
				fr.Renumber(0) // the legs' ids differed by an SSL request (tls.go)
				if cur.cmd == 0 && r.Failed() {
					// authentication failed: the server closes
					_ = s.WriteClient(fr.Take())
					return
				}
				login = cur.cmd == 0
			}
			s.settle(r, &cur, m)
			if login && s.ccomp != nil && !s.startCompression(fr) {
				return
			}
			if err := s.WriteClient(fr.Take()); err != nil {
				return
			}
			if login && s.ccomp != nil {
				s.ccomp.startWrites() // after the OK, which is plain
			}
			if login {
				// Only now may the commands pipelined behind the login be
				// decided: the login is in no queue, so a reply of sqlfw's
				// to one would otherwise go out at once, before its OK.
				s.mu.Lock()
				s.phase.Store(phaseCommand)
				s.authEnded.Broadcast()
				s.mu.Unlock()
			}
			s.meter.ResponseReady() // timing (the first, the end of authentication, is not timed)
			if !s.answered(owed) {
				return
			}
			if s.idle.On {
				s.armIdle()
			}
		}
		if err := s.WriteClient(fr.Take()); err != nil {
			return
		}
		s.meter.ResponseForwarded() // timing
	}
}

// nextCommand returns the oldest command the server owes an answer to.
func (s *session) nextCommand() (pending, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.head < len(s.queue) && !s.queue[s.head].local {
		return s.queue[s.head], true
	}
	return pending{}, false
}

// settle records what a complete response changed, before the client sees
// it: the statement id of a prepare, the login, the transaction state.
func (s *session) settle(r *wire.Response, cur *pending, last []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inTx = r.InTransaction()
	failed := r.Failed()
	switch cur.cmd {
	case wire.ComChangeUser:
		// (the login's end, cmd 0, is toClient's: after its OK is written)
		s.phase.Store(phaseCommand)
		s.authEnded.Broadcast()
		if !failed {
			s.user, s.schema = cur.user, cur.schema
			s.loginChanged.Store(true)
		}
		// refused or not, the server reset the session before it
		// authenticated (lexstate.go): its prepared statements are gone
		s.memo.reset()
	case wire.ComStmtPrepare:
		if cur.slot >= 0 {
			if ok, good := r.Prepared(); good {
				s.memo.prepared(cur.slot, cur.gen, ok.StmtID, ok.Params)
			} else {
				s.memo.failed(cur.slot, cur.gen)
			}
			s.authEnded.Broadcast() // an execution of it may wait (awaitPrepared)
		}
	case wire.ComInitDB, wire.ComQuery, wire.ComStmtExecute, wire.ComStmtBulkExecute:
		if len(cur.nameOps) > 0 {
			s.memo.names.apply(cur.nameOps, failed)
			// no longer pending: the command stays queued until answered
			// pops it, and a lookup meanwhile must not take its PREPAREs
			// (candidates)
			cur.nameOps = nil
			if s.head < len(s.queue) {
				s.queue[s.head].nameOps = nil
			}
		}
		if cur.schemaChange && !failed {
			// COM_INIT_DB, USE (useSchema), a prepared USE
			s.schema = cur.schema
			s.loginChanged.Store(true)
		}
	case wire.ComResetConnection:
		if !failed {
			s.memo.reset()
		}
	}
	var tracked []byte
	if !failed && r.Status()&wire.StatusSessionStateChanged != 0 && s.caps.Has(wire.CapSessionTrack) {
		// USE db (and a schema set any other way) under session tracking
		if ok, err := wire.ParseOK(wire.FirstFragment(last), s.caps); err == nil {
			tracked = ok.SessionState
			for it := wire.NewSessionState(ok.SessionState); it.Next(); {
				if it.Type != wire.TrackSchema {
					continue
				}
				if name, ok := it.Schema(); ok && string(name) != s.schema {
					s.schema = string(name)
					s.loginChanged.Store(true)
				}
			}
		}
	}
	s.lexSettle(r, cur, tracked)
	if cur.lex {
		cur.lex = false
		s.lexInFlight.Add(-1)
	}
	if cur.schemaChange {
		cur.schemaChange = false
		s.schemaInFlight.Add(-1)
		s.authEnded.Broadcast()
	}
}

// answered pops the command whose response was just forwarded, writes the
// replies sqlfw queued behind it, and closes a draining session that is
// now idle. It reports false when the session ends.
func (s *session) answered(owed bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if owed {
		s.head++
	}
	for s.head < len(s.queue) && s.queue[s.head].local {
		p := s.queue[s.head]
		s.head++
		if !s.writeLocalLocked(&p) {
			return false
		}
	}
	if s.head == len(s.queue) {
		clear(s.queue) // drop the strings
		s.queue, s.head = s.queue[:0], 0
	}
	if s.draining && s.idleLocked() {
		s.log.Info("session closed by drain")
		return false
	}
	return true
}
