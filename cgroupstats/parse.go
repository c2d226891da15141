package cgroupstats

// Parsers for the cgroup and proc files Sample reads. Each is a pure function
// over an io.Reader; errors name the line ("line 3: ..."), and the caller adds
// the file name. Formats (Documentation/admin-guide/cgroup-v2.rst,
// Documentation/scheduler/sched-bwc.rst, Documentation/accounting/psi.rst,
// Documentation/scheduler/sched-stats.rst):
//
//	cpu.cfs_quota_us   "-1" or "50000"          µs per period, -1 = no limit (v1)
//	cpu.cfs_period_us  "100000"                 µs (v1)
//	cpu.max            "max 100000", "50000 100000"   $MAX $PERIOD in µs (v2)
//	cpu.stat           "nr_throttled 12"        flat keyed; v1 times in ns
//	                                            (throttled_time, burst_time),
//	                                            v2 times in µs (*_usec)
//	cpuacct.usage      "1565558963756"          ns (v1)
//	cpu.pressure       "some avg10=4.65 avg60=19.77 avg300=28.50 total=509869375"
//	                   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0"
//	                                            avgN in percent, total in µs
//	task/<tid>/schedstat "194719984 53676439 377"  ns on CPU, ns waiting on a
//	                                            run queue, timeslices run

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// parseCPUMax reads a v2 cpu.max. Fields after the period are ignored.
func parseCPUMax(r io.Reader) (Quota, error) {
	line, err := singleLine(r)
	if err != nil {
		return Quota{}, err
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return Quota{}, fmt.Errorf("line 1: want \"$MAX $PERIOD\", got %q", line)
	}
	period, err := parseUint(f[1])
	if err != nil {
		return Quota{}, fmt.Errorf("line 1: period: %w", err)
	}
	if f[0] == "max" {
		return newQuota(-1, period)
	}
	max, err := parseUint(f[0])
	if err != nil {
		return Quota{}, fmt.Errorf("line 1: max: %w", err)
	}
	if max > math.MaxInt64 {
		return Quota{}, fmt.Errorf("line 1: max: %d out of range", max)
	}
	return newQuota(int64(max), period)
}

// parseCFSQuota reads v1 cpu.cfs_quota_us, where -1 means no limit.
func parseCFSQuota(r io.Reader) (int64, error) {
	line, err := singleLine(r)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(line, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("line 1: %w", numError(line, err))
	}
	if v < -1 {
		return 0, fmt.Errorf("line 1: quota %d: want -1 or a positive number", v)
	}
	return v, nil
}

// parseSingleUint reads a file holding one unsigned number, such as
// cpu.cfs_period_us or cpuacct.usage.
func parseSingleUint(r io.Reader) (uint64, error) {
	line, err := singleLine(r)
	if err != nil {
		return 0, err
	}
	v, err := parseUint(line)
	if err != nil {
		return 0, fmt.Errorf("line 1: %w", err)
	}
	return v, nil
}

// newQuota builds a Quota from microseconds; quotaUS < 0 means unlimited.
func newQuota(quotaUS int64, periodUS uint64) (Quota, error) {
	if periodUS == 0 {
		return Quota{}, errors.New("line 1: period is 0")
	}
	period, err := toDuration(periodUS, time.Microsecond)
	if err != nil {
		return Quota{}, fmt.Errorf("line 1: period: %w", err)
	}
	if quotaUS < 0 {
		return Quota{Unlimited: true, Period: period}, nil
	}
	runtime, err := toDuration(uint64(quotaUS), time.Microsecond)
	if err != nil {
		return Quota{}, fmt.Errorf("line 1: quota: %w", err)
	}
	return Quota{
		Runtime: runtime,
		Period:  period,
		CPUs:    float64(quotaUS) / float64(periodUS),
	}, nil
}

// parsePressure reads a PSI file. Lines other than "some" and "full" and
// keys other than avg10, avg60, avg300 and total are skipped; a "some" or
// "full" line must carry all four.
func parsePressure(r io.Reader) (some, full Opt[PSI], err error) {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || (f[0] != "some" && f[0] != "full") {
			continue
		}
		var p PSI
		var seen int
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			var dst *float64
			switch k {
			case "avg10":
				dst = &p.Avg10
			case "avg60":
				dst = &p.Avg60
			case "avg300":
				dst = &p.Avg300
			case "total":
				u, err := parseUint(v)
				if err != nil {
					return some, full, fmt.Errorf("line %d: %s total: %w", n, f[0], err)
				}
				if p.Total, err = toDuration(u, time.Microsecond); err != nil {
					return some, full, fmt.Errorf("line %d: %s total: %w", n, f[0], err)
				}
				seen++
				continue
			default:
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
				return some, full, fmt.Errorf("line %d: %s %s: invalid value %q", n, f[0], k, v)
			}
			*dst = x
			seen++
		}
		if seen != 4 {
			return some, full, fmt.Errorf("line %d: %s: want avg10, avg60, avg300 and total, got %q", n, f[0], sc.Text())
		}
		if f[0] == "some" {
			some = Known(p)
		} else {
			full = Known(p)
		}
	}
	if err := sc.Err(); err != nil {
		return some, full, err
	}
	return some, full, nil
}

// parseSchedstat reads /proc/<pid>/task/<tid>/schedstat. Fields after the
// third are ignored.
func parseSchedstat(r io.Reader) (onCPU, wait time.Duration, slices uint64, err error) {
	line, err := singleLine(r)
	if err != nil {
		return 0, 0, 0, err
	}
	f := strings.Fields(line)
	if len(f) < 3 {
		return 0, 0, 0, fmt.Errorf("line 1: want three numbers, got %q", line)
	}
	var v [3]uint64
	for i := range v {
		if v[i], err = parseUint(f[i]); err != nil {
			return 0, 0, 0, fmt.Errorf("line 1: field %d: %w", i+1, err)
		}
	}
	if onCPU, err = toDuration(v[0], time.Nanosecond); err != nil {
		return 0, 0, 0, fmt.Errorf("line 1: field 1: %w", err)
	}
	if wait, err = toDuration(v[1], time.Nanosecond); err != nil {
		return 0, 0, 0, fmt.Errorf("line 1: field 2: %w", err)
	}
	return onCPU, wait, v[2], nil
}

// singleLine returns the first line of a one-value file, trimmed.
func singleLine(r io.Reader) (string, error) {
	br := bufio.NewReaderSize(r, 128)
	line, err := br.ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return "", errors.New("line 1: empty")
	}
	return line, nil
}

func parseUint(s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, numError(s, err)
	}
	return v, nil
}

// numError drops strconv's function name from its message.
func numError(s string, err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return fmt.Errorf("invalid number %q: %w", s, ne.Err)
	}
	return err
}

func toDuration(v uint64, unit time.Duration) (time.Duration, error) {
	if v > uint64(math.MaxInt64/int64(unit)) {
		return 0, fmt.Errorf("%d overflows a duration", v)
	}
	return time.Duration(v) * unit, nil
}
