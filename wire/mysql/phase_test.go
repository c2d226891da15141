package mysql

import (
	"bytes"
	"errors"
	"testing"
	"testing/iotest"
)

// Packets of a response, as payloads.
var (
	pOK       = []byte{0, 0, 0, 2, 0, 0, 0}
	pOKMore   = []byte{0, 1, 0, 0x0a, 0, 0, 0} // SERVER_MORE_RESULTS_EXISTS | AUTOCOMMIT
	pOKTrans  = []byte{0, 0, 0, 3, 0, 0, 0}
	pEOF      = []byte{0xfe, 0, 0, 2, 0}
	pEOFMore  = []byte{0xfe, 0, 0, 0x0a, 0}
	pEOFCurs  = []byte{0xfe, 0, 0, 0x42, 0} // CURSOR_EXISTS
	pEnd      = []byte{0xfe, 0, 0, 2, 0, 0, 0}
	pEndMore  = []byte{0xfe, 0, 0, 0x0a, 0, 0, 0}
	pErr      = append([]byte{0xff, 0x7a, 0x04, '#', '4', '2', 'S', '0', '2'}, "Table 't' doesn't exist"...)
	pProgress = append([]byte{0xff, 0xff, 0xff, 1, 1, 1, 0x10, 0, 0, 3}, "ALT"...)
	pCount2   = []byte{2}
	pDef      = append([]byte{3}, "def\x00\x00\x00\x01a\x00\x0c\x3f\x00\x0b\x00\x00\x00\x03\x00\x00\x00\x00\x00"...)
	pRow      = []byte{1, '1', 0xfb}
	pBinRow   = []byte{0, 0, 1, 0, 0, 0}
	pInfile   = append([]byte{0xfb}, "data.csv"...)
	pPrepOK   = []byte{0, 7, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0} // statement 7, 1 column, 2 params
	pPrepNone = []byte{0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	pSwitch   = append([]byte{0xfe}, "mysql_native_password\x00abcdefghijklmnopqrst\x00"...)
	pMore     = []byte{1, 3} // caching_sha2_password fast auth success
)

const (
	capsOld = CapProtocol41 | CapTransactions | CapSecureConnection | CapPluginAuth | CapMultiResults
	capsNew = capsOld | CapDeprecateEOF | CapSessionTrack
)

type respCase struct {
	name string
	caps Caps
	cmd  byte
	auth bool
	pkts [][]byte
	// failed: ends with an ERR; infile: index of the packet after which
	// Infile is true (0: never)
	failed bool
	infile int
}

var respCases = []respCase{
	{name: "ok", caps: capsNew, cmd: ComPing, pkts: [][]byte{pOK}},
	{name: "err", caps: capsNew, cmd: ComQuery, pkts: [][]byte{pErr}, failed: true},
	{name: "text eof", caps: capsOld, cmd: ComQuery, pkts: [][]byte{pCount2, pDef, pDef, pEOF, pRow, pRow, pEOF}},
	{name: "text deprecate-eof", caps: capsNew, cmd: ComQuery, pkts: [][]byte{pCount2, pDef, pDef, pRow, pRow, pEnd}},
	{name: "empty result", caps: capsNew, cmd: ComQuery, pkts: [][]byte{pCount2, pDef, pDef, pEnd}},
	{name: "err in rows", caps: capsNew, cmd: ComQuery, pkts: [][]byte{pCount2, pDef, pDef, pRow, pErr}, failed: true},
	{name: "multi eof", caps: capsOld, cmd: ComQuery, pkts: [][]byte{pOKMore, pCount2, pDef, pDef, pEOF, pRow, pEOFMore, pCount2, pDef, pDef, pEOF, pEOF}},
	{name: "multi deprecate-eof", caps: capsNew, cmd: ComQuery, pkts: [][]byte{pOKMore, pCount2, pDef, pDef, pRow, pEndMore, pOKMore, pOKTrans}},
	{name: "multi then err", caps: capsNew, cmd: ComQuery, pkts: [][]byte{pOKMore, pErr}, failed: true},
	{name: "infile", caps: capsNew, cmd: ComQuery, pkts: [][]byte{pInfile, pOK}, infile: 1},
	{name: "infile in multi", caps: capsNew, cmd: ComQuery, pkts: [][]byte{pOKMore, pInfile, pErr}, infile: 2, failed: true},
	{name: "binary eof", caps: capsOld, cmd: ComStmtExecute, pkts: [][]byte{pCount2, pDef, pDef, pEOF, pBinRow, pBinRow, pEOF}},
	{name: "binary deprecate-eof", caps: capsNew, cmd: ComStmtExecute, pkts: [][]byte{pCount2, pBinRow, pEnd}}, // cached metadata
	{name: "binary ok", caps: capsNew, cmd: ComStmtExecute, pkts: [][]byte{pOK}},
	{name: "cursor", caps: capsOld, cmd: ComStmtExecute, pkts: [][]byte{pCount2, pDef, pDef, pEOFCurs}},
	{name: "fetch", caps: capsOld, cmd: ComStmtFetch, pkts: [][]byte{pBinRow, pBinRow, {0xfe, 0, 0, 0xc2, 0}}},
	{name: "fetch err", caps: capsOld, cmd: ComStmtFetch, pkts: [][]byte{pErr}, failed: true},
	{name: "prepare eof", caps: capsOld, cmd: ComStmtPrepare, pkts: [][]byte{pPrepOK, pDef, pDef, pEOF, pDef, pEOF}},
	{name: "prepare deprecate-eof", caps: capsNew, cmd: ComStmtPrepare, pkts: [][]byte{pPrepOK, pDef, pDef, pDef}},
	{name: "prepare nothing", caps: capsOld, cmd: ComStmtPrepare, pkts: [][]byte{pPrepNone}},
	{name: "prepare err", caps: capsOld, cmd: ComStmtPrepare, pkts: [][]byte{pErr}, failed: true},
	{name: "field list eof", caps: capsOld, cmd: ComFieldList, pkts: [][]byte{pDef, pDef, pEOF}},
	{name: "field list ok", caps: capsNew, cmd: ComFieldList, pkts: [][]byte{pDef, pEnd}},
	{name: "statistics", caps: capsNew, cmd: ComStatistics, pkts: [][]byte{[]byte("Uptime: 5  Threads: 1")}},
	{name: "set option", caps: capsOld, cmd: ComSetOption, pkts: [][]byte{pEOF}},
	{name: "progress", caps: capsNew | CapMariaDBProgress, cmd: ComQuery, pkts: [][]byte{pProgress, pProgress, pOK}},
	{name: "change user", caps: capsNew, cmd: ComChangeUser, pkts: [][]byte{pSwitch, pOK}},
	{name: "auth", caps: capsNew, auth: true, pkts: [][]byte{pSwitch, pMore, pOKMore}},
	// caching_sha2_password's full path: perform full authentication, the
	// RSA public key on request, then OK
	{name: "auth sha2 full", caps: capsNew, auth: true, pkts: [][]byte{{1, 4}, append([]byte{1}, "-----BEGIN PUBLIC KEY-----\n"...), pOK}},
	{name: "cursor deprecate-eof", caps: capsNew, cmd: ComStmtExecute, pkts: [][]byte{pCount2, pDef, pDef, pEOFCurs}},
	{name: "auth refused", caps: capsNew, auth: true, pkts: [][]byte{pErr}, failed: true},
	// a replica's non-blocking dump: events (00, a 19-byte header, ...) up to EOF
	{name: "binlog dump", caps: capsNew, cmd: ComBinlogDump, pkts: [][]byte{pEvent, pEvent, pEOF}},
	{name: "binlog dump gtid refused", caps: capsNew, cmd: ComBinlogDumpGTID, pkts: [][]byte{pEvent, pErr}, failed: true},
	{name: "register slave", caps: capsNew, cmd: ComRegisterSlave, pkts: [][]byte{pOK}},
}

// pEvent is a binlog event packet: 00, then a ROTATE_EVENT header.
var pEvent = []byte{0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0x2c, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 4, 0, 0, 0, 0, 0, 0, 0, 'b', 'i', 'n', '.', '1'}

func (tc respCase) begin(r *Response) {
	if tc.auth {
		r.BeginAuth()
	} else if !r.Begin(tc.cmd) {
		panic("no response")
	}
}

// TestResponseFeed feeds every packet, as a relay that wants them all does.
func TestResponseFeed(t *testing.T) {
	for _, tc := range respCases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResponse(tc.caps)
			tc.begin(r)
			for i, p := range tc.pkts {
				done, err := r.Feed(pkt(1+i, p...))
				if err != nil {
					t.Fatalf("packet %d (%x): %v", i, p, err)
				}
				if last := i == len(tc.pkts)-1; done != last || r.Done() != last {
					t.Fatalf("packet %d (%x): done %v, want %v", i, p, done, last)
				}
				if r.Infile() != (tc.infile == i+1) {
					t.Fatalf("packet %d: Infile %v", i, r.Infile())
				}
			}
			if r.Failed() != tc.failed {
				t.Fatalf("Failed %v, want %v", r.Failed(), tc.failed)
			}
		})
	}
}

