#!/usr/bin/env bash
# corpora.sh measures what the embedded default policies block of public
# SQL-injection corpora placed in the statements a vulnerable application
# builds, and how many benign inputs they block, on PostgreSQL 15 and
# MariaDB 10.11 (issue 22; docs/corpora.md says how). It writes
# docs/corpora-results.md (date, commit, corpora, the command, the tables)
# and, beside it, nothing else: the per-payload TSV goes to the work file.
#
#   scripts/corpora.sh                                   # the Debian corpora only (make corpora)
#   scripts/corpora.sh --libinjection ~/src/libinjection --crs ~/src/coreruleset \
#       --patt ~/src/PayloadsAllTheThings                # and checkouts of these
#
# Options:
#   --libinjection DIR   a checkout of github.com/client9/libinjection (data/sqli-*.txt)
#   --crs DIR            a checkout of github.com/coreruleset/coreruleset (tests/regression/tests/REQUEST-942-*)
#   --patt DIR           a checkout of github.com/swisskyrepo/PayloadsAllTheThings ("SQL Injection/Intruder")
#   --report FILE        [docs/corpora-results.md]; "-" writes none
#   --tsv FILE           every kept injection and false positive with its verdict [not kept]
#   --note TEXT          a line for the report (e.g. the commits of checkouts that are not git work trees)
#
# The Debian corpora (sqlmap's payload and boundary XML, wfuzz's
# Injections/SQL.txt, the wamerican word list for benign inputs) are
# installed when missing, as scripts/deps.sh does. Nothing is vendored:
# the checkouts are read where they are. Nothing a payload makes is
# executed: the servers only parse and resolve (PostgreSQL's Parse message,
# MariaDB's COM_STMT_PREPARE) in a throwaway database.
#
# Exit status: go test's (1 on a false positive or a block rate below the
# floors e2e/corpora/testdata/floors.tsv records for the corpora used).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
say() { echo "corpora.sh: $*" >&2; }
die() { say "$*"; exit 1; }

report="$root/docs/corpora-results.md" tsv="" note=""
unset SQLFW_CORPORA_LIBINJECTION SQLFW_CORPORA_CRS SQLFW_CORPORA_PATT
cmd="scripts/corpora.sh"
while [ $# -gt 0 ]; do
	case "$1" in
	--libinjection) export SQLFW_CORPORA_LIBINJECTION="$(cd "$2" && pwd)"; cmd+=" --libinjection $2"; shift 2 ;;
	--crs) export SQLFW_CORPORA_CRS="$(cd "$2" && pwd)"; cmd+=" --crs $2"; shift 2 ;;
	--patt) export SQLFW_CORPORA_PATT="$(cd "$2" && pwd)"; cmd+=" --patt $2"; shift 2 ;;
	--report) report="$2"; shift 2 ;;
	--tsv) tsv="$2"; shift 2 ;;
	--note) note="$2"; shift 2 ;;
	-h | --help) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument: $1" ;;
	esac
done

# scripts/deps.sh installs sqlmap, wfuzz and wamerican with the rest
# (dpkg -s first: nothing happens when they are there).
"$here/deps.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-corpora.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export SQLFW_CORPORA_OUT="$work/tables.md"
set +e
SQLFW_TEST_TIMEOUT=60m "$here/test.sh" -run '^TestCorpora$' ./e2e/corpora | tee "$work/log"
rc=${PIPESTATUS[0]}
set -e
[ -s "$SQLFW_CORPORA_OUT" ] || die "no results (go test exit $rc): see the output above"
if [ -n "$tsv" ]; then
	cp "$SQLFW_CORPORA_OUT.tsv" "$tsv"
fi
if [ "$report" != - ]; then
	corpora="$(grep -o 'corpora: [^:]*' "$work/log" | head -1 | sed 's/^corpora: //')"
	commit="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- engine || echo ' (engine/ modified)')"
	{
		echo "# Public SQL-injection corpora through the default policies: results"
		echo
		echo "Measured $(date -u +%Y-%m-%d) at commit $commit by \`$cmd\` (docs/corpora.md says what is measured)."
		echo
		echo "Corpora: $(echo "$corpora" | sed 's/ /, /g')."
		echo "Debian packages: $(dpkg-query -W -f '${Package} ${Version}, ' sqlmap wfuzz wamerican 2>/dev/null | sed 's/, $//')."
		for d in "${SQLFW_CORPORA_LIBINJECTION:-}" "${SQLFW_CORPORA_CRS:-}" "${SQLFW_CORPORA_PATT:-}"; do
			if [ -n "$d" ] && rev="$(git -C "$d" rev-parse --short HEAD 2>/dev/null)"; then
				echo "Checkout $(basename "$d") at $rev."
			fi
		done
		if [ -n "$note" ]; then
			echo "$note"
		fi
		echo
		cat "$SQLFW_CORPORA_OUT"
	} > "$report"
	say "wrote $report"
fi
exit "$rc"
