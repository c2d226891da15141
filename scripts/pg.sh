#!/usr/bin/env bash
# pg.sh runs a throwaway PostgreSQL (Debian's 15 unless --version) for
# tests and demos.
#
#   scripts/pg.sh start  [--dir D] [--port N] [--log-statements] [--version M]
#   scripts/pg.sh stop   [--dir D] [--purge]
#   scripts/pg.sh status [--dir D]
#   scripts/pg.sh env    [--dir D]      # eval "$(scripts/pg.sh env)"
#
# D defaults to $SQLFW_PG_DIR or /tmp/sqlfw-pg. It holds data/ (the cluster),
# sock/ (the unix socket), server.log and port. The server listens on
# 127.0.0.1 only, on N or on a free port chosen once and remembered in D/port.
# fsync is off: the data is disposable. --version M (14, 16, 17, 18; default
# $SQLFW_PG_VERSION or 15) runs that major's server from scripts/pgversions.sh
# (installed on first use); a directory whose cluster (data/PG_VERSION) is
# another major's is refused. The clients (psql, pgbench) are Debian's 15 for
# every major: SQLFW_PG_BIN in env.
#
# Authentication: trust for everyone over the socket and TCP, except two roles
# that exist for auth passthrough tests and must give a password on 127.0.0.1:
#   scram_user / scram_pass  (stored as SCRAM-SHA-256, pg_hba scram-sha-256)
#   md5_user   / md5_pass    (stored as MD5, pg_hba md5)
#   clear_user / clear_s3cret (pg_hba password: asked for in clear)
# --log-statements sets log_statement=all (the e2e tests read server.log);
# without it a start resets log_statement to none.
#
# Every command is idempotent: start on a running server only applies the
# settings, stop on a stopped one does nothing. As root, initdb and pg_ctl run
# as the postgres user (initdb refuses root).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=free-port.sh
. "$here/free-port.sh"

# CLIENTBIN: psql and pgbench (Debian's); PGBIN: the server's initdb,
# pg_ctl and postgres, Debian's 15 unless --version names another major.
CLIENTBIN="${SQLFW_PGBIN:-/usr/lib/postgresql/15/bin}"
PGBIN="$CLIENTBIN"
SCRAM_USER=scram_user SCRAM_PASSWORD=scram_pass
MD5_USER=md5_user MD5_PASSWORD=md5_pass
CLEAR_USER=clear_user CLEAR_PASSWORD=clear_s3cret

usage() {
	sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

say() { echo "pg.sh: $*" >&2; }

cmd="${1:-}"
[ -n "$cmd" ] || usage
shift
dir="${SQLFW_PG_DIR:-/tmp/sqlfw-pg}"
port=""
log_statements=none
purge=0
major=""
while [ $# -gt 0 ]; do
	case "$1" in
	--dir) dir="$2"; shift 2 ;;
	--dir=*) dir="${1#*=}"; shift ;;
	--port) port="$2"; shift 2 ;;
	--port=*) port="${1#*=}"; shift ;;
	--log-statements) log_statements=all; shift ;;
	--purge) purge=1; shift ;;
	--version) major="$2"; shift 2 ;;
	--version=*) major="${1#*=}"; shift ;;
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
data="$dir/data" sock="$dir/sock" log="$dir/server.log"
# An existing cluster's major wins over $SQLFW_PG_VERSION (what an earlier
# `eval "$(pg.sh env)"` exported); only --version that contradicts it is
# an error.
if [ -f "$data/PG_VERSION" ]; then
	if [ -n "$major" ] && [ "$(cat "$data/PG_VERSION")" != "$major" ]; then
		say "$dir holds a PostgreSQL $(cat "$data/PG_VERSION") cluster, not $major: use another --dir or stop --purge it"
		exit 1
	fi
	major="$(cat "$data/PG_VERSION")"
fi
major="${major:-${SQLFW_PG_VERSION:-15}}"
if [ "$major" != 15 ]; then
	PGBIN="$("$here/pgversions.sh" bin "$major")"
fi

# as_pg runs a command as the postgres user when we are root, from / so that
# an unreadable working directory does not bother it.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	else
		(cd / && "$@")
	fi
}

running() {
	[ -f "$data/PG_VERSION" ] && as_pg "$PGBIN/pg_ctl" status -D "$data" >/dev/null 2>&1
}

psql_admin() {
	"$CLIENTBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$(cat "$dir/port")" -U postgres -d postgres "$@"
}

