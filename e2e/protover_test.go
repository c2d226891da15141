package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
)

// Protocol 3.2 (PostgreSQL 18) and NegotiateProtocolVersion, against
// whichever server the run has (scripts/test.sh runs these against 15 and
// 18, the matrix against 14 to 18: docs/testing.md). What a client sees
// through sqlfwd must be what it sees straight from the server: the same
// NegotiateProtocolVersion (or none), the same cancel key length, and a
// cancel that reaches its backend whatever the key's length.

// serverVersionNum is the server's server_version_num, asked directly.
func serverVersionNum(t *testing.T) int {
	t.Helper()
	v := directInts(t, "select current_setting('server_version_num')::int")
	if len(v) != 1 {
		t.Fatalf("server_version_num: got %v", v)
	}
	return v[0]
}

// newestMinor is the newest protocol 3 minor version of the server.
func newestMinor(version int) uint32 {
	if version >= 180000 {
		return 2
	}
	return 0
}

// startupReply is what a server said to a StartupMessage, up to its first
// ReadyForQuery or error.
type startupReply struct {
	negotiate *pgproto3.NegotiateProtocolVersion // nil: none came
	keyLen    int                                // the BackendKeyData secret's length
	err       string                             // SQLSTATE and message of an ErrorResponse
}

func (r startupReply) String() string {
	s := "no NegotiateProtocolVersion"
	if r.negotiate != nil {
		s = fmt.Sprintf("NegotiateProtocolVersion(newest %d.%d, unrecognised %q)", r.negotiate.NewestMinorProtocol>>16, r.negotiate.NewestMinorProtocol&0xffff, r.negotiate.UnrecognizedOptions)
	}
	if r.err != "" {
		return s + ", error " + r.err
	}
	return fmt.Sprintf("%s, %d-byte cancel secret", s, r.keyLen)
}

// rawSession opens a session asking for protocol 3.minor with params
// (user and database added), reads the startup reply, then runs each of
// sqls as a simple Query and returns the SQLSTATE each got ("" for none).
func rawSession(t *testing.T, addr string, minor uint32, params map[string]string, sqls ...string) (startupReply, []string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	p := map[string]string{"user": pg.User, "database": pg.Database}
	for k, v := range params {
		p[k] = v
	}
	fe := pgproto3.NewFrontend(c, c)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: 3<<16 | minor, Parameters: p})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var r startupReply
	for done := false; !done; {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("%s, startup 3.%d %v: %v (so far: %v)", addr, minor, params, err, r)
		}
		switch m := msg.(type) {
		case *pgproto3.NegotiateProtocolVersion:
			// in the order sent, which is a map's here: sorted
			r.negotiate = &pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: m.NewestMinorProtocol, UnrecognizedOptions: slices.Sorted(slices.Values(m.UnrecognizedOptions))}
		case *pgproto3.BackendKeyData:
			r.keyLen = len(m.SecretKey)
		case *pgproto3.ErrorResponse:
			r.err = m.Code + " " + m.Message
			return r, nil
		case *pgproto3.ReadyForQuery:
			done = true
		}
	}
	var codes []string
	for _, sql := range sqls {
		fe.Send(&pgproto3.Query{String: sql})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		code := ""
		for done := false; !done; {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatalf("%s: %s: %v", addr, sql, err)
			}
			switch m := msg.(type) {
			case *pgproto3.ErrorResponse:
				code = m.Code
			case *pgproto3.ReadyForQuery:
				done = true
			}
		}
		codes = append(codes, code)
	}
	fe.Send(&pgproto3.Terminate{})
	_ = fe.Flush()
	return r, codes
}

