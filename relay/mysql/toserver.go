package mysql

import (
	"errors"
	"io"
	"net"

	wire "github.com/sqlfw/sqlfw/wire/mysql"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
)

// toServer: the client's packets read whole, the client leg's framing
// phase followed (authentication rounds, a LOCAL INFILE upload, commands),
// each command decided by its handler (commands.go) before a byte of it is
// sent, what passed written to the server in one write per read.

// protocolError closes the session after a malformed client packet, with an
// ERR the client can read.
func (s *session) protocolError(err error) {
	s.ClientViolation(s.log, err)
	var fe *wire.FrameError
	if errors.As(err, &fe) && fe.TooLarge() {
		// as the server answers a packet beyond max_allowed_packet (an
		// authentication round's ids continue the handshake's)
		s.Tell(errPacket((fe.Seq+1)&0xff, errPacketTooLarge, sqlstateHandshake, msgPacketTooLarge))
	} else {
		s.Tell(errPacket(1, errMalformed, sqlstateGeneral, "sqlfw: malformed packet from the client"))
	}
}

// toServer relays the client's packets to the server, deciding each
// command.
func (s *session) toServer() {
	defer func() {
		if !s.leaveOpen {
			s.closeBoth()
		}
	}()
	defer s.meter.HoldAbort() // timing
	fr := s.cfr
	lim := &s.env.Limits
	// mode is the framing the loop has set up: the phase it follows.
	mode, lifted := uint32(phaseAuth), false
	// shift is what the framer adds to the ids of the first
	// authentication exchange (start); the packets it returns carry them.
	shift := s.cfrShift
	for first := true; ; first = false {
		s.meter.HoldWait() // timing
		if first && fr.Buffered() > 0 {
			// the client sent more with its handshake response: read
			// it now, not after its next write
		} else if err := fr.Fill(); err != nil {
			switch {
			case s.idle.On && relay.IsTimeout(err):
				if !s.idleExpired() {
					continue // not idle for long enough: read on
				}
			case errors.Is(err, wire.ErrCompressed):
				s.protocolError(err)
			case errors.Is(err, wire.ErrBudget):
				s.log.Warn("closing connection: no memory for its packet", "err", err)
				s.Tell(errPacket(1, errOutOfResources, sqlstateGeneral, "sqlfw: out of memory for statements being judged; try again"))
			case errors.Is(err, io.EOF):
				if s.halfClose() {
					return
				}
			case errors.Is(err, net.ErrClosed):
			default:
				s.log.Debug("client read ended", "err", err)
			}
			return
		}
		s.mu.Lock()
		s.reading = true
		s.mu.Unlock()
		if s.idle.On {
			s.idle.Disarm(s.Client)
		}
		s.meter.HoldBegin(relay.Arrived(s.Client)) // timing
		for {
			ph := s.phase.Load()
			want := wantAll
			switch {
			case ph == phaseCommand:
				if mode != phaseCommand {
					if !lifted {
						fr.SetLimits(lim.MaxMessageBytes, 0)
						fr.Renumber(0) // commands start at 0 on both legs
						shift = 0
						lifted = true
					}
					fr.ExpectCommands()
					fr.SetTypes(wire.CommandTypes)
					mode = phaseCommand
				}
			case ph == phaseAuth:
				// the rounds of an authentication exchange continue the
				// ids of the server's packet; the server checks them
				fr.Expect(wire.SeqAny)
				fr.SetTypes(nil)
				mode = phaseAuth
			default:
				if mode < phaseInfile {
					fr.Expect(int(ph-phaseInfile) & 0xff)
					fr.SetTypes(nil)
					mode = ph
				}
				want = wantNothing
			}
			if fr.Pending() == 0 {
				// what the next write to the server begins with
				s.regionCmd = mode == phaseCommand
			}
			m, err := fr.Next(want)
			if err != nil {
				s.protocolError(err)
				return
			}
			if m == nil {
				break
			}
			if mode != phaseCommand {
				if mode == phaseAuth && (wire.Seq(m)-shift)&0xff == 0 {
					// A command sent before the authentication exchange
					// ended (sequence id 0 is no round of it): the server
					// reads it as a command after its OK, so it waits,
					// unread, for the end and is decided as one.
					fr.Unread(m)
					if s.writeServer(fr.Take()) != nil || !s.awaitAuthEnd() {
						return
					}
					continue
				}
				if mode >= phaseInfile && len(m) == wire.HeaderLen {
					// the empty packet ends the upload; the server answers
					// the command with OK or ERR
					s.phase.CompareAndSwap(mode, phaseCommand)
				}
				continue // authentication and upload: forwarded as it came
			}
			if s.schemaInFlight.Load() > 0 {
				// sent before the answer to a change of database: judged
				// once the database is known
				fr.Unread(m)
				if s.writeServer(fr.Take()) != nil || !s.awaitSchema() {
					return
				}
				continue
			}
			if s.executesUnprepared(m) {
				// MariaDB's last prepared id, sent before the PREPARE_OK:
				// decided once its parameter count is known (execparams.go)
				fr.Unread(m)
				if s.writeServer(fr.Take()) != nil || !s.awaitPrepared() {
					return
				}
				continue
			}
			if !s.command(fr, m) {
				return
			}
		}
		if err := s.writeServer(fr.Take()); err != nil {
			return
		}
		s.meter.HoldEnd() // timing
		s.mu.Lock()
		s.reading = false
		idle := s.draining && s.idleLocked()
		s.mu.Unlock()
		if idle {
			// what was read needs no answer (COM_STMT_CLOSE, say)
			s.log.Info("session closed by drain")
			return
		}
		if s.idle.On {
			// toClient may have found the answer forwarded before this
			// read was done with
			s.armIdle()
		}
	}
}

// awaitAuthEnd waits until the authentication exchange under way has ended;
// it reports false when the session closed instead.
func (s *session) awaitAuthEnd() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.phase.Load() == phaseAuth && !s.closed {
		s.authEnded.Wait()
	}
	return !s.closed
}

// awaitSchema waits until no change of database is in flight; it reports
// false when the session closed instead.
func (s *session) awaitSchema() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.schemaInFlight.Load() > 0 && !s.closed {
		s.authEnded.Wait()
	}
	return !s.closed
}

// drop cuts m out of what goes to the server.
func (s *session) drop(fr *wire.Framer, m []byte) bool {
	return s.writeServer(fr.TakeBefore(m)) == nil
}

// dropAnswer cuts m out and answers it with p.
func (s *session) dropAnswer(fr *wire.Framer, m []byte, p pending) bool {
	if !s.drop(fr, m) {
		return false
	}
	return s.answer(p)
}

// block cuts a blocked command out and answers it with sqlfw's ERR.
func (s *session) block(fr *wire.Framer, m []byte, seq int, v *engine.Verdict) bool {
	closing := v.Action == engine.ActionDenyClose
	if !s.dropAnswer(fr, m, pending{seq: seq, code: errBlocked, sqlstate: sqlstateBlocked, msg: blockedMsg(v, closing), closeAfter: closing}) {
		return false
	}
	if closing {
		// Read nothing more from this client; the session closes once
		// the client has the error.
		s.log.Warn("closing the session after a deny_and_close rule", "rule", v.RuleID)
		s.leaveOpen = true
		return false
	}
	return true
}
