package relaytest

import (
	"bytes"
	"context"
	"crypto/tls"

	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
)

// Policy is the Harness's default policy: deletes are denied, DDL denied
// and the connection closed, utility statements denied to the user app.
const Policy = `
rules:
  - {id: no-delete, action: deny, reason: deletes are not allowed, match: {kind: [delete]}}
  - {id: no-ddl, action: deny_and_close, match: {kind: [ddl]}}
  - {id: admin-only, action: deny, users: [app], match: {kind: [utility]}}
`

// Engine is an engine of policy over Dialect.
func Engine(t testing.TB, policy string) *engine.Engine {
	t.Helper()
	p, err := engine.ParsePolicy([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(p, Dialect{}, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Harness serves one protocol's sessions between two scripts: every dial
// of a session gets the next connection of Dials. It is the sessions'
// Observer (Counts, Verdicts, Executions, the last Session) and logs to
// Logs (and to the test's log with -v).
type Harness struct {
	Env   relay.Env
	Proto relay.Protocol
	// Eng is what Env.Engine returns; Enforce what Env.Enforces does.
	Eng     atomic.Pointer[engine.Engine]
	Enforce atomic.Bool
	Counts  [relay.TLSServerFailBy + relay.Counter(relay.NumTLSFailures)]atomic.Uint64
	Dials   chan net.Conn
	// Mu guards Verdicts (judged) and Executions (applied).
	Mu                   sync.Mutex
	Verdicts, Executions []engine.Verdict
	WG                   sync.WaitGroup
	session              atomic.Value
	// TCP: the scripts talk over loopback TCP, not net.Pipe (TLS, whose
	// writes a synchronous pipe can deadlock; half-close).
	TCP bool
	// Upstream is the Conn's Upstream (default tcp db:3306).
	Upstream relay.Upstream
	Logs     *LockedBuffer
}

// NewHarness serves proto's sessions with the default Policy, enforced,
// no TLS, and limits a test can change in Env.Limits.
func NewHarness(t *testing.T, proto relay.Protocol) *Harness {
	t.Helper()
	h := &Harness{Proto: proto, Dials: make(chan net.Conn, 4), Logs: &LockedBuffer{}}
	h.Eng.Store(Engine(t, Policy))
	h.Enforce.Store(true)
	var w io.Writer = h.Logs
	if testing.Verbose() {
		w = io.MultiWriter(h.Logs, LogWriter{t})
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.Env = relay.Env{
		Database:  "t",
		Engine:    h.Eng.Load,
		Enforces:  func(engine.Mode) bool { return h.Enforce.Load() },
		ClientTLS: func() *tls.Config { return nil },
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			select {
			case c := <-h.Dials:
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
		Meter:    func(uint64) relay.Meter { return NopMeter{} },
	}
	t.Cleanup(h.WG.Wait)
	return h
}

// Count is the Observer's.
func (h *Harness) Count(c relay.Counter, n uint64) { h.Counts[c].Add(n) }

// Open is the Observer's.
func (h *Harness) Open(s relay.Session, _ *slog.Logger) (relay.SessionObserver, *relay.Refusal) {
	h.session.Store(s)
	return h, nil
}

// Judged is the SessionObserver's.
func (h *Harness) Judged(v engine.Verdict, _ byte, _ time.Time, _ time.Duration) {
	h.Mu.Lock()
	h.Verdicts = append(h.Verdicts, v)
	h.Mu.Unlock()
}

// Applied is the SessionObserver's.
func (h *Harness) Applied(v engine.Verdict, _ byte, _ time.Time) {
	h.Mu.Lock()
	h.Executions = append(h.Executions, v)
	h.Mu.Unlock()
}

// Close is the SessionObserver's.
func (h *Harness) Close() {}

// Session is the last session registered (nil before one is).
func (h *Harness) Session() relay.Session {
	s, _ := h.session.Load().(relay.Session)
	return s
}

// Counted reads a counter.
func (h *Harness) Counted(c relay.Counter) uint64 { return h.Counts[c].Load() }

// Run plays each side's script through one session and returns the
// session (nil when none was registered).
func (h *Harness) Run(t *testing.T, server, client []Step) relay.Session {
	t.Helper()
	srv, srvDone := Play(t, &Script{Steps: server}, h.TCP)
	h.Dials <- srv
	cli, cliDone := Play(t, &Script{Steps: client}, h.TCP)
	h.WG.Add(1)
	go func() {
		defer h.WG.Done()
		up := h.Upstream
		if up.Network == "" {
			up = relay.Upstream{Network: "tcp", Addr: "db:3306"}
		}
		h.Proto.Serve(&h.Env, &relay.Conn{Client: cli, ID: 1, Via: relay.ViaListen, Upstream: up})
	}()
	if err := <-cliDone; err != nil {
		t.Errorf("client: %v", err)
	}
	if err := <-srvDone; err != nil {
		t.Errorf("server: %v", err)
	}
	return h.Session()
}

// LockedBuffer is a log sink for sessions' goroutines.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// LogWriter writes log lines to a test's log.
type LogWriter struct{ T testing.TB }

func (w LogWriter) Write(b []byte) (int, error) {
	w.T.Log(string(bytes.TrimSpace(b)))
	return len(b), nil
}

// NopMeter times nothing.
type NopMeter struct{}

func (NopMeter) HoldWait()                    {}
func (NopMeter) HoldBegin(int64)              {}
func (NopMeter) HoldStatement()               {}
func (NopMeter) EvalStart() int64             { return 0 }
func (NopMeter) EvalEnd(int64, time.Duration) {}
func (NopMeter) HoldEnd()                     {}
func (NopMeter) HoldAbort()                   {}
func (NopMeter) ResponseArrived()             {}
func (NopMeter) ResponseReady()               {}
func (NopMeter) ResponseForwarded()           {}
