#!/usr/bin/env bash
# profile-intercept.sh: what sqlfwd does per statement when intercepted (issue 26).
# One throwaway PostgreSQL (or, with --protocol mysql, MariaDB) in a child
# cgroup2 of its own; sqlfwd as explicit listener, intercepted with the
# sockmap off and on and (--splice) with the upstream leg spliced too
# (intercept.splice_upstream), rounds interleaved. The load runs at a fixed
# rate for T seconds (default 8): PostgreSQL pgbench -S -M prepared -c 2
# at R statements/s (default 2000); MySQL sysbench oltp_read_only (1 table
# of 10,000 rows, prepared statements, 16 a transaction) with 2 threads at
# R/16 transactions/s. perf stat -p on sqlfwd for T-1 s: task-clock,
# context switches and read/write/epoll_pwait/futex/nanosleep syscalls,
# divided by R*(T-1) statements. The load generator and sqlfwd run in
# another child cgroup2 made for the run. Needs root and perf (mysql:
# sysbench). Shared machine: it prints the load average; compare modes
# within one run.
#
#   R=2000 T=8 scripts/profile-intercept.sh [--protocol postgres|mysql] [--splice]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
proto=postgres splice=0
while [ $# -gt 0 ]; do
	case "$1" in
	--protocol) proto=$2; shift 2 ;;
	--splice) splice=1; shift ;;
	*) echo "usage: R=2000 T=8 $0 [--protocol postgres|mysql] [--splice]" >&2; exit 2 ;;
	esac
done
case "$proto" in postgres | mysql) ;; *) echo "$0: --protocol postgres or mysql" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "$0: needs root" >&2; exit 2; }
make --no-print-directory build >/dev/null
. scripts/free-port.sh
work=$(mktemp -d /tmp/sqlfw-prof-icept.XXXXXX); chmod 755 $work
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' FS=' ' /proc/self/mountinfo)
cg=$cg2/sqlfw-prof-icept-$$ dbcg=$cg2/sqlfw-prof-icept-db-$$
mkdir $cg $dbcg
dp=""
stop() { [ -n "$dp" ] && { kill -TERM $dp 2>/dev/null||true; wait $dp 2>/dev/null||true; dp=""; }; }
cleanup() {
  set +e; stop
  scripts/pg.sh stop --dir $work/pg >/dev/null 2>&1; [ -d $work/my ] && scripts/mariadb.sh stop --dir $work/my >/dev/null 2>&1
  for c in $cg $dbcg; do for p in $(cat $c/cgroup.procs 2>/dev/null); do echo $p > $cg2/cgroup.procs; done; rmdir $c; done
  rm -rf $work
}
trap cleanup EXIT
indb() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' $dbcg "$@"; }
incg() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' $cg "$@"; }
R=${R:-2000} T=${T:-8}
if [ $proto = postgres ]; then
  indb scripts/pg.sh start --dir $work/pg >/dev/null 2>&1
  eval "$(scripts/pg.sh env --dir $work/pg)"
  dbport=$SQLFW_PG_PORT
  pgbench -i -s 10 -q -h 127.0.0.1 -p $dbport -U postgres postgres >/dev/null 2>&1
  load() { incg pgbench -S -n -T $T -c 2 -j 2 -M prepared -R $R -h 127.0.0.1 -p $1 -U postgres postgres 2>/dev/null >/dev/null; }
  echo "pgbench -S -M prepared -c 2 -R $R -T $T; load $(cut -d' ' -f1-3 /proc/loadavg)"
else
  command -v sysbench >/dev/null || { echo "$0: needs sysbench" >&2; exit 2; }
  indb scripts/mariadb.sh start --dir $work/my >/dev/null 2>&1
  eval "$(scripts/mariadb.sh env --dir $work/my)"
  dbport=$SQLFW_MY_PORT
  sb() { sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$1 --mysql-user=root \
    --mysql-db=$SQLFW_MY_DATABASE --mysql-ssl=off --tables=1 --table-size=10000 "${@:2}"; }
  sb $dbport prepare >/dev/null
  load() { incg sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$1 --mysql-user=root \
    --mysql-db=$SQLFW_MY_DATABASE --mysql-ssl=off --tables=1 --table-size=10000 --threads=2 --rate=$((R / 16)) --time=$T run >/dev/null; }
  echo "sysbench oltp_read_only --threads=2 --rate=$((R / 16)) (16 statements a transaction: $R statements/s) --time=$T; load $(cut -d' ' -f1-3 /proc/loadavg)"
fi
port=$(free_port)
# sh execs sqlfwd: $! is sqlfwd's pid, for perf stat -p and stop
start() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' $cg bin/sqlfwd --protocol $proto --upstream 127.0.0.1:$dbport --listen 127.0.0.1:$port --control-socket $work/ctl.sock --log-level warn "$@" >>$work/log 2>&1 & dp=$!
  for _ in $(seq 100); do bin/fwctl stats --control-socket $work/ctl.sock >/dev/null 2>&1 && return; sleep 0.1; done; cat $work/log; exit 1; }
modes="listener off on"
[ $splice = 0 ] || modes="$modes splice"
for r in 1 2 3; do for m in $modes; do
  case $m in
  listener) start; p=$port ;;
  splice) start --intercept --cgroup $cg --sockmap on --splice-upstream $dbcg; p=$dbport ;;
  *) start --intercept --cgroup $cg --sockmap $m; p=$dbport ;;
  esac
  sleep 0.3
  perf stat -x, -o $work/st -e task-clock,context-switches,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep -p $dp -- sleep $((T-1)) &
  sp=$!
  load $p
  wait $sp
  sm=$(bin/fwctl stats --json --control-socket $work/ctl.sock | grep -o '"sockmap_\(added\|fallback\)": *[0-9]*' | tr '\n' ' ')
  awk -F, -v s=$((R*(T-1))) -v m=$m -v r=$r -v sm="$sm" '{v[$3]=$1} END {printf "%s %-9s cpu %5.1f us/stmt  cs %.2f  read %.2f write %.2f epoll %.2f futex %.2f nanosleep %.2f  %s\n", r, m, v["task-clock"]*1000/s, v["context-switches"]/s, v["syscalls:sys_enter_read"]/s, v["syscalls:sys_enter_write"]/s, v["syscalls:sys_enter_epoll_pwait"]/s, v["syscalls:sys_enter_futex"]/s, v["syscalls:sys_enter_nanosleep"]/s, sm}' $work/st
  stop
done; done
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)"