// TestProtocolNegotiation asks for 3.0 with an extension, 3.2, 3.2 with
// extensions and 3.9, through sqlfwd and straight to the server: the
// client must get the same NegotiateProtocolVersion (PostgreSQL 14–17
// answer a 3.2 request with newest minor 0; 18 speaks 3.2 and answers 3.9
// with 2; both send the version whole, 3<<16 | minor) and the same cancel key (32 bytes from 18 under 3.2, else 4), and
// sqlfwd still judges the session: a WHERE-less DELETE is blocked and
// never reaches the table.
func TestProtocolNegotiation(t *testing.T) {
	needSqlfwd(t)
	version := serverVersionNum(t)
	srvMinor := newestMinor(version)
	freshTable(t, "sqlfw_protover", 1, 2, 3)
	host, port := target(t)
	via := net.JoinHostPort(host, fmt.Sprint(port))
	directAddr := net.JoinHostPort(pg.Host, fmt.Sprint(pg.Port))
	ext := map[string]string{"_pq_.sqlfw_test_ext": "on"}
	ext2 := map[string]string{"_pq_.sqlfw_a": "1", "_pq_.sqlfw_b": "2"}
	for _, tc := range []struct {
		minor  uint32
		params map[string]string
	}{{0, nil}, {0, ext}, {2, nil}, {2, ext}, {2, ext2}, {9, nil}, {9, ext}} {
		name := fmt.Sprintf("3.%d %v", tc.minor, tc.params)
		t.Run(name, func(t *testing.T) {
			got, codes := rawSession(t, via, tc.minor, tc.params, "select 1", "delete from sqlfw_protover")
			want, _ := rawSession(t, directAddr, tc.minor, tc.params)
			if got.String() != want.String() {
				t.Errorf("PostgreSQL %d, startup %s\nthrough sqlfwd: %v\ndirect:         %v\nwant the same", version, name, got, want)
			}
			// and what the protocol says it must be
			neg := min(tc.minor, srvMinor)
			wantNeg := tc.minor > srvMinor || len(tc.params) > 0
			if (got.negotiate != nil) != wantNeg || (got.negotiate != nil && (got.negotiate.NewestMinorProtocol != 3<<16|neg || len(got.negotiate.UnrecognizedOptions) != len(tc.params))) {
				t.Errorf("PostgreSQL %d, startup %s: got %v, want NegotiateProtocolVersion %v with newest 3.%d listing %d options", version, name, got, wantNeg, neg, len(tc.params))
			}
			wantKey := 4
			if neg >= 2 {
				wantKey = 32
			}
			if got.keyLen != wantKey || got.err != "" {
				t.Errorf("PostgreSQL %d, startup %s: got %v, want a %d-byte secret under 3.%d", version, name, got, wantKey, neg)
			}
			if len(codes) != 2 || codes[0] != "" || codes[1] != codeBlocked {
				t.Errorf("PostgreSQL %d, startup %s: select 1 then delete from sqlfw_protover got SQLSTATEs %q, want \"\" then %s", version, name, codes, codeBlocked)
			}
		})
	}
	if n := directInts(t, "select count(*)::int from sqlfw_protover"); len(n) != 1 || n[0] != 3 {
		t.Errorf("sqlfw_protover has %v rows after the blocked DELETEs, want 3", n)
	}
}

