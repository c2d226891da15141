#!/usr/bin/env bash
# pgregress.sh: is sqlfwd invisible to psql? Runs PostgreSQL 15's own
# regression SQL through psql directly and through sqlfwd in monitor mode
# with the shared pgregress runner (../shared/tools/pgregress/run.sh), which
# starts its own scratch server, and diffs the outputs. Every file must come
# out identical. Extra arguments go to run.sh (e.g. --files "copy json").
# --tls (first) gives sqlfwd a self-signed certificate: psql's default
# sslmode=prefer then talks TLS to sqlfwd, so the client leg is encrypted.
# --tls-both (first) encrypts the server leg too: this script starts the
# scratch PostgreSQL itself, as run.sh would (same settings) but with TLS on,
# and sqlfwd opens TLS to it (--upstream-tls require); the direct runs then
# use TLS as well (psql's sslmode=prefer).
#
#   scripts/pgregress.sh [--tls | --tls-both] [run.sh options]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
shared="${SQLFW_SHARED:-$root/../shared}"
runner="$shared/tools/pgregress/run.sh"
corpus="$shared/corpus/pgregress"
[ -x "$runner" ] || [ -f "$runner" ] || { echo "pgregress.sh: no $runner" >&2; exit 3; }
cd "$root"
# shellcheck source=free-port.sh
. "$here/free-port.sh"
make --no-print-directory build >/dev/null

pgport="$(free_port)"
fwport="$(free_port)"
work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-pgregress.XXXXXX")"
tls=() direct=()
pgbin=/usr/lib/postgresql/15/bin
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case "${1:-}" in
--tls | --tls-both)
	both=0
	[ "$1" = --tls-both ] && both=1
	shift
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost \
		-keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
	tls=(--tls-cert "$work/cert.pem" --tls-key "$work/key.pem")
	if [ "$both" = 1 ]; then
		data="$work/data"
		mkdir -p "$data"
		chmod 755 "$work"
		chmod 700 "$data"
		[ "$(id -u)" = 0 ] && chown postgres: "$data"
		as_pg "$pgbin/initdb" -D "$data" -U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8 >"$work/initdb.log" 2>&1
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost \
			-keyout "$data/server.key" -out "$data/server.crt" 2>/dev/null
		chmod 600 "$data/server.key"
		[ "$(id -u)" = 0 ] && chown postgres: "$data/server.key" "$data/server.crt"
		# run.sh's own settings for its scratch server, and TLS
		as_pg "$pgbin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
			-o "-p $pgport -c listen_addresses=127.0.0.1 -k $data -c fsync=off -c autovacuum=off -c max_prepared_transactions=10 -c log_line_prefix='%m [%p] %d ' -c ssl=on" \
			start >/dev/null
		direct=(--direct "127.0.0.1:$pgport")
		tls+=(--upstream-tls require)
	fi
	;;
esac
stop_pg() {
	if [ ${#direct[@]} -gt 0 ]; then
		as_pg "$pgbin/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
	fi
}
bin/sqlfwd --protocol postgres --listen "127.0.0.1:$fwport" --upstream "127.0.0.1:$pgport" "${tls[@]}" \
	--mode monitor --control-socket "$work/ctl.sock" --log-format json --log-level warn >"$work/sqlfwd.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; stop_pg; echo "sqlfwd log: $work/sqlfwd.log" >&2' EXIT
if [ ${#direct[@]} -gt 0 ]; then
	# Both legs must really be TLS: the client's to sqlfwd (psql's
	# sslmode=prefer; require here) and sqlfwd's to the server.
	for _ in $(seq 50); do "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$fwport" && break; sleep 0.1; done
	legs="$("$pgbin/psql" -X -At "host=127.0.0.1 port=$fwport user=postgres dbname=postgres sslmode=require" \
		-c "select ssl from pg_stat_ssl where pid = pg_backend_pid()")"
	if [ "$legs" != t ]; then
		echo "pgregress.sh: --tls-both: the server leg is not TLS (pg_stat_ssl says '$legs')" >&2
		exit 3
	fi
	echo "pgregress.sh: TLS on both legs (client to sqlfwd, sqlfwd to the server)" >&2
fi
bash "$runner" --sql-dir "$corpus" --target "127.0.0.1:$fwport" --port "$pgport" "${direct[@]}" "$@"
