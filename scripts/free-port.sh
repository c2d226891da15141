#!/usr/bin/env bash
# free-port.sh prints one TCP port on 127.0.0.1 that nothing listens on.
# Sourced, it defines free_port for the other scripts.
#
# There is a race between picking the port and binding it; the ports are drawn
# at random from a range the kernel does not hand out as ephemeral ports by
# default (32768-60999), so two scripts rarely collide.
set -euo pipefail

free_port() {
	local p i
	for i in $(seq 1 200); do
		p=$((20000 + RANDOM % 12000))
		if command -v ss >/dev/null 2>&1; then
			if [ -z "$(ss -Htln "sport = :$p" 2>/dev/null)" ]; then
				echo "$p"
				return 0
			fi
		elif ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	echo "free-port: no free port found" >&2
	return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	free_port
fi
