package pgtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/wire/pg"
)

// Server is a scripted PostgreSQL backend: it accepts any startup,
// answers every Query with one canned result and every Sync with
// ReadyForQuery, and records the Query texts it received (Record). With
// Named set before the first connection, it also keeps prepared statements
// and portals by name as PostgreSQL does (namedSession), and records the
// statements it ran (Ran).
type Server struct {
	ln     net.Listener
	result []byte
	mu     sync.Mutex
	got    []string
	ran    []string
	Named  bool
	wg     sync.WaitGroup
}

// NewServer starts a Server on loopback that answers Queries with result
// (which ends in ReadyForQuery) and stops when the test ends.
func NewServer(t testing.TB, result []byte) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := &Server{ln: ln, result: result}
	fs.wg.Add(1)
	go fs.serve()
	t.Cleanup(func() { ln.Close(); fs.wg.Wait() })
	return fs
}

func (fs *Server) serve() {
	defer fs.wg.Done()
	for {
		c, err := fs.ln.Accept()
		if err != nil {
			return
		}
		fs.wg.Add(1)
		go func() {
			defer fs.wg.Done()
			defer c.Close()
			fs.session(c)
		}()
	}
}

func (fs *Server) session(c net.Conn) {
	if _, err := pg.ReadStartup(c, nil); err != nil {
		return
	}
	var hello []byte
	hello, _ = (&pgproto3.AuthenticationOk{}).Encode(hello)
	hello, _ = (&pgproto3.BackendKeyData{ProcessID: 42, SecretKey: []byte{0, 0, 0, 7}}).Encode(hello)
	hello, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(hello)
	if _, err := c.Write(hello); err != nil {
		return
	}
	fr := pg.NewFramer(c, 0, 0, 0)
	all := wantAll()
	if fs.Named {
		fs.namedSession(c, fr)
		return
	}
	rows := fs.result[:len(fs.result)-6] // the canned result without its ReadyForQuery
	var out []byte
	for {
		if err := fr.Fill(); err != nil {
			return
		}
		for {
			m, err := fr.Next(all)
			if err != nil || m == nil {
				break
			}
			switch m[0] {
			case pg.MsgParse:
				out = append(out, pg.MsgParseComplete, 0, 0, 0, 4)
			case pg.MsgBind:
				out = append(out, '2', 0, 0, 0, 4)
			case pg.MsgExecute:
				out = append(out, rows...)
			case pg.MsgSync:
				out = append(out, pg.MsgReadyForQuery, 0, 0, 0, 5, 'I')
			case pg.MsgQuery:
				if testing.Testing() && fs.recording() {
					q, _ := pg.QueryText(m)
					fs.mu.Lock()
					fs.got = append(fs.got, string(q))
					fs.mu.Unlock()
				}
				if _, err := c.Write(fs.result); err != nil {
					return
				}
			case pg.MsgTerminate:
				return
			}
		}
		fr.Take()
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
			out = out[:0]
		}
	}
}

// recording is false in benchmarks, which must not allocate.
func (fs *Server) recording() bool { return fs.got != nil }

// Queries are the Query texts received since Record.
func (fs *Server) Queries() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.got[1:]...)
}

