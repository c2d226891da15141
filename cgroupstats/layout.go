package cgroupstats

// Cgroup detection reads two proc files.
//
// /proc/<pid>/cgroup, one line per hierarchy, "hierarchy-ID:controllers:path";
// the v2 unified hierarchy is ID 0 with no controllers:
//
//	4:cpu,cpuacct:/system.slice/sqlfwd.service
//	0::/system.slice/sqlfwd.service
//
// /proc/<pid>/mountinfo (proc(5)), one line per mount: ID, parent ID,
// major:minor, the root of the mount inside its filesystem, the mount point,
// mount options, optional fields ended by "-", then the filesystem type, the
// source and the superblock options. For cgroup v1 the controllers are among
// the superblock options:
//
//	32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
//	41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
//
// A cgroup's directory is the mount point plus the cgroup path made relative
// to the mount's root. Inside a container with its own cgroup namespace both
// are "/"; a container without one mounts /docker/<id> and its processes
// show /docker/<id>, so the relative path is again empty.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Version says which cgroup hierarchy the CPU figures come from.
type Version int

const (
	// VersionUnknown: no usable cgroup hierarchy was found.
	VersionUnknown Version = iota
	// V1: cgroup v1 cpu and cpuacct controllers, no v2 mount.
	V1
	// V2: the v2 unified hierarchy.
	V2
	// Hybrid: v1 cpu/cpuacct controllers for CPU figures plus a v2 unified
	// mount, from which only cpu.pressure is read.
	Hybrid
)

func (v Version) String() string {
	switch v {
	case V1:
		return "v1"
	case V2:
		return "v2"
	case Hybrid:
		return "hybrid"
	}
	return "unknown"
}

// Layout is where a process's CPU accounting lives, as found by Locate.
// Directories are joined to the filesystem root given to Locate; a hierarchy
// that was not found is "".
type Layout struct {
	Version Version
	// CPU holds the bandwidth files: v1 cpu.cfs_quota_us, cpu.cfs_period_us
	// and cpu.stat; v2 cpu.max and cpu.stat.
	CPU string
	// CPUAcct holds the usage files: v1 cpuacct.usage (the same directory as
	// CPU when co-mounted); in v2 it equals CPU.
	CPUAcct string
	// Unified is the process's v2 cgroup directory, on V2 and Hybrid hosts.
	Unified string
	// Path is the cgroup path of the CPU hierarchy as /proc/<pid>/cgroup
	// shows it, e.g. "/system.slice/sqlfwd.service".
	Path string
	// AcctPath is the cgroup path of the v1 cpuacct hierarchy (equal to
	// Path when co-mounted, and on v2).
	AcctPath string
}

// AcctIsCPUGroup reports whether the usage files count the same group the
// quota applies to. Where v1 cpu and cpuacct are mounted apart and the
// process sits in a cpu child only, its cpuacct group is another (often
// the root, the whole machine): its usage is not the process's.
func (l Layout) AcctIsCPUGroup() bool {
	return l.CPUAcct != "" && (l.CPU == "" || l.CPUAcct == l.CPU || l.AcctPath == l.Path)
}

// procCgroup is one line of /proc/<pid>/cgroup.
type procCgroup struct {
	id          int
	controllers []string
	path        string
}

// mount is the part of a mountinfo line that cgroup detection needs.
type mount struct {
	root, point, fstype string
	superOptions        []string
}

