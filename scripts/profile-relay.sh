#!/usr/bin/env bash
# profile-relay.sh: where one statement's CPU goes in a relay (issue 15).
# One run, one throwaway PostgreSQL (scripts/pg.sh), three relays in front of
# it: sqlfwd (explicit listener, enforce, default policy), bench/cmd/barerelay
# (a bare Go relay: two goroutines per connection copying through a 32 KiB
# buffer, the floor a Go relay sets) and HAProxy in TCP mode (as
# scripts/bench.sh configures it). The fixed workload is pgbench -S -M
# prepared at a fixed total rate with a few clients. For each relay and each
# rate, rounds interleaved:
#   1. perf stat on the relay's process: task-clock, context switches,
#      migrations and each syscall's count (tracepoints, no ptrace), plus
#      user and system CPU from /proc/PID/stat; divided by the statements
#      pgbench reports;
#   2. perf record -e cpu-clock -g (software clock: this VM has no PMU, so
#      no instructions or cycles) in a separate pgbench run; each sample is
#      put in a group: kernel samples by the syscall they are in, user
#      samples by the innermost Go function group on their stack (runtime
#      netpoll, scheduler, futex, syscall entry, GC and allocation, framing
#      wire/, engine/, timing and counters daemon/timing.go, relay/pg, the
#      rest of daemon/).
# --targets may add barerelay-raw: the bare relay with raw read(2)/write(2)
# in RawConn callbacks (bench/cmd/barerelay --io raw), and sqlfwd-base:
# another sqlfwd binary (--base-bin FILE, say main's), configured as sqlfwd,
# for a before/after in one run; sqlfwd-p1 and barerelay-raw-p1 are sqlfwd
# and barerelay-raw with GOMAXPROCS=1.
# Prints markdown tables (per statement) and leaves the raw files in --out
# (NAME-RATE-ROUND.{stat,cpu,groups,syms,pgbench}: .syms names the frames
# behind each group, e.g. which runtime function called nanosleep).
# --protocol mysql profiles the same relays in front of a throwaway MariaDB
# (scripts/mariadb.sh) instead: sysbench oltp_read_only (1 table of 10,000
# rows, prepared statements, 16 statements per transaction) at a fixed
# total rate of transactions (--rates), --clients threads; everything is
# divided by the statements sysbench reports, and the tables add its
# latency per transaction (p50, mean) and the target "direct" (MariaDB's
# own port: its CPU rows are mariadbd's) for the added latency.
# Needs root (perf on other processes), perf (linux-perf), haproxy, pgbench
# (mysql: mariadb-server, sysbench).
# Wall-clock numbers are noisy on a shared VM; counts per statement are not.
#
# --tls (postgres): pgbench connects with sslmode=require, PostgreSQL serves
# TLS (a certificate made for the run, as scripts/bench.sh --tls does),
# sqlfwd terminates it and opens its own (--upstream-tls require); HAProxy
# and the bare relay pass the client's TLS through.
#
#   scripts/profile-relay.sh [--rates 2000,6000] [--seconds 10] [--clients 2]
#                            [--rounds 2] [--freq 4999] [--out DIR] [--tls]
#                            [--targets sqlfwd,barerelay,haproxy] [--base-bin FILE]
#                            [--protocol postgres|mysql]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
# shellcheck source=free-port.sh
. "$here/free-port.sh"
rates="" secs=10 clients=2 rounds=2 freq=4999 out="" targets=sqlfwd,barerelay,haproxy basebin="" proto=postgres tls=0
while [ $# -gt 0 ]; do
	case "$1" in
	--rates) rates=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--clients) clients=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--freq) freq=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--targets) targets=$2; shift 2 ;;
	--base-bin) basebin=$2; shift 2 ;;
	--protocol) proto=$2; shift 2 ;;
	--tls) tls=1; shift ;;
	*) sed -n '2,48p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
