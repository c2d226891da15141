package cgroupstats

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Opt is a figure that may be unknown. The zero Opt is unknown, so a field
// nobody filled in can never pass for a measured zero.
type Opt[T any] struct {
	V  T
	OK bool
}

// Known returns a known Opt holding v.
func Known[T any](v T) Opt[T] { return Opt[T]{V: v, OK: true} }

// Get returns the value and whether it is known.
func (o Opt[T]) Get() (T, bool) { return o.V, o.OK }

// MarshalJSON encodes an unknown Opt as null and a known one as its value.
func (o Opt[T]) MarshalJSON() ([]byte, error) {
	if !o.OK {
		return []byte("null"), nil
	}
	return json.Marshal(o.V)
}

// Quota is a CFS bandwidth limit: the cgroup may run for Runtime in every
// Period, i.e. CPUs vCPUs on average.
type Quota struct {
	// Unlimited is true for v1 cfs_quota_us -1, v2 "max", and the v2 root
	// cgroup (which cannot be limited); Runtime and CPUs are then 0.
	Unlimited bool
	Runtime   time.Duration
	Period    time.Duration
	CPUs      float64
}

// PSI is one line of a pressure file. Avg10/60/300 are the percentage of wall
// time in which some (or all, for "full") runnable tasks of the cgroup were
// waiting for a CPU, averaged over 10 s, 60 s and 300 s; Total is that
// waiting time accumulated since the cgroup was created.
type PSI struct {
	Avg10, Avg60, Avg300 float64
	Total                time.Duration
}

// Stats are the cgroup's CPU figures at one instant. Counters and totals are
// cumulative since the cgroup was created.
type Stats struct {
	// Quota from v1 cpu.cfs_quota_us and cpu.cfs_period_us, or v2 cpu.max.
	Quota Opt[Quota]
	// Usage is the CPU time used by the cgroup's tasks (v1 cpuacct.usage,
	// v2 usage_usec); User and System split it (v1 cpuacct.usage_user and
	// cpuacct.usage_sys, v2 user_usec and system_usec).
	Usage, User, System Opt[time.Duration]
	// UsageSource says where Usage came from: UsageCgroup, or UsageProcess
	// when the cpuacct group is not the cpu group (Layout.AcctIsCPUGroup)
	// and only the process's own CPU time (/proc/<pid>/stat) is its.
	UsageSource string
	// Periods counts enforcement periods in which the cgroup was runnable;
	// ThrottledPeriods those in which it ran out of quota; ThrottledTime
	// adds up how long its run queues sat throttled, over all CPUs.
	Periods, ThrottledPeriods Opt[uint64]
	ThrottledTime             Opt[time.Duration]
	// Bursts counts periods in which the cgroup used burst budget beyond
	// its quota, BurstTime how much (kernels with CFS burst only).
	Bursts    Opt[uint64]
	BurstTime Opt[time.Duration]
	// PressureSome and PressureFull come from cpu.pressure (v2 and hybrid,
	// when the kernel has PSI).
	PressureSome, PressureFull Opt[PSI]
}

// Where Stats.Usage came from.
const (
	UsageCgroup  = "cgroup"
	UsageProcess = "process"
)

// ThreadSched is one thread's /proc/<pid>/task/<tid>/schedstat.
type ThreadSched struct {
	TID int
	// OnCPU is the time the thread ran; RunQueueWait the time it was
	// runnable but waiting for a CPU (including while its cgroup was
	// throttled); Timeslices how many times it was put on a CPU.
	OnCPU, RunQueueWait time.Duration
	Timeslices          uint64
}

// Snapshot is everything Sample reads, at one instant.
type Snapshot struct {
	// At is when sampling started; it carries Go's monotonic reading, which
	// Delta uses for the window length.
	At time.Time
	// Version and Cgroup identify where Stats came from, so that Delta can
	// refuse to subtract figures of different cgroups.
	Version Version
	Cgroup  string
	Stats   Stats
	// Threads are the process's threads, sorted by TID.
	Threads Opt[[]ThreadSched]
}

// RunQueueWait is the run-queue wait summed over the snapshot's threads.
func (s Snapshot) RunQueueWait() Opt[time.Duration] {
	threads, ok := s.Threads.Get()
	if !ok {
		return Opt[time.Duration]{}
	}
	var sum time.Duration
	for _, t := range threads {
		sum += t.RunQueueWait
	}
	return Known(sum)
}

// Sampler reads one process's cgroup CPU figures and thread schedstats. Its
// cgroup layout is detected once, by New or NewForPID. It is safe for
// concurrent use.
type Sampler struct {
	layout    Layout
	detectErr error
	taskDir   string
	statPath  string // /proc/<pid>/stat
	now       func() time.Time

	mu sync.Mutex
	// failing holds the files whose error Sample has already returned and
	// that have not been read successfully since.
	failing map[string]bool
}

