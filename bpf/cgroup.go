package bpf

// FindCgroup2 reads /proc/self/mountinfo (proc(5)): one mount per line,
//
//	36 25 0:31 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
//
// fields are space separated, optional fields end at " - ", then come the
// filesystem type and source. The mount point escapes space, tab, newline and
// backslash as \040, \011, \012 and \134.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNoCgroup2 means no cgroup2 filesystem is mounted; the cgroup programs
// cannot be attached (cgroup v1 directories fail with "bad file descriptor").
var ErrNoCgroup2 = errors.New("no cgroup2 mount found")

// FindCgroup2 returns the mount point of the first cgroup2 filesystem in
// mountinfo, the content of /proc/self/mountinfo. On a v1 hybrid host this is
// usually /sys/fs/cgroup/unified, on a pure v2 host /sys/fs/cgroup.
func FindCgroup2(mountinfo io.Reader) (string, error) {
	sc := bufio.NewScanner(mountinfo)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fields := strings.Fields(pre)
		tail := strings.Fields(post)
		if len(fields) < 5 || len(tail) < 1 || tail[0] != "cgroup2" {
			continue
		}
		return unescapeMount(fields[4]), nil
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading mountinfo: %w", err)
	}
	return "", ErrNoCgroup2
}

// unescapeMount undoes the octal escapes of a mountinfo path field. Anything
// that is not a valid three-digit escape is kept as is.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// bpffsMagic is BPF_FS_MAGIC from include/uapi/linux/magic.h.
const bpffsMagic = 0xcafe4a11

// EnsureBPFFS makes sure dir can hold pins: if its closest existing parent
// is not on a bpffs mount, it mounts one at /sys/fs/bpf (the conventional
// place, not mounted by default on some hosts) and checks again.
func EnsureBPFFS(dir string) error {
	onBPFFS := func() (bool, error) {
		p := dir
		for {
			var st unix.Statfs_t
			err := unix.Statfs(p, &st)
			if err == nil {
				return uint32(st.Type) == bpffsMagic, nil
			}
			if !errors.Is(err, unix.ENOENT) || p == "/" {
				return false, err
			}
			p = filepath.Dir(p)
		}
	}
	ok, err := onBPFFS()
	if err != nil {
		return fmt.Errorf("checking %s: %w", dir, err)
	}
	if ok {
		return nil
	}
	if err := os.MkdirAll("/sys/fs/bpf", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"); err != nil {
		return classify(fmt.Errorf("mounting bpffs at /sys/fs/bpf: %w", err))
	}
	if ok, err := onBPFFS(); err != nil || !ok {
		return fmt.Errorf("%s is not on a bpffs mount (pins must live under /sys/fs/bpf)", dir)
	}
	return nil
}
