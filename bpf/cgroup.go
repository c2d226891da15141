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
	"strconv"
	"strings"
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
