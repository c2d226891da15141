package daemon

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a socket with raw read(2) and write(2) calls,
// made from inside the poller's RawConn callbacks. The net package's own
// Read and Write enter the runtime's system-call state on every call, and
// when the process was idle that wakes the runtime's monitor thread
// (sysmon), which then spins and sleeps: at a few thousand statements a
// second that cost sqlfwd more CPU than the relay itself (perf, in
// docs/performance.md). A socket here is non-blocking, so the calls return
// at once (EAGAIN means wait, and the poller waits as it always does);
// deadlines and Close work as on the net.Conn.
//
// One goroutine may read while another writes; reads and writes each keep
// their own state, as a net.Conn allows one reader and one writer.
type rawIO struct {
	net.Conn
	rc syscall.RawConn

	rp     []byte
	rn     int
	rerrno syscall.Errno
	readFn func(uintptr) bool

	wp      []byte
	wn      int
	werrno  syscall.Errno
	writeFn func(uintptr) bool
}

// newRawIO wraps c when it exposes its socket; otherwise it returns c.
func newRawIO(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	r := &rawIO{Conn: c, rc: rc}
	r.readFn = r.doRead
	r.writeFn = r.doWrite
	return r
}

func (c *rawIO) doRead(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.rp[0])), uintptr(len(c.rp)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.rn, c.rerrno = int(n), e
		return true
	}
}

func (c *rawIO) doWrite(fd uintptr) bool {
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

// Read reads what the socket has, waiting for it like net.Conn.Read.
func (c *rawIO) Read(p []byte) (int, error) {
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

// Write writes all of p, waiting for room like net.Conn.Write.
func (c *rawIO) Write(p []byte) (int, error) {
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

func (c *rawIO) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
