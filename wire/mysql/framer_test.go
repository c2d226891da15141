package mysql

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"
	"testing/iotest"
)

// pkt builds one logical packet of payload starting at sequence id seq.
func pkt(seq int, payload ...byte) []byte {
	b, _ := AppendPacket(nil, seq, payload)
	return b
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func table(first ...byte) *[256]bool {
	var t [256]bool
	for _, c := range first {
		t[c] = true
	}
	return &t
}

// frameAll runs a Framer over src the way a relay does and returns the bytes
// it would forward (pending and wanted packets, in order) and the wanted
// packets. setup, if set, configures the Framer first.
func frameAll(t testing.TB, src io.Reader, size int, want *[256]bool, setup func(*Framer)) (forwarded []byte, wanted [][]byte, err error) {
	fr := NewFramer(src, size, DefaultMaxPacket, 0)
	if setup != nil {
		setup(fr)
	}
	for {
		if err := fr.Fill(); err != nil {
			if errors.Is(err, io.EOF) {
				if fr.Buffered() != 0 || fr.MidPacket() {
					return forwarded, wanted, io.ErrUnexpectedEOF
				}
				return forwarded, wanted, nil
			}
			return forwarded, wanted, err
		}
		for {
			msg, err := fr.Next(want)
			if err != nil {
				return forwarded, wanted, err
			}
			if msg == nil {
				break
			}
			wanted = append(wanted, append([]byte(nil), msg...))
			forwarded = append(forwarded, fr.TakeBefore(msg)...)
			forwarded = append(forwarded, msg...)
		}
		forwarded = append(forwarded, fr.Take()...)
	}
}

var readers = map[string]func(io.Reader) io.Reader{
	"whole":      func(r io.Reader) io.Reader { return r },
	"one-byte":   iotest.OneByteReader,
	"half":       iotest.HalfReader,
	"data-error": iotest.DataErrReader,
}

func TestFramerStream(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 100000)
	// a query, its OK; then a result set with a big row
	in := cat(
		pkt(0, append([]byte{ComQuery}, "select 1"...)...),
		pkt(1, 1),                              // column count
		pkt(2, append([]byte{3}, "def"...)...), // column definition (truncated, framing only)
		pkt(3, append([]byte{0xfc, 0xa0, 0x86, 0x01}, big...)...),
		pkt(4, 0xfe, 0, 0, 2, 0, 0, 0), // OK-form end of the result set
		pkt(5),                         // an empty packet is always returned
	)
	for rname, wrap := range readers {
		for _, size := range []int{5, 64, DefaultBufferSize} {
			t.Run(rname+"/"+strconv.Itoa(size), func(t *testing.T) {
				fwd, wanted, err := frameAll(t, wrap(bytes.NewReader(in)), size, table(ComQuery, 0xfe, 0xff), nil)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(fwd, in) {
					t.Fatalf("forwarded %d bytes, want %d identical", len(fwd), len(in))
				}
				// the column definition starts with 0x03 too
				if len(wanted) != 4 || wanted[0][4] != ComQuery || wanted[2][4] != 0xfe || len(wanted[3]) != HeaderLen {
					t.Fatalf("wanted %q", wanted)
				}
			})
		}
	}
}

