package daemon

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/sqlfw/sqlfw/relay"
)

// One accept loop serves every listener: the explicit one, and the
// redirect, steer and unix listeners of interception. When Accept fails
// (EMFILE at the descriptor limit, ENFILE, ENOBUFS, ...) the pending
// connection stays in the kernel's backlog and the next Accept fails at
// once, so the loop backs off: 5 ms doubling to 1 s, reset by the next
// success. It logs the first failure of a run of failures and then one line
// per second at most, with the count, instead of one line per failure.

const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
	acceptLogEvery   = time.Second
)

// acceptLoop accepts on ln until it is closed. identify turns a connection
// into an arrival (an error refuses the connection); each arrival is served
// in its own goroutine. The caller has done d.wg.Add(1) for the loop.
func (d *Daemon) acceptLoop(ln net.Listener, identify func(net.Conn) (arrival, error)) {
	defer d.wg.Done()
	var b acceptBackoff
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			wait, logNow, failed := b.fail(time.Now())
			if logNow {
				d.log.Warn("accept failed: backing off", "listener", ln.Addr().String(), "err", err, "failures", failed, "wait", wait)
			}
			d.sleep(wait)
			continue
		}
		if n := b.ok(); n > 0 {
			d.log.Info("accepting again", "listener", ln.Addr().String(), "failures", n)
		}
		a, err := identify(conn)
		if errors.Is(err, errOwnLoop) {
			if logNow, n := d.own.loop(time.Now()); logNow {
				d.log.Error("refusing a connection from sqlfwd to itself: its own upstream connection was redirected back to it (is another program attached to the cgroup?)",
					"listener", ln.Addr().String(), "err", err, "refused", n)
			}
			conn.Close()
			continue
		}
		if err != nil {
			d.refused.Add(1)
			if d.logs.allow(logKey{"", "WARN", "refusing connection"}, time.Now()) { // per reason, logrl.go
				d.log.Warn("refusing connection", "client", conn.RemoteAddr().String(), "listener", ln.Addr().String(), "err", err)
			}
			conn.Close()
			continue
		}
		if !d.track() {
			conn.Close()
			continue
		}
		go func() {
			defer d.wg.Done()
			d.serve(a)
		}()
	}
}

// serve hands an arrival to its database's protocol, which owns the
// connection from then on.
func (d *Daemon) serve(a arrival) {
	db := a.db
	db.stats.connTotal.Add(1)
	db.stats.connActive.Add(1)
	defer db.stats.connActive.Add(-1)
	c := a.conn
	c.ID = d.nextID.Add(1)
	if cfg := db.tls.client.Load(); cfg != nil {
		c.Upstream.TLS, c.Upstream.TLSMode = cfg, db.cfg.UpstreamTLS.Mode
	}
	c.Upstream.RefuseClearPassword = refuseClearPassword(&db.cfg, c.Upstream)
	db.proto.Serve(&db.env, &c)
}

// acceptBackoff is the state of one loop's run of failures.
type acceptBackoff struct {
	wait     time.Duration
	failed   int // failures in this run
	logged   time.Time
	sinceLog int // failures since the last log line
}

// fail records a failure at now and returns how long to wait, whether to
// log, and the failures since the last log line (or in the run, for the
// first).
func (b *acceptBackoff) fail(now time.Time) (time.Duration, bool, int) {
	b.failed++
	b.sinceLog++
	if b.wait == 0 {
		b.wait = acceptBackoffMin
	} else {
		b.wait = min(2*b.wait, acceptBackoffMax)
	}
	if b.failed == 1 || now.Sub(b.logged) >= acceptLogEvery {
		n := b.sinceLog
		b.logged, b.sinceLog = now, 0
		return b.wait, true, n
	}
	return b.wait, false, 0
}

// ok ends a run of failures and returns its length.
func (b *acceptBackoff) ok() int {
	n := b.failed
	*b = acceptBackoff{}
	return n
}

// dial is the sessions' dialer (relay.Env.Dial): the daemon's, with its
// SO_MARK, as the client for a unix socket when relay.DialAs says so
// (dialas.go), and retried while the process is out of descriptors (EMFILE,
// ENFILE) until ctx ends: the accept loop backs off at the same limit and
// the descriptors of closing sessions come free within moments, so a client
// that got in should not be told the database is unreachable.
func (d *Daemon) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	wait := 10 * time.Millisecond
	dc := &dialCookies{}
	ctx = context.WithValue(ctx, dialCookiesKey{}, dc)
	defer d.own.done(dc)
	as := relay.DialAs(ctx)
	for {
		var c net.Conn
		var err error
		if as != nil && network == "unix" {
			c, err = d.dialUnixAs(ctx, addr, as)
		} else {
			c, err = d.dialer.DialContext(ctx, network, addr)
		}
		if err == nil || !(errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) {
			return c, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}