// CannedResult is a SELECT result of n rows ending in ReadyForQuery.
func CannedResult(n int) []byte {
	var b []byte
	b, _ = (&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{
		{Name: []byte("x"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1},
		{Name: []byte("t"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1},
	}}).Encode(b)
	text := bytes.Repeat([]byte("a"), 50)
	for i := 0; i < n; i++ {
		b, _ = (&pgproto3.DataRow{Values: [][]byte{[]byte("12345"), text}}).Encode(b)
	}
	b, _ = (&pgproto3.CommandComplete{CommandTag: []byte("SELECT")}).Encode(b)
	b, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(b)
	return b
}

// namedSession is the fake server's model of PostgreSQL's named objects,
// enough to test the verdict memory's bookkeeping (prepared.go): the
// extended protocol (Parse, Bind, Execute, Close, Describe, Sync) with
// one namespace of statements and one of portals, "already exists" and
// "does not exist" errors, skipping to Sync after an error; and, in simple
// Queries of one statement each, PREPARE n AS ..., EXECUTE n,
// DEALLOCATE n, BEGIN, COMMIT, ROLLBACK, DECLARE c [WITH HOLD] CURSOR FOR
// ..., FETCH ... c, CLOSE c, and "fail" (an error). Anything else in a
// Query runs as itself. Every statement that runs is recorded in ran, as
// the text the server holds for it. Portals and cursors without HOLD die
// at the end of their transaction; the status byte follows BEGIN/COMMIT.
func (fs *Server) namedSession(c net.Conn, fr *pg.Framer) {
	stmts := map[string]string{}
	type portal struct {
		sql  string
		hold bool
	}
	portals := map[string]portal{}
	inTx, failed, skipping, copyIn := false, false, false, false
	var out []byte
	ran := func(sql string) {
		fs.mu.Lock()
		fs.ran = append(fs.ran, sql)
		fs.mu.Unlock()
	}
	fail := func(code, msg string) {
		out, _ = (&pgproto3.ErrorResponse{Severity: "ERROR", Code: code, Message: msg}).Encode(out)
		if inTx {
			failed = true
		}
	}
	status := func() byte {
		switch {
		case failed:
			return 'E'
		case inTx:
			return 'T'
		}
		return 'I'
	}
	endTx := func() {
		inTx, failed = false, false
		for n, p := range portals {
			if !p.hold {
				delete(portals, n)
			}
		}
	}
	complete := func(tag string) {
		out, _ = (&pgproto3.CommandComplete{CommandTag: []byte(tag)}).Encode(out)
	}
	// run executes one SQL statement the fake understands.
	run := func(sql string) {
		f := strings.Fields(strings.ToLower(strings.TrimSuffix(sql, ";")))
		if len(f) == 0 {
			complete("EMPTY")
			return
		}
		if f[0] == "sentinel" {
			complete(sql) // the tag tells the client this answer apart, in any state
			return
		}
		if failed && f[0] != "rollback" && f[0] != "commit" {
			fail("25P02", "current transaction is aborted")
			return
		}
		switch {
		case f[0] == "copy" && f[len(f)-1] == "stdin":
			// CopyInResponse: text, no columns
			out = append(out, 'G', 0, 0, 0, 7, 0, 0, 0)
			copyIn = true
		case strings.HasPrefix(f[0], "sqlfw_blocked_"):
			fail("42601", `syntax error at or near "`+strings.Fields(sql)[0]+`"`)
		case f[0] == "fail":
			fail("22012", "division by zero")
		case f[0] == "begin":
			inTx = true
			complete("BEGIN")
		case f[0] == "commit" || f[0] == "rollback":
			endTx()
			complete(strings.ToUpper(f[0]))
		case f[0] == "prepare" && len(f) > 3:
			if _, ok := stmts[f[1]]; ok {
				fail("42P05", `prepared statement "`+f[1]+`" already exists`)
				return
			}
			i := strings.Index(strings.ToLower(sql), " as ")
			stmts[f[1]] = strings.TrimSpace(sql[i+4:])
			complete("PREPARE")
		case f[0] == "execute":
			q, ok := stmts[f[1]]
			if !ok {
				fail("26000", `prepared statement "`+f[1]+`" does not exist`)
				return
			}
			ran(q)
			complete("SELECT 1")
		case f[0] == "deallocate":
			delete(stmts, f[len(f)-1])
			complete("DEALLOCATE")
		case f[0] == "declare":
			if _, ok := portals[f[1]]; ok {
				fail("42P03", `cursor "`+f[1]+`" already exists`)
				return
			}
			hold := strings.Contains(strings.Join(f, " "), "with hold")
			if !inTx && !hold {
				fail("25P01", "DECLARE CURSOR can only be used in transaction blocks")
				return
			}
			i := strings.Index(strings.ToLower(sql), " for ")
			portals[f[1]] = portal{sql: strings.TrimSpace(sql[i+5:]), hold: hold}
			complete("DECLARE CURSOR")
		case f[0] == "fetch" || f[0] == "move":
			p, ok := portals[f[len(f)-1]]
			if !ok {
				fail("34000", `cursor "`+f[len(f)-1]+`" does not exist`)
				return
			}
			ran(p.sql)
			complete("FETCH 1")
		case f[0] == "close":
			delete(portals, f[1])
			complete("CLOSE CURSOR")
		default:
			ran(sql)
			complete("SELECT 1")
		}
	}
	for {
		if err := fr.Fill(); err != nil {
			return
		}
		for {
			m, err := fr.Next(wantAll())
			if err != nil || m == nil {
				break
			}
			if copyIn {
				// PostgreSQL ignores Sync and Flush during COPY FROM
				// STDIN (CopyGetData); a simple Query's COPY ends with
				// CopyDone.
				if m[0] == pg.MsgCopyDone {
					copyIn = false
					complete("COPY 0")
					out, _ = (&pgproto3.ReadyForQuery{TxStatus: status()}).Encode(out)
				}
				continue
			}
			if skipping && m[0] != pg.MsgSync {
				continue
			}
			switch m[0] {
			case pg.MsgQuery:
				q, _ := pg.QueryText(m)
				fs.mu.Lock()
				fs.got = append(fs.got, string(q))
				fs.mu.Unlock()
				run(string(q))
				if copyIn {
					continue // ReadyForQuery after CopyDone
				}
				if !inTx {
					// an implicit transaction
					endTx()
				}
				out, _ = (&pgproto3.ReadyForQuery{TxStatus: status()}).Encode(out)
			case pg.MsgParse:
				name, sql, _ := pg.ParseFields(m)
				switch {
				case strings.HasPrefix(string(sql), "sqlfw_blocked_"):
					fail("42601", `syntax error at or near "`+string(sql)+`"`)
					skipping = true
				case len(name) > 0 && stmts[string(name)] != "":
					fail("42P05", `prepared statement "`+string(name)+`" already exists`)
					skipping = true
				default:
					stmts[string(name)] = string(sql)
					out = append(out, pg.MsgParseComplete, 0, 0, 0, 4)
				}
			case pg.MsgBind:
				portalName, stmt, _ := pg.BindNames(m)
				sql, ok := stmts[string(stmt)]
				_, busy := portals[string(portalName)]
				switch {
				case !ok:
					fail("26000", `prepared statement "`+string(stmt)+`" does not exist`)
					skipping = true
				case busy && len(portalName) > 0:
					fail("42P03", `cursor "`+string(portalName)+`" already exists`)
					skipping = true
				default:
					portals[string(portalName)] = portal{sql: sql}
					out = append(out, '2', 0, 0, 0, 4)
				}
			case pg.MsgExecute:
				name, _ := pg.ExecutePortal(m)
				p, ok := portals[string(name)]
				if !ok {
					fail("34000", `portal "`+string(name)+`" does not exist`)
					skipping = true
					break
				}
				before := len(out)
				run(p.sql)
				if len(out) > before && out[before] == 'E' {
					skipping = true
				}
			case pg.MsgClose:
				kind, name, _ := pg.CloseTarget(m)
				if kind == 'S' {
					delete(stmts, string(name))
				} else {
					delete(portals, string(name))
				}
				out = append(out, pg.MsgCloseComplete, 0, 0, 0, 4)
			case 'D':
				out = append(out, 'n', 0, 0, 0, 4)
			case pg.MsgSync:
				skipping = false
				if !inTx {
					endTx()
				}
				out, _ = (&pgproto3.ReadyForQuery{TxStatus: status()}).Encode(out)
			case pg.MsgTerminate:
				return
			}
		}
		fr.Take()
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
			out = out[:0]
		}
	}
}