// New returns a Sampler for the calling process, reading procRoot/self and
// the cgroup mounts under fsRoot ("/proc" and "/" on a live system). It
// never fails: when no cgroup can be located the Sampler still reads thread
// schedstats, every cgroup figure is unknown, and the first Sample returns
// the reason.
func New(procRoot, fsRoot string) *Sampler {
	return newSampler(filepath.Join(procRoot, "self"), fsRoot)
}

// NewForPID is New for another process, through procRoot/<pid>.
func NewForPID(procRoot, fsRoot string, pid int) *Sampler {
	return newSampler(filepath.Join(procRoot, strconv.Itoa(pid)), fsRoot)
}

func newSampler(procDir, fsRoot string) *Sampler {
	s := &Sampler{
		taskDir:  filepath.Join(procDir, "task"),
		statPath: filepath.Join(procDir, "stat"),
		now:      time.Now,
		failing:  map[string]bool{},
	}
	s.layout, s.detectErr = locateFiles(filepath.Join(procDir, "cgroup"), filepath.Join(procDir, "mountinfo"), fsRoot)
	if s.detectErr != nil {
		s.detectErr = fmt.Errorf("locating cgroup: %w", s.detectErr)
	}
	return s
}

func locateFiles(cgroupPath, mountinfoPath, fsRoot string) (Layout, error) {
	cg, err := os.Open(cgroupPath)
	if err != nil {
		return Layout{}, err
	}
	defer cg.Close()
	mi, err := os.Open(mountinfoPath)
	if err != nil {
		return Layout{}, err
	}
	defer mi.Close()
	return Locate(cg, mi, fsRoot)
}

// Layout returns the detected cgroup layout; its Version is VersionUnknown
// when detection failed.
func (s *Sampler) Layout() Layout { return s.layout }

// Sample reads the cgroup files and thread schedstats. The Snapshot is
// always usable: figures whose files are missing, unreadable or malformed
// are unknown. The error joins one error per such file (naming it), but
// only the first time it fails: while a file keeps failing, later samples
// leave it out, and once it has been read again a new failure is reported
// again. Optional files (cpu.pressure, cpuacct.usage_user/_sys) that do not
// exist are simply unknown.
func (s *Sampler) Sample() (Snapshot, error) {
	snap := Snapshot{At: s.now(), Version: s.layout.Version, Cgroup: s.layout.CPU}
	r := reporter{}

	r.note("cgroup detection", s.detectErr)
	switch s.layout.Version {
	case V1, Hybrid:
		s.readV1(&snap.Stats, &r)
		if s.layout.Version == Hybrid {
			snap.Stats.PressureSome, snap.Stats.PressureFull = readPressure(&r, filepath.Join(s.layout.Unified, "cpu.pressure"))
		}
	case V2:
		s.readV2(&snap.Stats, &r)
	}
	threads, err := readThreads(s.taskDir)
	r.note(s.taskDir, err)
	if err == nil {
		snap.Threads = Known(threads)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, k := range r.keys {
		err := r.errs[k]
		if err == nil {
			delete(s.failing, k)
			continue
		}
		if !s.failing[k] {
			s.failing[k] = true
			errs = append(errs, err)
		}
	}
	return snap, errors.Join(errs...)
}

func (s *Sampler) readV1(st *Stats, r *reporter) {
	cpu, acct := s.layout.CPU, s.layout.CPUAcct
	if cpu == "" {
		r.note("cpu controller", errors.New("cgroup v1 cpu controller not mounted: quota and throttling unknown"))
	} else {
		quotaPath := filepath.Join(cpu, "cpu.cfs_quota_us")
		quota, qerr := readFile(quotaPath, parseCFSQuota)
		r.note(quotaPath, qerr)
		periodPath := filepath.Join(cpu, "cpu.cfs_period_us")
		period, perr := readFile(periodPath, parseSingleUint)
		r.note(periodPath, perr)
		if qerr == nil && perr == nil {
			q, err := newQuota(quota, period)
			r.note(periodPath, wrapPath(periodPath, err))
			if err == nil {
				st.Quota = Known(q)
			}
		}
		statPath := filepath.Join(cpu, "cpu.stat")
		cs, err := readFile(statPath, ParseCPUStat)
		r.note(statPath, err)
		st.Periods, st.ThrottledPeriods, st.ThrottledTime = cs.Periods, cs.Throttled, cs.ThrottledTime
		st.Bursts, st.BurstTime = cs.Bursts, cs.BurstTime
	}

	if !s.layout.AcctIsCPUGroup() {
		// The quota's group has no usage file of its own: count the
		// process, which is what sqlfwd's share of the quota is.
		u, err := readFile(s.statPath, parseProcStatCPU)
		r.note(s.statPath, err)
		if err == nil {
			st.Usage, st.User, st.System = Known(u.user+u.system), Known(u.user), Known(u.system)
			st.UsageSource = UsageProcess
		}
		return
	}
	usagePath := filepath.Join(acct, "cpuacct.usage")
	usage, err := readFile(usagePath, parseSingleUint)
	r.note(usagePath, err)
	if err == nil {
		d, err := toDuration(usage, time.Nanosecond)
		r.note(usagePath, wrapPath(usagePath, err))
		if err == nil {
			st.Usage, st.UsageSource = Known(d), UsageCgroup
		}
	}
	st.User = readOptionalNS(r, filepath.Join(acct, "cpuacct.usage_user"))
	st.System = readOptionalNS(r, filepath.Join(acct, "cpuacct.usage_sys"))
}

func (s *Sampler) readV2(st *Stats, r *reporter) {
	dir := s.layout.CPU
	maxPath := filepath.Join(dir, "cpu.max")
	q, err := readFile(maxPath, parseCPUMax)
	switch {
	case err == nil:
		st.Quota = Known(q)
	case errors.Is(err, fs.ErrNotExist):
		// cpu.max exists on every non-root cgroup whose parent enables the
		// cpu controller. The root cgroup (recognised by having no
		// cgroup.type, a non-root-only file) cannot be limited at all.
		if _, terr := os.Stat(filepath.Join(dir, "cgroup.type")); errors.Is(terr, fs.ErrNotExist) {
			st.Quota = Known(Quota{Unlimited: true})
			err = nil
		} else {
			err = fmt.Errorf("%s: not present (cpu controller not enabled for this cgroup): quota and throttling unknown", maxPath)
		}
	}
	r.note(maxPath, err)

	statPath := filepath.Join(dir, "cpu.stat")
	cs, err := readFile(statPath, ParseCPUStat)
	r.note(statPath, err)
	st.Usage, st.User, st.System = cs.Usage, cs.User, cs.System
	if st.Usage.OK {
		st.UsageSource = UsageCgroup
	}
	st.Periods, st.ThrottledPeriods, st.ThrottledTime = cs.Periods, cs.Throttled, cs.ThrottledTime
	st.Bursts, st.BurstTime = cs.Bursts, cs.BurstTime
	st.PressureSome, st.PressureFull = readPressure(r, filepath.Join(dir, "cpu.pressure"))
}

// readPressure reads an optional cpu.pressure: absent (no PSI in the kernel)
// or disabled (psi=0, reads fail with EOPNOTSUPP) is unknown without error.
func readPressure(r *reporter, path string) (some, full Opt[PSI]) {
	type pair struct{ some, full Opt[PSI] }
	p, err := readFile(path, func(rd io.Reader) (pair, error) {
		s, f, err := parsePressure(rd)
		return pair{s, f}, err
	})
	if absent(err) {
		err = nil
	}
	r.note(path, err)
	return p.some, p.full
}

func readOptionalNS(r *reporter, path string) Opt[time.Duration] {
	v, err := readFile(path, parseSingleUint)
	if absent(err) {
		r.note(path, nil)
		return Opt[time.Duration]{}
	}
	if err == nil {
		var d time.Duration
		d, err = toDuration(v, time.Nanosecond)
		err = wrapPath(path, err)
		if err == nil {
			r.note(path, nil)
			return Known(d)
		}
	}
	r.note(path, err)
	return Opt[time.Duration]{}
}

func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EOPNOTSUPP)
}

