package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sqlfw/sqlfw/config"
	"github.com/sqlfw/sqlfw/control"
	"github.com/sqlfw/sqlfw/engine"
)

// The control socket's JSON types live in control/, which fwctl imports
// without linking the daemon; the daemon computes them under these names.
type (
	Status            = control.Status
	DatabaseStatus    = control.DatabaseStatus
	DiscoveryStatus   = control.DiscoveryStatus
	ConfigStatus      = control.ConfigStatus
	Connection        = control.Connection
	ConnectionOwner   = control.ConnectionOwner
	Stats             = control.Stats
	DatabaseStats     = control.DatabaseStats
	InterceptionStats = control.InterceptionStats
	StatsWindow       = control.StatsWindow
	DBWindow          = control.DBWindow
	CPUWindow         = control.CPUWindow
	Attribution       = control.Attribution
	Dist              = control.Dist
)

// APIVersion is the version of the control socket's JSON (the /v1/ prefix).
const APIVersion = control.APIVersion

// DefaultStatsWindow is the reporting window.
const DefaultStatsWindow = config.DefaultStatsWindow

// The control socket speaks HTTP/1.1 over a unix socket, so that fwctl and
// curl --unix-socket can both use it:
//
//	GET  /v1/stats                      counters of every database (JSON, see Stats)
//	POST /v1/reload                     re-read the configuration and policies (422: refused)
//	POST /v1/mode?mode=M[&database=N]   live mode override (M = enforce, monitor,
//	                                    detect, or policy to clear it)
//	POST /v1/learn/start|stop[?database=N][&by=user,database,unit]
//	GET  /v1/learn/status[?database=N]  what was learned per application (JSON)
//	GET  /v1/learn/export[?database=N][&form=scope|fingerprints][&drift=deny|log][&mode=M][&functions=true][&include_drift=true]
//	POST /v1/learn/promote[?same options]  body: a reviewed fragment, or empty for what was learned
//	POST /v1/learn/demote[?database=N]  remove the learned policy
//	GET  /v1/status                     version, uptime, modes, interception, policies
//	GET  /v1/connections                the open sessions (metrics.go)
//	GET  /v1/catalog[?database=N]       the catalog in force as its queries' rows (engine snapshot.go)
//	POST /v1/protect?action=add|remove&addr=IP:PORT[&database=N]
//	                                    app-host interception of one more or one
//	                                    fewer address; open connections stay
//
// The socket is mode 0600 (0660 with control_group) and each connection's
// peer credentials are checked: only root, the daemon's own user and
// members of control_group may use it.
type controlServer struct {
	ln    net.Listener
	srv   *http.Server
	conns *controlConns
}

