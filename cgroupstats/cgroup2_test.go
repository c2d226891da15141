package cgroupstats

import (
	"errors"
	"strings"
	"testing"
)

func TestCgroup2Mount(t *testing.T) {
	const hybrid = `22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
25 22 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
27 25 0:25 / /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,cpu
`
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr error // nil: success; errAny: some error
	}{
		{"v1 hybrid", hybrid, "/sys/fs/cgroup/unified", nil},
		{"pure v2", "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n", "/sys/fs/cgroup", nil},
		{"no optional fields", "30 23 0:26 / /cg rw - cgroup2 none rw\n", "/cg", nil},
		{"escaped space", `30 23 0:26 / /mnt/my\040cg rw shared:1 - cgroup2 cgroup2 rw` + "\n", "/mnt/my cg", nil},
		{"first of two", "1 0 0:1 / /a rw - cgroup2 x rw\n2 0 0:2 / /b rw - cgroup2 x rw\n", "/a", nil},
		{"v1 only", "27 25 0:25 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n", "", ErrNoCgroup2},
		{"empty", "", "", ErrNoCgroup2},
		{"garbage", "not a mountinfo line\n", "", errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Cgroup2Mount(strings.NewReader(tt.in))
			okErr := (tt.wantErr == nil && err == nil) || (tt.wantErr == errAny && err != nil) || (tt.wantErr != errAny && tt.wantErr != nil && errors.Is(err, tt.wantErr))
			if got != tt.want || !okErr {
				t.Errorf("Cgroup2Mount(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

var errAny = errors.New("any error")
