#!/usr/bin/env bash
# demo.sh is what `make demo` runs: build sqlfwd and fwctl, start a throwaway
# PostgreSQL and sqlfwd in front of it with the embedded default policy, run
# psql through sqlfwd (one allowed batch, one blocked DELETE without WHERE),
# print fwctl stats, and stop everything again, also on failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="/usr/local/go/bin:$PATH"
fi
# shellcheck source=free-port.sh
. "$here/free-port.sh"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "dependencies"
"$here/deps.sh"

step "build bin/sqlfwd and bin/fwctl"
make --no-print-directory build

work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-demo.XXXXXX")"
chmod 755 "$work"
daemon_pid=""
cleanup() {
	set +e
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -TERM "$daemon_pid"
		wait "$daemon_pid" 2>/dev/null
	fi
	"$here/pg.sh" stop --dir "$work/pg" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "throwaway PostgreSQL"
"$here/pg.sh" start --dir "$work/pg"
eval "$("$here/pg.sh" env --dir "$work/pg")"

port="$(free_port)"
ctl="$work/sqlfwd.sock"
step "sqlfwd intercepting 127.0.0.1:$SQLFW_PG_PORT (default policy, enforce)"
# --intercept attaches eBPF programs so that clients keep connecting to the
# database's own address; --listen is the fallback where eBPF is unavailable
# (not root, no cgroup2), and sqlfwd says why in its log.
echo "+ bin/sqlfwd --protocol postgres --upstream 127.0.0.1:$SQLFW_PG_PORT --intercept --listen 127.0.0.1:$port --control-socket $ctl"
bin/sqlfwd --protocol postgres --upstream "127.0.0.1:$SQLFW_PG_PORT" --intercept \
	--listen "127.0.0.1:$port" --control-socket "$ctl" --log-format text \
	>"$work/sqlfwd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 1 100); do
	grep -q 'sqlfwd started' "$work/sqlfwd.log" 2>/dev/null && break
	if ! kill -0 "$daemon_pid" 2>/dev/null; then
		echo "sqlfwd exited early; its log:" >&2
		cat "$work/sqlfwd.log" >&2
		exit 1
	fi
	sleep 0.1
done
sed 's/^/  sqlfwd: /' "$work/sqlfwd.log"

if bin/fwctl stats --json --control-socket "$ctl" | grep -q '"active": true'; then
	# psql knows nothing of sqlfw: it connects to the database's own port.
	fw_port=$SQLFW_PG_PORT
	echo "interception is on: psql connects to PostgreSQL's own address 127.0.0.1:$fw_port"
else
	fw_port=$port
	echo "interception is off (see the log line above): psql connects to sqlfwd's listener 127.0.0.1:$fw_port"
fi
psql_fw() {
	echo "+ psql -h 127.0.0.1 -p $fw_port -U postgres -d postgres $*"
	psql -X -h 127.0.0.1 -p "$fw_port" -U postgres -d postgres "$@"
}

step "allowed: plain psql through sqlfwd"
psql_fw -e -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE demo (id int PRIMARY KEY, name text);
INSERT INTO demo VALUES (1, 'alice'), (2, 'bob');
SELECT * FROM demo ORDER BY id;
SQL

step "blocked: DELETE without WHERE (the connection stays usable)"
psql_fw -e -v VERBOSITY=verbose <<'SQL' || true
DELETE FROM demo;
SELECT count(*) AS rows_still_there FROM demo;
SQL

step "fwctl stats"
echo "+ bin/fwctl stats --control-socket $ctl"
bin/fwctl stats --control-socket "$ctl"

step "stop"
kill -TERM "$daemon_pid"
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=""
echo "sqlfwd exited with status $rc after SIGTERM"
