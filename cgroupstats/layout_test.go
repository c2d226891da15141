package cgroupstats

import (
	"strings"
	"testing"
)

const hostMounts = `22 27 0:21 / /proc rw,relatime - proc proc rw
23 27 0:22 / /sys rw,relatime - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
`

func TestLocate(t *testing.T) {
	tests := []struct {
		name      string
		cgroup    string
		mountinfo string
		fsRoot    string
		want      Layout
		wantErr   string // substring; "" means no error
	}{
		{
			name:      "v1 co-mounted, systemd service",
			cgroup:    "12:cpu,cpuacct:/system.slice/sqlfwd.service\n1:name=systemd:/system.slice/sqlfwd.service\n",
			mountinfo: hostMounts + "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:12 - cgroup cgroup rw,cpu,cpuacct\n40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n",
			fsRoot:    "/",
			want: Layout{Version: V1, Path: "/system.slice/sqlfwd.service",
				CPU:     "/sys/fs/cgroup/cpu,cpuacct/system.slice/sqlfwd.service",
				CPUAcct: "/sys/fs/cgroup/cpu,cpuacct/system.slice/sqlfwd.service"},
		},
		{
			name:      "v1 separate cpu and cpuacct, root cgroup, fixture root",
			cgroup:    "3:cpuacct:/\n2:cpu:/\n",
			mountinfo: hostMounts + "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n",
			fsRoot:    "/fx",
			want:      Layout{Version: V1, Path: "/", CPU: "/fx/sys/fs/cgroup/cpu", CPUAcct: "/fx/sys/fs/cgroup/cpuacct"},
		},
		{
			name:      "v1 separate, the process in a cpu child only: its cpuacct group is the root",
			cgroup:    "3:cpuacct:/\n2:cpu:/sqlfwd\n",
			mountinfo: hostMounts + "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n",
			want:      Layout{Version: V1, Path: "/sqlfwd", AcctPath: "/", CPU: "/sys/fs/cgroup/cpu/sqlfwd", CPUAcct: "/sys/fs/cgroup/cpuacct"},
		},
		{
			name:      "v1 container without cgroup namespace: mount root is the container's cgroup",
			cgroup:    "4:cpu,cpuacct:/docker/abc\n",
			mountinfo: "700 600 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n",
			fsRoot:    "/",
			want:      Layout{Version: V1, Path: "/docker/abc", CPU: "/sys/fs/cgroup/cpu,cpuacct", CPUAcct: "/sys/fs/cgroup/cpu,cpuacct"},
		},
		{
			name:      "v1 child of the container's cgroup",
			cgroup:    "4:cpu,cpuacct:/docker/abc/worker\n",
			mountinfo: "700 600 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n",
			fsRoot:    "/",
			want:      Layout{Version: V1, Path: "/docker/abc/worker", CPU: "/sys/fs/cgroup/cpu,cpuacct/worker", CPUAcct: "/sys/fs/cgroup/cpu,cpuacct/worker"},
		},
		{
			name:   "v1 two mounts of the hierarchy: the one containing the path wins",
			cgroup: "4:cpu,cpuacct:/system.slice/sqlfwd.service\n",
			mountinfo: "700 600 0:29 /other /mnt/other rw - cgroup cgroup rw,cpu,cpuacct\n" +
				"701 600 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
			fsRoot: "/",
			want: Layout{Version: V1, Path: "/system.slice/sqlfwd.service",
				CPU:     "/sys/fs/cgroup/cpu,cpuacct/system.slice/sqlfwd.service",
				CPUAcct: "/sys/fs/cgroup/cpu,cpuacct/system.slice/sqlfwd.service"},
		},
		{
			name:      "v1 mount point with an escaped space",
			cgroup:    "2:cpu,cpuacct:/\n",
			mountinfo: `32 31 0:29 / /sys/fs/cgroup/my\040cpu rw - cgroup cgroup rw,cpu,cpuacct` + "\n",
			fsRoot:    "/",
			want:      Layout{Version: V1, Path: "/", CPU: "/sys/fs/cgroup/my cpu", CPUAcct: "/sys/fs/cgroup/my cpu"},
		},
		{
			name:      "v2 systemd service",
			cgroup:    "0::/system.slice/sqlfwd.service\n",
			mountinfo: hostMounts + "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
			fsRoot:    "/",
			want: Layout{Version: V2, Path: "/system.slice/sqlfwd.service",
				CPU:     "/sys/fs/cgroup/system.slice/sqlfwd.service",
				CPUAcct: "/sys/fs/cgroup/system.slice/sqlfwd.service",
				Unified: "/sys/fs/cgroup/system.slice/sqlfwd.service"},
		},
		{
			name:      "v2 container with cgroup namespace",
			cgroup:    "0::/\n",
			mountinfo: "630 620 0:26 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup ro,nsdelegate\n",
			fsRoot:    "/",
			want:      Layout{Version: V2, Path: "/", CPU: "/sys/fs/cgroup", CPUAcct: "/sys/fs/cgroup", Unified: "/sys/fs/cgroup"},
		},
		{
			name:      "v2 cgroup outside our namespace",
			cgroup:    "0::/../../system.slice/other.service\n",
			mountinfo: "630 620 0:26 / /sys/fs/cgroup ro - cgroup2 cgroup ro\n",
			fsRoot:    "/",
			wantErr:   `cgroup path "/../../system.slice/other.service" is outside every cgroup2 mount`,
		},
		{
			name:   "hybrid, this project's VMs",
			cgroup: "9:name=systemd:/\n4:memory:/process_api/df00\n2:cpuacct:/\n1:cpu:/\n0::/\n",
			mountinfo: hostMounts + "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" +
				"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n" +
				"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
				"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n" +
				"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
			fsRoot: "/",
			want: Layout{Version: Hybrid, Path: "/", CPU: "/sys/fs/cgroup/cpu",
				CPUAcct: "/sys/fs/cgroup/cpuacct", Unified: "/sys/fs/cgroup/unified"},
		},
		{
			name:   "hybrid, systemd service",
			cgroup: "4:cpu,cpuacct:/system.slice/sqlfwd.service\n0::/system.slice/sqlfwd.service\n",
			mountinfo: "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" +
				"41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
			fsRoot: "/",
			want: Layout{Version: Hybrid, Path: "/system.slice/sqlfwd.service",
				CPU:     "/sys/fs/cgroup/cpu,cpuacct/system.slice/sqlfwd.service",
				CPUAcct: "/sys/fs/cgroup/cpu,cpuacct/system.slice/sqlfwd.service",
				Unified: "/sys/fs/cgroup/unified/system.slice/sqlfwd.service"},
		},
		{
			name:      "v1 cpu listed but only cpuacct mounted",
			cgroup:    "3:cpuacct:/a\n2:cpu:/a\n",
			mountinfo: "33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n",
			fsRoot:    "/",
			want:      Layout{Version: V1, Path: "/a", CPUAcct: "/sys/fs/cgroup/cpuacct/a"},
		},
		{
			name:      "no cgroup file system mounted",
			cgroup:    "0::/\n",
			mountinfo: "600 500 0:50 / / rw - overlay overlay rw\n",
			fsRoot:    "/",
			wantErr:   "no cgroup2 mount",
		},
		{
			name:      "malformed cgroup line",
			cgroup:    "0::/\nbroken\n",
			mountinfo: hostMounts,
			fsRoot:    "/",
			wantErr:   `cgroup file: line 2: want "id:controllers:path", got "broken"`,
		},
		{
			name:      "malformed hierarchy id",
			cgroup:    "x:cpu:/\n",
			mountinfo: hostMounts,
			fsRoot:    "/",
			wantErr:   "cgroup file: line 1: hierarchy id",
		},
		{
			name:      "malformed mountinfo line",
			cgroup:    "0::/\n",
			mountinfo: hostMounts + "41 31 0:38 / /sys/fs/cgroup/unified rw\n",
			fsRoot:    "/",
			wantErr:   "mountinfo: line 4: malformed mountinfo line",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Locate(strings.NewReader(tc.cgroup), strings.NewReader(tc.mountinfo), tc.fsRoot)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("cgroup:\n%s\nmountinfo:\n%s\ngot err %v, want it to contain %q", tc.cgroup, tc.mountinfo, err, tc.wantErr)
				}
				return
			}
			if tc.want.AcctPath == "" && tc.want.CPUAcct != "" {
				tc.want.AcctPath = tc.want.Path // rows that do not say: the cpuacct group is the cpu group
			}
			if err != nil || got != tc.want {
				t.Fatalf("cgroup:\n%s\nmountinfo:\n%s\ngot  %+v, %v\nwant %+v", tc.cgroup, tc.mountinfo, got, err, tc.want)
			}
			if wantShared := tc.want.AcctPath == tc.want.Path || tc.want.CPU == ""; got.AcctIsCPUGroup() != wantShared && got.CPUAcct != "" {
				t.Errorf("AcctIsCPUGroup() = %v, want %v", got.AcctIsCPUGroup(), wantShared)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		root, path string
		want       string
		wantOK     bool
	}{
		{"/", "/", "/", true},
		{"/", "/a/b", "/a/b", true},
		{"/a", "/a", "/", true},
		{"/a", "/a/b", "/b", true},
		{"/a", "/ab", "", false},
		{"/a", "/b", "", false},
		{"/", "/../x", "", false},
		{"/", "x", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.root+" "+tc.path, func(t *testing.T) {
			got, ok := within(tc.root, tc.path)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("within(%q, %q) = %q, %v; want %q, %v", tc.root, tc.path, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestUnescapeMount(t *testing.T) {
	tests := []struct{ in, want string }{
		{`/plain`, `/plain`},
		{`/a\040b`, `/a b`},
		{`/tab\011x\012y`, "/tab\tx\ny"},
		{`/back\134slash`, `/back\slash`},
		{`/trailing\04`, `/trailing\04`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := unescapeMount(tc.in); got != tc.want {
				t.Errorf("unescapeMount(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
