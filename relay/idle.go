package relay

// What every protocol's session does alike at the edges of its client
// leg: the idle timer, a read deadline told from other errors, the
// client's half-close passed on to the server.

import (
	"errors"
	"net"
	"sync/atomic"
	"time"
)

// IdleTimer is a session's idle-timeout state: the server-to-client loop
// arms it when a response leaves the session idle, the client-to-server
// loop disarms it at every read from the client, and a read deadline that
// passes is checked against the session's real state (Expired) before
// anything is closed. The protocol decides which timeout applies
// (idle_timeout, or idle_in_transaction_timeout in a transaction), when
// the session is idle, and what the client is told.
type IdleTimer struct {
	// On: a timeout is configured (set at start, read-only after).
	On    bool
	armed atomic.Bool
	since atomic.Int64 // unix nanoseconds the session became idle
}

// Arm starts the timer on the client leg c for d (nothing when d <= 0).
func (t *IdleTimer) Arm(c net.Conn, d time.Duration) {
	if d <= 0 {
		return
	}
	now := time.Now()
	t.since.Store(now.UnixNano())
	t.armed.Store(true)
	_ = c.SetReadDeadline(now.Add(d))
}

// Disarm stops the timer after a read from the client.
func (t *IdleTimer) Disarm(c net.Conn) {
	if t.armed.Swap(false) {
		_ = c.SetReadDeadline(time.Time{})
	}
}

// Expired answers a read deadline that passed: true when the session,
// idle now, has been idle for d, the timeout that applies now; otherwise
// it sets the deadline the state calls for and the read goes on.
func (t *IdleTimer) Expired(c net.Conn, d time.Duration, idle bool) bool {
	if !idle || d <= 0 || !t.armed.Load() {
		_ = c.SetReadDeadline(time.Time{})
		return false
	}
	if left := d - time.Since(time.Unix(0, t.since.Load())); left > 0 {
		_ = c.SetReadDeadline(time.Now().Add(left))
		return false
	}
	return true
}

// IsTimeout reports a read deadline that passed.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// CloseWrite half-closes the server leg after the client half-closed its
// own: the server gets EOF after everything the client sent, and answers
// what it owes. It reports false when the leg cannot be half-closed.
func CloseWrite(server net.Conn) bool {
	cw, ok := server.(interface{ CloseWrite() error })
	return ok && cw.CloseWrite() == nil
}
