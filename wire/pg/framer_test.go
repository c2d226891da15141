package pg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// capture is one real connection recorded between psql or pgbench and
// PostgreSQL 15 (testdata/captures/NAME.c2s and .s2c), with the startup
// phase split off.
type capture struct {
	name     string
	startup  [][]byte // startup-phase packets of the client
	c2s, s2c []byte   // typed messages after the startup phase
}

func loadCaptures(t testing.TB) []capture {
	t.Helper()
	files, err := filepath.Glob("testdata/captures/*.c2s")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	var out []capture
	for _, f := range files {
		c2s, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s2c, err := os.ReadFile(strings.TrimSuffix(f, ".c2s") + ".s2c")
		if err != nil {
			t.Fatal(err)
		}
		c := capture{name: strings.TrimSuffix(filepath.Base(f), ".c2s")}
		r := bytes.NewReader(c2s)
		for {
			st, err := ReadStartup(r, nil)
			if err != nil {
				t.Fatalf("%s: startup: %v", c.name, err)
			}
			c.startup = append(c.startup, append([]byte(nil), st.Raw...))
			if st.Code == CodeSSLRequest {
				s2c = s2c[1:] // the server's 'N'
			}
			if st.IsStartupMessage() {
				break
			}
		}
		c.c2s = c2s[len(c2s)-r.Len():]
		c.s2c = s2c
		out = append(out, c)
	}
	return out
}

