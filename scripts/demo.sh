#!/usr/bin/env bash
# demo.sh is what `make demo` runs: build sqlfwd and fwctl, start a throwaway
# PostgreSQL and sqlfwd in front of it with the embedded default policy, run
# psql through sqlfwd (one allowed batch, one blocked DELETE without WHERE),
# drive a little load (short SELECTs, a few hundred a second) until one
# complete stats window lies within it, and print fwctl stats with that
# window's breakdown (held time, evaluation, relay, throttling, the tail's
# attribution); then the same for a throwaway MariaDB and the mariadb CLI;
# and stop everything again, also on failure. The demo's daemons use
# --stats-window 2s (the default is 10s, docs/config.md) so the wait is short.
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

# The demo's stats window (docs/stats.md); load runs until a whole one
# lies within it.
window=2s

# window_start prints when the latest complete stats window of the daemon
# at control socket $1 began ("" before the first one).
window_start() {
	bin/fwctl stats --json --control-socket "$1" | grep -o '"start": *"[^"]*"' | tail -1 || true
}

# load runs "$@" (a client reading statements on stdin) over and over with
# 500 short SELECTs each and a pause of 0.1 s between runs (one or two
# thousand statements a second: enough for the tail attribution's samples,
# a light load for one client), until the file
# $work/stop-load exists.
load() {
	while [ ! -e "$work/stop-load" ]; do
		for i in $(seq 1 500); do echo "SELECT name FROM demo WHERE id = $((i % 2 + 1));"; done |
			"$@" >/dev/null 2>&1 || true
		sleep 0.1
	done
}
start_load() {
	rm -f "$work/stop-load"
	load "$@" &
	load_pid=$!
}
stop_load() {
	if [ -n "$load_pid" ]; then
		touch "$work/stop-load"
		wait "$load_pid" 2>/dev/null
		load_pid=""
	fi
}

# wait_window waits (at most 30 s) until the daemon at control socket $1
# has completed a stats window that began after the load did: the window in
# progress when it started is skipped, the next one is all load.
wait_window() {
	local seen next changes=0
	seen="$(window_start "$1")"
	for _ in $(seq 1 150); do
		next="$(window_start "$1")"
		if [ "$next" != "$seen" ]; then
			seen="$next"
			changes=$((changes + 1))
			[ "$changes" -ge 2 ] && return 0
		fi
		sleep 0.2
	done
	echo "no second stats window within 30 s" >&2
}

step "dependencies"
"$here/deps.sh"

step "build bin/sqlfwd and bin/fwctl"
make --no-print-directory build

work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-demo.XXXXXX")"
chmod 755 "$work"
daemon_pid="" my_pid="" load_pid=""
cleanup() {
	set +e
	stop_load
	for p in "$daemon_pid" "$my_pid"; do
		if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p"
			wait "$p" 2>/dev/null
		fi
	done
	"$here/pg.sh" stop --dir "$work/pg" >/dev/null 2>&1
	[ -d "$work/my" ] && "$here/mariadb.sh" stop --dir "$work/my" >/dev/null 2>&1
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
echo "+ bin/sqlfwd --protocol postgres --upstream 127.0.0.1:$SQLFW_PG_PORT --intercept --listen 127.0.0.1:$port --control-socket $ctl --stats-window $window"
bin/sqlfwd --protocol postgres --upstream "127.0.0.1:$SQLFW_PG_PORT" --intercept \
	--listen "127.0.0.1:$port" --control-socket "$ctl" --log-format text --stats-window "$window" \
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

step "a little load: short SELECTs through psql until one whole $window stats window lies within it"
start_load psql -X -q -h 127.0.0.1 -p "$fw_port" -U postgres -d postgres
wait_window "$ctl"

step "fwctl stats"
echo "+ bin/fwctl stats --control-socket $ctl"
bin/fwctl stats --control-socket "$ctl"
stop_load

step "stop"
kill -TERM "$daemon_pid"
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=""
echo "sqlfwd exited with status $rc after SIGTERM"

step "throwaway MariaDB"
"$here/mariadb.sh" start --dir "$work/my"
eval "$("$here/mariadb.sh" env --dir "$work/my")"
myport="$(free_port)"
myctl="$work/sqlfwd-my.sock"
step "sqlfwd intercepting 127.0.0.1:$SQLFW_MY_PORT (MySQL protocol, default policy, enforce)"
echo "+ bin/sqlfwd --protocol mysql --upstream 127.0.0.1:$SQLFW_MY_PORT --intercept --listen 127.0.0.1:$myport --control-socket $myctl --stats-window $window"
bin/sqlfwd --protocol mysql --upstream "127.0.0.1:$SQLFW_MY_PORT" --intercept \
	--listen "127.0.0.1:$myport" --control-socket "$myctl" --log-format text --stats-window "$window" \
	>"$work/sqlfwd-my.log" 2>&1 &
my_pid=$!
for _ in $(seq 1 100); do
	grep -q 'sqlfwd started' "$work/sqlfwd-my.log" 2>/dev/null && break
	if ! kill -0 "$my_pid" 2>/dev/null; then
		echo "sqlfwd exited early; its log:" >&2
		cat "$work/sqlfwd-my.log" >&2
		exit 1
	fi
	sleep 0.1
done
sed 's/^/  sqlfwd: /' "$work/sqlfwd-my.log"
if bin/fwctl stats --json --control-socket "$myctl" | grep -q '"active": true'; then
	my_fw_port=$SQLFW_MY_PORT
	echo "interception is on: mariadb connects to MariaDB's own address 127.0.0.1:$my_fw_port"
else
	my_fw_port=$myport
	echo "interception is off (see the log line above): mariadb connects to sqlfwd's listener 127.0.0.1:$my_fw_port"
fi
mariadb_fw() {
	echo "+ mariadb -h 127.0.0.1 -P $my_fw_port -u $SQLFW_MY_USER $SQLFW_MY_DATABASE $*"
	mariadb --no-defaults --skip-ssl -h 127.0.0.1 -P "$my_fw_port" -u "$SQLFW_MY_USER" "$SQLFW_MY_DATABASE" "$@"
}

step "allowed: the mariadb CLI through sqlfwd"
mariadb_fw -v -v -t <<'SQL'
CREATE TABLE demo (id int PRIMARY KEY, name text);
INSERT INTO demo VALUES (1, 'alice'), (2, 'bob');
SELECT * FROM demo ORDER BY id;
SQL

step "blocked: DELETE without WHERE (the connection stays usable)"
mariadb_fw -v -v -t --force <<'SQL' || true
DELETE FROM demo;
SELECT count(*) AS rows_still_there FROM demo;
SQL

step "a little load: short SELECTs through the mariadb CLI until one whole $window stats window lies within it"
start_load mariadb --no-defaults --skip-ssl -N -B -h 127.0.0.1 -P "$my_fw_port" -u "$SQLFW_MY_USER" "$SQLFW_MY_DATABASE"
wait_window "$myctl"

step "fwctl stats (MySQL)"
echo "+ bin/fwctl stats --control-socket $myctl"
bin/fwctl stats --control-socket "$myctl"
stop_load

step "stop"
kill -TERM "$my_pid"
rc=0
wait "$my_pid" || rc=$?
my_pid=""
echo "sqlfwd exited with status $rc after SIGTERM"