// readThreads reads the schedstat of every thread listed in taskDir. A
// thread that exits between the listing and the read is skipped.
func readThreads(taskDir string) ([]ThreadSched, error) {
	d, err := os.Open(taskDir)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", taskDir, err)
	}
	threads := make([]ThreadSched, 0, len(names))
	var vanished int
	for _, name := range names {
		tid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		path := filepath.Join(taskDir, name, "schedstat")
		t, err := readFile(path, func(r io.Reader) (ThreadSched, error) {
			on, wait, slices, err := parseSchedstat(r)
			return ThreadSched{TID: tid, OnCPU: on, RunQueueWait: wait, Timeslices: slices}, err
		})
		// ENOENT once the directory is gone, ESRCH when the thread exited
		// after open.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			vanished++
			continue
		}
		if err != nil {
			return nil, err
		}
		threads = append(threads, t)
	}
	if len(threads) == 0 && vanished > 0 {
		return nil, fmt.Errorf("%s: no thread has a readable schedstat (kernel without CONFIG_SCHED_INFO?)", taskDir)
	}
	slices.SortFunc(threads, func(a, b ThreadSched) int { return a.TID - b.TID })
	return threads, nil
}

// readFile opens path and parses it, naming path in any error.
func readFile[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, err // *fs.PathError already names the file
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		return zero, wrapPath(path, err)
	}
	return v, nil
}

func wrapPath(path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// reporter collects one outcome per file during a Sample, in order.
type reporter struct {
	keys []string
	errs map[string]error
}

func (r *reporter) note(key string, err error) {
	if r.errs == nil {
		r.errs = map[string]error{}
	}
	if _, seen := r.errs[key]; !seen {
		r.keys = append(r.keys, key)
	} else if err == nil {
		return // keep an earlier failure for the same file
	}
	r.errs[key] = err
}