say() { echo "profile-relay.sh: $*" >&2; }
[ "$tls" = 0 ] || [ "$proto" = postgres ] || { echo "profile-relay.sh: --tls is for --protocol postgres" >&2; exit 2; }
case "$proto" in
postgres) rates=${rates:-2000} ;;
mysql) rates=${rates:-50} ;;
*) say "--protocol postgres or mysql"; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { say "needs root (perf on other processes)"; exit 2; }
command -v perf >/dev/null || { say "installing linux-perf"; DEBIAN_FRONTEND=noninteractive apt-get install -y linux-perf >/dev/null; }
command -v haproxy >/dev/null || { say "installing haproxy"; DEBIAN_FRONTEND=noninteractive apt-get install -y haproxy >/dev/null; }
out="${out:-$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-profile.XXXXXX")}"
mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-profile-work.XXXXXX")"
chmod 755 "$work"

pids=()
cleanup() {
	set +e
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	"$here/pg.sh" stop --dir "$work/pg" >/dev/null 2>&1
	"$here/mariadb.sh" stop --dir "$work/my" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

version="$(git describe --always --dirty 2>/dev/null || echo dev)"
say "building sqlfwd ($version) and barerelay"
go build -ldflags "-X main.version=$version" -o "$work/sqlfwd" ./cmd/sqlfwd
go build -o "$work/barerelay" ./bench/cmd/barerelay
fwtls=() # --tls: sqlfwd's flags
if [ "$proto" = postgres ]; then
	"$here/pg.sh" start --dir "$work/pg" >/dev/null
	eval "$("$here/pg.sh" env --dir "$work/pg")"
	pgport=$SQLFW_PG_PORT
	pgbench -i -s 1 -q -h 127.0.0.1 -p "$pgport" -U postgres postgres >/dev/null 2>&1
	if [ "$tls" = 1 ]; then
		t="$work/tls"
		mkdir -p "$t"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=sqlfw-profile \
			-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$t/server.key" -out "$t/server.pem" 2>/dev/null
		install -m 600 -o postgres "$t/server.key" "$work/pg/data/profile-server.key"
		install -m 644 -o postgres "$t/server.pem" "$work/pg/data/profile-server.pem"
		"$SQLFW_PG_BIN/psql" -X -q -h 127.0.0.1 -p "$pgport" -U postgres -d postgres \
			-c "ALTER SYSTEM SET ssl_cert_file = 'profile-server.pem'" -c "ALTER SYSTEM SET ssl_key_file = 'profile-server.key'" \
			-c "ALTER SYSTEM SET ssl = on" -c "SELECT pg_reload_conf()" >/dev/null
		sleep 1
		export PGSSLMODE=require # pgbench's and psql's, every target
		fwtls=(--tls-cert "$t/server.pem" --tls-key "$t/server.key" --upstream-tls require)
	fi
else
	command -v sysbench >/dev/null || { say "installing sysbench"; DEBIAN_FRONTEND=noninteractive apt-get install -y sysbench >/dev/null; }
	command -v mariadbd >/dev/null || { say "installing mariadb-server"; DEBIAN_FRONTEND=noninteractive apt-get install -y mariadb-server >/dev/null; }
	"$here/mariadb.sh" start --dir "$work/my" >/dev/null
	eval "$("$here/mariadb.sh" env --dir "$work/my")"
	pgport=$SQLFW_MY_PORT # the upstream of every relay
	sbopts=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sqlfw --tables=1 --table-size=10000)
	sysbench oltp_read_only "${sbopts[@]}" --mysql-port="$pgport" prepare >"$out/sysbench-prepare.log" 2>&1
fi

