// Package cgroupstats reports how much CPU a process gets and how long it
// waits for more: the CFS bandwidth quota of its cgroup, the periods in which
// that quota throttled it, the cgroup's CPU usage, CPU pressure (PSI) and the
// run-queue wait of the process's own threads.
//
// New finds the process's cgroup once, from /proc/<pid>/cgroup and
// /proc/<pid>/mountinfo, under a proc root and a filesystem root passed in by
// the caller (tests pass fixture trees under testdata/). It handles cgroup v1
// (cpu and cpuacct co-mounted as "cpu,cpuacct" or mounted separately), the
// v2 unified hierarchy, and hybrid hosts, where the CPU figures come from the
// v1 controllers and only PSI from the v2 mount. Locate is the same detection
// as a pure function over the two files.
//
// Sampler.Sample reads every file at once into a Snapshot; Delta turns two
// snapshots into per-window figures (vCPUs used, throttled fraction, wait).
// Every figure is an Opt: a value that is either known or unknown, so that a
// missing file never reads as zero. A file that is missing or unreadable makes
// its figures unknown and is reported in Sample's error the first time it
// fails, so that a daemon logging that error logs each problem once.
//
// All parsers are pure functions over io.Reader; times are time.Duration
// whatever unit the kernel file uses (ns in v1 and schedstat, µs in v2 and
// PSI), and quotas are float64 vCPUs.
package cgroupstats
