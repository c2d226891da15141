package daemon

// GOMAXPROCS follows the load (issue 15).
//
// A relay session is two goroutines that park on the netpoller after every
// message. With more than one P, each netpoll wake-up that readies one of
// them makes the runtime start another thread spinning to look for work
// (wakep), which finds none and sleeps again: futex wake-ups, sched_yield
// on the scheduler's lock and thread switches that a single event loop
// (HAProxy) never pays. Measured with scripts/profile-relay.sh
// (docs/performance.md, "Where one statement's CPU goes"), one P cut
// sqlfwd's CPU per statement by a quarter at 5,000 statements/s and by
// nearly a third at 10,000/s, and changed nothing at 1,000/s; but one P
// also caps the relay at one core.
//
// So the daemon runs with one P while the process uses little CPU and
// gives the runtime its default back (runtime.GOMAXPROCS as it was at
// start: the CPUs, or the cgroup's limit) when the process uses more than
// procsRaiseAt vCPUs over an interval; it returns to one P after
// procsLowerAfter intervals under procsLowerAt. A cgo call (pg_query's
// parser) does not hold the P: the runtime hands it to another thread
// while the call runs. An operator who sets the GOMAXPROCS environment
// variable gets exactly that, and no tuning.

import (
	"log/slog"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

const (
	procsInterval   = time.Second
	procsRaiseAt    = 0.6 // vCPUs of the process over an interval, with one P
	procsLowerAt    = 0.3 // ... with the default, for procsLowerAfter intervals
	procsLowerAfter = 5
)

// procsTuner decides the GOMAXPROCS of the next interval.
type procsTuner struct {
	max, cur int
	low      int // consecutive intervals under procsLowerAt
}

// next is the GOMAXPROCS after an interval in which the process used used
// vCPUs.
func (t *procsTuner) next(used float64) int {
	switch {
	case t.cur == 1 && used > procsRaiseAt:
		t.cur, t.low = t.max, 0
	case t.cur > 1 && used < procsLowerAt:
		if t.low++; t.low >= procsLowerAfter {
			t.cur, t.low = 1, 0
		}
	default:
		t.low = 0
	}
	return t.cur
}

// processCPU is the process's user and system CPU time. getrusage never
// blocks: a raw call, which does not wake the runtime's sysmon as
// syscall.Getrusage would (relay.IO says why that matters).
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if _, _, e := syscall.RawSyscall(syscall.SYS_GETRUSAGE, syscall.RUSAGE_SELF, uintptr(unsafe.Pointer(&ru)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// startProcsTuner runs the tuner until stop is closed, unless GOMAXPROCS is
// set or the default is already one P.
func startProcsTuner(log *slog.Logger, stop <-chan struct{}) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		return
	}
	t := &procsTuner{max: runtime.GOMAXPROCS(0), cur: 1}
	if t.max <= 1 {
		return
	}
	if _, ok := processCPU(); !ok {
		return
	}
	runtime.GOMAXPROCS(1)
	go func() {
		defer runtime.SetDefaultGOMAXPROCS()
		tick := time.NewTicker(procsInterval)
		defer tick.Stop()
		cpu0, _ := processCPU()
		at0 := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			cpu1, ok := processCPU()
			at1 := time.Now()
			if !ok || !at1.After(at0) {
				continue
			}
			used := float64(cpu1-cpu0) / float64(at1.Sub(at0))
			cpu0, at0 = cpu1, at1
			if prev := t.cur; t.next(used) != prev {
				if t.cur == 1 {
					runtime.GOMAXPROCS(1)
				} else {
					// the runtime's default again, following the
					// cgroup's limit as it does
					runtime.SetDefaultGOMAXPROCS()
					t.cur = runtime.GOMAXPROCS(0)
				}
				log.Debug("GOMAXPROCS follows the load", "gomaxprocs", t.cur, "used_vcpus", used)
			}
		}
	}()
}
