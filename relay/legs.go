package relay

import (
	"net"
	"sync"
	"time"
)

// Legs are a session's two connections and what every protocol does with
// them alike: writes counted (BytesToServer, BytesToClient), the client's
// serialised (the server-to-client loop relays; the other loop writes
// only a last error before closing), and both closed once. A protocol's
// session embeds it.
type Legs struct {
	// Client and Server are the legs; a protocol replaces either with its
	// TLS or compressed connection before its loops start.
	Client, Server net.Conn
	// Obs counts the bytes written.
	Obs  Observer
	cw   sync.Mutex
	once sync.Once
}

// WriteServer writes b to the server, counted.
func (l *Legs) WriteServer(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	l.Obs.Count(BytesToServer, uint64(len(b)))
	_, err := l.Server.Write(b)
	return err
}

// WriteClient writes b to the client, counted, serialised with Tell.
func (l *Legs) WriteClient(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	l.Obs.Count(BytesToClient, uint64(len(b)))
	l.cw.Lock()
	_, err := l.Client.Write(b)
	l.cw.Unlock()
	return err
}

// Tell writes the client a protocol's last words out of the relay's flow
// (the error that closes the session), serialised with WriteClient and
// bounded as WriteLast is.
func (l *Legs) Tell(b []byte) {
	l.cw.Lock()
	WriteLast(l.Client, b)
	l.cw.Unlock()
}

// WriteLast writes b to conn bounded by a second: an error a client gets
// before its connection closes or is refused, which must not hold the
// session when the client reads nothing.
func WriteLast(conn net.Conn, b []byte) {
	_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = conn.Write(b)
	_ = conn.SetWriteDeadline(time.Time{})
}

// CloseBoth closes both legs, once however often it is called: mark,
// when set, runs first (the protocol marks itself closed and wakes its
// waiters), then the client and the server leg (when dialled) are closed.
func (l *Legs) CloseBoth(mark func()) {
	l.once.Do(func() {
		if mark != nil {
			mark()
		}
		l.Client.Close()
		if l.Server != nil {
			l.Server.Close()
		}
	})
}

// RunLoops runs a session's two loops, toClient on a goroutine of its own
// and toServer on the caller's, and returns when both have ended.
func RunLoops(toServer, toClient func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		toClient()
	}()
	toServer()
	<-done
}
