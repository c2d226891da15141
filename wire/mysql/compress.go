package mysql

// The compressed protocol (CLIENT_COMPRESS) wraps the packet stream of one
// direction in compressed packets, from the first command after the login's
// OK on (the OK itself is plain). A compressed packet is a 7-byte header,
// the compressed payload length (3 bytes, little-endian), a sequence id of
// its own, the uncompressed length (3 bytes), then the payload: zlib data
// that inflates to exactly that many bytes, or, when the uncompressed
// length is 0, the bytes as they are (a sender leaves a payload shorter
// than MinCompressLength, or one that does not shrink, uncompressed):
//
//	0a 00 00 00 00 00 00   0a 00 00 00 03 53 45 4c 45 43 54 20 31
//	(10 bytes, seq 0, not compressed) COM_QUERY "SELECT 1", seq 0
//
// The payloads of consecutive compressed packets are one byte stream of
// ordinary packets: one compressed packet may carry several packets, and a
// packet may begin in one compressed packet and end in the next. The
// compressed packets' ids count as ordinary ids do (a command starts at 0,
// the answer continues), and the ordinary packets inside keep ids of their
// own that the peers do not check: a server numbers them from its count of
// compressed packets (net_flush syncs pkt_nr to compress_pkt_nr,
// sql/net_serv.cc), so they need not follow on from the other direction's.
//
// Decompressor reads the inner stream from a compressed one, Compressor
// writes one; neither knows where commands begin (the relay tells them).
// See "Compression" in MySQL's client/server protocol documentation and
// MariaDB's "Compression" page of the protocol.

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
)

const (
	// CompHeaderLen is a compressed packet's header (NET_HEADER_SIZE +
	// COMP_HEADER_SIZE, include/mysql_com.h).
	CompHeaderLen = 7
	// MinCompressLength: a payload shorter than this is sent uncompressed
	// (MIN_COMPRESS_LENGTH, sql/net_serv.cc and mysys/my_compress.c).
	MinCompressLength = 50
	// MaxCompPayload bounds both lengths of a compressed packet (3 bytes).
	MaxCompPayload = 0xffffff
)

// ErrCompressed reports a malformed compressed packet: zlib data that does
// not inflate to the length its header says. The connection cannot be
// followed after it.
var ErrCompressed = errors.New("malformed compressed packet")

// Decompressor is an io.Reader of the packet stream inside the compressed
// packets read from src. It is not safe for concurrent use.
type Decompressor struct {
	src io.Reader
	// in holds bytes read from src: in[ir:iw] not yet used.
	in     []byte
	ir, iw int
	// out[or:ow] is inflated (or stored) payload not yet read.
	out    []byte
	or, ow int
	// seq is the id after the last compressed packet read (Seq), count
	// how many were read (Packets).
	seq   int
	count uint64
	zr    io.ReadCloser
	br    bytes.Reader
	// budget, when set, is charged for in and out beyond
	// DefaultBufferSize each; reserved is what is held of it.
	budget   Budget
	reserved int
}

// SetBudget charges the buffers' growth beyond DefaultBufferSize to b
// (the Framers' Budget): a compressed packet that cannot be held is
// ErrBudget.
func (d *Decompressor) SetBudget(b Budget) { d.budget = b }

// Close gives back what the Decompressor holds of its Budget; it is not
// used after it.
func (d *Decompressor) Close() {
	d.in, d.out = nil, nil
	if d.budget != nil && d.reserved > 0 {
		d.budget.Release(d.reserved)
		d.reserved = 0
	}
}

// charge makes the budget hold what in and out need beyond their initial
// size once they are inSize and outSize long.
func (d *Decompressor) charge(inSize, outSize int) error {
	if d.budget == nil {
		return nil
	}
	want := max(inSize-DefaultBufferSize, 0) + max(outSize-DefaultBufferSize, 0)
	switch {
	case want > d.reserved:
		if err := d.budget.Reserve(want - d.reserved); err != nil {
			return fmt.Errorf("%w: %w", ErrBudget, err)
		}
	case want < d.reserved:
		d.budget.Release(d.reserved - want)
	}
	d.reserved = want
	return nil
}