// frameAll runs a Framer over src the way the daemon does and returns the
// bytes it would forward (pending and wanted messages, in order) and the
// types of the wanted messages.
func frameAll(t testing.TB, src io.Reader, size int, want *[256]bool) (forwarded []byte, wanted []byte, err error) {
	fr := NewFramer(src, size, DefaultMaxMessage, 0)
	for {
		if err := fr.Fill(); err != nil {
			if errors.Is(err, io.EOF) {
				if fr.Buffered() != 0 {
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
			wanted = append(wanted, msg[0])
			// forward the wanted message separately, as a rewrite would
			forwarded = append(forwarded, fr.TakeBefore(msg)...)
			forwarded = append(forwarded, msg...)
		}
		forwarded = append(forwarded, fr.Take()...)
	}
}

func table(types string) *[256]bool {
	var t [256]bool
	for i := 0; i < len(types); i++ {
		t[types[i]] = true
	}
	return &t
}

func TestFramerCaptures(t *testing.T) {
	caps := loadCaptures(t)
	readers := map[string]func(io.Reader) io.Reader{
		"whole":      func(r io.Reader) io.Reader { return r },
		"one-byte":   iotest.OneByteReader,
		"half":       iotest.HalfReader,
		"data-error": iotest.DataErrReader,
	}
	for _, c := range caps {
		for rname, wrap := range readers {
			for _, size := range []int{5, 64, DefaultBufferSize} {
				t.Run(c.name+"/"+rname+"/"+strconv.Itoa(size), func(t *testing.T) {
					fwd, wanted, err := frameAll(t, wrap(bytes.NewReader(c.c2s)), size, table("QPFS"))
					if err != nil {
						t.Fatalf("c2s: %v", err)
					}
					if !bytes.Equal(fwd, c.c2s) {
						t.Fatalf("c2s: forwarded bytes differ from input (got %d bytes, want %d)", len(fwd), len(c.c2s))
					}
					if got, want := string(wanted), typesOf(c.c2s, "QPFS"); got != want {
						t.Errorf("c2s wanted types: got %q, want %q", got, want)
					}
					fwd, wanted, err = frameAll(t, wrap(bytes.NewReader(c.s2c)), size, table("ZKE"))
					if err != nil {
						t.Fatalf("s2c: %v", err)
					}
					if !bytes.Equal(fwd, c.s2c) {
						t.Fatalf("s2c: forwarded bytes differ from input")
					}
					if got, want := string(wanted), typesOf(c.s2c, "ZKE"); got != want {
						t.Errorf("s2c wanted types: got %q, want %q", got, want)
					}
				})
			}
		}
	}
}

// typesOf lists the types of the messages in b that are in set, by a
// straightforward walk (the reference for the framer).
func typesOf(b []byte, set string) string {
	var out []byte
	for len(b) >= 5 {
		n := int(binary.BigEndian.Uint32(b[1:]))
		if strings.IndexByte(set, b[0]) >= 0 {
			out = append(out, b[0])
		}
		b = b[1+n:]
	}
	return string(out)
}

func msg(typ byte, body string) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
	return append(b, body...)
}

func TestFramerBadHeaders(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		max   int
		maxP  int
		want  string
		wantT *[256]bool
	}{
		{"length below 4", []byte{'Q', 0, 0, 0, 3}, 0, 0, "less than 4", table("Q")},
		{"length below 4 passed over", []byte{'B', 0, 0, 0, 0}, 0, 0, "less than 4", table("Q")},
		{"wanted too large", []byte{'Q', 0x10, 0, 0, 0}, 1024, 0, "too large", table("Q")},
		{"passed over too large", []byte{'d', 0x10, 0, 0, 0}, 1024, 4096, "too large", table("Q")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := NewFramer(bytes.NewReader(tt.in), 64, tt.max, tt.maxP)
			if err := fr.Fill(); err != nil {
				t.Fatal(err)
			}
			_, err := fr.Next(tt.wantT)
			if err == nil || !errors.Is(err, ErrFrame) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("input %x: got error %v, want one containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestFramerStreamsLargePassedOverMessage(t *testing.T) {
	big := msg('d', strings.Repeat("x", 100_000)) // CopyData larger than the buffer
	in := append(append(append([]byte(nil), big...), msg('Q', "select 1\x00")...), msg('S', "")...)
	fwd, wanted, err := frameAll(t, iotest.HalfReader(bytes.NewReader(in)), 1024, table("QS"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fwd, in) || string(wanted) != "QS" {
		t.Fatalf("got %d bytes and types %q, want %d bytes and \"QS\"", len(fwd), wanted, len(in))
	}
}

func TestFramerGrowsForLargeWantedMessageAndShrinks(t *testing.T) {
	q := msg('Q', strings.Repeat("x", 2<<20)+"\x00")
	in := append(append([]byte(nil), q...), msg('Q', "select 1\x00")...)
	fr := NewFramer(bytes.NewReader(in), 1024, DefaultMaxMessage, 0)
	var got [][]byte
	for len(got) < 2 {
		if err := fr.Fill(); err != nil {
			t.Fatalf("after %d messages: %v", len(got), err)
		}
		for {
			m, err := fr.Next(table("Q"))
			if err != nil {
				t.Fatal(err)
			}
			if m == nil {
				break
			}
			got = append(got, append([]byte(nil), m...))
			fr.TakeBefore(m)
		}
		fr.Take()
	}
	if !bytes.Equal(got[0], q) {
		t.Fatalf("large Query: got %d bytes, want %d", len(got[0]), len(q))
	}
	if len(fr.buf) > shrinkAbove {
		t.Errorf("buffer still %d bytes after the large message, want it shrunk to %d", len(fr.buf), fr.initSize)
	}
}

func TestFramerTruncatedInput(t *testing.T) {
	in := msg('Q', "select 1\x00")
	_, _, err := frameAll(t, bytes.NewReader(in[:len(in)-2]), 64, table("Q"))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestFramerUnknownType(t *testing.T) {
	fr := NewFramer(bytes.NewReader(append(msg('Q', "select 1\x00"), msg('!', "junk")...)), 64, 0, 0)
	fr.SetTypes(FrontendTypes)
	if err := fr.Fill(); err != nil {
		t.Fatal(err)
	}
	if m, err := fr.Next(table("Q")); err != nil || m == nil {
		t.Fatalf("Query: %v, %v", m, err)
	}
	_, err := fr.Next(table("Q"))
	if err == nil || !errors.Is(err, ErrFrame) || !strings.Contains(err.Error(), "unknown message type") {
		t.Fatalf("type '!': got %v, want an unknown-type frame error", err)
	}
}

func TestFramerSetLimits(t *testing.T) {
	in := append(msg('p', strings.Repeat("x", 100)), msg('p', strings.Repeat("y", 5000))...)
	fr := NewFramer(bytes.NewReader(in), 64, 8192, 8192)
	fr.SetLimits(1024, 1024)
	if err := fr.Fill(); err != nil {
		t.Fatal(err)
	}
	var err error
	for err == nil {
		var m []byte
		if m, err = fr.Next(table("Q")); m == nil && err == nil {
			fr.Take()
			err = fr.Fill()
		}
	}
	if !errors.Is(err, ErrFrame) || !strings.Contains(err.Error(), "limit 1024") {
		t.Fatalf("a 5,000-byte message after SetLimits(1024): got %v, want too large", err)
	}
}

// countingBudget grants up to cap bytes in all.
type countingBudget struct{ used, cap, peak int }

func (b *countingBudget) Reserve(n int) error {
	if b.used+n > b.cap {
		return fmt.Errorf("%d of %d bytes in use", b.used, b.cap)
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return nil
}
func (b *countingBudget) Release(n int) { b.used -= n }

func TestFramerBudget(t *testing.T) {
	q := msg('Q', strings.Repeat("x", 100_000)+"\x00")
	in := append(append(append([]byte(nil), q...), msg('Q', "select 1\x00")...), q...)
	b := &countingBudget{cap: 200_000}
	fr := NewFramer(iotest.HalfReader(bytes.NewReader(in)), 1024, 0, 0)
	fr.SetBudget(b)
	n := 0
	for n < 3 {
		if err := fr.Fill(); err != nil {
			t.Fatalf("after %d messages: %v", n, err)
		}
		for {
			m, err := fr.Next(table("Q"))
			if err != nil {
				t.Fatal(err)
			}
			if m == nil {
				break
			}
			n++
			fr.TakeBefore(m)
		}
		fr.Take()
		if b.used != fr.reserved || fr.reserved != max(len(fr.buf)-fr.initSize, 0) {
			t.Fatalf("budget %d, framer reserved %d, buffer %d: out of step", b.used, fr.reserved, len(fr.buf))
		}
	}
	if b.peak < 100_000-1024 {
		t.Errorf("peak reservation %d, want at least the large message's growth", b.peak)
	}
	fr.Close()
	if b.used != 0 {
		t.Errorf("after Close the framer still holds %d bytes of the budget", b.used)
	}

	// A budget too small for the message: Fill fails with ErrBudget.
	small := &countingBudget{cap: 10_000}
	fr = NewFramer(bytes.NewReader(q), 1024, 0, 0)
	fr.SetBudget(small)
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		if err = fr.Fill(); err == nil {
			if _, err = fr.Next(table("Q")); err == nil {
				fr.Take()
			}
		}
	}
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("a 100 kB message under a 10 kB budget: got %v, want ErrBudget", err)
	}
	if small.used > small.cap {
		t.Errorf("budget overdrawn: %d of %d", small.used, small.cap)
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

// TestFramerGrownBufferReused: a budgeted framer fed a 90 kB Query after
// each small one grows for the large one and shrinks after it, every time,
// and allocates nothing for it once warm: the grown buffer comes back from
// internal/framebuf, the small one is the framer's own again; the budget
// stays in step.
func TestFramerGrownBufferReused(t *testing.T) {
	large := msg('Q', strings.Repeat("x", 90_000)+"\x00")
	small := msg('Q', "select 1\x00")
	r := &chunkLoop{b: append(append([]byte(nil), large...), small...), chunk: 16 << 10}
	b := &countingBudget{cap: 1 << 20}
	fr := NewFramer(r, DefaultBufferSize, 0, 0)
	fr.SetBudget(b)
	next := func() int {
		for {
			if m, err := fr.Next(table("Q")); err != nil {
				t.Fatal(err)
			} else if m != nil {
				fr.TakeBefore(m)
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
			t.Fatalf("got a %d-byte message, want the large one (%d)", n, len(large))
		}
		if n := next(); n != len(small) {
			t.Fatalf("got a %d-byte message, want the small one (%d)", n, len(small))
		}
		if b.used != fr.reserved || fr.reserved != max(len(fr.buf)-fr.initSize, 0) {
			t.Fatalf("budget %d, framer reserved %d, buffer %d: out of step", b.used, fr.reserved, len(fr.buf))
		}
	}
	pair()
	pair()
	if n := testing.AllocsPerRun(20, pair); n != 0 {
		t.Errorf("%v allocations per large message, want 0", n)
	}
	fr.Close()
	if b.used != 0 {
		t.Errorf("after Close the framer still holds %d bytes of the budget", b.used)
	}
}
