package pg

// A regular message is one type byte, then a big-endian int32 length that
// counts itself and the body but not the type byte:
//
//	'Q' 00 00 00 0d  s e l e c t   1 00      Query "select 1"
//
// The Framer reads such messages from one direction of a connection into a
// reusable buffer. Messages whose type the caller wants come back whole;
// the rest are passed over and stay in the buffer as "pending" bytes, which
// the caller forwards in one write per read. A passed-over message that is
// larger than the buffer is streamed: its bytes become pending as they
// arrive, so a large DataRow or CopyData never has to fit in memory.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/sqlfw/sqlfw/internal/framebuf"
)

const (
	// HeaderLen is the type byte plus the int32 length.
	HeaderLen = 5
	// DefaultMaxMessage bounds a message the firewall must hold whole. The
	// server's own limit for most client messages is PQ_LARGE_MESSAGE_LIMIT
	// (MaxAllocSize-1, about 1 GiB, src/include/libpq/libpq.h); we refuse
	// sooner because a whole statement is held in memory to be judged.
	DefaultMaxMessage = 64 << 20
	// DefaultBufferSize is the framer's buffer: large enough for a typical
	// result batch, small enough for thousands of connections.
	DefaultBufferSize = 32 << 10
	// shrinkAbove: a buffer grown past this for one big message is dropped
	// after it, so one huge statement does not pin memory for the session.
	shrinkAbove = 1 << 20
)

// ErrFrame reports a malformed or oversized message; the connection it came
// from cannot be trusted to stay in sync and must be closed.
var ErrFrame = errors.New("malformed message")

// FrameError says what was wrong with a message header.
type FrameError struct {
	Type   byte
	Length int64
	Max    int
	// Unknown: the type is not one the peer may send (SetTypes).
	Unknown bool
}

func (e *FrameError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("malformed message: unknown message type %q", e.Type)
	}
	if e.Length < 4 {
		return fmt.Sprintf("malformed message: type %q has length %d (less than 4)", e.Type, e.Length)
	}
	return fmt.Sprintf("message too large: type %q has length %d, limit %d", e.Type, e.Length, e.Max)
}

func (e *FrameError) Unwrap() error { return ErrFrame }

// Framer reads messages from src. It is not safe for concurrent use.
type Framer struct {
	src io.Reader
	buf []byte
	// buf[mark:r] is pending: passed over, not yet taken by the caller.
	// buf[r:w] is read but not yet scanned.
	mark, r, w int
	// stream counts body bytes of a passed-over message that have not
	// arrived yet; they are pending as soon as they do.
	stream int64
	// maxWanted bounds messages returned whole; maxPassed bounds messages
	// passed over (0: no bound beyond the protocol's int32).
	maxWanted, maxPassed int
	initSize             int
	// home is the buffer of initSize the Framer was made with, taken up
	// again when it shrinks; a grown buffer comes from and goes back to
	// internal/framebuf.
	home []byte
	// types, when set, lists the message types the peer may send.
	types *[256]bool
	// budget, when set, is charged for the buffer beyond initSize;
	// reserved is what this Framer holds of it.
	budget   Budget
	reserved int
}

// Budget is memory shared by many Framers: a Framer that must grow its
// buffer to hold a wanted message reserves the growth first, and gives it
// back when the buffer shrinks or on Close. Reserve may wait for others to
// release (back-pressure: the Framer's source is not read meanwhile) and
// fails with an error when it cannot have n bytes.
type Budget interface {
	Reserve(n int) error
	Release(n int)
}

// ErrBudget wraps a Budget's refusal: the message could not be held.
var ErrBudget = errors.New("message memory exhausted")

// SetLimits changes the bounds of NewFramer (for example once a session has
// authenticated). Messages already returned are not affected.
func (f *Framer) SetLimits(maxWanted, maxPassed int) {
	if maxWanted <= 0 {
		maxWanted = DefaultMaxMessage
	}
	f.maxWanted, f.maxPassed = maxWanted, maxPassed
}

// SetTypes makes every message whose type is not set in types an error.
func (f *Framer) SetTypes(types *[256]bool) { f.types = types }

// SetBudget charges the buffer's growth beyond its initial size to b.
func (f *Framer) SetBudget(b Budget) { f.budget = b }

// Close gives back what the Framer holds of its Budget; the Framer is not
// used after it.
func (f *Framer) Close() {
	f.buf, f.home = nil, nil // dropped before it is released
	f.mark, f.r, f.w, f.stream = 0, 0, 0, 0
	if f.budget != nil && f.reserved > 0 {
		f.budget.Release(f.reserved)
		f.reserved = 0
	}
}

// resize replaces the buffer by one of size bytes holding its first keep
// bytes. With a budget, the new buffer is reserved before it is allocated
// and the old one released only once it is dropped, so the reservation
// covers both while they are both alive.
func (f *Framer) resize(size, keep int) error {
	want := max(size-f.initSize, 0)
	if f.budget != nil && want > 0 {
		if err := f.budget.Reserve(want); err != nil {
			return fmt.Errorf("%w: %w", ErrBudget, err)
		}
	}
	nb := f.home
	if size != len(nb) {
		nb = framebuf.Get(size)
	}
	copy(nb, f.buf[:keep])
	old := f.buf
	f.buf = nb
	if len(old) > 0 && len(f.home) > 0 && &old[0] != &f.home[0] {
		framebuf.Put(old) // nothing holds it: a message is valid until the next Fill
	}
	if f.budget != nil {
		if f.reserved > 0 {
			f.budget.Release(f.reserved)
		}
		f.reserved = want
	}
	return nil
}