// shrink drops buffers grown past shrinkAbove for one big packet once it
// has been read.
func (d *Decompressor) shrink() {
	if len(d.in) > shrinkAbove && d.iw-d.ir <= DefaultBufferSize {
		nb := make([]byte, DefaultBufferSize)
		d.iw = copy(nb, d.in[d.ir:d.iw])
		d.in, d.ir = nb, 0
	}
	if cap(d.out) > shrinkAbove {
		d.out, d.or, d.ow = nil, 0, 0
	}
	_ = d.charge(len(d.in), cap(d.out)) // a release: cannot fail
}

// NewDecompressor reads compressed packets from src; prefix, when not
// empty, is read before src (bytes already taken off the connection).
func NewDecompressor(src io.Reader, prefix []byte) *Decompressor {
	d := &Decompressor{src: src, in: make([]byte, max(DefaultBufferSize, len(prefix)))}
	d.iw = copy(d.in, prefix)
	return d
}

// Seq returns the sequence id after the last compressed packet read: what
// the first compressed packet of a reply to it carries.
func (d *Decompressor) Seq() int { return d.seq }

// Packets returns how many compressed packets were read.
func (d *Decompressor) Packets() uint64 { return d.count }

// Buffered reports whether read bytes wait to be returned, inflated or
// not: a Read returns without reading src.
func (d *Decompressor) Buffered() bool { return d.ow > d.or || d.iw > d.ir }

// fill makes in[ir:] hold at least n bytes.
func (d *Decompressor) fill(n int) error {
	if d.iw-d.ir >= n {
		return nil
	}
	if d.ir > 0 {
		d.iw = copy(d.in, d.in[d.ir:d.iw])
		d.ir = 0
	}
	for d.iw < n {
		if d.iw == len(d.in) {
			// grown with the data, not with the length the header
			// claims: seven bytes do not make us allocate 16 MiB
			size := min(n, 2*len(d.in))
			if err := d.charge(size, cap(d.out)); err != nil {
				return err
			}
			nb := make([]byte, size)
			copy(nb, d.in[:d.iw])
			d.in = nb
		}
		m, err := d.src.Read(d.in[d.iw:])
		d.iw += m
		if m > 0 {
			continue
		}
		if err == nil {
			err = io.ErrNoProgress
		} else if err == io.EOF && d.iw > d.ir {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// Read returns inner packet bytes, reading and inflating at most one
// compressed packet from src when none are buffered.
func (d *Decompressor) Read(p []byte) (int, error) {
	if d.or == d.ow && (len(d.in) > shrinkAbove || cap(d.out) > shrinkAbove) {
		d.shrink()
	}
	for d.or == d.ow {
		if err := d.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, d.out[d.or:d.ow])
	d.or += n
	return n, nil
}

func (d *Decompressor) next() error {
	if err := d.fill(CompHeaderLen); err != nil {
		return err
	}
	h := d.in[d.ir:]
	clen, seq, ulen := le24(h), int(h[3]), le24(h[4:])
	if err := d.fill(CompHeaderLen + clen); err != nil {
		return err
	}
	payload := d.in[d.ir+CompHeaderLen : d.ir+CompHeaderLen+clen]
	d.ir += CompHeaderLen + clen
	d.seq = (seq + 1) & 0xff
	d.count++
	d.or = 0
	if ulen == 0 {
		// stored: copied, so that in can be refilled under it
		if err := d.charge(len(d.in), max(cap(d.out), clen)); err != nil {
			return err
		}
		d.out = growTo(d.out, clen)
		d.ow = copy(d.out, payload)
		return nil
	}
	d.br.Reset(payload)
	var err error
	if d.zr == nil {
		d.zr, err = zlib.NewReader(&d.br)
	} else {
		err = d.zr.(zlib.Resetter).Reset(&d.br, nil)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCompressed, err)
	}
	// inflated into a buffer grown with what the data inflates to, up to
	// the header's length
	n := 0
	first := min(ulen, max(cap(d.out), 4*clen, DefaultBufferSize))
	if err := d.charge(len(d.in), max(cap(d.out), first)); err != nil {
		return err
	}
	d.out = growTo(d.out, first)
	for n < ulen {
		if n == len(d.out) {
			size := min(ulen, 2*len(d.out))
			if err := d.charge(len(d.in), size); err != nil {
				return err
			}
			nb := make([]byte, size)
			copy(nb, d.out[:n])
			d.out = nb
		}
		m, err := d.zr.Read(d.out[n:])
		n += m
		if err != nil && n < ulen {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("%w: inflates to %d bytes, header says %d: %w", ErrCompressed, n, ulen, err)
		}
	}
	// the zlib stream must end exactly there, checksum included, and
	// nothing may follow it
	var one [1]byte
	if m, err := d.zr.Read(one[:]); m != 0 || err != io.EOF || d.br.Len() != 0 {
		return fmt.Errorf("%w: more than the %d bytes its header says", ErrCompressed, ulen)
	}
	d.ow = n
	return nil
}

func growTo(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n, max(n, 2*cap(b)))
	}
	return b[:n]
}

