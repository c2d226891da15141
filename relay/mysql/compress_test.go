package mysql

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/relay/relaytest"

	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// comp is plain packets as compressed packets numbered from seq, split
// after each byte count in cuts (a packet may begin in one and end in the
// next), each compressed when it is long enough.
func comp(seq int, plain []byte, cuts ...int) []byte {
	var out bytes.Buffer
	c := wire.NewCompressor(&out)
	c.SetSeq(seq)
	at := 0
	for _, n := range append(cuts, len(plain)) {
		_, _ = c.Write(plain[at:n])
		at = n
	}
	return out.Bytes()
}

// expectComp reads compressed packets starting at id seq, consecutive,
// until they inflate to as many bytes as want, and wants those bytes.
func expectComp(seq int, want []byte) step {
	return relaytest.StepFunc(func(c net.Conn) error {
		var got []byte
		for len(got) < len(want) {
			var h [wire.CompHeaderLen]byte
			if _, err := io.ReadFull(c, h[:]); err != nil {
				return fmt.Errorf("after %q: %w", got, err)
			}
			if int(h[3]) != seq {
				return fmt.Errorf("compressed packet id %d, want %d", h[3], seq)
			}
			clen := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
			p := make([]byte, clen)
			if _, err := io.ReadFull(c, p); err != nil {
				return err
			}
			d := wire.NewDecompressor(bytes.NewReader(nil), append(h[:], p...))
			b := make([]byte, wire.MaxCompPayload)
			n, err := d.Read(b)
			if err != nil {
				return err
			}
			got = append(got, b[:n]...)
			seq = (seq + 1) & 0xff
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("inflated %q, want %q", got, want)
		}
		return nil
	})
}

// compLogin is both sides' steps of a login that agrees on compression;
// the OK is plain, everything after it compressed.
func compLogin() (server, client []step) {
	hello := handshakeResponse(clientCaps|wire.CapCompress, "app", "shop")
	return []step{send(greeting(serverCaps)), expect(hello), send(ok(2, autocommit))},
		[]step{expectFunc(checkGreeting), send(hello), expect(ok(2, autocommit))}
}

func TestCompressedSession(t *testing.T) {
	long := "select '" + strings.Repeat("0123456789", 40) + "'" // compressed: over MinCompressLength
	for _, tc := range []struct {
		name           string
		server, client []step
	}{
		{"a short command below the threshold, its answer",
			[]step{expectComp(0, query("select 1")), send(comp(1, resultSet(autocommit)))},
			[]step{send(comp(0, query("select 1"))), expectComp(1, resultSet(autocommit))}},
		{"a command across two compressed packets, the answer continues after them",
			[]step{expectComp(0, query(long)), send(comp(1, ok(1, autocommit)))},
			[]step{send(comp(0, query(long), 100)), expectComp(2, ok(1, autocommit))}},
		{"a compressed packet holding two commands: one write, at id 0",
			[]step{expectComp(0, bytes.Join([][]byte{query("select 1"), query("select 2")}, nil)),
				send(comp(1, resultSet(autocommit))), send(comp(2, resultSet(autocommit)))},
			[]step{send(comp(0, bytes.Join([][]byte{query("select 1"), query("select 2")}, nil))),
				expectComp(1, resultSet(autocommit)), expectComp(2, resultSet(autocommit))}},
		{"the next command starts at id 0 again on the server leg",
			// the server numbers its OK's inner id from its count of
			// compressed packets, not after the command's inner id
			[]step{expectComp(0, query(long)), send(comp(1, ok(3, autocommit))), expectComp(0, query("select 1")), send(comp(1, resultSet(autocommit)))},
			[]step{send(comp(0, query(long), 30, 200)), expectComp(3, ok(3, autocommit)),
				send(comp(0, query("select 1"))), expectComp(1, resultSet(autocommit))}},
		{"a blocked command is answered compressed and never sent",
			[]step{expectComp(0, query("select 1")), send(comp(1, resultSet(autocommit)))},
			[]step{send(comp(0, query("delete from t"))), expectCompErr(1, "no-delete"),
				send(comp(0, query("select 1"))), expectComp(1, resultSet(autocommit))}},
		{"one byte at a time",
			[]step{expectComp(0, query(long)), sendBytewise(comp(1, resultSet(autocommit)))},
			[]step{sendBytewise(comp(0, query(long))), expectComp(1, resultSet(autocommit))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv, cli := compLogin()
			h.run(t, append(srv, tc.server...), append(cli, tc.client...))
		})
	}
}

// expectCompErr wants one compressed packet at id seq holding sqlfw's ERR.
func expectCompErr(seq int, sub string) step { return expectCompErrCode(seq, errBlocked, sub) }

// expectCompErrCode wants one compressed packet at id seq holding an ERR
// with code whose message contains sub.
func expectCompErrCode(seq int, code uint16, sub string) step {
	return relaytest.StepFunc(func(c net.Conn) error {
		var h [wire.CompHeaderLen]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return err
		}
		clen := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
		p := make([]byte, clen)
		if _, err := io.ReadFull(c, p); err != nil {
			return err
		}
		if int(h[3]) != seq {
			return fmt.Errorf("compressed packet id %d, want %d", h[3], seq)
		}
		d := wire.NewDecompressor(bytes.NewReader(nil), append(h[:], p...))
		b := make([]byte, wire.MaxCompPayload)
		n, err := d.Read(b)
		if err != nil {
			return err
		}
		e, err := wire.ParseErr(b[wire.HeaderLen:n])
		if err != nil || e.Code != code || !strings.Contains(string(e.Message), sub) {
			return fmt.Errorf("inflated %q, want sqlfw's ERR naming %s", b[:n], sub)
		}
		return nil
	})
}

// A malformed compressed packet (zlib data that does not inflate to what
// its header says, or garbage) closes the session with a protocol error
// and a log line; nothing reaches the server.
func TestCompressedMalformed(t *testing.T) {
	good := comp(0, query("select '"+strings.Repeat("x", 200)+"'"))
	short := append([]byte(nil), good...)
	short[4]++ // the header claims one byte more than the data inflates to
	trailing := append(append([]byte(nil), good...), 0)
	trailing[0]++ // one byte after the zlib stream
	for _, tc := range []struct {
		name string
		bad  []byte
	}{
		{"garbage", append([]byte{20, 0, 0, 0, 100, 0, 0}, bytes.Repeat([]byte{0x55}, 20)...)},
		{"inflates short", short},
		{"data after the zlib stream", trailing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv, cli := compLogin()
			h.run(t, append(srv, expectClosed()), append(cli, send(tc.bad), expectCompErrCode(1, errMalformed, "malformed packet"), expectClosed()))
			if h.Counts[relay.ProtocolErrors].Load() != 1 {
				t.Errorf("ProtocolErrors %d, want 1", h.Counts[relay.ProtocolErrors].Load())
			}
			if !strings.Contains(h.Logs.String(), "malformed compressed packet") {
				t.Errorf("log: %s\nwant a line naming the malformed compressed packet", h.Logs)
			}
		})
	}
}

// A client asking for compression the greeting did not offer is refused.
func TestCompressionNotOffered(t *testing.T) {
	h := newHarness(t)
	h.run(t, []step{send(greeting(serverCaps &^ wire.CapCompress)), expectClosed()},
		[]step{expectFunc(func([]byte) error { return nil }), send(handshakeResponse(clientCaps|wire.CapCompress, "app", "shop")),
			expectErr(2, errHandshake, "08S01", "compression is not offered"), expectClosed()})
}
