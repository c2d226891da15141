package mysql

// A packet is a 3-byte little-endian payload length, a sequence id, then the
// payload:
//
//	01 00 00 00 01                     COM_QUIT, sequence id 0
//	09 00 00 00 03 73 65 6c 65 63 74 20 31   COM_QUERY "select 1"
//
// A payload of 16 MiB-1 (0xffffff) bytes or more is sent as fragments: every
// fragment but the last is exactly 0xffffff bytes long, and the last is
// shorter (possibly empty). The fragments together are one logical packet.
// Sequence ids count every fragment of an exchange, in both directions,
// modulo 256: a command starts at 0, its response continues at the next id,
// and so does each later packet of the same exchange (a LOCAL INFILE upload,
// an authentication round).
//
// The Framer reads logical packets from one direction of a connection into
// a reusable buffer, the way wire/pg's Framer reads messages: packets whose
// first payload byte the caller wants come back whole (headers included,
// ready to forward); the rest are passed over and stay in the buffer as
// "pending" bytes, which the caller forwards in one write per read. A
// passed-over packet larger than the buffer is streamed, so a large row
// never has to fit in memory. The Framer checks every fragment's sequence
// id and can renumber them on their way through.
//
// See "MySQL Packets" in MySQL's client/server protocol documentation and
// "0 - Packet" in MariaDB's.

import (
	"errors"
	"fmt"
	"io"

	"github.com/sqlfw/sqlfw/internal/framebuf"
)

const (
	// HeaderLen is the 3-byte length and the sequence id
	// (NET_HEADER_SIZE, include/mysql_com.h).
	HeaderLen = 4
	// MaxFragment is the largest payload of one packet; a fragment this
	// long is followed by another of the same logical packet
	// (MAX_PACKET_LENGTH, include/mysql_com.h).
	MaxFragment = 0xffffff
	// DefaultMaxPacket bounds a logical packet the firewall must hold
	// whole. The server's own bound is max_allowed_packet, at most 1 GiB
	// (sql/sys_vars.cc); we refuse sooner because a whole statement is held
	// in memory to be judged.
	DefaultMaxPacket = 64 << 20
	// DefaultBufferSize is the framer's buffer: large enough for a typical
	// result batch, small enough for thousands of connections.
	DefaultBufferSize = 32 << 10
	// minBuffer holds a header and the payload's first byte, which decides
	// whether a packet is wanted.
	minBuffer = HeaderLen + 1
	// shrinkAbove: a buffer grown past this for one big packet is dropped
	// after it, so one huge statement does not pin memory for the session.
	shrinkAbove = 1 << 20
)

// SeqAny, given to Expect, accepts whatever sequence id the next packet
// carries.
const SeqAny = -1

// ErrFrame reports a malformed or oversized packet, or one out of sequence;
// the connection it came from cannot be trusted to stay in sync and must be
// closed.
var ErrFrame = errors.New("malformed packet")

// FrameError says what was wrong with a packet header.
type FrameError struct {
	// First is the first payload byte of the logical packet (a command
	// byte from a client, a packet header byte from a server).
	First byte
	// Length is the logical payload length as far as it was known.
	Length int64
	Max    int
	// Unknown: First is not a type the peer may send (SetTypes).
	Unknown bool
	// Seq is the sequence id found where WantSeq was expected
	// (OutOfSequence), or the one a packet too large began with, as the
	// peer sent it (the error a server answers it with follows it).
	Seq, WantSeq  int
	OutOfSequence bool
}

func (e *FrameError) Error() string {
	switch {
	case e.OutOfSequence:
		return fmt.Sprintf("packet out of sequence: sequence id %d, expected %d", e.Seq, e.WantSeq)
	case e.Unknown:
		return fmt.Sprintf("malformed packet: unknown packet type 0x%02x", e.First)
	}
	return fmt.Sprintf("packet too large: type 0x%02x has length %d or more, limit %d", e.First, e.Length, e.Max)
}