func startControl(d *Daemon, path string) (*controlServer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// A socket left by a daemon that died is removed; a live one is not.
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("control socket %s: another sqlfwd is listening there", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("control socket: removing stale %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	mode, gid := os.FileMode(0o600), -1
	if g := d.cfg.ControlGroup; g != "" {
		grp, err := user.LookupGroup(g)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("control socket: control_group: %w", err)
		}
		gid, _ = strconv.Atoi(grp.Gid)
		mode = 0o660
		if err := os.Chown(path, -1, gid); err != nil {
			ln.Close()
			return nil, fmt.Errorf("control socket: %w", err)
		}
	}
	if err := os.Chmod(path, mode); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(d.Snapshot())
	})
	mux.HandleFunc("POST /v1/reload", func(w http.ResponseWriter, r *http.Request) {
		res, err := d.ReloadReport()
		if err != nil {
			http.Error(w, "reload refused, the configuration in force is kept: "+err.Error(), http.StatusUnprocessableEntity)
			return
		}
		fmt.Fprintln(w, res.String())
	})
	mux.HandleFunc("POST /v1/mode", func(w http.ResponseWriter, r *http.Request) {
		m := r.URL.Query().Get("mode")
		if m == "policy" {
			m = ""
		}
		if err := d.SetMode(r.URL.Query().Get("database"), Mode(m)); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, "mode set")
	})
	mux.HandleFunc("POST /v1/learn/{action}", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch r.PathValue("action") {
		case "start", "stop":
			if err := d.Learn(q.Get("database"), r.PathValue("action") == "start", q.Get("by")); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprintf(w, "learning %s\n", r.PathValue("action"))
		case "promote":
			o, err := learnOptions(q.Get("form"), q.Get("drift"), q.Get("mode"), q.Get("functions") == "true", q.Get("include_drift") == "true")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			frag, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			msg, err := d.Promote(q.Get("database"), o, frag)
			if err != nil {
				http.Error(w, err.Error(), http.StatusUnprocessableEntity)
				return
			}
			fmt.Fprint(w, msg)
		case "demote":
			if err := d.Demote(q.Get("database")); err != nil {
				http.Error(w, err.Error(), http.StatusUnprocessableEntity)
				return
			}
			fmt.Fprintln(w, "learned policy removed")
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("GET /v1/catalog", func(w http.ResponseWriter, r *http.Request) {
		snap, err := d.CatalogSnapshot(r.URL.Query().Get("database"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(snap)
	})
	mux.HandleFunc("GET /v1/learn/status", func(w http.ResponseWriter, r *http.Request) {
		st, err := d.LearnStatus(r.URL.Query().Get("database"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(st)
	})
	mux.HandleFunc("POST /v1/protect", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if err := d.Protect(q.Get("database"), q.Get("addr"), q.Get("action") != "remove"); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%s %s\n", q.Get("action"), q.Get("addr"))
	})
	mux.HandleFunc("GET /v1/learn/export", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		form := q.Get("form")
		if form == "" {
			form = string(engine.FormFingerprints) // what export printed before forms existed
		}
		o, err := learnOptions(form, q.Get("drift"), q.Get("mode"), q.Get("functions") == "true", q.Get("include_drift") == "true")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b, err := d.LearnExport(q.Get("database"), o)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(b)
	})
	registerStatusRoutes(mux, d)
	conns := newControlConns(maxControlConns)
	cs := &controlServer{ln: ln, conns: conns, srv: &http.Server{
		Handler:           conns.track(peerCheck(mux, gid, d.proc)),
		ReadHeaderTimeout: 5 * time.Second,
		// Without IdleTimeout (and ReadTimeout) a keep-alive connection
		// is never closed: a client could hold any number open.
		IdleTimeout:  d.cfg.ControlIdleTimeout,
		WriteTimeout: time.Minute,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
		ConnState: conns.state,
	}}
	go func() {
		if err := cs.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("control socket stopped", "err", err)
		}
	}()
	d.log.Info("control socket", "path", path)
	return cs, nil
}

func (cs *controlServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = cs.srv.Shutdown(ctx)
}

// maxControlConns bounds the control socket's open connections (fwctl
// needs one at a time).
const maxControlConns = 64

// controlConns bounds the control socket's connections so that a real
// request is always served: past the bound a new connection closes the
// longest-idle one (connected and silent, kept alive between requests, or
// answered and left holding a request body it never sends) rather than
// itself; only when every other connection is in the middle of being
// answered is the new one closed. A request being answered is never cut.
type controlConns struct {
	max   int
	mu    sync.Mutex
	conns map[net.Conn]*controlConn
}

type controlConn struct {
	state  http.ConnState
	since  time.Time // when it entered state
	closed bool      // closed by us, not yet reported closed
	// answered: its handler has returned. net/http keeps the connection
	// Active while it waits for the rest of a body the handler did not read
	// (a Content-Length that never arrives): such a connection holds no
	// request of anyone's and may go like an idle one.
	answered bool
}

// track marks a connection answered once its handler returns (see
// controlConn.answered).
func (cc *controlConns) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if c, _ := r.Context().Value(connKey{}).(net.Conn); c != nil {
				cc.mu.Lock()
				if e := cc.conns[c]; e != nil {
					e.answered = true
				}
				cc.mu.Unlock()
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func newControlConns(max int) *controlConns {
	return &controlConns{max: max, conns: map[net.Conn]*controlConn{}}
}

// state is the http.Server's ConnState hook.
func (cc *controlConns) state(c net.Conn, st http.ConnState) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(cc.conns, c)
		return
	case http.StateNew:
		cc.conns[c] = &controlConn{state: st, since: time.Now()}
		if cc.open() <= cc.max {
			return
		}
		var victim net.Conn
		var oldest time.Time
		for o, e := range cc.conns {
			if o == c || e.closed || (e.state == http.StateActive && !e.answered) {
				continue
			}
			if victim == nil || e.since.Before(oldest) {
				victim, oldest = o, e.since
			}
		}
		if victim == nil {
			victim = c // every other one is serving a request
		}
		cc.conns[victim].closed = true
		victim.Close() // reported as StateClosed, which removes it
	default:
		if e := cc.conns[c]; e != nil {
			e.state, e.since, e.answered = st, time.Now(), false
		}
	}
}

// open counts the connections not already closed by us.
func (cc *controlConns) open() int {
	n := 0
	for _, e := range cc.conns {
		if !e.closed {
			n++
		}
	}
	return n
}

// count is the number of open connections (tests).
func (cc *controlConns) count() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.open()
}

type connKey struct{}

// peerCheck refuses requests from users other than root, the daemon's own
// and, when gid >= 0, members of that group (primary or supplementary), by
// the connecting process's SO_PEERCRED.
func peerCheck(next http.Handler, gid int, proc string) http.Handler {
	self := uint32(os.Geteuid())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(*net.UnixConn)
		if c == nil {
			http.Error(w, "not a unix socket connection", http.StatusForbidden)
			return
		}
		cred, ok := peerCred(c)
		if !ok || (cred.Uid != 0 && cred.Uid != self && !inGroup(proc, cred, gid)) {
			http.Error(w, "permission denied", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func peerCred(c *net.UnixConn) (*unix.Ucred, bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, false
	}
	var cred *unix.Ucred
	_ = rc.Control(func(fd uintptr) {
		cred, _ = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	return cred, cred != nil
}

// inGroup reports whether the peer process has gid as its primary group or
// among its supplementary groups (the Groups line of /proc/PID/status, read
// under the procfs root proc).
func inGroup(proc string, cred *unix.Ucred, gid int) bool {
	if gid < 0 {
		return false
	}
	if int(cred.Gid) == gid {
		return true
	}
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(int(cred.Pid)), "status"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Groups:"); ok {
			for _, f := range strings.Fields(rest) {
				if f == strconv.Itoa(gid) {
					return true
				}
			}
		}
	}
	return false
}
