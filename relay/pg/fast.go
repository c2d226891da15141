package pg

// The kernel fast path (experimental, intercept.fastpath; bpf/doc.go "Fast
// path"). While the leg is resumed the kernel relays the server's messages
// that the session need not see straight to the client leg, counting the
// ReadyForQuery messages; anything else stops it and comes to toClient,
// which first halts the leg (the kernel's relayed bytes are then all in the
// client socket) and replays the counted ReadyForQuery messages into the
// session's state. Every write to the client goes through fastClient, which
// halts first. toClient resumes the leg only at a message boundary with
// everything it read written and no poison, verdict-memory change, idle
// timer or drain pending.

import (
	"net"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// fastClient is the client leg of a session on the fast path.
type fastClient struct {
	net.Conn
	s *session
}

func (c *fastClient) Write(b []byte) (int, error) {
	c.s.fastHalt()
	n, err := c.Conn.Write(b)
	c.s.fast.Wrote(n)
	return n, err
}

// fastReader is toClient's server leg: it counts what it reads and hands
// the bytes of a message the kernel had begun relaying straight to the
// client.
type fastReader struct {
	s    *session
	read uint64
	pre  relay.FastPrefix
}

func (r *fastReader) Read(p []byte) (int, error) {
	for {
		n, err := r.s.Server.Read(p)
		if n <= 0 {
			if err != nil {
				r.s.fastHalt() // the kernel's bytes reach the client before the close
			}
			return n, err
		}
		r.read += uint64(n)
		r.s.fastHalt()
		if q := r.s.fast.TakePrefix(); q != (relay.FastPrefix{}) {
			r.pre = q
		}
		i := 0
		for i < n && (r.pre.Need > 0 || r.pre.Rem > 0) {
			if r.pre.Need > 0 {
				r.pre.Acc = r.pre.Acc<<8 | uint64(p[i])
				i++
				if r.pre.Need--; r.pre.Need == 0 {
					r.pre.Rem = r.pre.Acc - 4 // the kernel checked Acc ≥ 4 for earlier bytes only
				}
				continue
			}
			k := min(r.pre.Rem, uint64(n-i))
			i += int(k)
			r.pre.Rem -= k
		}
		if i > 0 {
			if werr := r.s.WriteClient(p[:i]); werr != nil {
				return 0, werr
			}
			n = copy(p, p[i:n])
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// midPrefix reports whether raw prefix bytes are still to come.
func (r *fastReader) midPrefix() bool { return r.pre.Need > 0 || r.pre.Rem > 0 }

// fastHalt stops the kernel relaying and replays what it did.
func (s *session) fastHalt() {
	if err := s.fast.Halt(s.fastApply); err != nil {
		s.log.Error("fast path: halt", "err", err)
		s.closeBoth()
	}
}

// fastApply replays the kernel's ReadyForQuery messages as toClient would
// have handled them (all of one status, the one they repeat).
func (s *session) fastApply(rep relay.FastReport) {
	if rep.Redirected > 0 {
		s.env.Observer.Count(relay.BytesToClient, rep.Redirected)
	}
	for range rep.Ready {
		s.lex.readyForQuery()
		s.txStatus.Store(uint32(rep.Status))
		s.ready(rep.Status)
		s.memoReady(rep.Status)
	}
}

// fastResume is toClient's, after a write with nothing buffered.
func (s *session) fastResume(r *fastReader, fr *wire.Framer) {
	if fr.Buffered() != 0 || fr.MidMessage() || r.midPrefix() {
		return
	}
	s.fast.Resume(r.read, byte(s.txStatus.Load()), s.fastEligible)
}

// fastEligible: nothing pending that needs the server's boring messages.
func (s *session) fastEligible() bool {
	s.mu.Lock()
	started, closed, draining := s.started, s.closed, s.draining
	s.mu.Unlock()
	return started && !closed && !draining && !s.idle.On && !s.leaveOpen && !s.havePoison.Load() && !s.memo.active.Load() && !s.drainSet.Load()
}