func (e *FrameError) Unwrap() error { return ErrFrame }

// TooLarge reports a packet longer than the Framer's bound (what a server
// answers with ER_NET_PACKET_TOO_LARGE).
func (e *FrameError) TooLarge() bool { return !e.Unknown && !e.OutOfSequence }

// Budget is memory shared by many Framers, with the meaning of wire/pg's
// Budget (the two interfaces have the same method set, so one value serves
// both): a Framer that must grow its buffer to hold a wanted packet reserves
// the growth first, and gives it back when the buffer shrinks or on Close.
type Budget interface {
	Reserve(n int) error
	Release(n int)
}

// ErrBudget wraps a Budget's refusal: the packet could not be held.
var ErrBudget = errors.New("packet memory exhausted")

// Framer reads logical packets from src. It is not safe for concurrent use.
type Framer struct {
	src io.Reader
	buf []byte
	// buf[mark:r] is pending: passed over, not yet taken by the caller.
	// buf[r:w] is read but not yet scanned.
	mark, r, w int
	// stream counts payload bytes of a passed-over fragment that have not
	// arrived yet; they are pending as soon as they do. cont: the
	// fragment being passed over is full, so another fragment of the
	// same logical packet follows. passed is that packet's length so far.
	stream int64
	cont   bool
	passed int64
	// need is how many bytes from r the wanted packet at r needs, as far
	// as its headers are known (0: nothing wanted is waiting).
	need int
	// expect is the sequence id the next fragment must carry (SeqAny:
	// any); each, when not SeqAny, is what every logical packet must
	// start with (ExpectCommands). shift is added to every sequence id on
	// its way through (Renumber).
	expect, each int
	shift        byte
	// noSeq: sequence ids are not checked (SetSeqChecks).
	noSeq bool
	// wantLong: a logical packet of more than one fragment can be wanted
	// (SetWantLong).
	wantLong bool
	// maxWanted bounds packets returned whole; maxPassed bounds packets
	// passed over (0: no bound).
	maxWanted, maxPassed int
	initSize             int
	// home is the buffer of initSize the Framer was made with, taken up
	// again when it shrinks; a grown buffer comes from and goes back to
	// internal/framebuf.
	home []byte
	// types, when set, lists the first payload bytes the peer may send.
	types *[256]bool
	// budget, when set, is charged for the buffer beyond initSize;
	// reserved is what this Framer holds of it.
	budget   Budget
	reserved int
}

// NewFramer returns a Framer over src with a buffer of size bytes (0 means
// DefaultBufferSize). Wanted packets larger than maxWanted (0 means
// DefaultMaxPacket) and passed-over packets larger than maxPassed (0:
// unbounded) are errors. It accepts any sequence id on the first packet and
// consecutive ones after it until told otherwise (Expect, ExpectCommands).
func NewFramer(src io.Reader, size, maxWanted, maxPassed int) *Framer {
	if size <= 0 {
		size = DefaultBufferSize
	}
	size = max(size, minBuffer)
	if maxWanted <= 0 {
		maxWanted = DefaultMaxPacket
	}
	buf := make([]byte, size)
	return &Framer{src: src, buf: buf, home: buf, maxWanted: maxWanted, maxPassed: maxPassed,
		initSize: size, expect: SeqAny, each: SeqAny, wantLong: true}
}

// SetLimits changes the bounds of NewFramer (for example to the client's
// max_allowed_packet once it is known).
func (f *Framer) SetLimits(maxWanted, maxPassed int) {
	if maxWanted <= 0 {
		maxWanted = DefaultMaxPacket
	}
	f.maxWanted, f.maxPassed = maxWanted, maxPassed
}

// SetTypes makes every logical packet whose first payload byte is not set in
// types an error (nil: any). Empty packets are not checked.
func (f *Framer) SetTypes(types *[256]bool) { f.types = types }

