package mysql

// Scripted-peer tests: the session between two scripts, the client's and
// the server's, over net.Pipe (after pgx's internal/pgmock, as relay/pg's
// pgtest): each step sends bytes or expects the next packet. The engine
// judges with testDialect, which reads just enough SQL for the session's
// decisions: no dialect package is imported (layers_test.go).

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

// testDialect reads a text as statements separated by ";", each of the
// kind its first word names.
type testDialect struct{}

func (testDialect) Name() string { return "test" }
func (testDialect) Read(sql []byte, _ *engine.LexState) ([]byte, string, string, bool) {
	return sql, "", "", true
}
func (testDialect) Prescan(text string, _ int) engine.LexStats {
	return engine.LexStats{Bytes: len(text)}
}
func (testDialect) Analyze(text string, lex engine.LexStats) *engine.TextFacts {
	tf := &engine.TextFacts{Lex: lex}
	off := 0
	for _, st := range strings.Split(text, ";") {
		loc := off
		off += len(st) + 1
		w := strings.Fields(strings.ToLower(st))
		if len(w) == 0 {
			continue
		}
		k := engine.KindUtility
		switch w[0] {
		case "select":
			k = engine.KindSelect
		case "insert", "load":
			k = engine.KindInsert
		case "delete":
			k = engine.KindDelete
		case "drop", "create":
			k = engine.KindDDL
		case "use", "set":
			k = engine.KindSetStmt
		case "begin", "commit", "rollback":
			k = engine.KindTransaction
		}
		kinds := engine.KindSet(1 << k)
		var bare []engine.BareParam
		var bareWhere engine.KindSet
		if strings.HasSuffix(strings.TrimSpace(strings.ToLower(st)), "where ?") {
			// a bare parameter (engine/mysql params.go)
			bare = []engine.BareParam{{Index: 0}}
			if k == engine.KindDelete {
				bareWhere = 1 << k
			}
		}
		// SQL-level prepared statements, as engine/mysql reports them
		// (sqlprepare.go): PREPARE name FROM <statement> has the kind of
		// the statement it prepares too
		i := len(tf.Stmts)
		switch {
		case w[0] == "prepare" && len(w) > 3 && w[2] == "from":
			inner := testDialect{}.Analyze(strings.Join(w[3:], " "), lex)
			if len(inner.Stmts) > 0 {
				kinds |= inner.Stmts[0].Kinds
				bare, bareWhere = inner.Stmts[0].BareParams, inner.Stmts[0].BareWhere
			}
			tf.SQLOps = append(tf.SQLOps, engine.SQLOp{Kind: engine.SQLPrepare, Name: w[1], Stmt: i, InnerLo: loc, InnerHi: loc + len(st)})
		case w[0] == "execute" && len(w) > 1 && w[1] != "immediate":
			tf.SQLOps = append(tf.SQLOps, engine.SQLOp{Kind: engine.SQLExecute, Name: w[1], Stmt: i})
		case w[0] == "deallocate" && len(w) > 2:
			tf.SQLOps = append(tf.SQLOps, engine.SQLOp{Kind: engine.SQLDeallocate, Name: w[2], Stmt: i})
		}
		if strings.Contains(strings.ToLower(st), "call ") {
			tf.SQLOps = append(tf.SQLOps, engine.SQLOp{Kind: engine.SQLCallRoutine, Stmt: i})
		}
		var eff engine.EffectSet
		if w[0] == "reset" || w[0] == "flush" && len(w) > 1 && w[1] != "status" && w[1] != "tables" {
			eff = engine.EffSignalsServer // as engine/mysql effects.go (FLUSH LOGS, RESET MASTER, ...)
		}
		tf.Stmts = append(tf.Stmts, engine.StmtFacts{Kind: k, Kinds: kinds, Loc: int32(loc), Length: int32(len(st)),
			BareParams: bare, BareWhere: bareWhere, Effects: eff,
			DynamicSQL: strings.Contains(strings.ToLower(st), "concat(")}) // text assembled at run time
	}
	return tf
}
func (testDialect) Fingerprint(stmt string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(stmt))
	return h.Sum64()
}
func (testDialect) Normalize(stmt string) (string, error) { return stmt, nil }
func (testDialect) Objects() []string                     { return []string{"table"} }
func (testDialect) Fills(string) bool                     { return true }

