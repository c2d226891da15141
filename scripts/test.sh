#!/usr/bin/env bash
# test.sh is what `make test` runs: install what is missing, start a throwaway
# PostgreSQL (with log_statement=all) and MariaDB in a temporary directory,
# export their SQLFW_PG_* / SQLFW_MY_* variables, run go test, stop the
# servers, and exit with go test's status.
#
#   scripts/test.sh                      # go test ./...
#   scripts/test.sh -run TestPsql ./e2e  # any go test arguments
#
# SQLFW_TEST_TIMEOUT (default 30m) is go test's -timeout. SQLFW_TEST_MARIADB=0
# skips MariaDB. SQLFW_KEEP=1 leaves the servers' directory in place.
# SQLFW_TEST_PG_VERSION (default 15) is the PostgreSQL major the run starts
# (others from scripts/pgversions.sh). A whole run (no arguments) then runs
# the version matrix's set (scripts/pg-matrix.sh --print-set) against each
# major of SQLFW_TEST_PG_EXTRA (default 18; none for none), each on a server
# of its own, counted in the same totals.
# The output ends with one plain line "tests: N passed, N failed, N skipped"
# counted over every test and subtest.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="/usr/local/go/bin:$PATH"
fi

"$here/deps.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-test.XXXXXX")"
# The postgres user must reach its directory inside.
chmod 755 "$work"
started_pg=0 started_my=0 started_extra=""
cleanup() {
	if [ "$started_pg" = 1 ]; then
		"$here/pg.sh" stop --dir "$work/pg" 2>/dev/null || true
	fi
	for v in $started_extra; do
		"$here/pg.sh" stop --dir "$work/pg$v" 2>/dev/null || true
	done
	if [ "$started_my" = 1 ]; then
		"$here/mariadb.sh" stop --dir "$work/mariadb" 2>/dev/null || true
	fi
	if [ "${SQLFW_KEEP:-0}" != 1 ]; then
		rm -rf "$work"
	else
		echo "test.sh: kept $work" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

args=("$@")
extra="${SQLFW_TEST_PG_EXTRA:-18}"
if [ ${#args[@]} -ne 0 ] || [ "$extra" = none ]; then
	extra=""
fi
# libpq 18 (PostgreSQL 18's package) for the protocol 3.2 tests
# (e2e/protover_test.go); without npm they skip, saying so.
if bin18="$("$here/pgversions.sh" bin 18)"; then
	export SQLFW_PG_LIBPQ_DIR="${bin18%/bin}/lib"
else
	echo "test.sh: no PostgreSQL 18 package (npm?): the protocol 3.2 tests with libpq 18 skip" >&2
fi

started_pg=1
"$here/pg.sh" start --dir "$work/pg" --log-statements --version "${SQLFW_TEST_PG_VERSION:-15}"
eval "$("$here/pg.sh" env --dir "$work/pg")"
if [ "${SQLFW_TEST_MARIADB:-1}" != 0 ]; then
	started_my=1
	"$here/mariadb.sh" start --dir "$work/mariadb" --log-statements
	eval "$("$here/mariadb.sh" env --dir "$work/mariadb")"
fi

if [ ${#args[@]} -eq 0 ]; then
	args=(./...)
fi

# -v so that every test and subtest can be counted; the RUN/PASS chatter of
# passing tests is filtered out of the terminal and kept in the log.
log="$work/go-test.log"
set +e
# -p 1: one package at a time. The e2e tests measure CPU-quota and
# run-queue wait (TestStatsThrottling); another package's tests on the same
# two cores would show up as run-queue wait and make that attribution flaky.
go test -p 1 -count=1 -v -timeout "${SQLFW_TEST_TIMEOUT:-30m}" "${args[@]}" 2>&1 |
	tee "$log" |
	grep --line-buffered -Ev '^\s*(=== (RUN|PAUSE|CONT|NAME)|--- PASS:)'
rc=${PIPESTATUS[0]}
# The version matrix's set against the extra majors, in a subshell with
# that server's SQLFW_PG_* (MariaDB's stay).
for v in $extra; do
	started_extra="$started_extra $v"
	echo "test.sh: the version matrix's set against PostgreSQL $v" | tee -a "$log"
	(
		set -e
		"$here/pg.sh" start --dir "$work/pg$v" --log-statements --version "$v"
		envs="$("$here/pg.sh" env --dir "$work/pg$v")"
		eval "$envs"
		[ "$SQLFW_PG_VERSION" = "$v" ] || { echo "test.sh: the extra server is PostgreSQL $SQLFW_PG_VERSION, not $v" >&2; exit 1; }
		go test -p 1 -count=1 -v -timeout "${SQLFW_TEST_TIMEOUT:-30m}" -run "$("$here/pg-matrix.sh" --print-set)" ./e2e
	) 2>&1 | tee -a "$log" | grep --line-buffered -Ev '^\s*(=== (RUN|PAUSE|CONT|NAME)|--- PASS:)'
	r=${PIPESTATUS[0]}
	if [ "$r" != 0 ] && [ "$rc" = 0 ]; then
		rc=$r
	fi
done
set -e

passed=$(grep -Ec '^\s*--- PASS:' "$log" || true)
failed=$(grep -Ec '^\s*--- FAIL:' "$log" || true)
skipped=$(grep -Ec '^\s*--- SKIP:' "$log" || true)
if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
	# A build failure or a panic fails a package without a --- FAIL line.
	failed=$(grep -Ec '^FAIL\s' "$log" || true)
fi
cleanup >/dev/null 2>&1
trap - EXIT
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit "$rc"
