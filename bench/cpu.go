package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sqlfw/sqlfw/cgroupstats"
)

// CPUSample is a cumulative CPU reading of a target. Throttling fields are
// zero when the source has no CFS quota information.
type CPUSample struct {
	Usage         time.Duration // CPU time used so far
	Periods       int64         // CFS enforcement periods elapsed
	Throttled     int64         // periods in which the quota ran out
	ThrottledTime time.Duration // total time throttled
}

// A CPUMeter reads a target's cumulative CPU use. It is an interface so
// that the cgroupstats package (v1 and v2, detected once) can replace the
// small readers here.
type CPUMeter interface {
	ReadCPU() (CPUSample, error)
}

// userHZ is the unit of /proc/PID/stat times; Linux fixes it at 100 for
// every architecture's user-space ABI.
const userHZ = 100

// ProcStat is the part of /proc/PID/stat the harness uses.
type ProcStat struct {
	PID   int
	PPID  int
	UTime int64 // clock ticks
	STime int64
}

// ParseProcStat reads /proc/PID/stat, e.g.
//
//	1234 (postgres) S 1 1234 1234 0 -1 4194560 1571 0 0 0 12 7 0 0 20 0 1 0 ...
//
// The command name may itself contain spaces and parentheses, so fields are
// counted from the last ')'.
func ParseProcStat(r io.Reader) (ProcStat, error) {
	b, err := io.ReadAll(io.LimitReader(r, 4096))
	if err != nil {
		return ProcStat{}, err
	}
	open := bytes.IndexByte(b, '(')
	close := bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return ProcStat{}, fmt.Errorf("proc stat: no command field")
	}
	var st ProcStat
	if st.PID, err = strconv.Atoi(strings.TrimSpace(string(b[:open]))); err != nil {
		return ProcStat{}, fmt.Errorf("proc stat: pid: %w", err)
	}
	f := strings.Fields(string(b[close+1:]))
	// f[0] is field 3 (state); ppid is field 4, utime 14, stime 15.
	if len(f) < 13 {
		return ProcStat{}, fmt.Errorf("proc stat: %d fields after the command, want ≥ 13", len(f))
	}
	if st.PPID, err = strconv.Atoi(f[1]); err != nil {
		return ProcStat{}, fmt.Errorf("proc stat: ppid: %w", err)
	}
	if st.UTime, err = strconv.ParseInt(f[11], 10, 64); err != nil {
		return ProcStat{}, fmt.Errorf("proc stat: utime: %w", err)
	}
	if st.STime, err = strconv.ParseInt(f[12], 10, 64); err != nil {
		return ProcStat{}, fmt.Errorf("proc stat: stime: %w", err)
	}
	return st, nil
}

// ProcCPU reads a process's CPU time (all its threads) from procfs.
type ProcCPU struct {
	Proc string // procfs root, "/proc"
	PID  int
}

// ReadCPU implements CPUMeter.
func (p ProcCPU) ReadCPU() (CPUSample, error) {
	f, err := os.Open(filepath.Join(p.Proc, strconv.Itoa(p.PID), "stat"))
	if err != nil {
		return CPUSample{}, fmt.Errorf("reading cpu of pid %d: %w", p.PID, err)
	}
	defer f.Close()
	st, err := ParseProcStat(f)
	if err != nil {
		return CPUSample{}, err
	}
	return CPUSample{Usage: time.Duration(st.UTime+st.STime) * time.Second / userHZ}, nil
}

// CgroupV1CPU reads a cgroup v1 cpu directory: cpu.stat for the throttling
// counters and, when the cpuacct controller is mounted with it (or at
// AcctDir), cpuacct.usage for the usage.
type CgroupV1CPU struct {
	Dir     string // e.g. /sys/fs/cgroup/cpu/sqlfw-bench
	AcctDir string // e.g. /sys/fs/cgroup/cpuacct/sqlfw-bench; Dir when empty
}

// ReadCPU implements CPUMeter.
func (c CgroupV1CPU) ReadCPU() (CPUSample, error) {
	var s CPUSample
	f, err := os.Open(filepath.Join(c.Dir, "cpu.stat"))
	if err != nil {
		return s, fmt.Errorf("reading cgroup cpu.stat: %w", err)
	}
	defer f.Close()
	if s, err = ParseCPUStat(f); err != nil {
		return s, err
	}
	acct := c.AcctDir
	if acct == "" {
		acct = c.Dir
	}
	b, err := os.ReadFile(filepath.Join(acct, "cpuacct.usage"))
	if err != nil {
		return s, fmt.Errorf("reading cgroup cpuacct.usage: %w", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return s, fmt.Errorf("cpuacct.usage: %w", err)
	}
	s.Usage = time.Duration(ns)
	return s, nil
}

// ParseCPUStat reads a cgroup cpu.stat, v1 or v2, with cgroupstats' reader
// (the daemon's too): periods, throttled periods and time, and in v2 the
// usage. Unknown keys are skipped.
func ParseCPUStat(r io.Reader) (CPUSample, error) {
	st, err := cgroupstats.ParseCPUStat(r)
	if err != nil {
		return CPUSample{}, fmt.Errorf("cpu.stat: %w", err)
	}
	return CPUSample{Usage: st.Usage.V, Periods: int64(st.Periods.V), Throttled: int64(st.Throttled.V),
		ThrottledTime: st.ThrottledTime.V}, nil
}

// CPUTimes is the aggregate "cpu" line of /proc/stat, in ticks.
type CPUTimes struct {
	Total, Steal int64
}

// ParseProcStatCPU reads the first line of /proc/stat:
//
//	cpu  112569 0 42179 134500 631 0 6510 274 0 0
//
// (user nice system idle iowait irq softirq steal guest guest_nice). Guest
// time is already inside user, so it is not added to the total.
func ParseProcStatCPU(r io.Reader) (CPUTimes, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "cpu" {
			continue
		}
		var t CPUTimes
		for i := 1; i <= 8; i++ {
			n, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return t, fmt.Errorf("/proc/stat cpu line: %w", err)
			}
			t.Total += n
			if i == 8 {
				t.Steal = n
			}
		}
		return t, nil
	}
	return CPUTimes{}, fmt.Errorf("/proc/stat: no cpu line")
}

// StealShare is the fraction of CPU time stolen between two readings.
func StealShare(a, b CPUTimes) float64 {
	if b.Total <= a.Total {
		return 0
	}
	return float64(b.Steal-a.Steal) / float64(b.Total-a.Total)
}
