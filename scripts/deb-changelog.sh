#!/usr/bin/env bash
# deb-changelog.sh VERSION OUT writes the package's changelog.Debian.gz:
# deploy/debian/changelog, with a snapshot entry on top when VERSION is not
# its newest release (a build past the tag: 0.1.0+3.gabc1234).
set -euo pipefail
cd "$(dirname "$0")/.."
version="$1" out="$2"
top="$(sed -n '1s/^[a-z0-9.+-]* (\([^)]*\)).*/\1/p' deploy/debian/changelog)"
{
	if [ "$version" != "$top" ]; then
		when="$(git log -1 --format=%cD 2>/dev/null || date -R)"
		printf 'sqlfw (%s) UNRELEASED; urgency=medium\n\n' "$version"
		printf '  * Snapshot of commit %s, after %s.\n\n' "$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)" "$top"
		printf ' -- The sqlfw Authors <sqlfw@localhost>  %s\n\n' "$when"
	fi
	cat deploy/debian/changelog
} | gzip -9n > "$out"
