package mysql

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// capture is one real connection recorded by TestMariaDBPump -update
// between go-sql-driver/mysql and MariaDB 10.11.
type capture struct {
	name     string
	c2s, s2c []byte
	want     boundaries
}

func loadCaptures(t testing.TB) []capture {
	t.Helper()
	files, err := filepath.Glob("testdata/captures/*.c2s")
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	var out []capture
	for _, f := range files {
		base := strings.TrimSuffix(f, ".c2s")
		c := capture{name: filepath.Base(base)}
		if c.c2s, err = os.ReadFile(f); err == nil {
			if c.s2c, err = os.ReadFile(base + ".s2c"); err == nil {
				var b []byte
				if b, err = os.ReadFile(base + ".json"); err == nil {
					err = json.Unmarshal(b, &c.want)
				}
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out = append(out, c)
	}
	return out
}

// TestCaptures replays the recorded connections one byte at a time and
// checks that they frame to the packet and response boundaries seen live.
func TestCaptures(t *testing.T) {
	for _, c := range loadCaptures(t) {
		for _, size := range []int{minBuffer, 64, DefaultBufferSize} {
			ends, done, err := replay(c.c2s, c.s2c, size)
			if err != nil {
				t.Fatalf("%s (buffer %d): %v", c.name, size, err)
			}
			if !slices.Equal(ends, c.want.C2S) || !slices.Equal(done, c.want.S2C) {
				t.Fatalf("%s (buffer %d): packets end at %v, responses at %v; recorded %v and %v", c.name, size, ends, done, c.want.C2S, c.want.S2C)
			}
		}
		// the real greeting and handshake response
		h, err := ParseHandshake(FirstFragment(c.s2c))
		if err != nil {
			t.Fatalf("%s: greeting: %v", c.name, err)
		}
		if !h.MariaDB || !bytes.HasPrefix(h.ServerVersion, []byte("5.5.5-")) || !bytes.Contains(h.Version(), []byte("MariaDB")) ||
			!h.Caps.Has(CapDeprecateEOF|CapPluginAuth|CapMultiStatements) || h.Caps.Extended() == 0 ||
			len(h.AuthData1)+len(h.AuthData2) != ScrambleLength+1 || len(h.AuthPlugin) == 0 {
			t.Fatalf("%s: greeting %+v", c.name, h)
		}
		r, err := ParseHandshakeResponse(FirstFragment(c.c2s))
		if err != nil {
			t.Fatalf("%s: handshake response: %v", c.name, err)
		}
		attrs := 0
		for it := NewAttrs(r.ConnectAttrs); it.Next(); attrs++ {
		}
		if len(r.User) == 0 || len(r.AuthResponse) != ScrambleLength || string(r.AuthPlugin) != "mysql_native_password" || attrs == 0 {
			t.Fatalf("%s: handshake response %+v (%d attributes)", c.name, r, attrs)
		}
		// and as a relay forwards them: every byte, unchanged
		for rname, wrap := range readers {
			for _, in := range [][]byte{c.c2s, c.s2c} {
				fwd, _, err := frameAll(t, wrap(bytes.NewReader(in)), 64, table(ComQuery, HeaderEOF, HeaderERR), func(f *Framer) { f.Expect(SeqAny) })
				var fe *FrameError
				if err != nil && !(errors.As(err, &fe) && fe.OutOfSequence) {
					t.Fatalf("%s/%s: %v", c.name, rname, err)
				}
				if err == nil && !bytes.Equal(fwd, in) {
					t.Fatalf("%s/%s: forwarded bytes differ", c.name, rname)
				}
			}
		}
	}
}

// FuzzFramer feeds arbitrary bytes through the framer, one byte at a time
// and in one piece, and checks that it never panics, that what it forwards
// is a prefix of the input, and that both readers agree.
func FuzzFramer(f *testing.F) {
	for _, c := range loadCaptures(f) {
		f.Add(c.c2s)
		f.Add(c.s2c)
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0, 3, 1, 2})
	f.Fuzz(func(t *testing.T, in []byte) {
		want := table(ComQuery, ComStmtPrepare, HeaderEOF, HeaderERR, 0)
		for _, long := range []bool{true, false} {
			setup := func(f *Framer) { f.SetWantLong(long) }
			a, wa, erra := frameAll(t, bytes.NewReader(in), 16, want, setup)
			b, wb, errb := frameAll(t, iotest.OneByteReader(bytes.NewReader(in)), minBuffer, want, setup)
			if !bytes.HasPrefix(in, a) || !bytes.HasPrefix(in, b) {
				t.Fatalf("forwarded bytes are not a prefix of the input")
			}
			if (erra == nil) != (errb == nil) {
				t.Fatalf("readers disagree: %v vs %v", erra, errb)
			}
			if erra == nil && (!bytes.Equal(a, in) || len(wa) != len(wb)) {
				t.Fatalf("clean input not forwarded whole")
			}
			for _, m := range wa {
				Payload(m, nil)
				LastSeq(m)
			}
		}
	})
}

// FuzzReplay runs whole connections (handshake, authentication, commands
// and their responses) through the framers and the response machine with
// two buffer sizes, which must agree. Its seeds are whole connections, so
// run it with a short -fuzzminimizetime (200x): minimising each new input
// at the default 60 s leaves no time for fuzzing.
func FuzzReplay(f *testing.F) {
	for _, c := range loadCaptures(f) {
		f.Add(c.c2s, c.s2c)
	}
	f.Fuzz(func(t *testing.T, c2s, s2c []byte) {
		e1, d1, err1 := replay(c2s, s2c, minBuffer)
		e2, d2, err2 := replay(c2s, s2c, DefaultBufferSize)
		if (err1 == nil) != (err2 == nil) || !slices.Equal(e1, e2) || !slices.Equal(d1, d2) {
			t.Fatalf("buffer sizes disagree: %v %v / %v %v / %v, %v", e1, d1, e2, d2, err1, err2)
		}
	})
}

// FuzzDecoders runs every decoder over an arbitrary payload, and the
// response machine over an arbitrary stream after an arbitrary command.
func FuzzDecoders(f *testing.F) {
	for _, tc := range respCases {
		var in []byte
		for i, p := range tc.pkts {
			in = append(in, pkt(1+i, p...)...)
		}
		f.Add(uint64(tc.caps), tc.cmd, in)
	}
	for _, c := range loadCaptures(f) {
		f.Add(uint64(capsNew), byte(ComQuery), c.s2c)
		f.Add(uint64(capsNew|CapQueryAttributes), byte(ComQuery), c.c2s)
	}
	f.Add(uint64(capsNew), byte(0), mysqlGreeting)
	f.Add(uint64(capsNew), byte(0), mysqlResponse)
	f.Fuzz(func(t *testing.T, caps64 uint64, cmd byte, in []byte) {
		caps := Caps(caps64)
		p := in
		if len(p) > HeaderLen {
			p = p[HeaderLen:]
		}
		if h, err := ParseHandshake(p); err == nil {
			h.Version()
			h.Strip(DefaultStrip)
		}
		if r, err := ParseHandshakeResponse(p); err == nil {
			for it := NewAttrs(r.ConnectAttrs); it.Next(); {
			}
		}
		IsSSLRequest(p)
		ParseAuthSwitch(p)
		QueryText(p, caps)
		PrepareText(p)
		StmtID(p)
		ExecuteFlags(p)
		InitDBSchema(p)
		FieldListTable(p)
		SetOption(p)
		ParseChangeUser(p, caps)
		if ok, err := ParseOK(p, caps); err == nil {
			for it := NewSessionState(ok.SessionState); it.Next(); {
				it.Variable()
				it.Schema()
			}
		}
		ParseEOF(p)
		ParseErr(p)
		ParseColumnCount(p, caps)
		InfileName(p)
		ParsePrepareOK(p, caps)
		ReadLenString(p)

		r := NewResponse(caps)
		if !r.Begin(cmd) {
			return
		}
		fr := NewFramer(bytes.NewReader(in), minBuffer, 1<<20, 0)
		fr.SetWantLong(false)
		for !r.Done() {
			m, err := nextPacket(fr, r.Want())
			if err != nil {
				if err == io.EOF || errors.Is(err, ErrFrame) || errors.Is(err, io.ErrUnexpectedEOF) {
					return
				}
				t.Fatal(err)
			}
			if _, err := r.Feed(m); err != nil {
				if !errors.Is(err, ErrFrame) {
					t.Fatalf("Feed error not ErrFrame: %v", err)
				}
				return
			}
		}
	})
}
