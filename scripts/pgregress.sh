#!/usr/bin/env bash
# pgregress.sh: is sqlfwd invisible to psql? Runs PostgreSQL 15's own
# regression SQL through psql directly and through sqlfwd in monitor mode
# with the shared pgregress runner (../shared/tools/pgregress/run.sh), which
# starts its own scratch server, and diffs the outputs. Every file must come
# out identical. Extra arguments go to run.sh (e.g. --files "copy json").
# --tls (first) gives sqlfwd a self-signed certificate: psql's default
# sslmode=prefer then talks TLS to sqlfwd, so the client leg is encrypted.
#
#   scripts/pgregress.sh [--tls] [run.sh options]
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
tls=()
if [ "${1:-}" = --tls ]; then
	shift
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost \
		-keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
	tls=(--tls-cert "$work/cert.pem" --tls-key "$work/key.pem")
fi
bin/sqlfwd --protocol postgres --listen "127.0.0.1:$fwport" --upstream "127.0.0.1:$pgport" "${tls[@]}" \
	--mode monitor --control-socket "$work/ctl.sock" --log-format json --log-level warn >"$work/sqlfwd.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; echo "sqlfwd log: $work/sqlfwd.log" >&2' EXIT
bash "$runner" --sql-dir "$corpus" --target "127.0.0.1:$fwport" --port "$pgport" "$@"
