#!/usr/bin/env bash
# profile-intercept.sh: what sqlfwd does per statement when intercepted (issue 26).
# One throwaway PostgreSQL; sqlfwd as explicit listener, intercepted with the
# sockmap off and on, rounds interleaved; pgbench -S -M prepared -c 2 at a
# fixed rate (R, default 2000/s) for T seconds (default 8); perf stat -p on
# sqlfwd for T-1 s: task-clock, context switches and read/write/epoll_pwait/
# futex/nanosleep syscalls, divided by R*(T-1) statements. pgbench and sqlfwd
# run in a child cgroup2 made for the run. Needs root and perf. Shared
# machine: it prints the load average; compare modes within one run.
#
#   R=2000 T=8 scripts/profile-intercept.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
make --no-print-directory build >/dev/null
. scripts/free-port.sh
[ "$(id -u)" = 0 ] || { echo "$0: needs root" >&2; exit 2; }
work=$(mktemp -d /tmp/sqlfw-prof-icept.XXXXXX); chmod 755 $work
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' FS=' ' /proc/self/mountinfo); cg=$cg2/sqlfw-prof-icept-$$; mkdir $cg
dp=""
stop() { [ -n "$dp" ] && { kill -TERM $dp 2>/dev/null||true; wait $dp 2>/dev/null||true; dp=""; }; }
cleanup() { set +e; stop; scripts/pg.sh stop --dir $work/pg >/dev/null 2>&1; for p in $(cat $cg/cgroup.procs 2>/dev/null); do echo $p > $cg2/cgroup.procs; done; rmdir $cg; rm -rf $work; }
trap cleanup EXIT
scripts/pg.sh start --dir $work/pg >/dev/null 2>&1
eval "$(scripts/pg.sh env --dir $work/pg)"
pgbench -i -s 10 -q -h 127.0.0.1 -p $SQLFW_PG_PORT -U postgres postgres >/dev/null 2>&1
port=$(free_port)
start() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' $cg bin/sqlfwd --protocol postgres --upstream 127.0.0.1:$SQLFW_PG_PORT --listen 127.0.0.1:$port --control-socket $work/ctl.sock --log-level warn "$@" >>$work/log 2>&1 & dp=$!
  for _ in $(seq 100); do bin/fwctl stats --control-socket $work/ctl.sock >/dev/null 2>&1 && return; sleep 0.1; done; cat $work/log; exit 1; }
R=${R:-2000} T=${T:-8}
echo "pgbench -S -M prepared -c 2 -R $R -T $T; load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in 1 2 3; do for m in listener off on; do
  if [ $m = listener ]; then start; p=$port; else start --intercept --cgroup $cg --sockmap $m; p=$SQLFW_PG_PORT; fi
  sleep 0.3
  perf stat -x, -o $work/st -e task-clock,context-switches,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep -p $dp -- sleep $((T-1)) &
  sp=$!
  sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' $cg pgbench -S -n -T $T -c 2 -j 2 -M prepared -R $R -h 127.0.0.1 -p $p -U postgres postgres 2>/dev/null >/dev/null
  wait $sp
  sm=$(bin/fwctl stats --json --control-socket $work/ctl.sock | grep -o '"sockmap_\(added\|fallback\)": *[0-9]*' | tr '\n' ' ')
  awk -F, -v s=$((R*(T-1))) -v m=$m -v r=$r -v sm="$sm" '{v[$3]=$1} END {printf "%s %-9s cpu %5.1f us/stmt  cs %.2f  read %.2f write %.2f epoll %.2f futex %.2f nanosleep %.2f  %s\n", r, m, v["task-clock"]*1000/s, v["context-switches"]/s, v["syscalls:sys_enter_read"]/s, v["syscalls:sys_enter_write"]/s, v["syscalls:sys_enter_epoll_pwait"]/s, v["syscalls:sys_enter_futex"]/s, v["syscalls:sys_enter_nanosleep"]/s, sm}' $work/st
  stop
done; done
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)"