init_cluster() {
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir"
	fi
	if ! as_pg test -w "$dir"; then
		say "the postgres user cannot write $dir (check the permissions of its parents)"
		exit 1
	fi
	say "initdb (PostgreSQL $major) in $data"
	as_pg "$PGBIN/initdb" -D "$data" -U postgres --auth=trust --no-sync \
		-E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || {
		cat "$dir/initdb.log" >&2
		exit 1
	}
	cat >"$data/pg_hba.conf" <<HBA
# Written by scripts/pg.sh. First match wins: the password roles come first.
local all all                      trust
host  all $SCRAM_USER 127.0.0.1/32 scram-sha-256
host  all $MD5_USER   127.0.0.1/32 md5
host  all $CLEAR_USER 127.0.0.1/32 password
host  all all         127.0.0.1/32 trust
host  all all         ::1/128      trust
HBA
	cat >>"$data/postgresql.conf" <<CONF

# Written by scripts/pg.sh: a disposable test server.
listen_addresses = '127.0.0.1'
unix_socket_directories = '$sock'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
log_line_prefix = '%m [%p] '
CONF
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$data/pg_hba.conf" "$data/postgresql.conf"
	fi
}

# setup_roles creates the password roles (idempotent) and applies the
# log_statement choice of this start.
setup_roles() {
	psql_admin <<SQL
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$SCRAM_USER') THEN
    CREATE ROLE $SCRAM_USER LOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$MD5_USER') THEN
    CREATE ROLE $MD5_USER LOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$CLEAR_USER') THEN
    CREATE ROLE $CLEAR_USER LOGIN;
  END IF;
END
\$\$;
SET password_encryption = 'scram-sha-256';
ALTER ROLE $SCRAM_USER PASSWORD '$SCRAM_PASSWORD';
SET client_min_messages = error; -- PostgreSQL 18 warns about MD5 passwords
SET password_encryption = 'md5';
ALTER ROLE $MD5_USER PASSWORD '$MD5_PASSWORD';
SET password_encryption = 'scram-sha-256';
ALTER ROLE $CLEAR_USER PASSWORD '$CLEAR_PASSWORD';
ALTER SYSTEM SET log_statement = '$log_statements';
SELECT pg_reload_conf() \g /dev/null
SQL
}

start() {
	if [ ! -f "$data/PG_VERSION" ]; then
		init_cluster
	fi
	mkdir -p "$sock"
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$sock"
	fi
	if running; then
		if [ -n "$port" ] && [ "$port" != "$(cat "$dir/port")" ]; then
			say "already running on port $(cat "$dir/port"), not $port: stop it first"
			exit 1
		fi
		say "already running on 127.0.0.1:$(cat "$dir/port")"
	else
		if [ -z "$port" ]; then
			port="$(cat "$dir/port" 2>/dev/null || true)"
		fi
		if [ -z "$port" ] || [ -n "$(ss -Htln "sport = :$port" 2>/dev/null)" ]; then
			port="$(free_port)"
		fi
		echo "$port" >"$dir/port"
		if [ "$(id -u)" = 0 ]; then
			touch "$log"
			chown postgres: "$log"
		fi
		say "starting on 127.0.0.1:$port (log $log)"
		if ! as_pg "$PGBIN/pg_ctl" start -w -t 60 -D "$data" -l "$log" -o "-p $port" >/dev/null; then
			tail -n 30 "$log" >&2 || true
			exit 1
		fi
	fi
	setup_roles
	say "ready: 127.0.0.1:$(cat "$dir/port"), socket $sock, log_statement=$log_statements"
}

stop() {
	if running; then
		say "stopping $data"
		as_pg "$PGBIN/pg_ctl" stop -D "$data" -m fast -w -t 60 >/dev/null
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
		say "no server in $dir: run scripts/pg.sh start first"
		exit 1
	fi
	printf 'export SQLFW_PG_HOST=127.0.0.1 SQLFW_PG_PORT=%q SQLFW_PG_USER=postgres SQLFW_PG_DATABASE=postgres' "$(cat "$dir/port")"
	printf ' SQLFW_PG_LOG=%q SQLFW_PG_SOCKDIR=%q SQLFW_PG_BIN=%q' "$log" "$sock" "$CLIENTBIN"
	printf ' SQLFW_PG_VERSION=%q SQLFW_PG_SERVER_BIN=%q' "$major" "$PGBIN"
	printf ' SQLFW_PG_SCRAM_USER=%q SQLFW_PG_SCRAM_PASSWORD=%q' "$SCRAM_USER" "$SCRAM_PASSWORD"
	printf ' SQLFW_PG_MD5_USER=%q SQLFW_PG_MD5_PASSWORD=%q\n' "$MD5_USER" "$MD5_PASSWORD"
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