// NewFramer returns a Framer over src with a buffer of size bytes (0 means
// DefaultBufferSize). Wanted messages larger than maxWanted and passed-over
// messages larger than maxPassed (0: unbounded) are errors.
func NewFramer(src io.Reader, size, maxWanted, maxPassed int) *Framer {
	if size <= 0 {
		size = DefaultBufferSize
	}
	if size < HeaderLen {
		size = HeaderLen
	}
	if maxWanted <= 0 {
		maxWanted = DefaultMaxMessage
	}
	buf := make([]byte, size)
	return &Framer{src: src, buf: buf, home: buf, maxWanted: maxWanted, maxPassed: maxPassed, initSize: size}
}

// Fill reads at least one byte from the source. Pending bytes must have been
// taken (Take) before: Fill moves unscanned bytes to the front of the buffer,
// growing it when a wanted message does not fit.
func (f *Framer) Fill() error {
	if f.mark != f.r {
		panic("pg: Fill with pending bytes not taken")
	}
	need := 0
	if f.stream == 0 && f.w-f.r >= HeaderLen {
		// a wanted message is incomplete: make room for all of it
		need = 1 + int(binary.BigEndian.Uint32(f.buf[f.r+1:]))
	}
	if f.r > 0 {
		n := copy(f.buf, f.buf[f.r:f.w])
		f.mark, f.r, f.w = 0, 0, n
	}
	if need > len(f.buf) && f.w == len(f.buf) {
		// Grow with the data, not with the length the header claims, so a
		// peer cannot make us allocate 64 MiB by sending five bytes.
		// A size framebuf keeps is taken whole: the buffer is then reused
		// by the next message this large, not allocated again.
		size := 2 * len(f.buf)
		if size > need && !framebuf.Pooled(size) {
			size = need
		}
		if err := f.resize(size, f.w); err != nil {
			return err
		}
	} else if len(f.buf) > f.initSize && f.w <= f.initSize && need <= f.initSize && (len(f.buf) > shrinkAbove || f.budget != nil) {
		// Budgeted buffers give their growth back as soon as it is not
		// needed; others keep up to shrinkAbove to save reallocations.
		_ = f.resize(f.initSize, f.w)
	}
	n, err := f.src.Read(f.buf[f.w:])
	f.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// Next scans buffered bytes. It returns the next whole message whose type
// is set in want (header included; valid until the next Fill), or nil when
// the buffered bytes are used up and Fill must be called. Messages not
// wanted become pending. A wanted message is not pending: the caller takes
// the bytes before it with TakeBefore and decides what to send in its place.
func (f *Framer) Next(want *[256]bool) ([]byte, error) {
	for {
		if f.stream > 0 {
			n := int64(f.w - f.r)
			if n > f.stream {
				n = f.stream
			}
			f.r += int(n)
			f.stream -= n
			if f.stream > 0 {
				return nil, nil
			}
		}
		avail := f.w - f.r
		if avail < HeaderLen {
			return nil, nil
		}
		typ := f.buf[f.r]
		length := int64(binary.BigEndian.Uint32(f.buf[f.r+1:]))
		if f.types != nil && !f.types[typ] {
			return nil, &FrameError{Type: typ, Length: length, Unknown: true}
		}
		if length < 4 {
			return nil, &FrameError{Type: typ, Length: length}
		}
		total := 1 + length
		if want[typ] {
			if length > int64(f.maxWanted) {
				return nil, &FrameError{Type: typ, Length: length, Max: f.maxWanted}
			}
			if int64(avail) < total {
				return nil, nil
			}
			msg := f.buf[f.r : f.r+int(total)]
			f.r += int(total)
			return msg, nil
		}
		if f.maxPassed > 0 && length > int64(f.maxPassed) {
			return nil, &FrameError{Type: typ, Length: length, Max: f.maxPassed}
		}
		if int64(avail) >= total {
			f.r += int(total)
			continue
		}
		f.stream = total - int64(avail)
		f.r = f.w
		return nil, nil
	}
}

// Pending returns the bytes passed over since the last Take, and marks them
// taken. The slice is valid until the next Fill.
func (f *Framer) Take() []byte {
	p := f.buf[f.mark:f.r]
	f.mark = f.r
	return p
}

// TakeBefore returns the pending bytes that precede msg, the message Next
// just returned, and marks them and msg taken.
func (f *Framer) TakeBefore(msg []byte) []byte {
	end := f.r - len(msg)
	p := f.buf[f.mark:end]
	f.mark = f.r
	return p
}

// TakeUntil returns the pending bytes that precede msg, the message Next
// just returned, and marks them taken; msg stays pending.
func (f *Framer) TakeUntil(msg []byte) []byte {
	end := f.r - len(msg)
	p := f.buf[f.mark:end]
	f.mark = end
	return p
}

// MidMessage reports whether part of a passed-over message has been
// handed out as pending and the rest has not arrived: a peer reading what
// was forwarded is inside a message.
func (f *Framer) MidMessage() bool { return f.stream > 0 }

// Buffered reports how many scanned-or-not bytes sit in the buffer; tests
// use it to check that nothing is left behind.
func (f *Framer) Buffered() int { return f.w - f.mark }
