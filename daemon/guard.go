package daemon

// Bounds a PostgreSQL session keeps against faults and abuse (docs/design.md,
// "Faults and abuse"):
//
//   - Before authentication a client may send only what PostgreSQL accepts
//     then: messages of at most preAuthMaxMessage bytes (its own limit for
//     password and SASL messages is PG_MAX_AUTH_TOKEN_LENGTH, 65535, in
//     src/include/libpq/auth.h). The session's framer gets the configured
//     limits once the server's first ReadyForQuery has been seen.
//   - All sessions together hold at most max_buffered_bytes for client
//     messages read whole to be judged, beyond their fixed relay buffers
//     (bufferBudget). A session that would exceed it waits (its client is
//     not read meanwhile) and is closed with SQLSTATE 53200 if the memory
//     does not come free in time.
//   - The server's first reply to the startup packet and the end of
//     authentication are awaited for a bounded time; then the client gets
//     08006 instead of waiting for ever on a server that accepted and went
//     silent.
//   - A client that half-closes after sending still gets every answer: the
//     server's side is half-closed too, and the session ends when the server
//     closes.
//   - Message types a client may not send, and small messages with
//     malformed bodies, close the session with 08P01 instead of being
//     relayed.

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfw/sqlfw/wire/pg"
)

// preAuthMaxMessage bounds every client message before authentication ends.
const preAuthMaxMessage = 65535 + 4

// budgetWait is how long a session waits for buffer memory to come free.
const budgetWait = time.Second

// sqlstateOutOfMemory is what a session gets when the buffer budget is spent.
const sqlstateOutOfMemory = "53200"

// bufferBudget is the memory all sessions' framers may hold beyond their
// initial buffers (pg.Budget).
type bufferBudget struct {
	max  int64
	mu   sync.Mutex
	used int64
	// freed is closed and replaced whenever memory is released, waking
	// every waiter to try again.
	freed chan struct{}
	wait  time.Duration
}

func newBufferBudget(max int64) *bufferBudget {
	if max <= 0 {
		max = DefaultMaxBufferedBytes
	}
	return &bufferBudget{max: max, freed: make(chan struct{}), wait: budgetWait}
}

var errBudgetSpent = errors.New("all sessions together hold the configured max_buffered_bytes")

// Reserve takes n bytes, waiting up to b.wait for them to come free.
func (b *bufferBudget) Reserve(n int) error {
	var deadline *time.Timer
	for {
		b.mu.Lock()
		if b.used+int64(n) <= b.max {
			b.used += int64(n)
			b.mu.Unlock()
			if deadline != nil {
				deadline.Stop()
			}
			return nil
		}
		freed := b.freed
		b.mu.Unlock()
		if int64(n) > b.max {
			return fmt.Errorf("%w (%d bytes, the message needs %d more)", errBudgetSpent, b.max, n)
		}
		if deadline == nil {
			deadline = time.NewTimer(b.wait)
		}
		select {
		case <-freed:
		case <-deadline.C:
			return fmt.Errorf("%w (%d bytes) for %v", errBudgetSpent, b.max, b.wait)
		}
	}
}