// ranText reports whether the server ran sql.
func (fs *Server) RanText(sql string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, r := range fs.ran {
		if r == sql {
			return true
		}
	}
	return false
}

func (fs *Server) ResetRan() {
	fs.mu.Lock()
	fs.ran = nil
	fs.mu.Unlock()
}

// Upstream runs serve for every connection to a new listener and
// returns its address.
func Upstream(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// Silent reads the startup packet and then sends hello (nil:
// nothing at all) and reads and discards whatever comes, without ever
// answering more: a server that went silent.
func Silent(t *testing.T, hello []byte) string {
	t.Helper()
	return Upstream(t, func(c net.Conn) {
		if hello != nil {
			if _, err := pg.ReadStartup(c, nil); err != nil {
				return
			}
			c.Write(hello)
		}
		io.Copy(io.Discard, c)
	})
}

func StartupMsg() []byte {
	b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "u", "database": "d"}}).Encode(nil)
	return b
}

func WantFatal(t *testing.T, rc *Client, code string) []byte {
	t.Helper()
	m, err := rc.ReadMsg()
	for err == nil && m[0] != pg.MsgErrorResponse {
		m, err = rc.ReadMsg()
	}
	if err != nil || string(pg.ErrorField(m, 'S')) != "FATAL" || string(pg.ErrorField(m, 'C')) != code {
		t.Fatalf("got %q, %v; want FATAL %s", m, err, code)
	}
	if _, err := rc.ReadMsg(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after the FATAL error the connection is still open (%v)", err)
	}
	return m
}