func TestFramerLongPacket(t *testing.T) {
	payload := bytes.Repeat([]byte{'a'}, 2*MaxFragment+10)
	payload[0] = ComQuery
	long := pkt(0, payload...)
	if len(long) != len(payload)+3*HeaderLen {
		t.Fatalf("AppendPacket: %d bytes", len(long))
	}
	exact := pkt(0, bytes.Repeat([]byte{ComQuery}, MaxFragment)...) // ends with an empty fragment
	if len(exact) != MaxFragment+2*HeaderLen || LastSeq(exact) != 1 {
		t.Fatalf("exact fragment: %d bytes, last seq %d", len(exact), LastSeq(exact))
	}
	for name, in := range map[string][]byte{"long": long, "exact": exact} {
		t.Run(name+"/wanted", func(t *testing.T) {
			fwd, wanted, err := frameAll(t, iotest.HalfReader(bytes.NewReader(in)), 0, table(ComQuery), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fwd, in) || len(wanted) != 1 || !bytes.Equal(wanted[0], in) {
				t.Fatalf("forwarded %d, wanted %d packets", len(fwd), len(wanted))
			}
			p := Payload(wanted[0], nil)
			if len(p) != len(in)-HeaderLen*(1+len(in)/MaxFragment) || p[0] != ComQuery {
				t.Fatalf("payload of %d bytes", len(p))
			}
			if LastSeq(wanted[0]) != len(in)/MaxFragment {
				t.Fatalf("LastSeq %d", LastSeq(wanted[0]))
			}
		})
		t.Run(name+"/passed", func(t *testing.T) {
			fwd, wanted, err := frameAll(t, bytes.NewReader(cat(in, pkt(0, ComPing))), 0, table(ComQuery, ComPing),
				func(f *Framer) { f.SetWantLong(false); f.ExpectCommands() })
			if err != nil {
				t.Fatal(err)
			}
			if len(fwd) != len(in)+5 || len(wanted) != 1 || wanted[0][4] != ComPing {
				t.Fatalf("forwarded %d, wanted %d packets", len(fwd), len(wanted))
			}
		})
	}
}

func TestFramerLimits(t *testing.T) {
	in := pkt(0, append([]byte{ComQuery}, bytes.Repeat([]byte("a"), 1000)...)...)
	fr := NewFramer(bytes.NewReader(in), 64, 100, 0)
	var fe *FrameError
	err := drain(fr, table(ComQuery))
	if !errors.As(err, &fe) || fe.Max != 100 || !errors.Is(err, ErrFrame) {
		t.Fatalf("wanted too large: %v", err)
	}
	fr = NewFramer(bytes.NewReader(in), 64, 0, 100)
	if err := drain(fr, table()); !errors.As(err, &fe) || fe.Max != 100 {
		t.Fatalf("passed too large: %v", err)
	}
	fr = NewFramer(bytes.NewReader(pkt(0, 0x42)), 64, 0, 0)
	fr.SetTypes(CommandTypes)
	if err := drain(fr, table()); !errors.As(err, &fe) || !fe.Unknown || fe.First != 0x42 {
		t.Fatalf("unknown type: %v", err)
	}
	if err == nil || err.Error() == "" {
		t.Fatal("no message")
	}
}

// drain frames src to its end and returns the first error (nil at EOF).
func drain(fr *Framer, want *[256]bool) error {
	for {
		if err := fr.Fill(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		for {
			m, err := fr.Next(want)
			if err != nil {
				return err
			}
			if m == nil {
				break
			}
			fr.TakeBefore(m)
		}
		fr.Take()
	}
}

func TestFramerSequence(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		setup func(*Framer)
		bad   int // sequence id reported, -1 for none
	}{
		{"consecutive", cat(pkt(1, 0), pkt(2, 0), pkt(3, 0xfe)), nil, -1},
		{"gap", cat(pkt(1, 0), pkt(3, 0)), nil, 3},
		{"gap in passed", cat(pkt(1, 3), pkt(3, 3)), nil, 3},
		{"expect", pkt(5, 0), func(f *Framer) { f.Expect(5) }, -1},
		{"expect wrong", pkt(4, 0), func(f *Framer) { f.Expect(5) }, 4},
		{"wraps", cat(pkt(255, 0), pkt(0, 0)), nil, -1},
		{"commands", cat(pkt(0, ComQuery), pkt(0, ComPing), pkt(0, ComQuit)), func(f *Framer) { f.ExpectCommands() }, -1},
		{"command not at 0", cat(pkt(0, ComQuery), pkt(1, ComPing)), func(f *Framer) { f.ExpectCommands() }, 1},
		{"fragments", pkt(0, bytes.Repeat([]byte{ComQuery}, MaxFragment+1)...), func(f *Framer) { f.ExpectCommands() }, -1},
	}
	bad := pkt(0, bytes.Repeat([]byte{ComQuery}, MaxFragment+1)...)
	bad[MaxFragment+HeaderLen+3] = 7
	tests = append(tests, struct {
		name  string
		in    []byte
		setup func(*Framer)
		bad   int
	}{"fragment out of sequence", bad, nil, 7})
	for _, tc := range tests {
		for _, want := range []*[256]bool{wantAll, table()} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := frameAll(t, bytes.NewReader(tc.in), 0, want, tc.setup)
				var fe *FrameError
				if tc.bad < 0 {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				if !errors.As(err, &fe) || !fe.OutOfSequence || fe.Seq != tc.bad {
					t.Fatalf("got %v, want sequence id %d out of sequence", err, tc.bad)
				}
			})
		}
	}
}

