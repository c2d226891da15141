package pg

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/config"
	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/pg/pgtest"
	wire "github.com/sqlfw/sqlfw/wire/pg"
)

var (
	upstreamFunc     = pgtest.Upstream
	scriptedUpstream = pgtest.Silent
	startupMsg       = pgtest.StartupMsg
	wantFatal        = pgtest.WantFatal
)

// A server that accepts and never answers, or asks for a password and then
// goes silent, gets the client 08006 within the configured bounds instead
// of a wait without end.
func TestSilentUpstreamTimesOut(t *testing.T) {
	askPassword, _ := (&pgproto3.AuthenticationCleartextPassword{}).Encode(nil)
	for _, tc := range []struct {
		name  string
		hello []byte
		want  string
	}{
		{"accepts and never answers", nil, "did not answer the connection"},
		{"asks for a password, then silence", askPassword, "did not complete authentication"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := scriptedUpstream(t, tc.hello)
			d := startWith(t, config.Database{
				Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up,
				ServerReplyTimeout: 300 * time.Millisecond, AuthTimeout: 800 * time.Millisecond,
			})
			rc := dialRaw(t, d.ln.Addr().String())
			rc.Write(startupMsg())
			if tc.hello != nil {
				m, err := rc.ReadMsg()
				if err != nil || m[0] != 'R' {
					t.Fatalf("want the password request relayed, got %q, %v", m, err)
				}
				pw, _ := (&pgproto3.PasswordMessage{Password: "secret"}).Encode(nil)
				rc.Write(pw)
			}
			m := wantFatal(t, rc, sqlstateConnectionFailure)
			if !bytes.Contains(wire.ErrorField(m, 'M'), []byte(tc.want)) {
				t.Errorf("message %q, want it to say %q", wire.ErrorField(m, 'M'), tc.want)
			}
		})
	}
}

// A client that half-closes after sending still gets the answer.
func TestHalfCloseAnswered(t *testing.T) {
	fs := newFakeServer(t, cannedResult(3))
	_, addr := startProxy(t, fs.Addr(), modeEnforce)
	for i := 0; i < 20; i++ {
		rc := dialRaw(t, addr)
		rc.Startup()
		rc.Write(append(query("select 1"), query("select 2")...))
		if err := rc.Conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		var types []byte
		for {
			m, err := rc.ReadMsg()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("round %d: %v after %q", i, err, types)
				}
				break
			}
			types = append(types, m[0])
		}
		if string(types) != "TDDDCZTDDDCZ" {
			t.Fatalf("round %d: got messages %q after a half-close, want both answers (TDDDCZ twice)", i, types)
		}
	}
}

// Message types a client may not send and malformed small messages close
// the session; the server never sees them.
func TestGarbageAfterLoginNotRelayed(t *testing.T) {
	fs := newFakeServer(t, cannedResult(1))
	fs.Record()
	_, addr := startProxy(t, fs.Addr(), modeEnforce)
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"unknown type", []byte{'!', 0, 0, 0, 8, 'j', 'u', 'n', 'k'}},
		{"backend type from a client", []byte{'Z', 0, 0, 0, 5, 'I'}},
		{"Execute with a junk body", []byte{'E', 0, 0, 0, 7, 'a', 'b', 'c'}},
		{"Describe with a junk body", []byte{'D', 0, 0, 0, 6, 'X', 0}},
		{"Sync with a body", []byte{'S', 0, 0, 0, 6, 'x', 'y'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialRaw(t, addr)
			rc.Startup()
			// the junk rides behind a valid Query in one write: nothing of
			// the write may reach the server
			rc.Write(append(query("select 'before junk'"), tc.msg...))
			wantFatal(t, rc, sqlstateProtocolViolation)
			for _, q := range fs.Queries() {
				if q == "select 'before junk'" {
					t.Fatalf("the server received the Query that came with the junk")
				}
			}
		})
	}
}