// Client speaks the protocol by hand, so tests can send anything.
type Client struct {
	Conn net.Conn
	t    testing.TB
}

func Dial(t testing.TB, addr string) *Client {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return &Client{Conn: c, t: t}
}

func (rc *Client) Startup() {
	rc.t.Helper()
	b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "u", "database": "d"}}).Encode(nil)
	rc.Write(b)
	rc.ReadUntilReady()
}

func (rc *Client) Write(b []byte) {
	rc.t.Helper()
	if _, err := rc.Conn.Write(b); err != nil {
		rc.t.Fatal(err)
	}
}

// readUntilReady reads messages up to and including ReadyForQuery and
// returns them.
func (rc *Client) ReadUntilReady() [][]byte {
	rc.t.Helper()
	var out [][]byte
	for {
		m, err := rc.ReadMsg()
		if err != nil {
			rc.t.Fatalf("reading: %v (after %d messages)", err, len(out))
		}
		out = append(out, m)
		if m[0] == pg.MsgReadyForQuery {
			return out
		}
	}
}

func (rc *Client) ReadMsg() ([]byte, error) {
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(rc.Conn, hdr); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 || n > 1<<20 {
		return nil, errors.New("bad length from daemon")
	}
	m := make([]byte, 1+n)
	copy(m, hdr)
	_, err := io.ReadFull(rc.Conn, m[5:])
	return m, err
}

// Query is a simple Query message.
func Query(sql string) []byte { return pg.AppendQuery(nil, sql) }

// Field is a field of an ErrorResponse ('S' severity, 'C' code, 'M'
// message).
func Field(msg []byte, f byte) []byte { return pg.ErrorField(msg, f) }

// wantAll frames every message type.
func wantAll() *[256]bool {
	var t [256]bool
	for i := range t {
		t[i] = true
	}
	return &t
}

// Addr is the server's address.
func (fs *Server) Addr() string { return fs.ln.Addr().String() }

// Record makes the server record the Query texts it receives from now on
// (Queries); benchmarks leave it off, as recording allocates.
func (fs *Server) Record() {
	fs.mu.Lock()
	fs.got = []string{"(recording)"}
	fs.mu.Unlock()
}

// Ran is what a Named server ran since the last ResetRan.
func (fs *Server) Ran() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.ran...)
}