// SetWantLong(false) passes over every logical packet of more than one
// fragment (16 MiB or more) whatever its first byte. The server leg wants
// it: what the response phase reads (OK, EOF, ERR, column counts) is always
// short, while a text-protocol row whose first column is 16 MiB or longer
// starts with 0xfe, like an EOF.
func (f *Framer) SetWantLong(want bool) { f.wantLong = want }

// SetSeqChecks(false) stops checking sequence ids (they are still counted
// and renumbered). In a compressed session the packets inside compressed
// ones carry ids the peers do not check and a server does not keep
// consecutive across the two directions (compress.go); the compressed
// packets' own ids are the ones that count there.
func (f *Framer) SetSeqChecks(on bool) { f.noSeq = !on }

// SetBudget charges the buffer's growth beyond its initial size to b.
func (f *Framer) SetBudget(b Budget) { f.budget = b }

// Expect makes seq (0-255, or SeqAny) the sequence id the next fragment
// must carry; the ones after it must follow consecutively. It ends
// ExpectCommands. The relay calls it when the other direction has moved the
// exchange on: the server's reply to a command continues after the
// command's last id, a client's LOCAL INFILE data after the server's
// request, each authentication round after the other side's packet.
func (f *Framer) Expect(seq int) {
	f.expect, f.each = seq, SeqAny
}

// ExpectCommands makes every logical packet start at sequence id 0 (its
// fragments consecutive after it): the client leg between commands, where
// a client may send the next command before the previous response has been
// read, and where a command the relay answered itself leaves no trace.
func (f *Framer) ExpectCommands() {
	f.expect, f.each = 0, 0
}

// NextSeq returns the sequence id after the last fragment scanned: what a
// reply to the last packet carries.
func (f *Framer) NextSeq() int { return f.expect }

// Renumber adds delta to the sequence id of every fragment from the next
// one on, in the buffer, before it is forwarded (checking is against the ids
// as received, and NextSeq counts them as received, while the packets Next
// returns carry the new ids). A relay that sent the server a packet the
// client did not (or answered the client itself within an exchange) keeps
// both legs numbered this way. Renumber(0) stops it.
func (f *Framer) Renumber(delta int) { f.shift = byte(delta) }

// Close gives back what the Framer holds of its Budget; the Framer is not
// used after it.
func (f *Framer) Close() {
	f.buf, f.home = nil, nil // dropped before it is released
	f.mark, f.r, f.w, f.stream, f.cont, f.need = 0, 0, 0, 0, false, 0
	if f.budget != nil && f.reserved > 0 {
		f.budget.Release(f.reserved)
		f.reserved = 0
	}
}

// resize replaces the buffer by one of size bytes holding its first keep
// bytes. With a budget, the new buffer is reserved before it is allocated
// and the old one released only once it is dropped.
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

