package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Locks are per open file: a second lockCgroup in this process conflicts
// with the first as a second daemon would, and /proc/locks names this
// process as the holder.
func TestLockCgroup(t *testing.T) {
	root := t.TempDir()
	a, b, ab := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "a", "b")
	for _, d := range []string{a, b, ab} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	first, err := lockCgroup("/proc", root, a, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	me := fmt.Sprintf("pid %d", os.Getpid())
	for _, cg := range []string{a, ab, root} { // the same, inside, containing
		if l, err := lockCgroup("/proc", root, cg, false, 0); err == nil {
			l.release()
			t.Errorf("a second daemon on %s started beside the one on %s", cg, a)
		} else if !strings.Contains(err.Error(), "another sqlfwd already intercepts cgroup "+cg) || !strings.Contains(err.Error(), me) || !strings.Contains(err.Error(), "--take-over") {
			t.Errorf("%s: %v; want the error to name the holder (%s) and --take-over", cg, err, me)
		}
	}
	// --take-over signals only processes named sqlfwd (this is a test
	// binary): it gives up after the wait and says so
	if l, err := lockCgroup("/proc", root, a, true, 0); err == nil {
		l.release()
		t.Error("a take-over succeeded while the holder runs")
	} else if !strings.HasPrefix(err.Error(), "--take-over: ") || !strings.Contains(err.Error(), me) || !strings.Contains(err.Error(), "after SIGTERM") {
		t.Errorf("take-over of a holder that does not exit: %v", err)
	}
	sib, err := lockCgroup("/proc", root, b, false, 0)
	if err != nil {
		t.Errorf("a daemon on a sibling cgroup: %v", err)
	}
	sib.release()
	first.release()
	again, err := lockCgroup("/proc", root, ab, false, 0)
	if err != nil {
		t.Fatalf("after the first released its lock: %v", err)
	}
	again.release()
}
