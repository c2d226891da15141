package daemon

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/wire/pg"
)

// fakeServer is a scripted PostgreSQL backend: it accepts any startup,
// answers every Query with one canned result and every Sync with
// ReadyForQuery, and records the Query texts it received. With named set,
// it also keeps prepared statements and portals by name as PostgreSQL does
// (fakeNamed), and records in ran the statements it ran.
type fakeServer struct {
	ln     net.Listener
	result []byte
	mu     sync.Mutex
	got    []string
	ran    []string
	named  bool
	wg     sync.WaitGroup
}

func newFakeServer(t testing.TB, result []byte) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeServer{ln: ln, result: result}
	fs.wg.Add(1)
	go fs.serve()
	t.Cleanup(func() { ln.Close(); fs.wg.Wait() })
	return fs
}

func (fs *fakeServer) serve() {
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

func (fs *fakeServer) session(c net.Conn) {
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
	if fs.named {
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
func (fs *fakeServer) recording() bool { return fs.got != nil }

func (fs *fakeServer) queries() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.got[1:]...)
}

// cannedResult is a SELECT result of n rows ending in ReadyForQuery.
func cannedResult(n int) []byte {
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

// startDaemon runs a daemon in enforce mode with the default policy in
// front of upstream and returns its listening address.
func startDaemon(t testing.TB, upstream string, mode Mode) (*Daemon, string) {
	t.Helper()
	d := startConfig(t, &Config{ControlSocket: "none", Databases: []Database{{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: upstream, Mode: mode,
	}}})
	return d, d.Addr("t").String()
}

// startConfig builds and starts a daemon from cfg and stops it when the
// test ends.
func startConfig(t testing.TB, cfg *Config) *Daemon {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	d, err := New(cfg, log, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := contextWithTimeout(5 * time.Second)
		defer cancel()
		d.Stop(ctx)
	})
	return d
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimSpace(p)))
	return len(p), nil
}

// rawClient speaks the protocol by hand, so tests can send anything.
type rawClient struct {
	c net.Conn
	t testing.TB
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawClient{c: c, t: t}
}

func (rc *rawClient) startup() {
	rc.t.Helper()
	b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "u", "database": "d"}}).Encode(nil)
	rc.write(b)
	rc.readUntilReady()
}

func (rc *rawClient) write(b []byte) {
	rc.t.Helper()
	if _, err := rc.c.Write(b); err != nil {
		rc.t.Fatal(err)
	}
}

// readUntilReady reads messages up to and including ReadyForQuery and
// returns them.
func (rc *rawClient) readUntilReady() [][]byte {
	rc.t.Helper()
	var out [][]byte
	for {
		m, err := rc.readMsg()
		if err != nil {
			rc.t.Fatalf("reading: %v (after %d messages)", err, len(out))
		}
		out = append(out, m)
		if m[0] == pg.MsgReadyForQuery {
			return out
		}
	}
}

func (rc *rawClient) readMsg() ([]byte, error) {
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(rc.c, hdr); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 || n > 1<<20 {
		return nil, errors.New("bad length from daemon")
	}
	m := make([]byte, 1+n)
	copy(m, hdr)
	_, err := io.ReadFull(rc.c, m[5:])
	return m, err
}
