#!/usr/bin/env bash
# bench-intercept.sh: what transparent interception costs, closed loop.
# pgbench -S -M prepared (2 clients) against a throwaway PostgreSQL, in one
# run, rounds interleaved: direct; through sqlfwd's explicit listener; and
# to the database's own address intercepted with the sockmap fast path off
# and on. pgbench and sqlfwd run in a child cgroup2 made for the run. Needs
# root. Prints tps and mean latency per target and round. --splice adds the
# target "sockmap on + upstream" (intercept.splice_upstream, experimental):
# PostgreSQL then runs in a child cgroup2 of its own, which sqlfwd is given.
#
#   scripts/bench-intercept.sh [-T seconds] [-r rounds] [--splice]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
# shellcheck source=free-port.sh
. "$here/free-port.sh"
secs=10 rounds=2 splice=0
while [ $# -gt 0 ]; do
	case "$1" in
	-T) secs=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	--splice) splice=1; shift ;;
	*) echo "usage: $0 [-T seconds] [-r rounds] [--splice]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "$0: needs root (eBPF interception)" >&2; exit 2; }

make --no-print-directory build >/dev/null
work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-bench-icept.XXXXXX")"
chmod 755 "$work"
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' FS=' ' /proc/self/mountinfo)
[ -n "$cg2" ] || { echo "$0: no cgroup2 mount" >&2; exit 2; }
cg="$cg2/sqlfw-bench-$$"
mkdir "$cg"
pgcg="$cg2/sqlfw-bench-pg-$$"
mkdir "$pgcg"
daemon_pid=""
stop_daemon() {
	if [ -n "$daemon_pid" ]; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		wait "$daemon_pid" 2>/dev/null || true
		daemon_pid=""
	fi
}
cleanup() {
	set +e
	stop_daemon
	"$here/pg.sh" stop --dir "$work/pg" >/dev/null 2>&1
	for c in "$cg" "$pgcg"; do
		for p in $(cat "$c/cgroup.procs" 2>/dev/null); do echo "$p" >"$cg2/cgroup.procs"; done
		rmdir "$c" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
# PostgreSQL in a cgroup of its own: --splice attaches sockops there.
sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$pgcg" "$here/pg.sh" start --dir "$work/pg" >/dev/null
eval "$("$here/pg.sh" env --dir "$work/pg")"
pgbench -i -s 10 -q -h 127.0.0.1 -p "$SQLFW_PG_PORT" -U postgres postgres >/dev/null 2>&1
port="$(free_port)"

start_daemon() { # extra sqlfwd args
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" bin/sqlfwd --protocol postgres \
		--upstream "127.0.0.1:$SQLFW_PG_PORT" --listen "127.0.0.1:$port" --control-socket "$work/ctl.sock" \
		--log-level warn "$@" >>"$work/sqlfwd.log" 2>&1 &
	daemon_pid=$!
	for _ in $(seq 1 100); do
		bin/fwctl stats --control-socket "$work/ctl.sock" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "sqlfwd did not start:" >&2; cat "$work/sqlfwd.log" >&2; exit 1
}
usage() { # CPU µs used so far by everything in the run's two cgroups
	cat "$cg/cpu.stat" "$pgcg/cpu.stat" | awk '$1 == "usage_usec" {u += $2} END {print u}'
}
run() { # port -> "tps latency_ms cpu_us_per_statement"
	local u0 u1
	u0=$(usage)
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" pgbench -S -n -T "$secs" -c 2 -j 2 -M prepared \
		-h 127.0.0.1 -p "$1" -U postgres postgres 2>/dev/null >"$work/pgbench.out"
	u1=$(usage)
	awk -v u="$((u1 - u0))" '/^latency average/ {lat=$4} /^tps/ {tps=$3}
		/^number of transactions actually processed/ {split($0, a, ": "); n=a[2]+0}
		END {printf "%.0f %.3f %.1f\n", tps, lat, (n ? u/n : 0)}' "$work/pgbench.out"
}

echo "pgbench -S -M prepared -c 2 -T $secs, scale 10, $rounds rounds; $(nproc) CPUs shared by pgbench, sqlfwd and PostgreSQL"
echo "cpu_us: CPU per statement of pgbench, sqlfwd and PostgreSQL (their cgroups' cpu.stat usage_usec)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-26s %10s %12s %8s\n' round target tps latency_ms cpu_us
for r in $(seq 1 "$rounds"); do
	read -r t l c <<<"$(run "$SQLFW_PG_PORT")"
	printf '%-5s %-26s %10s %12s %8s\n' "$r" direct "$t" "$l" "$c"
	start_daemon
	read -r t l c <<<"$(run "$port")"
	printf '%-5s %-26s %10s %12s %8s\n' "$r" "explicit listener" "$t" "$l" "$c"
	stop_daemon
	for sm in off on; do
		start_daemon --intercept --cgroup "$cg" --sockmap "$sm"
		read -r t l c <<<"$(run "$SQLFW_PG_PORT")"
		printf '%-5s %-26s %10s %12s %8s\n' "$r" "intercepted, sockmap $sm" "$t" "$l" "$c"
		stop_daemon
	done
	if [ "$splice" = 1 ]; then
		start_daemon --intercept --cgroup "$cg" --sockmap on --splice-upstream "$pgcg"
		read -r t l c <<<"$(run "$SQLFW_PG_PORT")"
		sm=$(bin/fwctl stats --json --control-socket "$work/ctl.sock" | grep -o '"sockmap_\(added\|fallback\)": *[0-9]*' | tr -d '" ' | tr '\n' ' ')
		printf '%-5s %-26s %10s %12s %8s  %s\n' "$r" "sockmap on + upstream" "$t" "$l" "$c" "$sm"
		stop_daemon
	fi
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