// TestResponseFramed frames each response as a relay does, one byte at a
// time, feeding only what Want asks for, and checks that the response is
// complete exactly when its last byte has been read.
func TestResponseFramed(t *testing.T) {
	for _, tc := range respCases {
		for _, size := range []int{5, DefaultBufferSize} {
			t.Run(tc.name, func(t *testing.T) {
				var in []byte
				for i, p := range tc.pkts {
					in = append(in, pkt(1+i, p...)...)
				}
				r := NewResponse(tc.caps)
				tc.begin(r)
				fr := NewFramer(iotest.OneByteReader(bytes.NewReader(in)), size, 0, 0)
				fr.SetWantLong(false)
				fr.Expect(1)
				read, fed := 0, 0
				for !r.Done() {
					if err := fr.Fill(); err != nil {
						t.Fatalf("after %d bytes, %d packets fed: %v", read, fed, err)
					}
					read++
					for !r.Done() {
						m, err := fr.Next(r.Want())
						if err != nil {
							t.Fatal(err)
						}
						if m == nil {
							break
						}
						fed++
						if _, err := r.Feed(m); err != nil {
							t.Fatal(err)
						}
						fr.TakeBefore(m)
					}
					fr.Take()
				}
				if read != len(in) || fr.Buffered() != 0 {
					t.Fatalf("done after %d of %d bytes", read, len(in))
				}
				if r.Failed() != tc.failed {
					t.Fatalf("Failed %v", r.Failed())
				}
			})
		}
	}
}

