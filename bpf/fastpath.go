package bpf

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// fastSlots is FAST_SLOTS in fastpath.c.
const fastSlots = 4096

// Fast is the experimental server-to-client fast path (fastpath.c; doc.go
// "Fast path"): one verdict program on the daemon's upstream sockets that
// redirects, in the kernel, what user space need not see to the daemon's
// client leg. Attach puts one session on it.
type Fast struct {
	objs                          fastpathObjects
	mem                           []byte // fast_slots, mmapped
	redirect                      *Redirect
	sessions, bytes, ready, halts atomic.Uint64

	mu       sync.Mutex
	attached bool
	closing  bool
	free     []uint32 // all fastSlots of them once every leg is closed
}

// LoadFast loads the fast path. r, when it splices client legs (Sockmap),
// is told to keep each attached session's client leg on TCP: the kernel's
// writes to it go through TCP, and user space's must too, so that the
// client reads both in the order they were written.
func LoadFast(r *Redirect) (*Fast, error) {
	f := &Fast{redirect: r}
	if err := loadFastpathObjects(&f.objs, nil); err != nil {
		return nil, classify(fmt.Errorf("loading fastpath objects: %w", err))
	}
	mem, err := unix.Mmap(f.objs.FastSlots.FD(), 0, fastSlots*int(unsafe.Sizeof(fastpathFastSlot{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.objs.Close()
		return nil, fmt.Errorf("mmap fast_slots: %w", err)
	}
	f.mem = mem
	err = link.RawAttachProgram(link.RawAttachProgramOptions{
		Target: f.objs.FastIn.FD(), Program: f.objs.FastVerdict, Attach: ebpf.AttachSkSKBVerdict,
	})
	if err != nil {
		_ = unix.Munmap(f.mem)
		f.objs.Close()
		return nil, classify(fmt.Errorf("attaching sk_skb verdict to fast_in: %w", err))
	}
	f.attached = true
	for i := range fastSlots {
		f.free = append(f.free, uint32(i))
	}
	return f, nil
}

// Close detaches the program (sessions attached until then keep their
// fast path: a socket keeps the programs it was linked with) and frees the
// maps once no session is attached; a session closed later frees them.
func (f *Fast) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.attached {
		_ = link.RawDetachProgram(link.RawDetachProgramOptions{
			Target: f.objs.FastIn.FD(), Program: f.objs.FastVerdict, Attach: ebpf.AttachSkSKBVerdict,
		})
		f.attached = false
	}
	f.closing = true
	return f.freeLocked()
}

func (f *Fast) freeLocked() error {
	if !f.closing || len(f.free) != fastSlots || f.mem == nil {
		return nil
	}
	_ = unix.Munmap(f.mem)
	f.mem = nil
	return f.objs.Close()
}

func (f *Fast) slot(i uint32) *fastpathFastSlot {
	return (*fastpathFastSlot)(unsafe.Pointer(&f.mem[uintptr(i)*unsafe.Sizeof(fastpathFastSlot{})]))
}

// FastCounters are totals since LoadFast.
type FastCounters struct {
	Sessions uint64 // attached
	Bytes    uint64 // relayed by the kernel to clients
	Ready    uint64 // ReadyForQuery messages among them
	Halts    uint64 // halts that found the kernel relaying
}

// Counters reads the totals.
func (f *Fast) Counters() FastCounters {
	return FastCounters{f.sessions.Load(), f.bytes.Load(), f.ready.Load(), f.halts.Load()}
}

// FastLeg is one session on the fast path. The slot starts off: every byte
// from the server goes to user space until Resume.
type FastLeg struct {
	f      *Fast
	slot   uint32
	cookie uint64
	st     *fastpathFastSlot
	client syscall.Conn

	mu      sync.Mutex
	armed   bool   // Resume since the last Halt
	gen     uint64 // arm generations asked for
	base    uint64 // the client leg's bytes written when attached
	wrote   uint64 // bytes user space wrote to the client leg since
	redir   uint64 // redirected bytes already reported
	ready   uint64 // ReadyForQuery messages already reported
	closed  bool
	pending FastPrefix
}

// FastReport is what the kernel did while the slot was on, given by Halt.
type FastReport struct {
	// Ready is the number of ReadyForQuery messages it sent to the client,
	// all with transaction status Status (the one Resume was given).
	Ready  uint64
	Status byte
	// Redirected is the number of bytes it sent to the client.
	Redirected uint64
}

// FastPrefix is where the first byte user space reads after a Halt stands
// within the message the kernel was relaying: Need length bytes still to
// come (Acc those already seen), or Rem body bytes. These bytes belong to
// a message whose beginning the client already has: user space forwards
// them as they are.
type FastPrefix struct {
	Rem, Need, Acc uint64
}

// Attach puts a session on the fast path: server is the daemon's upstream
// socket (plaintext TCP, before anything was read from it), client the
// daemon's leg to the client. Call before the server sends anything.
func (f *Fast) Attach(server, client net.Conn) (*FastLeg, error) {
	sc, ok1 := server.(syscall.Conn)
	cc, ok2 := client.(syscall.Conn)
	if !ok1 || !ok2 {
		return nil, errors.New("fast path: not sockets")
	}
	var cookie uint64
	if err := control(sc, func(fd int) (err error) {
		cookie, err = unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_COOKIE)
		return err
	}); err != nil {
		return nil, err
	}
	f.mu.Lock()
	if f.closing || len(f.free) == 0 {
		f.mu.Unlock()
		return nil, errors.New("fast path: no free slot")
	}
	// Oldest freed first: a slot is reused as late as possible (see the
	// cookie check in fastpath.c).
	slot := f.free[0]
	f.free = f.free[1:]
	f.mu.Unlock()
	l := &FastLeg{f: f, slot: slot, cookie: cookie, st: f.slot(slot), client: cc}
	// A late run on an earlier session's socket may still be inside the
	// slot: busy stays (its runs undo their own count), the rest starts
	// afresh, and the cookie tells that run the slot is no longer its.
	st := l.st
	for _, p := range []*uint64{&st.OffReq, &st.ArmReq, &st.ArmRead, &st.ArmStatus, &st.On, &st.ArmDone, &st.Passed,
		&st.Redirected, &st.Ready, &st.Status, &st.Rem, &st.HdrNeed, &st.HdrAcc} {
		atomic.StoreUint64(p, 0)
	}
	atomic.StoreUint64(&st.Cookie, cookie)
	if f.redirect != nil {
		if err := f.redirect.keepTCP(client); err != nil {
			l.release()
			return nil, err
		}
	}
	var err error
	if l.base, err = writtenBytes(cc); err != nil {
		l.release()
		return nil, err
	}
	if err := control(cc, func(fd int) error { return f.objs.FastOut.Update(slot, uint64(fd), ebpf.UpdateAny) }); err != nil {
		l.release()
		return nil, fmt.Errorf("fast path: client leg: %w", err)
	}
	if err := f.objs.FastSlotByCookie.Update(cookie, slot, ebpf.UpdateAny); err != nil {
		l.release()
		return nil, fmt.Errorf("fast path: %w", err)
	}
	if err := control(sc, func(fd int) error { return f.objs.FastIn.Update(slot, uint64(fd), ebpf.UpdateAny) }); err != nil {
		l.release()
		return nil, fmt.Errorf("fast path: server leg: %w", err)
	}
	f.sessions.Add(1)
	return l, nil
}

func (l *FastLeg) release() {
	f := l.f
	atomic.StoreUint64(&l.st.Cookie, 0)
	_ = f.objs.FastSlotByCookie.Delete(l.cookie)
	_ = f.objs.FastIn.Delete(l.slot)
	_ = f.objs.FastOut.Delete(l.slot)
	f.mu.Lock()
	f.free = append(f.free, l.slot)
	_ = f.freeLocked()
	f.mu.Unlock()
}

// Close takes the session off the fast path, for good; call it when the
// session ends (its sockets closed or about to be).
func (l *FastLeg) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	atomic.StoreUint64(&l.st.OffReq, 1)
	l.waitIdle()
	l.f.bytes.Add(atomic.LoadUint64(&l.st.Redirected) - l.redir)
	l.f.ready.Add(atomic.LoadUint64(&l.st.Ready) - l.ready)
	l.release()
}