// Before authentication a client may not make sqlfwd hold a large message.
func TestPreAuthMessageBounded(t *testing.T) {
	askPassword, _ := (&pgproto3.AuthenticationCleartextPassword{}).Encode(nil)
	up := scriptedUpstream(t, askPassword)
	d := startWith(t, config.Database{
		Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up,
	})
	// a Query claiming 60 MB, and 8 MB of it; one payload for all clients
	// so that the test's own heap stays small
	payload := append(binary.BigEndian.AppendUint32([]byte{'Q'}, 60<<20), make([]byte, 8<<20)...)
	liveHeap := func() int64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	before := liveHeap()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := dialRaw(t, d.ln.Addr().String())
			rc.Write(startupMsg())
			if m, err := rc.ReadMsg(); err != nil || m[0] != 'R' {
				t.Errorf("password request: %q, %v", m, err)
				return
			}
			go rc.Conn.Write(payload)
			m, err := rc.ReadMsg()
			if err != nil || string(wire.ErrorField(m, 'C')) != sqlstateProtocolViolation {
				t.Errorf("a 60 MB message before authentication: got %q, %v; want FATAL %s", m, err, sqlstateProtocolViolation)
			}
		}()
	}
	wg.Wait()
	// 8 × 8 MB would be 64 MB held
	if grew := liveHeap() - before; grew > 8<<20 {
		t.Errorf("the live heap grew by %d MiB for 8 unauthenticated sessions, want well under their 64 MiB", grew>>20)
	}
}

// slowUpstream answers startup at once and every Query after wait, with a
// ReadyForQuery of status tx.
func slowUpstream(t *testing.T, wait time.Duration, tx byte) string {
	t.Helper()
	result := cannedResult(1)
	result[len(result)-1] = tx
	var hello []byte
	hello, _ = (&pgproto3.AuthenticationOk{}).Encode(hello)
	hello, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(hello)
	return upstreamFunc(t, func(c net.Conn) {
		if _, err := wire.ReadStartup(c, nil); err != nil {
			return
		}
		c.Write(hello)
		fr := wire.NewFramer(c, 0, 0, 0)
		for fr.Fill() == nil {
			for {
				m, err := fr.Next(wantAll())
				if err != nil || m == nil {
					break
				}
				if m[0] == wire.MsgQuery {
					time.Sleep(wait)
					c.Write(result)
				}
			}
			fr.Take()
		}
	})
}

func TestIdleTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		tx   byte
		code string
	}{
		{"idle session", 'I', sqlstateIdleSession},
		{"idle in transaction", 'T', sqlstateIdleInTransaction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The server takes 600 ms per query, longer than either
			// timeout: a session waiting for its answer is not idle.
			up := slowUpstream(t, 600*time.Millisecond, tc.tx)
			d := startWith(t, config.Database{
				Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: up,
				IdleTimeout: 300 * time.Millisecond, IdleInTransactionTimeout: 200 * time.Millisecond,
			})
			rc := dialRaw(t, d.ln.Addr().String())
			rc.Startup()
			rc.Write(query("select slow"))
			if msgs := rc.ReadUntilReady(); len(msgs) != 4 {
				t.Fatalf("the slow query's answer: %d messages, want 4 (the session was closed while busy?)", len(msgs))
			}
			// now idle, in the state the answer left
			m := wantFatal(t, rc, tc.code)
			if !bytes.Contains(wire.ErrorField(m, 'M'), []byte("timeout")) {
				t.Errorf("message %q", wire.ErrorField(m, 'M'))
			}
			if n := d.count(relay.IdleClosed); n != 1 {
				t.Errorf("idle_closed %d, want 1", n)
			}
		})
	}
	// without timeouts an idle session stays
	fs := newFakeServer(t, cannedResult(1))
	_, addr := startProxy(t, fs.Addr(), modeEnforce)
	rc := dialRaw(t, addr)
	rc.Startup()
	time.Sleep(500 * time.Millisecond)
	rc.Write(query("select 1"))
	rc.ReadUntilReady()
}
