#!/usr/bin/env bash
# mariadb.sh runs a throwaway MariaDB for tests and demos; the shape of pg.sh.
#
#   scripts/mariadb.sh start  [--dir D] [--port N] [--log-statements]
#                             [--ssl-cert FILE --ssl-key FILE] [--bind ADDRS]
#   scripts/mariadb.sh stop   [--dir D] [--purge]
#   scripts/mariadb.sh status [--dir D]
#   scripts/mariadb.sh env    [--dir D]      # eval "$(scripts/mariadb.sh env)"
#
# D defaults to $SQLFW_MY_DIR or /tmp/sqlfw-mariadb. It holds data/, s.sock,
# server.log (error log), general.log (every statement, with
# --log-statements), pid and port. --ssl-cert and --ssl-key serve TLS with
# that PEM certificate and key (MariaDB reads them only at start). --bind is
# the server's bind-address, a comma-separated list (default 127.0.0.1).
# root@localhost has an empty password and password authentication (mysql_native_password), so TCP clients work.
# A role with a password exists for auth passthrough tests:
#   sqlfw_user / sqlfw_pass (mysql_native_password, from 127.0.0.1)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=free-port.sh
. "$here/free-port.sh"

PW_USER=sqlfw_user PW_PASSWORD=sqlfw_pass

usage() {
	sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
say() { echo "mariadb.sh: $*" >&2; }

cmd="${1:-}"
[ -n "$cmd" ] || usage
shift
dir="${SQLFW_MY_DIR:-/tmp/sqlfw-mariadb}"
port=""
general_log=0
bind=127.0.0.1
purge=0
ssl=()
while [ $# -gt 0 ]; do
	case "$1" in
	--dir) dir="$2"; shift 2 ;;
	--dir=*) dir="${1#*=}"; shift ;;
	--port) port="$2"; shift 2 ;;
	--port=*) port="${1#*=}"; shift ;;
	--log-statements) general_log=1; shift ;;
	--bind) bind="$2"; shift 2 ;;
	--purge) purge=1; shift ;;
	--ssl-cert) ssl+=("--ssl-cert=$2"); shift 2 ;;
	--ssl-key) ssl+=("--ssl-key=$2"); shift 2 ;;
	-h | --help) usage ;;
	*) say "unknown argument: $1"; usage ;;
	esac
done
if [ "$cmd" = start ]; then
	mkdir -p "$dir"
fi
case "$dir" in
/*) ;;
*) dir="$PWD/$dir" ;;
esac
data="$dir/data" sockf="$dir/s.sock" log="$dir/server.log" glog="$dir/general.log"

if [ "$(id -u)" = 0 ]; then
	run_user=root
else
	run_user="$(id -un)"
fi

client() {
	mariadb --no-defaults --protocol=socket --socket="$sockf" -uroot "$@"
}

running() {
	[ -S "$sockf" ] && mariadb-admin --no-defaults --protocol=socket --socket="$sockf" -uroot ping >/dev/null 2>&1
}

start() {
	if ! command -v mariadbd >/dev/null 2>&1; then
		say "mariadbd not installed: run scripts/deps.sh"
		exit 1
	fi
	if [ ! -d "$data/mysql" ]; then
		say "mariadb-install-db in $data"
		mariadb-install-db --no-defaults --user="$run_user" --datadir="$data" \
			--auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 || {
			cat "$dir/install.log" >&2
			exit 1
		}
	fi
	if running; then
		say "already running on 127.0.0.1:$(cat "$dir/port")"
	else
		if [ -z "$port" ]; then
			port="$(cat "$dir/port" 2>/dev/null || true)"
		fi
		if [ -z "$port" ] || [ -n "$(ss -Htln "sport = :$port" 2>/dev/null)" ]; then
			port="$(free_port)"
		fi
		echo "$port" >"$dir/port"
		say "starting on 127.0.0.1:$port (log $log)"
		# setsid + nohup: the server must outlive this script and not get
		# the terminal's signals.
		setsid nohup mariadbd --no-defaults --user="$run_user" --datadir="$data" \
			--port="$port" --bind-address="$bind" --socket="$sockf" \
			--pid-file="$dir/pid" --log-error="$log" --skip-log-bin \
			--innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 \
			--general-log-file="$glog" ${ssl[@]+"${ssl[@]}"} </dev/null >/dev/null 2>&1 &
		for _ in $(seq 1 120); do
			if running; then
				break
			fi
			sleep 0.25
		done
		if ! running; then
			say "server did not come up"
			tail -n 30 "$log" >&2 || true
			exit 1
		fi
	fi
	client <<SQL
CREATE USER IF NOT EXISTS '$PW_USER'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('$PW_PASSWORD');
GRANT ALL ON *.* TO '$PW_USER'@'127.0.0.1';
CREATE DATABASE IF NOT EXISTS sqlfw;
SET GLOBAL general_log = $general_log;
SQL
	say "ready: 127.0.0.1:$(cat "$dir/port"), socket $sockf, general_log=$general_log"
}

stop() {
	if running; then
		say "stopping $data"
		local pid
		pid="$(cat "$dir/pid" 2>/dev/null || true)"
		mariadb-admin --no-defaults --protocol=socket --socket="$sockf" -uroot shutdown
		if [ -n "$pid" ]; then
			for _ in $(seq 1 120); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.25
			done
		fi
	else
		say "not running ($data)"
	fi
	if [ "$purge" = 1 ]; then
		rm -rf "$dir"
		say "removed $dir"
	fi
}

env_() {
	if [ ! -f "$dir/port" ]; then
		say "no server in $dir: run scripts/mariadb.sh start first"
		exit 1
	fi
	printf 'export SQLFW_MY_HOST=127.0.0.1 SQLFW_MY_PORT=%q SQLFW_MY_USER=root SQLFW_MY_DATABASE=sqlfw' "$(cat "$dir/port")"
	printf ' SQLFW_MY_SOCKET=%q SQLFW_MY_LOG=%q SQLFW_MY_ERROR_LOG=%q' "$sockf" "$glog" "$log"
	printf ' SQLFW_MY_PW_USER=%q SQLFW_MY_PW_PASSWORD=%q\n' "$PW_USER" "$PW_PASSWORD"
}

case "$cmd" in
start) start ;;
stop) stop ;;
status)
	if running; then
		echo "running on 127.0.0.1:$(cat "$dir/port") ($data)"
	else
		echo "not running ($data)"
		exit 1
	fi
	;;
env) env_ ;;
*) usage ;;
esac
