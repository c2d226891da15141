#!/usr/bin/env bash
# bench-intercept.sh: what transparent interception costs, closed loop.
# pgbench -S -M prepared (2 clients) against a throwaway PostgreSQL, in one
# run, rounds interleaved: direct; through sqlfwd's explicit listener; and
# to the database's own address intercepted with the sockmap fast path off
# and on. pgbench and sqlfwd run in a child cgroup2 made for the run. Needs
# root. Prints tps and mean latency per target and round.
#
#   scripts/bench-intercept.sh [-T seconds] [-r rounds]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
# shellcheck source=free-port.sh
. "$here/free-port.sh"
secs=10 rounds=2
while [ $# -gt 0 ]; do
	case "$1" in
	-T) secs=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	*) echo "usage: $0 [-T seconds] [-r rounds]" >&2; exit 2 ;;
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
	for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do echo "$p" >"$cg2/cgroup.procs"; done
	rmdir "$cg" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
"$here/pg.sh" start --dir "$work/pg" >/dev/null
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
run() { # port -> "tps latency_ms"
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" pgbench -S -n -T "$secs" -c 2 -j 2 -M prepared \
		-h 127.0.0.1 -p "$1" -U postgres postgres 2>/dev/null |
		awk '/^latency average/ {lat=$4} /^tps/ {tps=$3} END {printf "%.0f %.3f\n", tps, lat}'
}

echo "pgbench -S -M prepared -c 2 -T $secs, scale 10, $rounds rounds; $(nproc) CPUs shared by pgbench, sqlfwd and PostgreSQL"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-26s %10s %12s\n' round target tps latency_ms
for r in $(seq 1 "$rounds"); do
	read -r t l <<<"$(run "$SQLFW_PG_PORT")"
	printf '%-5s %-26s %10s %12s\n' "$r" direct "$t" "$l"
	start_daemon
	read -r t l <<<"$(run "$port")"
	printf '%-5s %-26s %10s %12s\n' "$r" "explicit listener" "$t" "$l"
	stop_daemon
	for sm in off on; do
		start_daemon --intercept --cgroup "$cg" --sockmap "$sm"
		read -r t l <<<"$(run "$SQLFW_PG_PORT")"
		printf '%-5s %-26s %10s %12s\n' "$r" "intercepted, sockmap $sm" "$t" "$l"
		stop_daemon
	done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