// TestProtocol32Cancel: pgx asking for 3.2 through sqlfwd gets PostgreSQL
// 18's 32-byte cancel key (4 bytes from older servers, which answer
// NegotiateProtocolVersion), and cancelling a query sends a CancelRequest
// carrying the whole key, which sqlfwd must route to the query's backend:
// it ends with 57014 and a second session's query is untouched. A client
// that insists on 3.2 (min_protocol_version) is refused by an older server
// through sqlfwd as directly.
func TestProtocol32Cancel(t *testing.T) {
	needSqlfwd(t)
	version := serverVersionNum(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(targetDSN(t) + " max_protocol_version=3.2")
	if err != nil {
		t.Fatal(err)
	}
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 8 * time.Second}
	}
	victim := connectConfig(t, ctx, cfg)
	bystander := connectConfig(t, ctx, cfg)
	wantKey := 4
	if version >= 180000 {
		wantKey = 32
	}
	if n := len(victim.PgConn().SecretKey()); n != wantKey {
		t.Errorf("PostgreSQL %d, pgx max_protocol_version=3.2 through sqlfwd: a %d-byte cancel secret, want %d", version, n, wantKey)
	}
	bystanderErr := make(chan error, 1)
	go func() {
		_, err := bystander.Exec(ctx, "select pg_sleep(2)")
		bystanderErr <- err
	}()
	qctx, qcancel := context.WithCancel(ctx)
	time.AfterFunc(500*time.Millisecond, qcancel)
	_, err = victim.Exec(qctx, "select pg_sleep(5)")
	if code := errCode(err); code != "57014" {
		t.Errorf("PostgreSQL %d, protocol 3.2: select pg_sleep(5), context cancelled after 0.5 s: got %v (code %q), want 57014 (query_canceled)", version, err, code)
	}
	if err := <-bystanderErr; err != nil {
		t.Errorf("select pg_sleep(2) on another 3.2 session: got %v, want nil: the cancel hit the wrong backend", err)
	}
	var one int
	if err := victim.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("select 1 after the cancel: got %d, %v; want 1, nil", one, err)
	}

	for _, addr := range []string{targetDSN(t), dsn(pg.Host, pg.Port, pg.User, "")} {
		c, err := pgx.Connect(ctx, addr+" min_protocol_version=3.2")
		if c != nil {
			c.Close(ctx)
		}
		switch {
		case version >= 180000 && err != nil:
			t.Errorf("PostgreSQL %d, min_protocol_version=3.2 (%s): %v, want a connection", version, addr, err)
		case version < 180000 && (err == nil || !strings.Contains(err.Error(), "protocol version too low")):
			t.Errorf("PostgreSQL %d, min_protocol_version=3.2 (%s): %v, want pgx's 'server protocol version too low'", version, addr, err)
		}
	}
}

// libpq18Dir is a directory with libpq 18 (psql 15 runs with it), or "".
func libpq18Dir() string {
	for _, d := range []string{os.Getenv("SQLFW_PG_LIBPQ_DIR"), filepath.Join(os.Getenv("SQLFW_PG_SERVER_BIN"), "..", "lib")} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "libpq.so.5.18")); err == nil {
			return d
		}
	}
	return ""
}

// wireTap relays TCP connections to target and records, per connection,
// the startup packet's code and length and the server's BackendKeyData
// length, and signals the first message after a StartupMessage's
// ReadyForQuery.
type wireTap struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	conns   []*tapped
	queried chan struct{}
	once    sync.Once
}

type tapped struct {
	code   uint32
	length int
	keyLen int
}

func newWireTap(t *testing.T, target string) *wireTap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wireTap{ln: ln, target: target, queried: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go w.relay(c)
		}
	}()
	return w
}

