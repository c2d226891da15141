package cgroupstats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// /proc/<pid>/stat is one line: pid (comm) state ppid ... with utime and
// stime, the process's CPU time in user and kernel mode over all its
// threads (exited ones included), as fields 14 and 15, in clock ticks:
//
//	811 (sqlfwd) S 1 811 811 0 -1 4194560 1370 0 0 0 152 37 0 0 20 0 9 0 ...
//
// comm may hold spaces and parentheses, so fields are counted from the last
// ")".

// clockTick is USER_HZ, the unit of utime and stime: 100 on every Linux
// architecture Go supports (the kernel fixes it for user space).
const clockTick = 10 * time.Millisecond

type procCPU struct{ user, system time.Duration }

func parseProcStatCPU(r io.Reader) (procCPU, error) {
	b, err := io.ReadAll(io.LimitReader(r, 8<<10))
	if err != nil {
		return procCPU{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procCPU{}, errors.New("no ')' after the command name")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	if len(f) < 13 {
		return procCPU{}, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	ut, err1 := strconv.ParseUint(string(f[11]), 10, 63)
	stt, err2 := strconv.ParseUint(string(f[12]), 10, 63)
	if err1 != nil || err2 != nil {
		return procCPU{}, errors.New("utime or stime is not a number")
	}
	return procCPU{user: time.Duration(ut) * clockTick, system: time.Duration(stt) * clockTick}, nil
}
