#!/usr/bin/env bash
# deb-version.sh prints the Debian version of this tree: a tag v1.2.3 gives
# 1.2.3 (1.2.3+4+gabc1234 four commits past it, +dirty with local changes),
# an untagged tree 0.0.0~git<hash>.
set -euo pipefail
if v="$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null)"; then
	v="${v#v}"
	echo "${v//-/+}"
else
	echo "0.0.0~git$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
fi
