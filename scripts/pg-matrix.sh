#!/usr/bin/env bash
# pg-matrix.sh runs the PostgreSQL version matrix: the representative e2e
# set below against a throwaway server of each major (Debian's 15; 14, 16,
# 17 and 18 from scripts/pgversions.sh), one scripts/test.sh run per major
# (MariaDB not started), and prints a line per major and a total.
#
#   scripts/pg-matrix.sh                    # every major, the whole set
#   scripts/pg-matrix.sh --versions "14 18" # some majors
#   scripts/pg-matrix.sh --run REGEX        # another go test -run set
#   scripts/pg-matrix.sh --print-set        # print the set's -run regex
#
# `make test-matrix` runs it. `make test` (scripts/test.sh) runs the same set
# against 18 after the whole suite against 15 (SQLFW_TEST_PG_EXTRA).
# Exits non-zero when any major fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The set: clients (psql, pgx, libpq, lib/pq), the extended protocol and
# pipelines, cancel, TLS on both legs, SCRAM/MD5 passthrough, startup
# parameters, blocked statements and their absence from the server log,
# pgbench, the adversarial corpora through sqlfwd, a server restart under
# load and a password message after authentication,
# and protocol 3.2 / NegotiateProtocolVersion.
set_regex='^(TestPsql|TestPgx|TestLibPQ|TestTLSClientLeg|TestTLSLibPQ|TestTLSBothLegsSCRAM|TestAuthPassthrough|TestStartupParameters|TestPipelineDesync|TestPgbench|TestAdversarialE2E|TestPGRestartUnderLoad|TestPGPasswordMessageAfterAuth|TestProtocol)'

versions="14 15 16 17 18"
run="$set_regex"
while [ $# -gt 0 ]; do
	case "$1" in
	--versions) versions="$2"; shift 2 ;;
	--run) run="$2"; shift 2 ;;
	--print-set) echo "$set_regex"; exit 0 ;;
	-h | --help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	*) echo "pg-matrix.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done

"$here/pgversions.sh" install $versions
rc=0
results=()
for v in $versions; do
	echo "== PostgreSQL $v"
	log="$(mktemp)"
	set +e
	SQLFW_TEST_PG_VERSION="$v" SQLFW_TEST_MARIADB=0 SQLFW_TEST_PG_EXTRA=none \
		bash "$here/test.sh" -run "$run" ./e2e 2>&1 | tee "$log"
	r=${PIPESTATUS[0]}
	set -e
	results+=("PostgreSQL $v: $(grep -E '^tests: ' "$log" | tail -1 | sed 's/^tests: //')")
	rm -f "$log"
	if [ "$r" != 0 ]; then
		rc=1
	fi
done
echo "== matrix"
printf '%s\n' "${results[@]}"
exit "$rc"
