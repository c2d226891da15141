#!/usr/bin/env bash
# kworker-ab.sh: system-wide CPU per statement for sqlfwd intercepted with
# the sockmap (user-space relay) and with the experimental kernel fast path,
# at one fixed rate, interleaved rounds. Counts what a cgroup cannot: the
# kworker threads that send the fast path's redirected segments, and every
# other CPU on the machine (so run it on an idle machine; the difference
# between the two targets at the same rate is what the relay costs).
#   bash kworker-ab.sh [RATE] [SECONDS] [ROUNDS] [ROWS]   (root; run from the repo)
# ROWS (default 1): pgbench -S's point select, or with ROWS > 1 a prepared
# select of ROWS rows of pgbench_accounts (aid, abalance, filler).
set -euo pipefail
rate=${1:-3000} secs=${2:-10} rounds=${3:-2} rows=${4:-1}
dir=$(mktemp -d /tmp/sqlfw-kab.XXXXXX)
chmod 755 "$dir"
scripts/pg.sh start --dir "$dir/pg" >/dev/null
port=$(cat "$dir/pg/port")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; scripts/pg.sh stop --dir "$dir/pg" --purge >/dev/null; rm -rf "$dir"' EXIT
start() { # name alias extra...
	local name=$1 alias=$2; shift 2
	bin/sqlfwd --protocol postgres --upstream 127.0.0.1:$port --intercept --protect "$alias:$port" \
		--control-socket "$dir/$name.sock" --log-level warn "$@" 2>"$dir/$name.log" &
	pids+=($!)
}
start sockmap 127.0.0.6 --sockmap on
start fastpath 127.0.0.7 --sockmap on --fastpath
sleep 2
pgbench -i -q -s 1 -h 127.0.0.1 -p "$port" -U postgres postgres >/dev/null 2>&1
ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }      # user nice system irq softirq
kw() { # CPU ticks of all kworker threads
	local t=0 f
	for f in /proc/[0-9]*/stat; do
		read -r line <"$f" 2>/dev/null || continue
		case "$line" in *"(kworker"*) set -- ${line##*) }; t=$((t + ${12} + ${13})) ;; esac
	done
	echo $t
}
hz=$(getconf CLK_TCK)
printf 'target\tround\ttps\tlat_avg_ms\tsys_vcpu\tkworker_vcpu\tsys_us_per_stmt\n'
for r in $(seq 1 "$rounds"); do
	for t in sockmap:127.0.0.6 fastpath:127.0.0.7; do
		name=${t%%:*} alias=${t#*:}
		c0=$(ticks) k0=$(kw)
		if [ "$rows" = 1 ]; then
			wl=(-S)
		else
			printf '\\set a random(1, %d)\nselect aid, abalance, filler from pgbench_accounts where aid between :a and :a + %d;\n' $((100000 - rows)) $((rows - 1)) >"$dir/rows.sql"
			wl=(-f "$dir/rows.sql")
		fi
		out=$(pgbench -n "${wl[@]}" -M prepared -c 4 -j 2 -R "$rate" -T "$secs" -h "$alias" -p "$port" -U postgres postgres 2>&1)
		c1=$(ticks) k1=$(kw)
		tps=$(awk '/^tps/{print $3; exit}' <<<"$out")
		lat=$(awk '/^latency average/{print $4; exit}' <<<"$out")
		awk -v n="$name" -v r="$r" -v tps="$tps" -v lat="$lat" -v c=$((c1 - c0)) -v k=$((k1 - k0)) -v hz="$hz" -v s="$secs" \
			'BEGIN {v = c / hz / s; printf "%s\t%d\t%.0f\t%s\t%.3f\t%.3f\t%.3f\n", n, r, tps, lat, v, k / hz / s, v / tps * 1e6}'
	done
done
for n in sockmap fastpath; do
	echo "# $n: $(bin/fwctl stats --control-socket "$dir/$n.sock" --json 2>/dev/null | grep -o '"fastpath_[a-z]*": *[0-9]*' | tr '\n' ' ')"
done
