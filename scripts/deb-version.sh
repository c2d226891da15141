#!/usr/bin/env bash
# deb-version.sh prints the Debian version of this tree. At the annotated
# tag v0.1.0 it is 0.1.0; three commits past it 0.1.0+3.gabc1234 (sorts
# after 0.1.0 and before 0.1.1); with local changes .dirty is added (at the
# tag itself 0.1.0+0.dirty). A tree without a reachable v* tag (a shallow or
# tagless clone) takes the newest version of deploy/debian/changelog:
# 0.1.0+0.git.gabc1234. Every form sorts after the tag's and before the next
# commit's in dpkg's order (TestDebVersion).
set -euo pipefail
cd "$(dirname "$0")/.."
if d="$(git describe --tags --match 'v[0-9]*' --long --abbrev=7 --dirty=.dirty 2>/dev/null)"; then
	# v0.1.0-3-gabc1234[.dirty]
	dirty=""
	case "$d" in *.dirty) dirty=.dirty; d="${d%.dirty}" ;; esac
	hash="${d##*-}"
	rest="${d%-*}"
	n="${rest##*-}"
	tag="${rest%-*}"
	v="${tag#v}"
	if [ "$n" = 0 ]; then
		echo "$v${dirty:++0.dirty}"
	else
		echo "$v+$n.$hash$dirty"
	fi
else
	base="$(sed -n '1s/^[a-z0-9.+-]* (\([^)]*\)).*/\1/p' deploy/debian/changelog)"
	hash="$(git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)"
	echo "${base:-0.1.0}+0.git.g$hash"
fi