func (w *wireTap) relay(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", w.target)
	if err != nil {
		return
	}
	defer s.Close()
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n < 8 || n > 10000 {
		return
	}
	pkt := make([]byte, n)
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(c, pkt[8:]); err != nil {
		return
	}
	rec := &tapped{code: binary.BigEndian.Uint32(hdr[4:]), length: n}
	w.mu.Lock()
	w.conns = append(w.conns, rec)
	w.mu.Unlock()
	if _, err := s.Write(pkt); err != nil {
		return
	}
	go func() {
		b := make([]byte, 4096)
		for {
			k, err := c.Read(b)
			if k > 0 && rec.code>>16 == 3 { // trust: the first bytes after the startup are the query
				w.once.Do(func() { close(w.queried) })
			}
			if k > 0 {
				if _, err := s.Write(b[:k]); err != nil {
					return
				}
			}
			if err != nil {
				s.Close()
				return
			}
		}
	}()
	// the server's messages up to ReadyForQuery, one by one, then raw
	for {
		var h [5]byte
		if _, err := io.ReadFull(s, h[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(h[1:])-4)
		if _, err := io.ReadFull(s, body); err != nil {
			return
		}
		if h[0] == 'K' {
			w.mu.Lock()
			rec.keyLen = len(body) - 4
			w.mu.Unlock()
		}
		if _, err := c.Write(append(h[:], body...)); err != nil {
			return
		}
		if h[0] == 'Z' || h[0] == 'E' {
			break
		}
	}
	_, _ = io.Copy(c, s)
}

func (w *wireTap) seen() []tapped {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []tapped
	for _, c := range w.conns {
		out = append(out, *c)
	}
	return out
}

// TestProtocol32Psql runs psql with libpq 18 (from PostgreSQL 18's npm
// package, scripts/pgversions.sh) and max_protocol_version=3.2 through
// sqlfwd, behind a tap that reads the wire: the StartupMessage asks for
// 3.2; against PostgreSQL 18 the BackendKeyData has a 32-byte secret and
// psql's Ctrl-C sends a 44-byte CancelRequest that cancels the query
// (older servers: 4 bytes, 16). The DELETE psql sends in the same session
// is blocked.
func TestProtocol32Psql(t *testing.T) {
	needSqlfwd(t)
	lib := libpq18Dir()
	if lib == "" {
		t.Skip("no libpq 18: set SQLFW_PG_LIBPQ_DIR (scripts/test.sh sets it from scripts/pgversions.sh bin 18)")
	}
	version := serverVersionNum(t)
	freshTable(t, "sqlfw_protover_psql", 1, 2)
	host, port := target(t)
	tap := newWireTap(t, net.JoinHostPort(host, fmt.Sprint(port)))
	tport := portOf(t, tap.ln.Addr().String())
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable max_protocol_version=3.2", tport, pg.User, pg.Database)
	env := append(os.Environ(), "LD_LIBRARY_PATH="+lib, "PGCONNECT_TIMEOUT=5")

	out := runCmd(t, 30*time.Second, "", env, filepath.Join(pg.Bin, "psql"), "-X", "-At", conninfo, "-c", "delete from sqlfw_protover_psql")
	if !strings.Contains(out.Stderr, blockedPrefix) {
		t.Errorf("psql (libpq 18, 3.2): delete from sqlfw_protover_psql: got %v, want it blocked", out)
	}
	if n := directInts(t, "select count(*)::int from sqlfw_protover_psql"); len(n) != 1 || n[0] != 2 {
		t.Errorf("sqlfw_protover_psql has %v rows after the blocked DELETE, want 2", n)
	}

	tap = newWireTap(t, net.JoinHostPort(host, fmt.Sprint(port)))
	tport = portOf(t, tap.ln.Addr().String())
	conninfo = fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable max_protocol_version=3.2", tport, pg.User, pg.Database)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(pg.Bin, "psql"), "-X", "-At", conninfo, "-c", "select pg_sleep(5)")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tap.queried:
	case <-ctx.Done():
		t.Fatalf("psql sent no query: %s", stderr.String())
	}
	time.Sleep(300 * time.Millisecond) // the query reaches the backend
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !strings.Contains(stderr.String(), "canceling statement due to user request") {
		t.Errorf("PostgreSQL %d, psql (libpq 18, 3.2) select pg_sleep(5) and SIGINT: %v, stderr %q; want the query cancelled", version, err, stderr.String())
	}
	wantKey := 4
	if version >= 180000 {
		wantKey = 32
	}
	seen := tap.seen()
	if len(seen) != 2 || seen[0].code != 3<<16|2 || seen[0].keyLen != wantKey || seen[1].code != 80877102 || seen[1].length != 12+wantKey {
		t.Errorf("PostgreSQL %d, the wire: got %+v\nwant a StartupMessage for 3.2 (code %d) answered with a %d-byte secret, then a CancelRequest of %d bytes", version, seen, 3<<16|2, wantKey, 12+wantKey)
	}
}
