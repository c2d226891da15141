package daemon

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"time"

	"github.com/sqlfw/sqlfw/bpf"
	"golang.org/x/sys/unix"
)

// ownSockets keeps the redirect programs away from sqlfwd's own upstream
// connections in any PID namespace, and notices when they are redirected
// anyway (a loop: sqlfwd relaying to itself).
//
// The exemption is by socket cookie: the upstream dialer's Control (after
// socket(), before connect()) reads SO_COOKIE and puts it in the programs'
// own_cookies maps, and the dial removes it once connect() has returned. The
// earlier check, the kernel's tgid against os.Getpid(), failed in a PID
// namespace (the daemon's own sockets came back to it) and could exempt an
// unrelated host process whose tgid happened to equal the daemon's pid in
// its namespace.
//
// The loop guard remembers the cookies of the last ownRecent upstream
// sockets: a redirected connection whose client socket is one of them (the
// Origin's cookie; a cookie is unique for the boot, so this cannot be a
// client's) is sqlfwd connecting to itself, and so is a unix-socket client
// whose peer credentials are sqlfwd's own pid (SO_PEERCRED is in the
// receiver's PID namespace). Such a connection is closed, not relayed.
type ownSockets struct {
	mu      sync.Mutex
	exempt  []cookieExempter // the loaded programs' own_cookies maps
	recent  map[uint64]struct{}
	ring    []uint64 // recent, oldest first from next
	next    int
	loops   uint64    // loops refused, ever
	logged  time.Time // last loop log line
	pending int       // loops refused since then
}

// cookieExempter is a program set with an own_cookies map (bpf.Redirect,
// bpf.UnixRedirect).
type cookieExempter interface {
	ExemptCookie(uint64) error
	UnexemptCookie(uint64) error
}

// ownRecent is how many upstream sockets the loop guard remembers: a
// looping connection is accepted moments after its connect.
const ownRecent = 16384

// ownLoopLogEvery bounds the loop guard's log lines.
const ownLoopLogEvery = 10 * time.Second

func newOwnSockets() *ownSockets {
	return &ownSockets{recent: make(map[uint64]struct{}, ownRecent), ring: make([]uint64, ownRecent)}
}

// add makes e consult the exemptions from now on.
func (o *ownSockets) add(e cookieExempter) {
	o.mu.Lock()
	o.exempt = append(o.exempt, e)
	o.mu.Unlock()
}

// clear forgets the programs (they are being closed).
func (o *ownSockets) clear() {
	o.mu.Lock()
	o.exempt = nil
	o.mu.Unlock()
}

// errOwnLoop marks a connection refused because sqlfwd made it itself.
var errOwnLoop = errors.New("sqlfwd connecting to itself")

// dialCookies collects the cookies one dial exempted (net.Dialer may make
// several sockets for one dial), so the dial can remove them.
type dialCookies struct{ list []uint64 }

type dialCookiesKey struct{}

// control is the upstream dialer's ControlContext: it exempts the socket
// before connect() and remembers it for the loop guard.
func (o *ownSockets) control(ctx context.Context, rc syscall.RawConn) error {
	cookie, err := bpf.SocketCookie(rc)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.exempt {
		if err := e.ExemptCookie(cookie); err != nil {
			return err
		}
	}
	if dc, ok := ctx.Value(dialCookiesKey{}).(*dialCookies); ok {
		dc.list = append(dc.list, cookie)
	}
	if old := o.ring[o.next]; old != 0 {
		delete(o.recent, old)
	}
	o.ring[o.next] = cookie
	o.next = (o.next + 1) % len(o.ring)
	o.recent[cookie] = struct{}{}
	return nil
}

// upstreamControl is the upstream dialer's ControlContext while
// intercepting: the socket is exempt by cookie (any family), and TCP ones
// also get the mark (if not 0).
func (d *Daemon) upstreamControl(mark int) func(ctx context.Context, network, address string, c syscall.RawConn) error {
	return func(ctx context.Context, network, address string, c syscall.RawConn) error {
		if err := d.own.control(ctx, c); err != nil {
			return err
		}
		if network == "unix" || mark == 0 {
			return nil
		}
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, mark)
		}); err != nil {
			return err
		}
		return serr
	}
}

// done removes a dial's exemptions once its connect() calls have returned.
func (o *ownSockets) done(dc *dialCookies) {
	if len(dc.list) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range dc.list {
		for _, e := range o.exempt {
			_ = e.UnexemptCookie(c) // an LRU map: a leftover is evicted, never matched by a client
		}
	}
}

// isOwn reports whether cookie is one of sqlfwd's recent upstream sockets.
func (o *ownSockets) isOwn(cookie uint64) bool {
	if cookie == 0 {
		return false
	}
	o.mu.Lock()
	_, ok := o.recent[cookie]
	o.mu.Unlock()
	return ok
}

// loop counts a refused loop and reports whether to log it now, with the
// loops refused since the last line.
func (o *ownSockets) loop(now time.Time) (bool, uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.loops++
	o.pending++
	if o.loops > 1 && now.Sub(o.logged) < ownLoopLogEvery {
		return false, 0
	}
	n := uint64(o.pending)
	o.logged, o.pending = now, 0
	return true, n
}

// loopCount is how many loops were refused.
func (o *ownSockets) loopCount() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.loops
}

// peerIsSelf reports whether the unix-socket peer of rc is this process.
func peerIsSelf(rc syscall.RawConn, pid int) bool {
	self := false
	_ = rc.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		self = err == nil && int(cred.Pid) == pid
	})
	return self
}
