# profile-relay.awk groups `perf script -F ip,sym,dso` samples (with call
# chains, leaf first) for scripts/profile-relay.sh. It prints "group<TAB>samples";
# with -v syms=FILE it also writes "group<TAB>frame<TAB>samples" there: for a
# user sample the frame that named its group, for a kernel one the Go (or C)
# callers that made the syscall.
# A sample whose leaf is in the kernel goes to the syscall it is in (the frame
# just below do_syscall_64), or to "kernel: not in a syscall" (interrupts,
# page faults); a user-space sample goes to the innermost frame on its stack
# that names a group (so memmove called from wire/pg counts as framing).
function kgroup(f) {
	if (f ~ /futex/) return "kernel: futex"
	if (f ~ /epoll_wait|epoll_pwait|ep_poll/) return "kernel: epoll_wait"
	if (f ~ /epoll_ctl/) return "kernel: epoll_ctl"
	if (f ~ /nanosleep/) return "kernel: nanosleep"
	if (f ~ /ksys_read|sys_read|recvfrom|recvmsg|readv/) return "kernel: read/recv"
	if (f ~ /ksys_write|sys_write|sendto|sendmsg|writev/) return "kernel: write/send"
	if (f ~ /clock_gettime/) return "kernel: clock_gettime"
	if (f ~ /sched_yield/) return "kernel: sched_yield"
	if (f ~ /syscall_exit|exit_to_user|syscall_enter|entry_SYSCALL|do_syscall_64/) return "kernel: syscall entry/exit"
	return "kernel: other syscalls"
}
function ugroup(f) {
	if (f ~ /^runtime\.(mallocgc|gc|scanobject|markroot|greyobject|findObject|scanblock|sweep|bgsweep|bgscavenge|heapBits|scavenge|memclrNoHeapPointers|newobject|makeslice|growslice|wbBuf|spanOf|mProf)/) return "Go: GC and allocation"
	if (f ~ /^runtime\.(futex|notesleep|notewakeup|semasleep|semawakeup|lock2|unlock2)/) return "Go: futex and locks"
	if (f ~ /^runtime\.(netpoll|epollwait)/) return "Go: netpoll"
	if (f ~ /^runtime\.(schedule|findRunnable|park_m|gopark|goready|ready|wakep|startm|stopm|mPark|mcall|execute|runq|globrunq|stealWork|checkTimers|runOneTimer|runtimer|sysmon|goschedImpl|gosched|handoffp|acquirep|releasep|entersyscall|exitsyscall|reentersyscall|casgstatus|newproc|goexit|resetspinning|usleep|osyield|retake|nanotime|timeSleep|resettimer|modtimer|\(\*timer|\(\*timers|chanrecv|chansend|selectgo|send|recv|goparkunlock|systemstack|mstart)/) return "Go: scheduler, timers, channels"
	if (f ~ /^(syscall\.|internal\/runtime\/syscall|internal\/poll\.|net\.\(\*conn\)|net\.\(\*netFD\)|net\.\(\*TCPConn\))/) return "Go: syscall entry (net, internal/poll, syscall)"
	if (f ~ /sqlfw\/wire\/mysql/) return "sqlfwd: framing (wire/mysql)"
	if (f ~ /sqlfw\/wire\//) return "sqlfwd: framing (wire/)"
	if (f ~ /pingcap\/tidb/) return "sqlfwd: TiDB parser (engine/mysql)"
	if (f ~ /sqlfw\/engine\/mysql/) return "sqlfwd: engine (engine/mysql)"
	if (f ~ /sqlfw\/engine/) return "sqlfwd: engine (Judge)"
	if (f ~ /sqlfw\/daemon\.(\(\*holdTimer|\(\*relayTimer|\(\*sessionMeter|\(\*sessionTally|nanotime|threadCPU)/) return "sqlfwd: timing and counters (daemon/timing.go)"
	if (f ~ /sqlfw\/daemon\.(record|\(\*[a-zA-Z]*\)\.record)/) return "sqlfwd: recording (daemon record*)"
	if (f ~ /sqlfw\/relay\/mysql/) return "sqlfwd: relay loop (relay/mysql)"
	if (f ~ /sqlfw\/relay\/pg/) return "sqlfwd: relay loop (relay/pg)"
	if (f ~ /sqlfw\/relay/) return "sqlfwd: raw I/O and the rest of relay/"
	if (f ~ /sqlfw\/daemon/) return "sqlfwd: daemon (observer, stats, other)"
	if (f ~ /^main\./) return "barerelay: copy loop (main)"
	return ""
}
function flush(   i, g, below) {
	if (nf == 0) return
	if (dso[1] ~ /kernel/) {
		below = ""
		for (i = 1; i <= nf; i++) {
			if (dso[i] !~ /kernel/) break
			if (sym[i] ~ /^do_syscall_64/) { below = i > 1 ? sym[i - 1] : sym[i]; break }
		}
		g = below == "" ? "kernel: not in a syscall" : kgroup(below)
		# who made the call: the first two user frames above the kernel's
		for (; i <= nf && dso[i] ~ /kernel/; i++) ;
		why = i <= nf ? sym[i] (i < nf ? " ← " sym[i + 1] (i + 1 < nf ? " ← " sym[i + 2] : "") : "") : "-"
	} else {
		g = ""
		for (i = 1; i <= nf && g == ""; i++) { g = ugroup(sym[i]); why = sym[i] }
		if (g == "") g = (dso[1] ~ /haproxy/ ? "haproxy: user" : sym[1] ~ /^runtime\./ ? "Go: runtime, other" : dso[1] ~ /libc|ld-linux/ ? "user: libc" : "user: other")
	}
	n[g]++
	if (syms != "") w[g "\t" why]++
	nf = 0
}
/^[ \t]*$/ { flush(); next }
/^[ \t]+[0-9a-f]+ / {
	line = $0
	sub(/^[ \t]+[0-9a-f]+ /, "", line)
	d = line; sub(/.*\(/, "", d); sub(/\)$/, "", d)
	s = line; sub(/ \([^(]*\)$/, "", s); sub(/\+0x[0-9a-f]+$/, "", s)
	nf++; sym[nf] = s; dso[nf] = d
	next
}
END {
	flush()
	for (g in n) printf "%s\t%d\n", g, n[g]
	if (syms != "") for (k in w) printf "%s\t%d\n", k, w[k] >syms
}
