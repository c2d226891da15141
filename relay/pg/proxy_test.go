package pg

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/relay/relaytest"

	"github.com/sqlfw/sqlfw/config"
	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/relay"
	"github.com/sqlfw/sqlfw/relay/pg/pgtest"
)

// The session's tests run it behind a proxy: the daemon's part in a few
// lines (a listener, an Env built from a config.Database with the
// configuration's defaults, an observer that counts), in front of pgtest's
// fake server, reached with pgtest's raw client.

var (
	newFakeServer = pgtest.NewServer
	cannedResult  = pgtest.CannedResult
	dialRaw       = pgtest.Dial
	query         = pgtest.Query
)

const (
	modeEnforce = config.ModeEnforce
	modeMonitor = config.ModeMonitor
)

// proxy is one protected database served by a Protocol.
type proxy struct {
	cfg      config.Database
	env      relay.Env
	proto    *Protocol
	ln       net.Listener
	log      *slog.Logger
	eng      atomic.Pointer[engine.Engine]
	override atomic.Pointer[config.Mode]
	counts   [relay.BytesToClient + 1]atomic.Uint64
	// denied and wouldDeny count the verdicts enforced and let through.
	denied, wouldDeny atomic.Uint64
	nextID            atomic.Uint64
	mu                sync.Mutex
	sessions          map[relay.Session]bool
	// opened, when set, gets every session registered.
	opened chan relay.Session
	wg     sync.WaitGroup
}

// startProxy serves a database in mode with the default policy in front of
// upstream and returns the proxy and its address.
func startProxy(t testing.TB, upstream string, mode config.Mode) (*proxy, string) {
	t.Helper()
	p := startWith(t, config.Database{Name: "t", Protocol: "postgres", Listen: "127.0.0.1:0", Upstream: upstream, Mode: mode})
	return p, p.ln.Addr().String()
}

// startWith serves the database db describes (the configuration's defaults
// filled in) on its Listen address until the test ends.
func startWith(t testing.TB, db config.Database) *proxy {
	t.Helper()
	p := newProxy(t, db)
	c := &p.cfg
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		t.Fatal(err)
	}
	p.ln = ln
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			p.serve(conn)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for s := range p.sessions {
			s.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// serve runs a session of conn in its own goroutine.
func (p *proxy) serve(conn net.Conn) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.proto.Serve(&p.env, &relay.Conn{Client: conn, ID: p.nextID.Add(1), Via: relay.ViaListen,
			Upstream: relay.Upstream{Network: "tcp", Addr: p.cfg.Upstream}})
	}()
}

// newProxy is the database db describes, with the configuration's
// defaults, not listening yet.
func newProxy(t testing.TB, db config.Database) *proxy {
	t.Helper()
	cfg := &config.Config{ControlSocket: "none", Databases: []config.Database{db}}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(relaytest.LogWriter{T: t}, nil))
	}
	p := &proxy{cfg: cfg.Databases[0], proto: New(), log: log, sessions: map[relay.Session]bool{}}
	if err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	c := &p.cfg
	var dialer net.Dialer
	p.env = relay.Env{
		Database:  c.Name,
		Engine:    p.eng.Load,
		Enforces:  func(mode engine.Mode) bool { return p.mode(mode) == config.ModeEnforce },
		Dial:      dialer.DialContext,
		ClientTLS: func() *tls.Config { return nil },
		Limits: relay.Limits{
			StartupTimeout: c.StartupTimeout, ConnectTimeout: c.ConnectTimeout,
			ServerReplyTimeout: c.ServerReplyTimeout, AuthTimeout: c.AuthTimeout,
			IdleTimeout: c.IdleTimeout, IdleInTransactionTimeout: c.IdleInTransactionTimeout,
			BufferBytes: c.BufferBytes, MaxMessageBytes: c.MaxMessageBytes,
		},
		Admit:    func() (func(), error) { return func() {}, nil },
		Log:      log.With("database", c.Name),
		Observer: p,
		Meter:    func(uint64) relay.Meter { return relaytest.NopMeter{} },
	}
	return p
}

// mode is the mode that applies to a verdict whose policy asks for m.
func (p *proxy) mode(m engine.Mode) config.Mode {
	if o := p.override.Load(); o != nil {
		return *o
	}
	if m != "" {
		return config.Mode(m)
	}
	return p.cfg.Mode
}

// SetMode sets the live mode, as fwctl mode does.
func (p *proxy) SetMode(_ string, m config.Mode) error {
	p.override.Store(&m)
	return nil
}

// Reload rebuilds the engine from the policy file.
func (p *proxy) Reload() error {
	eng, err := p.cfg.Engine()
	if err != nil {
		return err
	}
	if old := p.eng.Load(); old != nil {
		eng.SetLearner(old.Learner())
	}
	p.eng.Store(eng)
	return nil
}

func (p *proxy) count(c relay.Counter) uint64 { return p.counts[c].Load() }

func (p *proxy) Count(c relay.Counter, n uint64) { p.counts[c].Add(n) }

func (p *proxy) Open(s relay.Session, _ *slog.Logger) (relay.SessionObserver, *relay.Refusal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sessions[s] = true
	if p.opened != nil {
		p.opened <- s
	}
	return &proxySession{p: p, s: s}, nil
}

type proxySession struct {
	p *proxy
	s relay.Session
}

func (o *proxySession) Applied(v engine.Verdict, typ byte, at time.Time) { o.Judged(v, typ, at, 0) }
func (o *proxySession) Judged(v engine.Verdict, _ byte, _ time.Time, _ time.Duration) {
	if v.Action.Denies() {
		if o.p.mode(v.Mode) == config.ModeEnforce {
			o.p.denied.Add(1)
		} else {
			o.p.wouldDeny.Add(1)
		}
	}
}

func (o *proxySession) Close() {
	o.p.mu.Lock()
	delete(o.p.sessions, o.s)
	o.p.mu.Unlock()
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// benchSessionOf is a session of p that is not connected, for calling the
// verdict memory directly.
func benchSessionOf(p *proxy) *session {
	s := p.proto.newSession(&p.env, &relay.Conn{ID: 1})
	s.obs = &proxySession{p: p}
	return s
}
