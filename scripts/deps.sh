#!/usr/bin/env bash
# deps.sh installs what the build, the tests and the demo need and is not
# there yet, then downloads the Go modules. Safe to run again: it checks each
# Debian package with dpkg -s and runs apt-get only when one is missing.
#
#   scripts/deps.sh            # everything
#   SQLFW_DEPS_APT=0 scripts/deps.sh   # only go mod download
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
say() { echo "deps.sh: $*" >&2; }

# PostgreSQL 15 (server, client, pgbench) for the e2e tests and the demo;
# MariaDB and sysbench for the MySQL side and bench/. haproxy and pgbouncer are
# only comparison targets for bench/ and are not installed here. iproute2 (ip
# netns) is for the interception tests; systemd (systemd-analyze) and
# util-linux (setpriv) for the unit-file and service-user tests; prometheus
# for promtool, which tests the alert rules (the server is not started).
packages=(postgresql-15 postgresql-client-15 postgresql-contrib mariadb-server mariadb-client sysbench iproute2 systemd util-linux prometheus)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg -s "$p" >/dev/null 2>&1; then
		missing+=("$p")
	fi
done

if [ "${SQLFW_DEPS_APT:-1}" != 0 ] && [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		sudo=sudo
	fi
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# Keep package scripts from starting the services: the scripts start
	# their own throwaway servers.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
		$sudo chmod +x /usr/sbin/policy-rc.d
	fi
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
	say "system packages present"
fi

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="/usr/local/go/bin:$PATH"
fi
if command -v go >/dev/null 2>&1; then
	(cd "$here/.." && go mod download)
	say "go modules present"
else
	say "go is not on PATH (expected Go 1.26 at /usr/local/go/bin)"
	exit 1
fi
