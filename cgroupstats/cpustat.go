package cgroupstats

// The one cpu.stat reader: Sample's (ParseCPUStat), bench's and the
// daemon's throttle probe (ThrottleProbe, NrThrottled) all parse with
// parseCPUStat below, which allocates nothing unless the file is malformed.
//
//	nr_periods 120                 v1 and v2
//	nr_throttled 7                 v1 and v2
//	throttled_time 81234567        v1, ns
//	throttled_usec 81234           v2, µs
//	usage_usec 5123456             v2 (also user_usec, system_usec)
//	nr_bursts 0 / burst_time 0     v1 (burst_usec in v2)

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// CPUStat is what cpu.stat says, in either version. A key the file does
// not have stays unknown.
type CPUStat struct {
	Usage, User, System        Opt[time.Duration]
	Periods, Throttled, Bursts Opt[uint64]
	ThrottledTime, BurstTime   Opt[time.Duration]
}

// maxCPUStat bounds what ParseCPUStat reads (the kernel's is a few hundred
// bytes).
const maxCPUStat = 64 << 10

// ParseCPUStat reads a v1 or v2 cpu.stat. The key names differ where the
// units do (throttled_time in ns, throttled_usec in µs), so one table serves
// both. Unknown keys are skipped without looking at their values; a key that
// is absent stays unknown. Errors name the line.
func ParseCPUStat(r io.Reader) (CPUStat, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxCPUStat))
	if err != nil {
		return CPUStat{}, err
	}
	var s CPUStat
	if err := parseCPUStat(b, &s, ""); err != nil {
		return CPUStat{}, err
	}
	return s, nil
}

// NrThrottled returns the nr_throttled of a cpu.stat's bytes (the same key
// in v1 and v2) without allocating; false when it is absent or malformed.
// The other lines are skipped unread.
func NrThrottled(b []byte) (uint64, bool) {
	var s CPUStat
	if parseCPUStat(b, &s, "nr_throttled") != nil {
		return 0, false
	}
	return s.Throttled.Get()
}

// parseCPUStat fills s from the lines of b; with only set, from that key's
// line alone, skipping the others as unknown and stopping there. It
// allocates only to build an error.
func parseCPUStat(b []byte, s *CPUStat, only string) error {
	for n := 1; len(b) > 0; n++ {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if only != "" && (len(line) <= len(only) || string(line[:len(only)]) != only || !isSpace(line[len(only)])) {
			continue // not the one line wanted: not even split
		}
		key, rest := nextField(line)
		if len(key) == 0 {
			continue
		}
		var count *Opt[uint64]
		var dur *Opt[time.Duration]
		var unit time.Duration
		switch string(key) { // no allocation: the compiler compares in place
		case "usage_usec":
			dur, unit = &s.Usage, time.Microsecond
		case "user_usec":
			dur, unit = &s.User, time.Microsecond
		case "system_usec":
			dur, unit = &s.System, time.Microsecond
		case "nr_periods":
			count = &s.Periods
		case "nr_throttled":
			count = &s.Throttled
		case "nr_bursts":
			count = &s.Bursts
		case "throttled_usec":
			dur, unit = &s.ThrottledTime, time.Microsecond
		case "throttled_time":
			dur, unit = &s.ThrottledTime, time.Nanosecond
		case "burst_usec":
			dur, unit = &s.BurstTime, time.Microsecond
		case "burst_time":
			dur, unit = &s.BurstTime, time.Nanosecond
		default:
			continue
		}
		val, rest := nextField(rest)
		if extra, _ := nextField(rest); len(val) == 0 || len(extra) > 0 {
			return fmt.Errorf("line %d: want \"%s value\", got %q", n, key, line)
		}
		v, ok := digits(val)
		if !ok { // the slow path: strconv's syntax, or the error
			var err error
			if v, err = parseUint(string(val)); err != nil {
				return fmt.Errorf("line %d: %s: %w", n, key, err)
			}
		}
		if count != nil {
			*count = Known(v)
			if only != "" {
				return nil
			}
			continue
		}
		d, err := toDuration(v, unit)
		if err != nil {
			return fmt.Errorf("line %d: %s: %w", n, key, err)
		}
		*dur = Known(d)
		if only != "" {
			return nil
		}
	}
	return nil
}

// nextField splits off the first whitespace-separated field of b.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// digits parses a decimal uint64; false on anything else or overflow.
func digits(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// ThrottleProbe reads nr_throttled from a cgroup's cpu.stat with one pread
// on a file kept open (a seq_file regenerates its content when read from
// offset 0), for the daemon's sampled batches: nothing is allocated. A nil
// probe reads nothing.
type ThrottleProbe struct {
	f  *os.File
	fd uintptr
}

// OpenThrottleProbe opens the cpu.stat of the layout's cpu controller, or
// returns nil when there is none (throttling cannot happen or cannot be
// seen).
func OpenThrottleProbe(l Layout) *ThrottleProbe {
	if l.CPU == "" {
		return nil
	}
	switch l.Version {
	case V1, Hybrid, V2:
	default:
		return nil
	}
	f, err := os.Open(filepath.Join(l.CPU, "cpu.stat"))
	if err != nil {
		return nil
	}
	return &ThrottleProbe{f: f, fd: f.Fd()}
}

// Close closes the file; a nil probe is fine.
func (p *ThrottleProbe) Close() {
	if p != nil {
		p.f.Close()
	}
}

// Read returns the current nr_throttled, reading into buf (the caller's,
// so that the read allocates nothing). A line cut by the end of buf is
// left out.
func (p *ThrottleProbe) Read(buf *[256]byte) (uint64, bool) {
	if p == nil {
		return 0, false
	}
	// A raw system call: unix.Pread would enter the runtime's system-call
	// state, which wakes its sysmon thread when the daemon was idle (the
	// relay's own reads and writes avoid it too). Reading cpu.stat does not
	// block.
	r, _, e := unix.RawSyscall6(unix.SYS_PREAD64, p.fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
	n := int(r)
	if e != 0 || n <= 0 {
		return 0, false
	}
	b := buf[:n]
	if n == len(buf) {
		b = b[:bytes.LastIndexByte(b, '\n')+1]
	}
	return NrThrottled(b)
}
