package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfw/sqlfw/engine"
)

// Daemon is a running sqlfwd: its databases, listeners, sessions and
// control socket.
type Daemon struct {
	cfg     *Config
	log     *slog.Logger
	version string
	started time.Time

	dbs     []*database
	cancels cancelKeys
	control *controlServer

	mu       sync.Mutex
	sessions map[*pgSession]struct{}
	draining bool
	wg       sync.WaitGroup // accept loops and sessions
	nextID   atomic.Uint64
}

// database is one protected database at run time.
type database struct {
	cfg    Database
	engine *engine.Engine
	ln     net.Listener
	stats  counters
}

// New provisions a daemon: it normalizes the configuration and builds every
// policy and engine. Nothing is opened yet.
func New(cfg *Config, log *slog.Logger, version string) (*Daemon, error) {
	if err := cfg.Normalize(); err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	d := &Daemon{cfg: cfg, log: log, version: version, sessions: map[*pgSession]struct{}{}}
	for _, dc := range cfg.Databases {
		pol := engine.DefaultPolicy()
		if dc.Policy != "" {
			text, err := os.ReadFile(dc.Policy)
			if err != nil {
				return nil, fmt.Errorf("database %s: reading policy: %w", dc.Name, err)
			}
			pol, err = engine.ParsePolicy(text)
			if err != nil {
				return nil, fmt.Errorf("database %s: policy %s: %w", dc.Name, dc.Policy, err)
			}
		}
		eng, err := engine.New(pol, engine.Options{CacheBytes: dc.PolicyCacheBytes})
		if err != nil {
			return nil, fmt.Errorf("database %s: building engine: %w", dc.Name, err)
		}
		d.dbs = append(d.dbs, &database{cfg: dc, engine: eng})
	}
	return d, nil
}

// Start opens the listeners and the control socket and starts accepting.
// After an error, Stop releases whatever was opened.
func (d *Daemon) Start() error {
	d.started = time.Now()
	var lc net.ListenConfig
	// Go's listeners may default to MPTCP, which sockmap cannot hold;
	// sqlfwd's sockets are plain TCP.
	lc.SetMultipathTCP(false)
	for _, db := range d.dbs {
		ln, err := lc.Listen(context.Background(), "tcp", db.cfg.Listen)
		if err != nil {
			return fmt.Errorf("database %s: listening on %s: %w", db.cfg.Name, db.cfg.Listen, err)
		}
		db.ln = ln
		d.log.Info("listening", "database", db.cfg.Name, "protocol", db.cfg.Protocol,
			"listen", ln.Addr().String(), "upstream", db.cfg.Upstream, "mode", string(db.cfg.Mode))
	}
	if d.cfg.ControlSocket != "" && d.cfg.ControlSocket != "none" {
		cs, err := startControl(d, d.cfg.ControlSocket)
		if err != nil {
			return err
		}
		d.control = cs
	}
	for _, db := range d.dbs {
		d.wg.Add(1)
		go d.acceptLoop(db)
	}
	return nil
}

// Addr returns the listening address of the named database, or nil.
func (d *Daemon) Addr(name string) net.Addr {
	for _, db := range d.dbs {
		if db.cfg.Name == name && db.ln != nil {
			return db.ln.Addr()
		}
	}
	return nil
}

func (d *Daemon) acceptLoop(db *database) {
	defer d.wg.Done()
	for {
		conn, err := db.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// EMFILE and the like: back off instead of spinning
			d.log.Warn("accept failed", "database", db.cfg.Name, "err", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		d.mu.Lock()
		if d.draining {
			d.mu.Unlock()
			conn.Close()
			continue
		}
		d.wg.Add(1)
		d.mu.Unlock()
		go func() {
			defer d.wg.Done()
			d.servePG(db, conn)
		}()
	}
}

func (d *Daemon) register(s *pgSession) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.sessions[s] = struct{}{}
	return true
}

func (d *Daemon) unregister(s *pgSession) {
	d.mu.Lock()
	delete(d.sessions, s)
	d.mu.Unlock()
}

// Stop stops accepting, lets sessions finish what they are doing (an idle
// session is closed at once, a busy one when its current transaction and
// pending statements are done) until ctx ends, then closes whatever is
// left. It is safe after a partial Start.
func (d *Daemon) Stop(ctx context.Context) error {
	d.mu.Lock()
	d.draining = true
	sessions := make([]*pgSession, 0, len(d.sessions))
	for s := range d.sessions {
		sessions = append(sessions, s)
	}
	d.mu.Unlock()
	for _, db := range d.dbs {
		if db.ln != nil {
			db.ln.Close()
		}
	}
	for _, s := range sessions {
		s.drain()
	}
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		d.mu.Lock()
		n := len(d.sessions)
		for s := range d.sessions {
			s.closeBoth()
		}
		d.mu.Unlock()
		d.log.Warn("drain timeout: closing busy sessions", "sessions", n)
		<-done
		err = nil
	}
	if d.control != nil {
		d.control.stop()
	}
	return err
}

// Snapshot returns the counters of every database.
func (d *Daemon) Snapshot() Stats {
	st := Stats{Version: d.version, StartedAt: d.started, Uptime: time.Since(d.started).Round(time.Second).String()}
	for _, db := range d.dbs {
		s := db.stats.snapshot()
		s.Name, s.Protocol, s.Listen, s.Upstream, s.Mode = db.cfg.Name, db.cfg.Protocol, db.cfg.Listen, db.cfg.Upstream, db.cfg.Mode
		if db.ln != nil {
			s.Listen = db.ln.Addr().String()
		}
		st.Databases = append(st.Databases, s)
	}
	return st
}