// Fill reads at least one byte from the source. Pending bytes must have been
// taken (Take) before: Fill moves unscanned bytes to the front of the
// buffer, growing it when a wanted packet does not fit.
func (f *Framer) Fill() error {
	if f.mark != f.r {
		panic("mysql: Fill with pending bytes not taken")
	}
	need := f.need
	if f.r > 0 {
		n := copy(f.buf, f.buf[f.r:f.w])
		f.mark, f.r, f.w = 0, 0, n
	}
	if need > len(f.buf) && f.w == len(f.buf) {
		// Grow with the data, not with the length the header claims, so a
		// peer cannot make us allocate 64 MiB by sending five bytes.
		// A size framebuf keeps is taken whole: the buffer is then reused
		// by the next packet this large, not allocated again.
		size := 2 * len(f.buf)
		if size > need && !framebuf.Pooled(size) {
			size = need
		}
		if err := f.resize(size, f.w); err != nil {
			return err
		}
	} else if len(f.buf) > f.initSize && f.w <= f.initSize && need <= f.initSize && (len(f.buf) > shrinkAbove || f.budget != nil) {
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

func le24(b []byte) int { return int(b[0]) | int(b[1])<<8 | int(b[2])<<16 }

// checkSeq checks the sequence id of the fragment whose header is at
// buf[at]; start says it begins a logical packet.
func (f *Framer) checkSeq(at int, start bool, first byte) error {
	if f.noSeq {
		return nil
	}
	want := f.expect
	if start && f.each != SeqAny {
		want = f.each
	}
	if seq := int(f.buf[at+3]); want != SeqAny && seq != want {
		return &FrameError{First: first, Seq: seq, WantSeq: want, OutOfSequence: true}
	}
	return nil
}

// consumeHeader advances the sequence state past the fragment header at
// buf[at] and renumbers it.
func (f *Framer) consumeHeader(at int) {
	seq := f.buf[at+3]
	f.expect = int(seq+1) & 0xff
	f.buf[at+3] = seq + f.shift
}

// Next scans buffered bytes. It returns the next whole logical packet whose
// first payload byte is set in want (headers included; valid until the next
// Fill), or nil when the buffered bytes are used up and Fill must be called.
// An empty packet (a header of length 0, which ends a LOCAL INFILE upload)
// is always returned. Packets not wanted become pending. A wanted packet is
// not pending: the caller takes the bytes before it with TakeBefore and
// decides what to send in its place.
func (f *Framer) Next(want *[256]bool) ([]byte, error) {
	f.need = 0
	for {
		if f.stream > 0 {
			n := min(int64(f.w-f.r), f.stream)
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
		n := le24(f.buf[f.r:])
		if f.cont {
			// the next fragment of a packet being passed over
			if err := f.checkSeq(f.r, false, 0); err != nil {
				return nil, err
			}
			f.passed += int64(n)
			if f.maxPassed > 0 && f.passed > int64(f.maxPassed) {
				return nil, &FrameError{Length: f.passed, Max: f.maxPassed}
			}
			f.consumeHeader(f.r)
			f.r += HeaderLen
			f.cont, f.stream = n == MaxFragment, int64(n)
			continue
		}
		if n == 0 {
			if err := f.checkSeq(f.r, true, 0); err != nil {
				return nil, err
			}
			f.consumeHeader(f.r)
			f.r += HeaderLen
			return f.buf[f.r-HeaderLen : f.r], nil
		}
		if avail < minBuffer {
			return nil, nil
		}
		first := f.buf[f.r+HeaderLen]
		if err := f.checkSeq(f.r, true, first); err != nil {
			return nil, err
		}
		if f.types != nil && !f.types[first] {
			return nil, &FrameError{First: first, Length: int64(n), Unknown: true}
		}
		if want[first] && (n < MaxFragment || f.wantLong) {
			return f.wanted(first)
		}
		if f.maxPassed > 0 && n > f.maxPassed {
			return nil, &FrameError{First: first, Length: int64(n), Max: f.maxPassed, Seq: int(f.buf[f.r+3])}
		}
		f.consumeHeader(f.r)
		f.r += HeaderLen
		f.passed, f.cont, f.stream = int64(n), n == MaxFragment, int64(n)
	}
}

// wanted returns the logical packet at r when all of it is buffered, and
// otherwise records how much of it must be.
func (f *Framer) wanted(first byte) ([]byte, error) {
	at, size := f.r, 0
	for {
		if f.w-at < HeaderLen {
			f.need = at + HeaderLen - f.r
			return nil, nil
		}
		n := le24(f.buf[at:])
		size += n
		if size > f.maxWanted {
			return nil, &FrameError{First: first, Length: int64(size), Max: f.maxWanted, Seq: int(f.buf[f.r+3])}
		}
		at += HeaderLen + n
		if n < MaxFragment {
			break
		}
	}
	if at > f.w {
		f.need = at - f.r
		return nil, nil
	}
	// All of it is here: check and renumber the fragments in order.
	for p, start := f.r, true; p < at; start = false {
		if err := f.checkSeq(p, start, first); err != nil {
			return nil, err
		}
		f.consumeHeader(p)
		p += HeaderLen + le24(f.buf[p:])
	}
	msg := f.buf[f.r:at]
	f.r = at
	return msg, nil
}

// Unread puts back msg, the packet Next just returned: the next Next
// returns it again (sequence ids as received, checked again then). A relay
// that must not decide a packet yet, such as a client's command sent
// before its authentication exchange ended, leaves it unread and waits;
// Take then returns only the pending bytes before it.
func (f *Framer) Unread(msg []byte) {
	f.r -= len(msg)
	for p := f.r; p < f.r+len(msg); p += HeaderLen + le24(f.buf[p:]) {
		f.buf[p+3] -= f.shift
	}
	f.expect = int(f.buf[f.r+3])
}

// Take returns the bytes passed over since the last Take, and marks them
// taken. The slice is valid until the next Fill.
func (f *Framer) Take() []byte {
	p := f.buf[f.mark:f.r]
	f.mark = f.r
	return p
}

// TakeBefore returns the pending bytes that precede msg, the packet Next
// just returned, and marks them and msg taken.
func (f *Framer) TakeBefore(msg []byte) []byte {
	end := f.r - len(msg)
	p := f.buf[f.mark:end]
	f.mark = f.r
	return p
}

// MidPacket reports whether part of a passed-over packet has been handed
// out as pending and the rest has not arrived: a peer reading what was
// forwarded is inside a packet.
func (f *Framer) MidPacket() bool { return f.stream > 0 || f.cont }

// Pending reports how many bytes were scanned since the last Take (the
// packet Next returned included).
func (f *Framer) Pending() int { return f.r - f.mark }

// Unscanned reports how many read bytes Next has not looked at yet.
func (f *Framer) Unscanned() int { return f.w - f.r }

// Buffered reports how many scanned-or-not bytes sit in the buffer; tests
// use it to check that nothing is left behind.
func (f *Framer) Buffered() int { return f.w - f.mark }

// Payload returns the payload of msg, a logical packet Next returned. A
// single fragment's payload aliases msg; the fragments of a longer packet
// are joined in dst (reused from its start, grown if needed).
func Payload(msg, dst []byte) []byte {
	n := le24(msg)
	if n < MaxFragment {
		return msg[HeaderLen : HeaderLen+n]
	}
	dst = dst[:0]
	for len(msg) >= HeaderLen {
		n = le24(msg)
		dst = append(dst, msg[HeaderLen:HeaderLen+n]...)
		msg = msg[HeaderLen+n:]
	}
	return dst
}

// FirstFragment returns the payload of msg's first fragment, which is all
// of a short packet; the response-phase decoders read only that.
func FirstFragment(msg []byte) []byte {
	return msg[HeaderLen : HeaderLen+le24(msg)]
}

// Seq returns the sequence id of msg's first fragment.
func Seq(msg []byte) int { return int(msg[3]) }

// LastSeq returns the sequence id of msg's last fragment: a reply to msg
// carries LastSeq(msg)+1 (mod 256).
func LastSeq(msg []byte) int {
	seq := int(msg[3])
	for {
		n := le24(msg)
		seq = int(msg[3])
		if n < MaxFragment || len(msg) < 2*HeaderLen+n {
			return seq
		}
		msg = msg[HeaderLen+n:]
	}
}

// AppendHeader appends a packet header for a payload of n bytes (less than
// MaxFragment) and sequence id seq.
func AppendHeader(dst []byte, n int, seq int) []byte {
	return append(dst, byte(n), byte(n>>8), byte(n>>16), byte(seq))
}

// AppendPacket appends payload as one logical packet starting at sequence
// id seq, split into fragments as the protocol requires, and returns the
// sequence id after it.
func AppendPacket(dst []byte, seq int, payload []byte) ([]byte, int) {
	for {
		n := min(len(payload), MaxFragment)
		dst = AppendHeader(dst, n, seq)
		dst = append(dst, payload[:n]...)
		payload = payload[n:]
		seq = (seq + 1) & 0xff
		if n < MaxFragment {
			return dst, seq
		}
	}
}
