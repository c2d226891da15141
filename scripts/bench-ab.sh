#!/usr/bin/env bash
# bench-ab.sh: go test -bench of two revisions in one run, alternating, so
# that load from other work on the machine falls on both alike. Each side's
# package is given separately because a package may have moved between the
# revisions (issue 12 moved daemon's session to relay/pg and engine's
# parser half to engine/pgsql).
#
#   scripts/bench-ab.sh --before REV --before-pkg ./daemon --after-pkg ./relay/pg \
#                       --bench 'Session1Row|MemoNamed' [--after REV] [--count 3]
#
# --after defaults to the work tree as it is. Output: one line per result,
# prefixed "before" or "after", in the order run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
before="" after="" bpkg="" apkg="" bench="" count=3
while [ $# -gt 0 ]; do
	case "$1" in
	--before) before=$2; shift 2 ;;
	--after) after=$2; shift 2 ;;
	--before-pkg) bpkg=$2; shift 2 ;;
	--after-pkg) apkg=$2; shift 2 ;;
	--bench) bench=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	*) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
if [ -z "$before" ] || [ -z "$bpkg" ] || [ -z "$apkg" ] || [ -z "$bench" ]; then
	sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
fi
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="/usr/local/go/bin:$PATH"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-ab.XXXXXX")"
cleanup() {
	git -C "$root" worktree remove --force "$work/before" 2>/dev/null || true
	[ -z "$after" ] || git -C "$root" worktree remove --force "$work/after" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

git -C "$root" worktree add -q --detach "$work/before" "$before"
(cd "$work/before" && go test -c -o "$work/before.test" "$bpkg")
adir="$root"
if [ -n "$after" ]; then
	git -C "$root" worktree add -q --detach "$work/after" "$after"
	adir="$work/after"
fi
(cd "$adir" && go test -c -o "$work/after.test" "$apkg")

# A test binary runs with its package directory as working directory.
run() { # run SIDE DIR BINARY
	(cd "$2" && "$3" -test.run '^$' -test.bench "$bench" -test.benchmem -test.count 1) | grep '^Benchmark' | sed "s/^/$1 /"
}
for _ in $(seq "$count"); do
	run before "$work/before/$bpkg" "$work/before.test"
	run after "$adir/$apkg" "$work/after.test"
done