declare -A port pid
start() { # name port command...
	local n=$1 p=$2
	shift 2
	"$@" >>"$out/$n.log" 2>&1 &
	pid[$n]=$!
	pids+=("$!")
	port[$n]=$p
	for _ in $(seq 1 100); do
		if pgbench_ok "$p"; then return 0; fi
		sleep 0.1
	done
	say "$n did not come up (see $out/$n.log)"
	exit 1
}
pgbench_ok() {
	if [ "$proto" = mysql ]; then
		mariadb --no-defaults -h 127.0.0.1 -P "$1" -uroot -e 'select 1' >/dev/null 2>&1
	else
		"$SQLFW_PG_BIN/psql" -X -q -h 127.0.0.1 -p "$1" -U postgres -d postgres -c 'select 1' >/dev/null 2>&1
	fi
}
for t in ${targets//,/ }; do
	p="$(free_port)"
	case "$t" in
	direct)
		[ "$proto" = mysql ] || { say "direct is a mysql target"; exit 2; }
		pid[direct]=$(cat "$work/my/pid") port[direct]=$pgport ;;
	sqlfwd) start sqlfwd "$p" "$work/sqlfwd" --protocol "$proto" --listen "127.0.0.1:$p" \
		--upstream "127.0.0.1:$pgport" --control-socket "$work/ctl.sock" --log-level warn "${fwtls[@]}" ;;
	sqlfwd-base)
		[ -x "$basebin" ] || { say "sqlfwd-base needs --base-bin FILE"; exit 2; }
		start sqlfwd-base "$p" "$basebin" --protocol "$proto" --listen "127.0.0.1:$p" \
			--upstream "127.0.0.1:$pgport" --control-socket "$work/ctl-base.sock" --log-level warn "${fwtls[@]}" ;;
	barerelay) start barerelay "$p" "$work/barerelay" --listen "127.0.0.1:$p" --upstream "127.0.0.1:$pgport" ;;
	barerelay-raw) start barerelay-raw "$p" "$work/barerelay" --io raw --listen "127.0.0.1:$p" --upstream "127.0.0.1:$pgport" ;;
	# the same two with the Go runtime on one P (GOMAXPROCS=1): one thread
	# runs Go code, as HAProxy's one event loop does
	sqlfwd-p1) start sqlfwd-p1 "$p" env GOMAXPROCS=1 "$work/sqlfwd" --protocol "$proto" --listen "127.0.0.1:$p" \
		--upstream "127.0.0.1:$pgport" --control-socket "$work/ctl-p1.sock" --log-level warn "${fwtls[@]}" ;;
	barerelay-raw-p1) start barerelay-raw-p1 "$p" env GOMAXPROCS=1 "$work/barerelay" --io raw --listen "127.0.0.1:$p" --upstream "127.0.0.1:$pgport" ;;
	haproxy)
		cat >"$work/haproxy.cfg" <<CFG
# Written by scripts/profile-relay.sh: a plain TCP hop, as scripts/bench.sh's.
global
	maxconn 4096
defaults
	mode tcp
	timeout connect 5s
	timeout client 5m
	timeout server 5m
listen pg
	bind 127.0.0.1:$p
	server pg 127.0.0.1:$pgport
CFG
		start haproxy "$p" haproxy -db -f "$work/haproxy.cfg" ;;
	*) say "unknown target $t"; exit 2 ;;
	esac
done

events="task-clock,context-switches,cpu-migrations,page-faults,raw_syscalls:sys_enter"
for s in read write recvfrom sendto readv writev recvmsg sendmsg epoll_wait epoll_pwait epoll_pwait2 \
	epoll_ctl futex nanosleep clock_nanosleep sched_yield getpid tgkill rt_sigreturn clock_gettime \
	madvise mmap munmap getsockopt setsockopt; do
	events="$events,syscalls:sys_enter_$s"
done

