package daemon

// Between two scans a server that started is reached unjudged, and one
// that stopped still has its addresses redirected. Servers create their
// unix socket right after their TCP listeners (PostgreSQL's
// .s.PGSQL.<port>, MariaDB's and MySQL's *.sock) and remove it when they
// stop, so an inotify watch on the directories that hold them triggers a
// scan at once (after sockSettle) instead of at the next interval. The
// interval stays: servers with no unix socket, or one elsewhere, are found
// by it.

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// defaultSocketDirs are where the packaged servers put their sockets.
var defaultSocketDirs = []string{"/run/postgresql", "/var/run/postgresql", "/run/mysqld", "/var/run/mysqld", "/tmp"}

// sockSettle is how long after a socket event the scan runs: the server
// listens by then, and a burst of events makes one scan.
const sockSettle = 150 * time.Millisecond

// sockWatch is the inotify instance and its watched directories.
type sockWatch struct {
	f  *os.File // the inotify descriptor, non-blocking: reads park in the poller and Close ends them
	fd int

	mu      sync.Mutex
	watched map[string]int32 // directory → watch descriptor
}

func newSockWatch() (*sockWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	return &sockWatch{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, watched: map[string]int32{}}, nil
}

// watch adds the directories not watched yet; missing ones are skipped (a
// later call adds them once they exist).
func (w *sockWatch) watch(dirs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, dir := range dirs {
		if _, ok := w.watched[dir]; ok || dir == "" {
			continue
		}
		wd, err := unix.InotifyAddWatch(w.fd, dir, unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_TO|unix.IN_MOVED_FROM|unix.IN_ONLYDIR)
		if err == nil {
			w.watched[dir] = int32(wd)
		}
	}
}

// run calls changed when a server's socket appears or goes, until close.
func (w *sockWatch) run(changed func()) {
	buf := make([]byte, 16<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		if sockEvents(buf[:n], w.forget) {
			changed()
		}
	}
}

// sockEvents reads a buffer of inotify events: it reports whether one names
// a server's socket, or the queue overflowed (events were lost: a scan
// finds what they said), and calls forget for each watch the kernel
// dropped (the directory went; watch() may add it again).
func sockEvents(b []byte, forget func(wd int32)) (hit bool) {
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		l := int(binary.NativeEndian.Uint32(b[12:]))
		end := min(len(b), unix.SizeofInotifyEvent+l)
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:end]), "\x00")
		b = b[end:]
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			hit = true
		case mask&unix.IN_IGNORED != 0:
			forget(wd)
		default:
			hit = hit || serverSocketName(name)
		}
	}
	return hit
}

func (w *sockWatch) forget(wd int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for dir, x := range w.watched {
		if x == wd {
			delete(w.watched, dir)
		}
	}
}

func (w *sockWatch) close() { w.f.Close() }

// serverSocketName: a name a database server gives its unix socket, not
// one of sqlfwd's own listeners.
func serverSocketName(name string) bool {
	if strings.HasPrefix(name, "sqlfw-") || strings.HasSuffix(name, ".lock") {
		return false
	}
	return strings.HasPrefix(name, ".s.PGSQL.") || strings.HasSuffix(name, ".sock")
}

// socketDirs are the directories to watch: the defaults and those of the
// sockets discovery has seen.
func (dc *discovery) socketDirs() []string {
	dirs := append([]string(nil), dc.sockDirs...)
	for _, db := range dc.byName {
		if db.cfg.UnixSocket != "" {
			dirs = append(dirs, filepath.Dir(db.cfg.UnixSocket))
		}
	}
	return dirs
}

// rescanAfter asks for a scan in wait, once for a burst of calls.
func (dc *discovery) rescanAfter(wait time.Duration) {
	dc.timerMu.Lock()
	defer dc.timerMu.Unlock()
	if dc.timer != nil {
		return
	}
	dc.timer = time.AfterFunc(wait, func() {
		dc.timerMu.Lock()
		dc.timer = nil
		dc.timerMu.Unlock()
		dc.rescanSoon()
	})
}
