#!/usr/bin/env bash
# bench-relay-floor.sh: the floors under an intercepted round trip (issue 26).
# Runs bpf's BenchmarkRoundTripFloor one case at a time, cases interleaved
# in each round, under perf stat: a 100-byte request and answer with no relay
# (TCP, or spliced by relay_msg), and through a Read/Write relay with no leg,
# the client leg, or both legs spliced. Prints per round trip the wall time,
# the process's CPU (task-clock: client, relay and echo server are one
# process, and loopback's softirq work runs in the sender's context) and its
# context switches. Needs root and perf. The machine is shared: read the load
# average it prints, and compare cases within one run.
#
#   scripts/bench-relay-floor.sh [-n round-trips] [-r rounds]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
n=20000 rounds=3
while [ $# -gt 0 ]; do
	case "$1" in
	-n) n=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	*) echo "usage: $0 [-n round-trips] [-r rounds]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "$0: needs root (eBPF)" >&2; exit 2; }
command -v perf >/dev/null || { echo "$0: needs perf" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-floor.XXXXXX")"
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/bpf.test" ./bpf

echo "$n round trips per case, $rounds rounds, cases interleaved; $(nproc) CPUs, shared"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-18s %12s %12s %10s\n' round case wall_us cpu_us ctxsw
for r in $(seq 1 "$rounds"); do
	for c in direct-tcp direct-spliced relay-tcp relay-client-leg relay-both-legs; do
		wall=$(perf stat -x, -o "$work/stat" -e task-clock,context-switches \
			"$work/bpf.test" -test.run '^$' -test.bench "RoundTripFloor/$c\$" -test.benchtime "${n}x" |
			awk '/ns\/op/ {printf "%.1f", $3/1000}')
		[ -n "$wall" ] || { echo "$0: case $c did not run" >&2; exit 1; }
		awk -F, -v n="$n" -v r="$r" -v c="$c" -v w="$wall" '
			$3 == "task-clock" {cpu = $1 * 1000 / n}
			$3 == "context-switches" {cs = $1 / n}
			END {printf "%-5s %-18s %12s %12.1f %10.2f\n", r, c, w, cpu, cs}' "$work/stat"
	done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
