#!/usr/bin/env bash
# bench-pgbench.sh: closed-loop pgbench -S (select-only) straight to a
# throwaway PostgreSQL and through sqlfwd (enforce, default policy), in the
# same run, for each query mode. Prints tps, mean latency and the ratio.
# Closed-loop numbers understate tail latency (coordinated omission); the
# open-loop benchmark in bench/ is the honest measure of added latency.
#
#   scripts/bench-pgbench.sh [-T seconds] [-c clients]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
# shellcheck source=free-port.sh
. "$here/free-port.sh"

secs=10 clients=2
while [ $# -gt 0 ]; do
	case "$1" in
	-T) secs=$2; shift 2 ;;
	-c) clients=$2; shift 2 ;;
	*) echo "usage: $0 [-T seconds] [-c clients]" >&2; exit 2 ;;
	esac
done

make --no-print-directory build >/dev/null
work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-bench.XXXXXX")"
chmod 755 "$work"
daemon_pid=""
cleanup() {
	set +e
	[ -n "$daemon_pid" ] && kill -TERM "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
	"$here/pg.sh" stop --dir "$work/pg" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
"$here/pg.sh" start --dir "$work/pg" >/dev/null
eval "$("$here/pg.sh" env --dir "$work/pg")"
port="$(free_port)"
bin/sqlfwd --protocol postgres --listen "127.0.0.1:$port" --upstream "127.0.0.1:$SQLFW_PG_PORT" \
	--control-socket "$work/ctl.sock" --log-level warn >"$work/sqlfwd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 1 100); do
	psql -X -qtAc 'select 1' -h 127.0.0.1 -p "$port" -U postgres postgres >/dev/null 2>&1 && break
	sleep 0.1
done
pgbench -i -s 10 -q -h 127.0.0.1 -p "$SQLFW_PG_PORT" -U postgres postgres >/dev/null 2>&1

run() { # port mode -> "tps latency_ms"
	pgbench -S -n -T "$secs" -c "$clients" -j "$clients" -M "$2" -h 127.0.0.1 -p "$1" -U postgres postgres 2>/dev/null |
		awk '/^latency average/ {lat=$4} /^tps/ {tps=$3} END {printf "%.0f %.3f\n", tps, lat}'
}
echo "pgbench -S -c $clients -T $secs, scale 10; $(nproc) CPUs shared by pgbench, sqlfwd and PostgreSQL"
printf '%-9s %12s %12s %14s %14s %8s %12s\n' mode direct_tps sqlfwd_tps direct_lat_ms sqlfwd_lat_ms ratio added_ms
for mode in simple extended prepared; do
	read -r dt dl <<<"$(run "$SQLFW_PG_PORT" "$mode")"
	read -r ft fl <<<"$(run "$port" "$mode")"
	awk -v m="$mode" -v dt="$dt" -v dl="$dl" -v ft="$ft" -v fl="$fl" \
		'BEGIN {printf "%-9s %12d %12d %14.3f %14.3f %8.2f %12.3f\n", m, dt, ft, dl, fl, ft/dt, fl-dl}'
done
bin/fwctl stats --control-socket "$work/ctl.sock" | grep -E 'judged|evaluation'