// Compressor writes what it is given to dst as compressed packets, deflated
// at zlib's best speed (the peer inflates any level; the default level
// the server uses cost three to four times the CPU in
// BenchmarkCompressedRelay), at most MaxCompPayload bytes each, numbered from its sequence id on. It is not
// safe for concurrent use.
type Compressor struct {
	dst io.Writer
	seq int
	zw  *zlib.Writer
	zb  bytes.Buffer
	buf []byte
}

// NewCompressor returns a Compressor writing to dst.
func NewCompressor(dst io.Writer) *Compressor { return &Compressor{dst: dst} }

// SetSeq makes seq the id of the next compressed packet written: 0 for a
// command, the Decompressor's Seq of the other direction for a reply.
func (c *Compressor) SetSeq(seq int) { c.seq = seq & 0xff }

// Seq returns the id the next compressed packet will carry.
func (c *Compressor) Seq() int { return c.seq }

// Write sends b as one compressed packet (or several, beyond
// MaxCompPayload), compressing a part of MinCompressLength bytes or more
// when that makes it shorter.
func (c *Compressor) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		part := b[done:min(len(b), done+MaxCompPayload)]
		c.buf = c.append(c.buf[:0], part)
		if _, err := c.dst.Write(c.buf); err != nil {
			return done, err
		}
		done += len(part)
	}
	if cap(c.buf) > 1<<20 {
		c.buf = nil // one big write does not pin memory for the session
	}
	return done, nil
}

// append appends part as one compressed packet.
func (c *Compressor) append(dst, part []byte) []byte {
	seq := c.seq
	c.seq = (c.seq + 1) & 0xff
	if len(part) >= MinCompressLength {
		c.zb.Reset()
		if c.zw == nil {
			c.zw, _ = zlib.NewWriterLevel(&c.zb, zlib.BestSpeed)
		} else {
			c.zw.Reset(&c.zb)
		}
		_, _ = c.zw.Write(part) // a bytes.Buffer does not fail
		_ = c.zw.Close()
		if z := c.zb.Bytes(); len(z) < len(part) {
			dst = append(dst, byte(len(z)), byte(len(z)>>8), byte(len(z)>>16), byte(seq),
				byte(len(part)), byte(len(part)>>8), byte(len(part)>>16))
			dst = append(dst, z...)
			if c.zb.Cap() > 1<<20 {
				c.zb = bytes.Buffer{}
			}
			return dst
		}
	}
	dst = append(dst, byte(len(part)), byte(len(part)>>8), byte(len(part)>>16), byte(seq), 0, 0, 0)
	return append(dst, part...)
}