// Release gives back n bytes.
func (b *bufferBudget) Release(n int) {
	b.mu.Lock()
	b.used -= int64(n)
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// inUse reports the bytes reserved now.
func (b *bufferBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// halfClose is toServer's answer to the client's EOF: the server gets EOF
// too, after everything the client sent, and toClient relays the rest of
// the answer until the server closes. It reports false when the server
// connection cannot be half-closed (the session then closes at once).
func (s *pgSession) halfClose() bool {
	cw, ok := s.server.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return false
	}
	s.log.Debug("client closed its side: relaying the rest of the server's answer")
	s.leaveOpen = true
	return true
}

// startupDeadline is toClient's read deadline on the server before the
// startup phase ends: the first reply within server_reply_timeout, the end
// of authentication within auth_timeout of the session's start.
func (s *pgSession) startupDeadline(replied bool) time.Time {
	if !replied {
		return time.Now().Add(s.db.cfg.ServerReplyTimeout)
	}
	return s.begun.Add(s.db.cfg.AuthTimeout)
}

// startupTimedOut tells the client that the server did not answer in time,
// when the client is between messages (nothing of a message was relayed
// half), and logs it.
func (s *pgSession) startupTimedOut(replied, midMessage bool) {
	s.db.stats.connRefused.Add(1)
	what := fmt.Sprintf("sqlfw: the database server did not answer the connection within %v", s.db.cfg.ServerReplyTimeout)
	if replied {
		what = fmt.Sprintf("sqlfw: the database server did not complete authentication within %v", s.db.cfg.AuthTimeout)
	}
	s.log.Error("closing connection: "+what[len("sqlfw: "):], "upstream", s.upstream.addr)
	if !midMessage {
		s.cw.Lock()
		writeFatal(s.client, sqlstateConnectionFailure, what)
		s.cw.Unlock()
	}
}

// isTimeout reports a read deadline that passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// outOfMemory closes a session whose message could not be held.
func (s *pgSession) outOfMemory(err error) {
	s.log.Warn("closing connection: no memory for its message", "err", err)
	s.cw.Lock()
	writeFatal(s.client, sqlstateOutOfMemory, "sqlfw: out of memory for statements being judged; try again")
	s.cw.Unlock()
}

// Connection limits and idle timeouts.
const (
	sqlstateTooManyConnections = "53300" // too_many_connections
	sqlstateIdleSession        = "57P05" // idle_session_timeout
	sqlstateIdleInTransaction  = "25P03" // idle_in_transaction_session_timeout
)

// admit counts a new client connection against max_connections and
// max_client_connections. When it reports false the client has its error
// and release must not be called.
func (d *Daemon) admit(db *database, conn net.Conn, log interface{ Warn(string, ...any) }) (release func(), ok bool) {
	n := d.clients.Add(1)
	active := db.stats.connActive.Load()
	var why string
	switch {
	case d.cfg.MaxClientConnections > 0 && n > int64(d.cfg.MaxClientConnections):
		why = fmt.Sprintf("sqlfw: too many clients already (max_client_connections %d)", d.cfg.MaxClientConnections)
	case db.cfg.MaxConnections > 0 && active > int64(db.cfg.MaxConnections):
		why = fmt.Sprintf("sqlfw: too many clients already for database %s (max_connections %d)", db.cfg.Name, db.cfg.MaxConnections)
	}
	if why != "" {
		d.clients.Add(-1)
		db.stats.connLimited.Add(1)
		log.Warn("refusing connection: " + why[len("sqlfw: "):])
		writeFatal(conn, sqlstateTooManyConnections, why)
		return nil, false
	}
	return func() { d.clients.Add(-1) }, true
}

// idle holds a session's idle-timeout state: toClient arms it at a
// ReadyForQuery that leaves nothing outstanding, toServer disarms it when
// the client sends, and a read deadline that passes is checked against the
// session's real state before anything is closed.
type idleState struct {
	on    bool // a timeout is configured (set at start, read-only)
	armed atomic.Bool
	since atomic.Int64 // unix nanoseconds the session became idle
}

func (s *pgSession) idleTimeout(status byte) time.Duration {
	if status == pg.TxIdle {
		return s.db.cfg.IdleTimeout
	}
	return s.db.cfg.IdleInTransactionTimeout
}

// armIdle is toClient's, after a ReadyForQuery.
func (s *pgSession) armIdle(status byte) {
	t := s.idleTimeout(status)
	s.mu.Lock()
	busy := s.outstanding > 0
	s.mu.Unlock()
	if t <= 0 || busy {
		return
	}
	now := time.Now()
	s.idle.since.Store(now.UnixNano())
	s.idle.armed.Store(true)
	_ = s.client.SetReadDeadline(now.Add(t))
}

// disarmIdle is toServer's, after every read from the client.
func (s *pgSession) disarmIdle() {
	if s.idle.armed.Swap(false) {
		_ = s.client.SetReadDeadline(time.Time{})
	}
}

// idleExpired is toServer's answer to a read deadline that passed: it
// reports true (and has told the client) when the session has been idle for
// its timeout; otherwise it sets the deadline the state calls for and the
// read goes on.
func (s *pgSession) idleExpired() bool {
	status := byte(s.txStatus.Load())
	t := s.idleTimeout(status)
	s.mu.Lock()
	busy := s.outstanding > 0
	s.mu.Unlock()
	since := time.Unix(0, s.idle.since.Load())
	if busy || t <= 0 || !s.idle.armed.Load() {
		_ = s.client.SetReadDeadline(time.Time{})
		return false
	}
	if left := t - time.Since(since); left > 0 {
		_ = s.client.SetReadDeadline(time.Now().Add(left))
		return false
	}
	code, what := sqlstateIdleSession, "terminating connection due to idle-session timeout"
	if status != pg.TxIdle {
		code, what = sqlstateIdleInTransaction, "terminating connection due to idle-in-transaction timeout"
	}
	s.db.stats.idleClosed.Add(1)
	s.log.Info("closing connection: "+what, "timeout", t)
	s.cw.Lock()
	writeFatal(s.client, code, "sqlfw: "+what)
	s.cw.Unlock()
	return true
}