// Wrote counts n bytes user space wrote to the client leg. Every write to
// it must be counted (Halt waits for the kernel's and these), and made
// only after a Halt since the last Resume.
func (l *FastLeg) Wrote(n int) {
	l.mu.Lock()
	l.wrote += uint64(n)
	l.mu.Unlock()
}

// Resume asks the kernel to relay again from the next segment on, once it
// has passed user space no more than read bytes (everything user space
// has read, at a message boundary, all of it written to the client).
// status is the session's transaction status: the kernel relays only
// ReadyForQuery messages that repeat it. ok
// is evaluated under the leg's lock, which Halt takes too: a condition
// that a Halt's caller sets before it calls Halt is seen here.
func (l *FastLeg) Resume(read uint64, status byte, ok func() bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.armed || !ok() {
		return
	}
	l.gen++
	atomic.StoreUint64(&l.st.OffReq, 0)
	atomic.StoreUint64(&l.st.ArmRead, read)
	atomic.StoreUint64(&l.st.ArmStatus, uint64(status))
	atomic.StoreUint64(&l.st.ArmReq, l.gen)
	l.armed = true
}

// Halt stops the kernel relaying and returns once everything it relayed
// is in the client leg's socket, ahead of anything user space writes
// next. It reports what the kernel did since the last Halt (nothing if
// the slot was not asked on since). The prefix for the next read is kept
// for TakePrefix. apply, when not nil, gets the report under the leg's
// lock, before any other Halt returns: what it does to the session's state
// precedes whatever the caller of a later Halt does.
func (l *FastLeg) Halt(apply func(FastReport)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.armed || l.closed {
		return nil
	}
	l.armed = false
	atomic.StoreUint64(&l.st.OffReq, 1)
	l.waitIdle()
	st := l.st
	var r FastReport
	if atomic.LoadUint64(&st.ArmDone) == l.gen {
		// The slot was on: the first byte passed since stands where the
		// kernel stopped.
		l.pending = FastPrefix{Rem: atomic.LoadUint64(&st.Rem), Need: atomic.LoadUint64(&st.HdrNeed), Acc: atomic.LoadUint64(&st.HdrAcc)}
	}
	red, rdy := atomic.LoadUint64(&st.Redirected), atomic.LoadUint64(&st.Ready)
	r.Redirected, r.Ready, r.Status = red-l.redir, rdy-l.ready, byte(atomic.LoadUint64(&st.Status))
	l.redir, l.ready = red, rdy
	l.f.halts.Add(1)
	l.f.bytes.Add(r.Redirected)
	l.f.ready.Add(r.Ready)
	if apply != nil {
		apply(r)
	}
	want := l.base + l.wrote + red
	for i := 0; ; i++ {
		got, err := writtenBytes(l.client)
		if err != nil {
			return err
		}
		if got >= want {
			return nil
		}
		if i > 100000 { // 100k polls, seconds: the client leg is stuck
			return fmt.Errorf("fast path: client leg has %d of %d bytes after halt", got-l.base, want-l.base)
		}
		if i < 50 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// TakePrefix returns, once, the prefix the last Halt found.
func (l *FastLeg) TakePrefix() FastPrefix {
	l.mu.Lock()
	p := l.pending
	l.pending = FastPrefix{}
	l.mu.Unlock()
	return p
}

// waitIdle waits until no program run is in progress: after a store of
// off_req, the runs that started before it have finished and later ones
// see it (both are sequentially consistent atomics).
func (l *FastLeg) waitIdle() {
	for i := 0; atomic.LoadUint64(&l.st.Busy) != 0; i++ {
		if i < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(10 * time.Microsecond)
		}
	}
}

// writtenBytes is how many bytes have been written into a TCP socket since
// it was established: acknowledged plus still queued. Read in that order,
// the sum is never more than the true count at the second read.
func writtenBytes(c syscall.Conn) (uint64, error) {
	var acked uint64
	var outq int
	err := control(c, func(fd int) error {
		ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
		if err != nil {
			return err
		}
		acked = ti.Bytes_acked
		outq, err = unix.IoctlGetInt(fd, unix.SIOCOUTQ)
		return err
	})
	return acked + uint64(outq), err
}

// keepTCP lists the daemon's side of a client leg in relay_tcp_only, so
// that its sendmsg calls go through TCP rather than straight into the
// client's receive queue (which the client reads before TCP data).
func (r *Redirect) keepTCP(c net.Conn) error {
	if r.msgTarget < 0 {
		return nil // not spliced
	}
	la, ok1 := c.LocalAddr().(*net.TCPAddr)
	ra, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return errors.New("fast path: client leg is not TCP")
	}
	k := tupleKey(la.AddrPort(), ra.AddrPort())
	return r.objs.RelayTcpOnly.Update(k, uint8(1), ebpf.UpdateAny)
}

func tupleKey(local, remote netip.AddrPort) redirectTupleKey {
	var k redirectTupleKey
	l, r := local.Addr().Unmap(), remote.Addr().Unmap()
	k.LocalPort, k.RemotePort = uint32(local.Port()), uint32(remote.Port())
	if l.Is4() {
		k.Family = unix.AF_INET
		k.LocalIp[0], k.RemoteIp[0] = ip4Word(l), ip4Word(r)
		return k
	}
	k.Family = unix.AF_INET6
	k.LocalIp, k.RemoteIp = ip6Words(l), ip6Words(r)
	return k
}
