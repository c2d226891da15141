#!/bin/sh
# bench-in-cgroup2.sh DIR CMD [ARGS...]: runs CMD as a member of the cgroup2
# directory DIR (its children stay there). Used by scripts/bench.sh.
d=$1
shift
echo $$ >"$d/cgroup.procs" || exit 1
exec "$@"
