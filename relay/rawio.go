package relay

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// IO reads and writes a relay leg's socket with raw read(2), recvmsg(2)
// and write(2) calls made inside the poller's syscall.RawConn callbacks.
//
// Why: net.Conn's Read and Write enter the Go runtime's system-call state
// (entersyscall) on every call, and when the process was idle — a relay
// between two statements — that wakes the runtime's monitor thread
// (sysmon), which then polls with usleep and sched_yield until the process
// looks idle again. Measured, that was a third of sqlfwd's CPU per
// statement (docs/performance.md, "Where one statement's CPU goes"). A
// relay socket is non-blocking, so a raw call returns at once; on EAGAIN
// the callback returns false and the poller parks the goroutine exactly
// as net.Conn does. Deadlines and Close work as on the net.Conn, which IO
// embeds for everything else.
//
// One goroutine may read while another writes (each direction keeps its
// own state), as a net.Conn allows one reader and one writer at a time.
//
// With stamps on (NewIO's stamp, the client leg of a TCP session), the
// socket has SO_TIMESTAMPNS set and reads are recvmsg(2) calls that bring
// the kernel's receive time of the last segment they copied: when the
// bytes that completed a read reached the socket, before sqlfwd's runtime
// woke up to read them. Arrived returns it. The daemon counts a
// statement's held time from it, so that a wait for CPU between the
// arrival and the read (a throttled CFS period, a busy run queue) is part
// of the statement's time (docs/stats.md). Unix-domain stream sockets
// carry no receive time (the kernel stamps none), and neither do bytes a
// sockmap program redirected, nor the first segments after the first
// socket of the host asked for stamps (the kernel turns them on in
// deferred work): Arrived is then 0.
type IO struct {
	net.Conn
	rc syscall.RawConn

	// read state: toServer's or toClient's, one reader at a time
	rp      []byte
	rn      int
	rerrno  syscall.Errno
	readFn  func(uintptr) bool
	stamp   bool
	msg     syscall.Msghdr
	iov     syscall.Iovec
	oob     [cmsgStampSpace]byte
	arrived int64

	// write state
	wp      []byte
	wn      int
	werrno  syscall.Errno
	writeFn func(uintptr) bool
}

// cmsgStampSpace is CMSG_SPACE(sizeof(struct timespec)) on 64-bit Linux: a
// 16-byte cmsghdr and the timespec.
const cmsgStampSpace = 32

// NewIO wraps a plain TCP or unix-socket connection; anything else (a TLS
// connection, a pipe in a test) is returned as it is and keeps net's
// path. stamp asks for the receive time of what is read (Arrived); where
// the socket cannot give it the connection is still wrapped without.
//
// A TLS leg gets the same raw calls from below: the sessions hand
// crypto/tls an IO of the socket (tls.Server(NewIO(c, stamp), cfg)), so
// every record it reads or writes is one raw call, and the relay loops'
// NewIO of the *tls.Conn leaves it as it is. tls.Conn's deadlines and
// Close reach the socket through IO's embedded connection; its CloseWrite
// sends close_notify and leaves the socket open, as before.
func NewIO(c net.Conn, stamp bool) net.Conn {
	var sc syscall.Conn
	switch t := c.(type) {
	case *net.TCPConn:
		sc = t
	case *net.UnixConn:
		sc = t
		stamp = false // no receive times on unix stream sockets
	default:
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	r := &IO{Conn: c, rc: rc}
	r.readFn, r.writeFn = r.doRead, r.doWrite
	if stamp {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
		}); err == nil && serr == nil {
			r.stamp = true
			r.msg.Iov = &r.iov
			r.msg.Iovlen = 1
		}
	}
	return r
}

// Arrived returns when the bytes of c's last read reached its socket, in
// Unix nanoseconds of the real-time clock (the kernel's receive time), or
// 0 when c is not an IO with stamps or the read brought none. A connection
// over an IO (a *tls.Conn, anything with NetConn) answers for the IO's
// last read: the socket read that brought the record c's last read
// decrypted, or a later one. Only the reading goroutine may call it.
func Arrived(c net.Conn) int64 {
	for {
		switch t := c.(type) {
		case *IO:
			return t.arrived
		case interface{ NetConn() net.Conn }:
			c = t.NetConn()
		default:
			return 0
		}
	}
}

func (c *IO) doRead(fd uintptr) bool {
	for {
		var n uintptr
		var e syscall.Errno
		if c.stamp {
			c.iov.Base = &c.rp[0]
			c.iov.SetLen(len(c.rp))
			c.msg.Control = &c.oob[0]
			c.msg.SetControllen(len(c.oob))
			n, _, e = syscall.RawSyscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&c.msg)), 0)
		} else {
			n, _, e = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.rp[0])), uintptr(len(c.rp)))
		}
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.rn, c.rerrno = int(n), e
		if c.stamp {
			c.arrived = 0
			if e == 0 && n > 0 {
				c.arrived = c.stampOf()
			}
			c.iov.Base, c.msg.Control = nil, nil
		}
		return true
	}
}

// stampOf reads the SCM_TIMESTAMPNS control message recvmsg left in oob.
func (c *IO) stampOf() int64 {
	if c.msg.Controllen < cmsgStampSpace {
		return 0
	}
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&c.oob[0]))
	if h.Level != syscall.SOL_SOCKET || h.Type != syscall.SCM_TIMESTAMPNS {
		return 0
	}
	ts := (*syscall.Timespec)(unsafe.Pointer(&c.oob[syscall.SizeofCmsghdr]))
	return ts.Nano()
}

func (c *IO) doWrite(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.wp[0])), uintptr(len(c.wp)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.wn, c.werrno = int(n), e
		return true
	}
}

// Read reads what the socket has, waiting for it as net.Conn.Read does.
func (c *IO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rp = p
	err := c.rc.Read(c.readFn)
	c.rp = nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case c.rerrno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", c.rerrno))
	case c.rn == 0:
		return 0, io.EOF
	}
	return c.rn, nil
}

// Write writes all of p, waiting for room as net.Conn.Write does.
func (c *IO) Write(p []byte) (int, error) {
	total := 0
	for total < len(p) {
		c.wp = p[total:]
		err := c.rc.Write(c.writeFn)
		c.wp = nil
		switch {
		case err != nil:
			return total, c.opError("write", err)
		case c.werrno != 0:
			return total, c.opError("write", os.NewSyscallError("write", c.werrno))
		}
		total += c.wn
	}
	return total, nil
}

// opError says what net.Conn would: the RawConn's own error (net.ErrClosed,
// os.ErrDeadlineExceeded) or the errno, in a *net.OpError.
func (c *IO) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// CloseWrite half-closes the socket, as TCP and unix connections do.
func (c *IO) CloseWrite() error {
	return c.Conn.(interface{ CloseWrite() error }).CloseWrite()
}

var _ net.Conn = (*IO)(nil)
