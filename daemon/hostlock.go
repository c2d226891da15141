package daemon

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// One sqlfwd intercepts a cgroup (issue 23): two daemons whose app-host
// programs attach to the same cgroup, or to a cgroup and one inside it,
// would both run, and a connect would go to whichever program runs first.
// The lock is flock(2) on the cgroup directories themselves, so it needs no
// file of its own, works as the unit's user in its sandbox (cgroupfs is
// read-only there; flock needs only a descriptor) and is released by the
// kernel when the daemon exits, however it exits — the fail_closed
// hand-over (a new daemon taking over the programs a stopped one left
// pinned) is not affected. The daemon takes it exclusively on the cgroup it
// attaches to and shared on each ancestor up to the cgroup2 root: a second
// daemon on the same cgroup, on an ancestor or on a descendant conflicts;
// daemons on sibling cgroups do not.

// cgroupLock holds the descriptors of the locked directories.
type cgroupLock struct{ files []*os.File }

func (l *cgroupLock) release() {
	if l == nil {
		return
	}
	for _, f := range l.files {
		f.Close()
	}
	l.files = nil
}

// lockCgroup locks cg (under root, the cgroup2 mount) for this daemon.
// Without takeOver a lock held by another process is an error naming it;
// with takeOver the holders that are sqlfwd get SIGTERM (they drain, as at
// a restart) and the lock is waited for up to wait.
func lockCgroup(proc, root, cg string, takeOver bool, wait time.Duration) (*cgroupLock, error) {
	dirs := []string{cg} // the first is locked exclusively
	if rel, err := filepath.Rel(root, cg); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		for d := filepath.Dir(cg); ; d = filepath.Dir(d) {
			dirs = append(dirs, d)
			if d == root || d == "/" || d == "." {
				break
			}
		}
	}
	l := &cgroupLock{}
	for i, dir := range dirs {
		f, err := os.Open(dir)
		if err != nil {
			l.release()
			return nil, fmt.Errorf("locking cgroup %s: %w", dir, err)
		}
		how := unix.LOCK_SH
		if i == 0 {
			how = unix.LOCK_EX
		}
		err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == unix.EWOULDBLOCK && takeOver {
			err = takeLock(proc, f, how, wait)
		}
		if err != nil {
			holders := lockHolders(proc, f)
			f.Close()
			l.release()
			if err == unix.EWOULDBLOCK && takeOver {
				return nil, fmt.Errorf("--take-over: %s still holds the lock on %s after SIGTERM and a wait of %s (only processes named sqlfwd are signalled): stop it by hand",
					describeHolders(proc, holders), dir, wait)
			}
			if err == unix.EWOULDBLOCK {
				return nil, fmt.Errorf("another sqlfwd already intercepts cgroup %s (%s holds the lock on %s): two daemons would both redirect its connections; stop it first, or start this one with --take-over (it sends the other SIGTERM and starts once it has exited; with fail_closed the pinned programs refuse connects meanwhile)",
					cg, describeHolders(proc, holders), dir)
			}
			return nil, fmt.Errorf("locking cgroup %s: %w", dir, err)
		}
		l.files = append(l.files, f)
	}
	return l, nil
}

// takeLock sends SIGTERM to the sqlfwd processes holding f's lock and waits
// up to wait for it.
func takeLock(proc string, f *os.File, how int, wait time.Duration) error {
	for _, pid := range lockHolders(proc, f) {
		if pid != os.Getpid() && commOf(proc, pid) == "sqlfwd" {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err != unix.EWOULDBLOCK || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockHolders reads /proc/locks for the processes holding a flock on f
// (pid 0: a holder outside this PID namespace).
func lockHolders(proc string, f *os.File) []int {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	lf, err := os.Open(filepath.Join(proc, "locks"))
	if err != nil {
		return nil
	}
	defer lf.Close()
	var pids []int
	sc := bufio.NewScanner(lf)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		// "1: FLOCK ADVISORY WRITE 6999 fe:00:10076789 0 EOF"; waiters
		// have "->" after the number
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fs[4]); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func describeHolders(proc string, pids []int) string {
	if len(pids) == 0 {
		return "a process this one cannot see"
	}
	var s []string
	for _, pid := range pids {
		if pid == 0 {
			s = append(s, "a process in another PID namespace")
			continue
		}
		c := commOf(proc, pid)
		if c == "" {
			c = "process"
		}
		s = append(s, fmt.Sprintf("%s pid %d", c, pid))
	}
	return strings.Join(s, ", ")
}

func commOf(proc string, pid int) string {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
