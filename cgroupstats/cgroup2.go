package cgroupstats

import (
	"errors"
	"io"
)

// ErrNoCgroup2 means no cgroup2 filesystem is mounted.
var ErrNoCgroup2 = errors.New("no cgroup2 mount found")

// Cgroup2Mount returns the mount point of the first cgroup2 filesystem in
// mountinfo (the content of /proc/self/mountinfo): on a v1 hybrid host
// usually /sys/fs/cgroup/unified, on a pure v2 host /sys/fs/cgroup. The
// interception programs attach there.
func Cgroup2Mount(mountinfo io.Reader) (string, error) {
	mounts, err := parseMountInfo(mountinfo)
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		if m.fstype == "cgroup2" {
			return m.point, nil
		}
	}
	return "", ErrNoCgroup2
}