// Locate finds a process's CPU accounting directories from the contents of
// its /proc/<pid>/cgroup and /proc/<pid>/mountinfo. fsRoot is prefixed to
// every mount point ("/" on a live system, a fixture tree in tests). It fails
// when neither a v1 cpu/cpuacct nor a v2 hierarchy can be resolved; a v1
// cpuacct or a hybrid's v2 directory that cannot be resolved is left "".
func Locate(cgroupFile, mountinfo io.Reader, fsRoot string) (Layout, error) {
	cgroups, err := parseProcCgroup(cgroupFile)
	if err != nil {
		return Layout{}, fmt.Errorf("cgroup file: %w", err)
	}
	mounts, err := parseMountInfo(mountinfo)
	if err != nil {
		return Layout{}, fmt.Errorf("mountinfo: %w", err)
	}

	var l Layout
	var errs []error
	var cpuPath, acctPath, unifiedPath string
	for _, c := range cgroups {
		if c.id == 0 && len(c.controllers) == 1 && c.controllers[0] == "" {
			dir, err := resolve(mounts, fsRoot, c.path, "cgroup2", "")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			l.Unified, unifiedPath = dir, c.path
			continue
		}
		for _, ctl := range c.controllers {
			if ctl != "cpu" && ctl != "cpuacct" {
				continue
			}
			dir, err := resolve(mounts, fsRoot, c.path, "cgroup", ctl)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ctl == "cpu" {
				l.CPU, cpuPath = dir, c.path
			} else {
				l.CPUAcct, acctPath = dir, c.path
			}
		}
	}

	switch {
	case l.CPU != "" || l.CPUAcct != "":
		l.Version = V1
		if l.Unified != "" {
			l.Version = Hybrid
		}
		l.Path, l.AcctPath = cpuPath, acctPath
		if l.Path == "" {
			l.Path = acctPath
		}
	case l.Unified != "":
		l.Version = V2
		l.CPU, l.CPUAcct, l.Path, l.AcctPath = l.Unified, l.Unified, unifiedPath, unifiedPath
	default:
		errs = append(errs, errors.New("no cgroup v1 cpu/cpuacct or v2 hierarchy found"))
		return Layout{}, errors.Join(errs...)
	}
	return l, nil
}

// resolve maps a cgroup path to a directory through the first mount of the
// right type (and, for v1, carrying the controller) whose root contains it.
func resolve(mounts []mount, fsRoot, cgPath, fstype, controller string) (string, error) {
	what := fstype
	if controller != "" {
		what = "cgroup v1 " + controller
	}
	var roots []string
	for _, m := range mounts {
		if m.fstype != fstype || (controller != "" && !hasOption(m.superOptions, controller)) {
			continue
		}
		rel, ok := within(m.root, cgPath)
		if ok {
			return filepath.Join(fsRoot, m.point, rel), nil
		}
		roots = append(roots, m.root)
	}
	if len(roots) == 0 {
		return "", fmt.Errorf("no %s mount", what)
	}
	return "", fmt.Errorf("cgroup path %q is outside every %s mount (roots %q)", cgPath, what, roots)
}

// within returns p relative to root when p is root or below it. Paths that
// climb out ("/../.." is how a cgroup outside the reader's namespace shows)
// are never within.
func within(root, p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || strings.Contains(p+"/", "/../") {
		return "", false
	}
	root, p = path.Clean(root), path.Clean(p)
	switch {
	case root == "/":
		return p, true
	case p == root:
		return "/", true
	case strings.HasPrefix(p, root+"/"):
		return p[len(root):], true
	}
	return "", false
}

func hasOption(opts []string, want string) bool {
	for _, o := range opts {
		if o == want {
			return true
		}
	}
	return false
}

func parseProcCgroup(r io.Reader) ([]procCgroup, error) {
	var out []procCgroup
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		// The path may itself contain ':'.
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("line %d: want \"id:controllers:path\", got %q", n, line)
		}
		id, err := strconv.Atoi(parts[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: hierarchy id: %w", n, err)
		}
		out = append(out, procCgroup{
			id:          id,
			controllers: strings.Split(parts[1], ","),
			path:        parts[2],
		})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func parseMountInfo(r io.Reader) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(f) {
			return nil, fmt.Errorf("line %d: malformed mountinfo line %q", n, sc.Text())
		}
		out = append(out, mount{
			root:         unescapeMount(f[3]),
			point:        unescapeMount(f[4]),
			fstype:       f[sep+1],
			superOptions: strings.Split(f[sep+3], ","),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// unescapeMount undoes the kernel's octal escaping of space, tab, newline
// and backslash in mountinfo paths ("\040" for a space).
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