func TestResponseLongRow(t *testing.T) {
	// a text row whose first value is 16 MiB: it starts with 0xfe like an
	// EOF, and is long
	row := append([]byte{0xfe}, bytes.Repeat([]byte{0}, 8)...)
	row[1], row[4] = 0, 1 // 1<<24 bytes
	row = append(row, bytes.Repeat([]byte("v"), 1<<24)...)
	in := cat(pkt(1, pCount2...), pkt(2, pDef...), pkt(3, pDef...), pkt(4, row...), pkt(6, pEnd...))
	for _, wantLong := range []bool{false, true} {
		r := NewResponse(capsNew)
		r.Begin(ComQuery)
		fr := NewFramer(bytes.NewReader(in), 0, 32<<20, 0)
		fr.SetWantLong(wantLong)
		fed := 0
		for !r.Done() {
			if err := fr.Fill(); err != nil {
				t.Fatal(err)
			}
			for !r.Done() {
				m, err := fr.Next(r.Want())
				if err != nil {
					t.Fatal(err)
				}
				if m == nil {
					break
				}
				fed++
				if _, err := r.Feed(m); err != nil {
					t.Fatal(err)
				}
				fr.TakeBefore(m)
			}
			fr.Take()
		}
		if want := map[bool]int{false: 2, true: 3}[wantLong]; fed != want {
			t.Fatalf("wantLong %v: fed %d packets, want %d", wantLong, fed, want)
		}
	}
}

func TestResponseErrors(t *testing.T) {
	r := NewResponse(capsNew)
	for _, cmd := range []byte{ComQuit, ComStmtClose, ComStmtSendLongData} {
		if r.Begin(cmd) || !r.Done() {
			t.Fatalf("%s expects a response", CommandName(cmd))
		}
	}
	for _, tc := range []struct {
		name string
		cmd  byte
		pkts [][]byte
	}{
		{"after done", ComPing, [][]byte{pOK, pOK}},
		{"prepare answered by a column count", ComStmtPrepare, [][]byte{pCount2}},
		{"zero columns", ComQuery, [][]byte{{0xfc, 0, 0}}},
		{"eof first", ComQuery, [][]byte{pEOF}},
		{"row after infile", ComQuery, [][]byte{pInfile, pRow}},
		{"auth garbage", ComChangeUser, [][]byte{{0x42}}},
		{"empty", ComQuery, [][]byte{{}}},
	} {
		r.Begin(tc.cmd)
		var err error
		for _, p := range tc.pkts {
			if _, err = r.Feed(pkt(1, p...)); err != nil {
				break
			}
		}
		if !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// an ERR when nothing is in flight (the server closing an idle
	// connection) is not a desync
	r.Begin(ComPing)
	r.Feed(pkt(1, pOK...))
	if done, err := r.Feed(pkt(0, pErr...)); err != nil || !done || !r.Failed() {
		t.Fatalf("unsolicited ERR: %v %v", done, err)
	}
}

func TestResponseState(t *testing.T) {
	r := NewResponse(capsNew)
	r.Begin(ComQuery)
	r.Feed(pkt(1, pOKTrans...))
	if !r.InTransaction() || r.Status() != StatusInTrans|StatusAutocommit || r.Results() != 1 {
		t.Fatalf("status %x, results %d", r.Status(), r.Results())
	}
	r.Begin(ComStmtPrepare)
	if _, ok := r.Prepared(); ok {
		t.Fatal("Prepared before PREPARE_OK")
	}
	for i, p := range [][]byte{pPrepOK, pDef, pDef, pDef} {
		r.Feed(pkt(1+i, p...))
	}
	if p, ok := r.Prepared(); !ok || p.StmtID != 7 || p.Columns != 1 || p.Params != 2 {
		t.Fatalf("Prepared %+v %v", p, ok)
	}
	r.Begin(ComQuery)
	if _, ok := r.Prepared(); ok {
		t.Fatal("Prepared after another command")
	}
}