func TestFramerRenumber(t *testing.T) {
	in := cat(pkt(1, 1), pkt(2, 3, 'd', 'e', 'f'), pkt(3, 0xfe, 0, 0, 2, 0))
	for _, want := range []*[256]bool{wantAll, wantEnds} {
		fwd, _, err := frameAll(t, iotest.OneByteReader(bytes.NewReader(in)), 5, want, func(f *Framer) {
			f.Expect(1)
			f.Renumber(2)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := []int{int(fwd[3]), int(fwd[5+3]), int(fwd[5+8+3])}; got[0] != 3 || got[1] != 4 || got[2] != 5 {
			t.Fatalf("renumbered ids %v, want 3 4 5", got)
		}
	}
	fr := NewFramer(bytes.NewReader(pkt(9, ComQuery)), 0, 0, 0)
	if err := drain(fr, wantAll); err != nil || fr.NextSeq() != 10 {
		t.Fatalf("NextSeq %d, %v", fr.NextSeq(), err)
	}
}

func TestFramerTruncated(t *testing.T) {
	in := pkt(0, append([]byte{ComQuery}, "select 1"...)...)
	for i := 1; i < len(in); i++ {
		_, _, err := frameAll(t, bytes.NewReader(in[:i]), 0, wantAll, nil)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%d bytes: %v", i, err)
		}
	}
}

// budget counts reservations.
type budget struct{ held, limit int }

func (b *budget) Reserve(n int) error {
	if b.held+n > b.limit {
		return errors.New("over")
	}
	b.held += n
	return nil
}
func (b *budget) Release(n int) { b.held -= n }

func TestFramerBudget(t *testing.T) {
	in := cat(pkt(0, append([]byte{ComQuery}, bytes.Repeat([]byte("a"), 5000)...)...), pkt(0, ComPing))
	b := &budget{limit: 1 << 20}
	fr := NewFramer(bytes.NewReader(in), 64, 0, 0)
	fr.SetBudget(b)
	fr.ExpectCommands()
	if err := drain(fr, wantAll); err != nil {
		t.Fatal(err)
	}
	fr.Close()
	if b.held != 0 {
		t.Fatalf("budget holds %d after Close", b.held)
	}
	fr = NewFramer(bytes.NewReader(in), 64, 0, 0)
	fr.SetBudget(&budget{limit: 100})
	if err := drain(fr, wantAll); !errors.Is(err, ErrBudget) {
		t.Fatalf("over budget: %v", err)
	}
}

// TestBlockedCommand is what a relay does with a denied command: it answers
// it with an ERR that continues the command's ids and sends nothing on; the
// client's next command starts at 0 again, and the server leg is where it
// was.
func TestBlockedCommand(t *testing.T) {
	long := pkt(0, append([]byte{ComQuery}, bytes.Repeat([]byte("x"), MaxFragment)...)...) // ids 0 and 1
	in := cat(long, pkt(0, append([]byte{ComQuery}, "select 1"...)...))
	fr := NewFramer(bytes.NewReader(in), 0, 32<<20, 0)
	fr.ExpectCommands()
	fr.SetTypes(CommandTypes)
	var got [][]byte
	for len(got) < 2 {
		m, err := nextPacket(fr, WantAll)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	errPkt := AppendErr(nil, LastSeq(got[0])+1, 1142, "42000", "blocked")
	if Seq(errPkt) != 2 {
		t.Fatalf("ERR after a two-fragment command has id %d, want 2", Seq(errPkt))
	}
	if Seq(got[1]) != 0 {
		t.Fatalf("next command at %d", Seq(got[1]))
	}
}

// Unread puts the packet Next returned back: Take leaves it out, and the
// next Next returns it again, renumbered as before.
func TestFramerUnread(t *testing.T) {
	in := cat(pkt(2, 'a', 'u', 't', 'h'), pkt(0, 3, 's'), pkt(1, 'x'))
	fr := NewFramer(bytes.NewReader(in), 64, 0, 0)
	fr.Renumber(5)
	if err := fr.Fill(); err != nil {
		t.Fatal(err)
	}
	first, err := fr.Next(WantAll)
	if err != nil || !bytes.Equal(first, pkt(7, 'a', 'u', 't', 'h')) {
		t.Fatalf("first: %q, %v", first, err)
	}
	fr.Expect(SeqAny) // an authentication round's ids, as the relay reads them
	cmd, err := fr.Next(WantAll)
	if err != nil || !bytes.Equal(cmd, pkt(5, 3, 's')) {
		t.Fatalf("second: %q, %v", cmd, err)
	}
	fr.Unread(cmd)
	if got := fr.Take(); !bytes.Equal(got, pkt(7, 'a', 'u', 't', 'h')) {
		t.Fatalf("Take after Unread: %q, want the packet before it only", got)
	}
	fr.ExpectCommands()
	again, err := fr.Next(WantAll)
	if err != nil || !bytes.Equal(again, pkt(5, 3, 's')) {
		t.Fatalf("after Unread: %q, %v, want the same packet again", again, err)
	}
	if _, err := fr.Next(WantAll); err == nil {
		t.Fatal("a packet of sequence id 1 after ExpectCommands: no error")
	}
}

// chunkLoop serves b over and over, at most chunk bytes a Read.
type chunkLoop struct {
	b     []byte
	at    int
	chunk int
}

func (r *chunkLoop) Read(p []byte) (int, error) {
	p = p[:min(len(p), r.chunk, len(r.b)-r.at)]
	n := copy(p, r.b[r.at:])
	r.at = (r.at + n) % len(r.b)
	return n, nil
}

// TestFramerGrownBufferReused: a budgeted framer fed a 90 kB COM_QUERY
// after each COM_PING grows for the query and shrinks after it, every
// time, and allocates nothing for it once warm (internal/framebuf).
func TestFramerGrownBufferReused(t *testing.T) {
	large := pkt(0, append([]byte{ComQuery}, bytes.Repeat([]byte("a"), 90_000)...)...)
	r := &chunkLoop{b: cat(large, pkt(0, ComPing)), chunk: 16 << 10}
	b := &budget{limit: 1 << 20}
	fr := NewFramer(r, DefaultBufferSize, 0, 0)
	fr.SetBudget(b)
	fr.ExpectCommands()
	next := func() int {
		for {
			if m, err := fr.Next(wantAll); err != nil {
				t.Fatal(err)
			} else if m != nil {
				fr.TakeBefore(m)
				fr.ExpectCommands()
				return len(m)
			}
			fr.Take()
			if err := fr.Fill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	pair := func() {
		if n := next(); n != len(large) {
			t.Fatalf("got a %d-byte packet, want the large one (%d)", n, len(large))
		}
		if n := next(); n != HeaderLen+1 {
			t.Fatalf("got a %d-byte packet, want COM_PING", n)
		}
		if b.held != fr.reserved {
			t.Fatalf("budget %d, framer reserved %d: out of step", b.held, fr.reserved)
		}
	}
	pair()
	pair()
	if n := testing.AllocsPerRun(20, pair); n != 0 {
		t.Errorf("%v allocations per large packet, want 0", n)
	}
	fr.Close()
	if b.held != 0 {
		t.Errorf("after Close the framer still holds %d bytes of the budget", b.held)
	}
}