const testPolicy = `
rules:
  - {id: no-delete, action: deny, reason: deletes are not allowed, match: {kind: [delete]}}
  - {id: no-ddl, action: deny_and_close, match: {kind: [ddl]}}
  - {id: admin-only, action: deny, users: [app], match: {kind: [utility]}}
`

func testEngine(t testing.TB, policy string) *engine.Engine {
	t.Helper()
	p, err := engine.ParsePolicy([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(p, testDialect{}, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// harness serves sessions whose every dial gets the next of dials.
type harness struct {
	env      relay.Env
	proto    *Protocol
	eng      atomic.Pointer[engine.Engine]
	enforce  atomic.Bool
	counts   [relay.TLSServerFailBy + relay.Counter(relay.NumTLSFailures)]atomic.Uint64
	dials    chan net.Conn
	mu       sync.Mutex
	verdicts []engine.Verdict
	applied  []engine.Verdict // remembered verdicts of executions
	wg       sync.WaitGroup
	// session holds the last session registered.
	session atomic.Value
	// tcp: the scripts talk over loopback TCP, not net.Pipe (TLS, whose
	// writes a synchronous pipe can deadlock).
	tcp bool
	// upstream is the Conn's Upstream (default tcp db:3306).
	upstream relay.Upstream
	// logs is everything the sessions logged.
	logs *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{proto: New(), dials: make(chan net.Conn, 4)}
	h.eng.Store(testEngine(t, testPolicy))
	h.enforce.Store(true)
	h.logs = &lockedBuffer{}
	var w io.Writer = h.logs
	if testing.Verbose() {
		w = io.MultiWriter(h.logs, testWriter{t})
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.env = relay.Env{
		Database:  "t",
		Engine:    h.eng.Load,
		Enforces:  func(engine.Mode) bool { return h.enforce.Load() },
		ClientTLS: func() *tls.Config { return nil },
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			select {
			case c := <-h.dials:
				return c, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		Limits: relay.Limits{StartupTimeout: 5 * time.Second, ConnectTimeout: time.Second,
			ServerReplyTimeout: 5 * time.Second, AuthTimeout: 5 * time.Second,
			BufferBytes: 64, MaxMessageBytes: 1 << 20},
		Admit:    func() (func(), error) { return func() {}, nil },
		Log:      log,
		Observer: h,
		Meter:    func(uint64) relay.Meter { return nopMeter{} },
	}
	t.Cleanup(h.wg.Wait)
	return h
}

func (h *harness) Count(c relay.Counter, n uint64) { h.counts[c].Add(n) }
func (h *harness) Open(s relay.Session, _ *slog.Logger) (relay.SessionObserver, bool) {
	h.session.Store(s)
	return h, true
}
func (h *harness) Judged(v engine.Verdict, _ byte, _ time.Time, _ time.Duration) {
	h.mu.Lock()
	h.verdicts = append(h.verdicts, v)
	h.mu.Unlock()
}
func (h *harness) Applied(v engine.Verdict, _ byte, _ time.Time) {
	h.mu.Lock()
	h.applied = append(h.applied, v)
	h.mu.Unlock()
}
func (h *harness) Close() {}

type nopMeter struct{}

func (nopMeter) HoldWait()                    {}
func (nopMeter) HoldBegin(int64)              {}
func (nopMeter) HoldStatement()               {}
func (nopMeter) EvalStart() int64             { return 0 }
func (nopMeter) EvalEnd(int64, time.Duration) {}
func (nopMeter) HoldEnd()                     {}
func (nopMeter) HoldAbort()                   {}
func (nopMeter) ResponseArrived()             {}
func (nopMeter) ResponseReady()               {}
func (nopMeter) ResponseForwarded()           {}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(bytes.TrimSpace(b)))
	return len(b), nil
}

// step is one step of a script.
type step func(c net.Conn) error

// send writes packets in one write.
func send(pkts ...[]byte) step {
	b := bytes.Join(pkts, nil)
	return func(c net.Conn) error { _, err := c.Write(b); return err }
}

// sendBytewise writes one byte per write.
func sendBytewise(pkts ...[]byte) step {
	b := bytes.Join(pkts, nil)
	return func(c net.Conn) error {
		for i := range b {
			if _, err := c.Write(b[i : i+1]); err != nil {
				return err
			}
		}
		return nil
	}
}

func readPkt(c net.Conn) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	b := make([]byte, 4+n)
	copy(b, h[:])
	_, err := io.ReadFull(c, b[4:])
	return b, err
}

// expect reads the packets of want one by one and wants them byte for
// byte.
func expect(want []byte) step {
	return func(c net.Conn) error {
		for len(want) >= 4 {
			n := 4 + (int(want[0]) | int(want[1])<<8 | int(want[2])<<16)
			w := want[:n]
			want = want[n:]
			got, err := readPkt(c)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, w) {
				return fmt.Errorf("got %q, want %q", got, w)
			}
		}
		return nil
	}
}

func expectFunc(check func([]byte) error) step {
	return func(c net.Conn) error {
		m, err := readPkt(c)
		if err != nil {
			return err
		}
		return check(m)
	}
}

// expectErr wants an ERR packet with sequence id seq, code and sqlstate
// whose message contains sub.
func expectErr(seq int, code uint16, state, sub string) step {
	return expectFunc(func(m []byte) error {
		e, err := wire.ParseErr(m[4:])
		if err != nil {
			return fmt.Errorf("got %q, want an ERR: %v", m, err)
		}
		if wire.Seq(m) != seq || e.Code != code || string(e.SQLState) != state || !strings.Contains(string(e.Message), sub) {
			return fmt.Errorf("got ERR seq %d %d #%s %q, want seq %d %d #%s containing %q", wire.Seq(m), e.Code, e.SQLState, e.Message, seq, code, state, sub)
		}
		return nil
	})
}

// expectEOF wants the peer to close.
func expectClosed() step {
	return func(c net.Conn) error {
		m, err := readPkt(c)
		if err == nil {
			return fmt.Errorf("got %q, want the connection closed", m)
		}
		return nil
	}
}

// run plays each side's script through one session.
func (h *harness) run(t *testing.T, server, client []step) relay.Session {
	t.Helper()
	play := func(steps []step) (net.Conn, <-chan error) {
		var ours, theirs net.Conn
		if h.tcp {
			ours, theirs = tcpPair(t)
		} else {
			ours, theirs = net.Pipe()
		}
		t.Cleanup(func() { ours.Close(); theirs.Close() })
		box := &connBox{Conn: ours}
		done := make(chan error, 1)
		go func() {
			var err error
			for i, st := range steps {
				_ = box.SetReadDeadline(time.Now().Add(5 * time.Second))
				if err = st(box); err != nil {
					err = fmt.Errorf("step %d: %w", i, err)
					break
				}
			}
			box.Close()
			done <- err
		}()
		return theirs, done
	}
	srv, srvDone := play(server)
	h.dials <- srv
	cli, cliDone := play(client)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		up := h.upstream
		if up.Network == "" {
			up = relay.Upstream{Network: "tcp", Addr: "db:3306"}
		}
		h.proto.Serve(&h.env, &relay.Conn{Client: cli, ID: 1, Via: relay.ViaListen, Upstream: up})
	}()
	if err := <-cliDone; err != nil {
		t.Errorf("client: %v", err)
	}
	if err := <-srvDone; err != nil {
		t.Errorf("server: %v", err)
	}
	s, _ := h.session.Load().(relay.Session)
	return s
}

// Packets.

func pkt(seq int, payload ...byte) []byte {
	b, _ := wire.AppendPacket(nil, seq, payload)
	return b
}

func pktS(seq int, first byte, s string) []byte { return pkt(seq, append([]byte{first}, s...)...) }

const serverCaps = wire.CapFoundRows | wire.CapLongFlag | wire.CapConnectWithDB | wire.CapCompress | wire.CapLocalFiles |
	wire.CapProtocol41 | wire.CapSSL | wire.CapTransactions | wire.CapSecureConnection | wire.CapMultiStatements |
	wire.CapMultiResults | wire.CapPSMultiResults | wire.CapPluginAuth | wire.CapConnectAttrs | wire.CapPluginAuthLenencData |
	wire.CapSessionTrack | wire.CapDeprecateEOF | wire.CapMariaDBStmtBulkOperations | wire.CapMariaDBComMulti | wire.CapMariaDBProgress

// greeting is a MariaDB HandshakeV10 offering caps (CLIENT_MYSQL clear:
// the extended capabilities follow).
func greeting(caps wire.Caps) []byte {
	p := []byte{wire.ProtocolVersion10}
	p = append(p, "5.5.5-10.11.6-MariaDB\x00"...)
	p = binary.LittleEndian.AppendUint32(p, 42)
	p = append(p, "abcdefgh\x00"...)
	p = binary.LittleEndian.AppendUint16(p, caps.Lower())
	p = append(p, 45)
	p = binary.LittleEndian.AppendUint16(p, wire.StatusAutocommit)
	p = binary.LittleEndian.AppendUint16(p, caps.Upper())
	p = append(p, 21, 0, 0, 0, 0, 0, 0)
	p = binary.LittleEndian.AppendUint32(p, caps.Extended())
	p = append(p, "ijklmnopqrst\x00"...)
	p = append(p, "mysql_native_password\x00"...)
	return pkt(0, p...)
}

const clientCaps = wire.CapLongFlag | wire.CapConnectWithDB | wire.CapLocalFiles | wire.CapProtocol41 | wire.CapTransactions |
	wire.CapSecureConnection | wire.CapMultiStatements | wire.CapMultiResults | wire.CapPSMultiResults | wire.CapPluginAuth |
	wire.CapConnectAttrs | wire.CapPluginAuthLenencData | wire.CapSessionTrack | wire.CapDeprecateEOF | wire.CapMariaDBStmtBulkOperations |
	wire.CapMariaDBProgress

// handshakeResponse is a client's HandshakeResponse41 for user and db.
func handshakeResponse(caps wire.Caps, user, db string) []byte {
	p := binary.LittleEndian.AppendUint32(nil, uint32(uint64(caps)))
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, 45)
	p = append(p, make([]byte, 19)...)
	p = binary.LittleEndian.AppendUint32(p, caps.Extended())
	p = append(p, user...)
	p = append(p, 0, 20)
	p = append(p, "01234567890123456789"...)
	p = append(p, db...)
	p = append(p, 0)
	p = append(p, "mysql_native_password\x00"...)
	attrs := wire.AppendLenInt(nil, 12)
	attrs = append(attrs, "program_name"...)
	attrs = wire.AppendLenInt(attrs, 4)
	attrs = append(attrs, "test"...)
	p = wire.AppendLenInt(p, uint64(len(attrs)))
	p = append(p, attrs...)
	return pkt(1, p...)
}