load() { # rate seconds target: the load tool's command line, in lc
	if [ "$proto" = mysql ]; then
		lc=(sysbench oltp_read_only "${sbopts[@]}" --mysql-port="${port[$3]}" --threads="$clients"
			--rate="$1" --time="$2" --percentile=50 --report-interval=0 run)
	else
		lc=(pgbench -n -S -M prepared -c "$clients" -j "$clients" -R "$1" -T "$2"
			-h 127.0.0.1 -p "${port[$3]}" -U postgres postgres)
	fi
}
bench() { load "$@"; "${lc[@]}" 2>&1; }
txns() { # statements in a run
	if [ "$proto" = mysql ]; then
		awk '$1 == "queries:" {print $2; exit}' "$1"
	else
		awk -F': *' '/number of transactions actually processed/ {split($2, a, "/"); print a[1]}' "$1"
	fi
}
# sysbench's latency per transaction, ms: p50 (--percentile=50) and mean
sblat() { awk '$1 == "avg:" {a = $2} $1 == "50th" {p = $3} END {print p, a}' "$1"; }
cputicks() { awk '{print $14, $15}' "/proc/$1/stat"; } # utime stime, in clock ticks

hz=$(getconf CLK_TCK)
say "rates $rates/s, $clients clients, ${secs}s per cell, $rounds rounds, results in $out"
for rate in ${rates//,/ }; do
	for t in ${targets//,/ }; do bench "$rate" 2 "$t" >/dev/null; done # warm up: threads, caches
	for r in $(seq 1 "$rounds"); do
		for t in ${targets//,/ }; do
			cell="$out/$t-$rate-$r"
			load "$rate" "$secs" "$t"
			read -r u0 s0 < <(cputicks "${pid[$t]}")
			perf stat -x, -o "$cell.stat" -e "$events" -p "${pid[$t]}" -- \
				"${lc[@]}" >"$cell.pgbench" 2>&1
			read -r u1 s1 < <(cputicks "${pid[$t]}")
			echo "$(((u1 - u0) * 1000000 / hz)) $(((s1 - s0) * 1000000 / hz))" >"$cell.cpu"
			perf record -q -e cpu-clock -F "$freq" -g -o "$cell.data" -p "${pid[$t]}" -- \
				"${lc[@]}" >"$cell.rec.pgbench" 2>&1
			perf script -i "$cell.data" -F ip,sym,dso 2>/dev/null | awk -v syms="$cell.syms" -f "$here/profile-relay.awk" | LC_ALL=C sort >"$cell.groups"
			LC_ALL=C sort -t"$(printf '\t')" -k1,1 -k3,3nr -o "$cell.syms" "$cell.syms"
			rm -f "$cell.data"
			say "$t $rate/s round $r: $(txns "$cell.pgbench") statements"
		done
	done
done

# Tables: per statement, mean over rounds.
for rate in ${rates//,/ }; do
	echo
	if [ "$proto" = mysql ]; then
		echo "### $rate transactions/s, $clients threads, sysbench oltp_read_only (16 statements each), $rounds × ${secs}s per relay ($version, $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg))"
	else
		echo "### $rate statements/s, $clients clients, pgbench -S -M prepared$([ "$tls" = 1 ] && echo ", TLS (sslmode=require)"), $rounds × ${secs}s per relay ($version, $(date -u +%Y-%m-%dT%H:%MZ))"
	fi
	echo
	{
		for t in ${targets//,/ }; do
			for r in $(seq 1 "$rounds"); do
				cell="$out/$t-$rate-$r"
				n=$(txns "$cell.pgbench")
				awk -v t="$t" -v n="$n" -F, '$3 != "" && $1 ~ /^[0-9.]+$/ {
					ev = $3; sub(/^syscalls:sys_enter_/, "", ev); sub(/^raw_syscalls:sys_enter/, "syscalls", ev)
					v = $1; if (ev == "task-clock") { ev = "task-clock µs"; v = v / 1000 }
					printf "S\t%s\t%s\t%.4f\n", t, ev, v / n }' "$cell.stat"
				if [ "$proto" = mysql ]; then
					# per transaction, not per statement: mean of both runs of the cell
					read -r p1 a1 < <(sblat "$cell.pgbench")
					read -r p2 a2 < <(sblat "$cell.rec.pgbench")
					awk -v t="$t" -v p="$p1 $p2" -v a="$a1 $a2" 'BEGIN { split(p, pp, " "); split(a, aa, " ")
						printf "S\t%s\tsysbench p50 ms per transaction\t%.4f\n", t, (pp[1] + pp[2]) / 2
						printf "S\t%s\tsysbench mean ms per transaction\t%.4f\n", t, (aa[1] + aa[2]) / 2 }'
				fi
				read -r u s <"$cell.cpu"
				awk -v t="$t" -v n="$n" -v u="$u" -v s="$s" 'BEGIN {
					printf "S\t%s\tuser CPU µs (/proc)\t%.4f\nS\t%s\tsystem CPU µs (/proc)\t%.4f\n", t, u / n, t, s / n }'
				nr=$(txns "$cell.rec.pgbench")
				awk -v t="$t" -v n="$nr" -v f="$freq" -F'\t' '{ printf "G\t%s\t%s\t%.4f\n", t, $1, $2 * 1e6 / f / n }' "$cell.groups"
				# the same samples by cause, from the frames behind each group
				awk -v t="$t" -v n="$nr" -v f="$freq" -F'\t' '{
					k = "everything else (the relay code, syscall entry in Go, GC)"
					if ($2 ~ /sysmon|notetsleep/) k = "Go sysmon: its usleep, osyield, timed futex sleep and own work"
					else if ($2 ~ /entersyscallWakeSysmon/) k = "Go entersyscall waking sysmon (futex wake)"
					else if ($1 ~ /epoll|netpoll/) k = "epoll_wait and netpoll"
					else if ($2 ~ /stopm|startm|findRunnable|schedule|notewakeup|notesleep|lock2|futex|park_m|wakep|ready/) k = "Go scheduler: threads parking, waking, stealing"
					else if ($1 ~ /read|write/) k = "read and write in the kernel (TCP, loopback)"
					else if ($1 ~ /^kernel/) k = "other kernel: syscall entry/exit, clock_gettime, interrupts"
					else if ($1 ~ /haproxy|libc|user: other/) k = "HAProxy user space (and libc)"
					printf "C\t%s\t%s\t%.4f\n", t, k, $3 * 1e6 / f / n }' "$cell.syms"
			done
		done
	} | awk -F'\t' -v rounds="$rounds" -v tl="$targets" '
		{ k = $1 "\t" $3; sum[k, $2] += $4; if (!(k in seen)) { seen[k] = 1; order[++nk] = k } }
		END {
			nt = split(tl, ts, ",")
			for (pass = 1; pass <= 3; pass++) {
				kind = pass == 1 ? "S" : pass == 2 ? "G" : "C"
				hdr = pass == 1 ? "| per statement |" : pass == 2 ? "| CPU µs per statement, by group (perf record) |" : "| CPU µs per statement, by cause (perf record) |"
				sep = "|---|"
				for (i = 1; i <= nt; i++) { hdr = hdr " " ts[i] " |"; sep = sep "---|" }
				print hdr; print sep
				for (j = 1; j <= nk; j++) {
					split(order[j], kk, "\t"); if (kk[1] != kind) continue
					line = "| " kk[2] " |"; any = 0
					for (i = 1; i <= nt; i++) {
						v = sum[order[j], ts[i]] / rounds
						if (v >= 0.0005) any = 1
						line = line sprintf(v >= 10 ? " %.1f |" : " %.3f |", v)
					}
					if (any) print line
					if (kind != "S") for (i = 1; i <= nt; i++) tot[ts[i]] += sum[order[j], ts[i]] / rounds
				}
				if (kind != "S") {
					line = "| **total** |"
					for (i = 1; i <= nt; i++) { line = line sprintf(" **%.1f** |", tot[ts[i]]); tot[ts[i]] = 0 }
					print line
				}
				print ""
			}
		}'
done | tee "$out/tables.md"