// ok is an OK packet with status.
func ok(seq int, status uint16) []byte {
	p := []byte{0, 0, 0}
	p = binary.LittleEndian.AppendUint16(p, status)
	return pkt(seq, append(p, 0, 0)...)
}

// progress is a MariaDB progress report (an ERR with error number 0xffff:
// stage 1 of 1, 16%, "ALT"), which ends no command.
func progress(seq int) []byte {
	return pkt(seq, append([]byte{0xff, 0xff, 0xff, 1, 1, 1, 0x10, 0, 0, 3}, "ALT"...)...)
}

func query(sql string) []byte { return pktS(0, wire.ComQuery, sql) }

// resultSet is a one-column, one-row text result under DEPRECATE_EOF.
func resultSet(status uint16) []byte {
	col := []byte{3, 'd', 'e', 'f', 0, 0, 0, 1, '1', 0, 0x0c, 0x3f, 0, 1, 0, 0, 0, 8, 0x81, 0, 0, 0, 0}
	end := []byte{0xfe, 0, 0}
	end = binary.LittleEndian.AppendUint16(end, status)
	end = append(end, 0, 0)
	return bytes.Join([][]byte{pkt(1, 1), pkt(2, col...), pkt(3, 1, '1'), pkt(4, end...)}, nil)
}

const autocommit = wire.StatusAutocommit

// login is both sides' steps up to the end of authentication (trust).
func login() (server, client []step) {
	hello := handshakeResponse(clientCaps, "app", "shop")
	return []step{send(greeting(serverCaps)), expect(hello), send(ok(2, autocommit))},
		[]step{expectFunc(checkGreeting), send(hello), expect(ok(2, autocommit))}
}

// checkGreeting wants the greeting without what the relay cannot follow.
func checkGreeting(m []byte) error {
	h, err := wire.ParseHandshake(m[4:])
	if err != nil {
		return err
	}
	if h.Caps&wire.DefaultStrip != 0 {
		return fmt.Errorf("greeting offers %#x, which the relay strips", uint64(h.Caps&wire.DefaultStrip))
	}
	if want := serverCaps &^ wire.DefaultStrip; h.Caps != want {
		return fmt.Errorf("greeting offers %#x, want %#x", uint64(h.Caps), uint64(want))
	}
	return nil
}

var errAny = errors.New("any")
