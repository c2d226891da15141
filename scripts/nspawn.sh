#!/usr/bin/env bash
# nspawn.sh boots a Debian bookworm machine under systemd-nspawn for the
# booted package test (e2e/booted_test.go, `make booted`, docs/testing.md):
# a root made by mmdebstrap from Debian's packages with systemd, PostgreSQL 15
# and MariaDB 10.11, cached between runs, booted with a throwaway overlay so
# the cached root never changes.
#
#   scripts/nspawn.sh deps              # systemd-container and mmdebstrap on the host
#   scripts/nspawn.sh image             # build the root once (cached; ~3 min)
#   scripts/nspawn.sh start NAME [DIR]  # boot it; DIR is bound read-only at /mnt/sqlfw
#   scripts/nspawn.sh leader NAME       # the pid of the machine's systemd (for nsenter)
#   scripts/nspawn.sh exec NAME CMD...  # run CMD as root in the machine (its namespaces)
#   scripts/nspawn.sh run NAME CMD...   # run CMD as a transient unit of the machine's systemd
#                                       # (so in its cgroups: what sqlfwd intercepts)
#   scripts/nspawn.sh stop NAME         # power it off and remove everything start made
#   scripts/nspawn.sh reap              # stop the machines whose owner has exited
#
# SQLFW_NSPAWN_OWNER=PID at start names the process the machine belongs to
# (TestDebBooted gives its own): should it die without stopping the machine
# (a go test timeout runs no clean-up), `reap` (run by `make booted` after the
# test) stops it.
#
# Needs root and cgroup2 (on a hybrid host, /sys/fs/cgroup/unified). The
# machine gets its own network namespace (loopback only), the unified cgroup
# hierarchy (SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1) and, on top of nspawn's
# default capabilities, CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN, the ones
# sqlfwd.service keeps. nspawn itself runs in a child cgroup of its own
# (sqlfw-nspawn-NAME in each hierarchy), so machines of parallel runs do not
# meet, and stop removes it. SQLFW_BOOT_CACHE moves the cache
# (/var/cache/sqlfw-test).
set -euo pipefail

cache="${SQLFW_BOOT_CACHE:-/var/cache/sqlfw-test}"
root="$cache/bookworm"
state_base=/run/sqlfw-nspawn
mirror="${SQLFW_BOOT_MIRROR:-http://deb.debian.org/debian}"
security="${SQLFW_BOOT_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
# What the machine has besides systemd: the two servers with their own units
# and clients, and what the test reads with (ss, ps). Changing the list
# rebuilds the root.
include=systemd,systemd-sysv,dbus,postgresql-15,postgresql-client-15,mariadb-server,mariadb-client,iproute2,procps,util-linux
image_id="bookworm;$include;v1"

say() { echo "nspawn.sh: $*" >&2; }
die() { say "$*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "needs root (systemd-nspawn, mmdebstrap)"; }

deps() {
	local missing=() p
	for p in systemd-container mmdebstrap; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		say "installing ${missing[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
	fi
}

image() {
	need_root
	deps
	mkdir -p "$cache"
	# one builder at a time (parallel runs wait for the first one's root)
	exec 9>"$cache/.lock"
	flock 9
	if [ -f "$root/.sqlfw-image" ] && [ "$(cat "$root/.sqlfw-image")" = "$image_id" ]; then
		say "root image present: $root"
		return
	fi
	rm -rf "$root.new"
	say "building the root image in $root (mmdebstrap, Debian bookworm)"
	# policy-rc.d inside the chroot (mmdebstrap's default) keeps the servers
	# from starting while they are installed; they start when it boots.
	mmdebstrap --quiet --variant=apt --include="$include" bookworm "$root.new" \
		"deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $security bookworm-security main" >&2
	# the servers' units start at boot (Debian enables them on install); the
	# machine's systemd needs nothing from outside: no getty on a console
	# nobody reads, no network configuration to wait for.
	chroot "$root.new" systemctl mask console-getty.service systemd-networkd-wait-online.service >/dev/null 2>&1 || true
	echo sqlfw-booted >"$root.new/etc/hostname"
	echo "$image_id" >"$root.new/.sqlfw-image"
	rm -rf "$root"
	mv "$root.new" "$root"
	say "root image ready: $root ($(du -sh "$root" | cut -f1))"
}

# cgroup hierarchies nspawn lives in: cgroup2 (unified) and, on a hybrid
# host, the name=systemd hierarchy nspawn also writes to.
hierarchies() {
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		echo /sys/fs/cgroup
		return
	fi
	[ -d /sys/fs/cgroup/unified ] || die "no cgroup2 (neither /sys/fs/cgroup nor /sys/fs/cgroup/unified)"
	echo /sys/fs/cgroup/unified
	[ -d /sys/fs/cgroup/systemd ] && echo /sys/fs/cgroup/systemd
	return 0
}

statedir() {
	[[ "$1" =~ ^[a-z0-9][a-z0-9-]{0,40}$ ]] || die "bad machine name: $1"
	echo "$state_base/$1"
}

leader() {
	local st pid kid
	st="$(statedir "$1")"
	[ -f "$st/pid" ] || die "machine $1 is not running (no $st/pid)"
	pid="$(cat "$st/pid")"
	# nspawn's child that execs systemd is the machine's pid 1
	for kid in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
		if [ "$(cat /proc/"$kid"/comm 2>/dev/null)" = systemd ]; then
			echo "$kid"
			return
		fi
	done
	return 1
}

in_machine() {
	local name="$1" l
	shift
	l="$(leader "$name")" || die "machine $name has no systemd running"
	nsenter -t "$l" -m -u -i -n -p -C -r -w -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "$@"
}

start() {
	need_root
	local name="$1" bind="${2:-}" st h args=()
	st="$(statedir "$name")"
	[ -f "$root/.sqlfw-image" ] || (image)
	if [ -f "$st/pid" ] && kill -0 "$(cat "$st/pid")" 2>/dev/null; then
		die "machine $name already runs (pid $(cat "$st/pid"))"
	fi
	mkdir -p "$st"
	if [ -n "${SQLFW_NSPAWN_OWNER:-}" ]; then
		echo "$SQLFW_NSPAWN_OWNER" >"$st/owner"
	fi
	for h in $(hierarchies); do
		mkdir -p "$h/sqlfw-nspawn-$name"
		echo "$h/sqlfw-nspawn-$name" >>"$st/cgroups"
	done
	# nspawn's /sys (a read-only tmpfs with sysfs's directories bound in,
	# given a network namespace) has no /sys/fs/bpf to mount bpffs on, as
	# systemd does at boot on a host: the machine gets a bpffs instance of
	# its own there, empty, so pins of the host's tests are not visible.
	mkdir -p "$st/bpf"
	mount -t bpf -o mode=700 bpf "$st/bpf"
	args=(-D "$root" --volatile=overlay --register=no --keep-unit --private-network
		--capability=CAP_BPF,CAP_PERFMON,CAP_NET_ADMIN --system-call-filter=bpf --bind="$st/bpf:/sys/fs/bpf"
		--console=pipe -M "$name" -b)
	if [ -n "$bind" ]; then
		args+=(--bind-ro="$bind:/mnt/sqlfw")
	fi
	# a subshell moves itself into the machine's cgroups and becomes nspawn
	(
		for h in $(cat "$st/cgroups"); do
			echo "$BASHPID" >"$h/cgroup.procs"
		done
		exec env SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn "${args[@]}" </dev/null >"$st/console.log" 2>&1
	) &
	echo $! >"$st/pid"
	local i state=""
	for i in $(seq 1 600); do
		if ! kill -0 "$(cat "$st/pid")" 2>/dev/null; then
			say "systemd-nspawn exited while booting:"
			tail -20 "$st/console.log" >&2
			stop "$name"
			exit 1
		fi
		if leader "$name" >/dev/null 2>&1; then
			state="$(in_machine "$name" systemctl is-system-running 2>/dev/null || true)"
			case "$state" in
			running | degraded) break ;;
			esac
		fi
		sleep 0.1
	done
	case "$state" in
	running) say "machine $name booted (leader pid $(leader "$name"))" ;;
	degraded)
		say "machine $name booted degraded; failed units:"
		in_machine "$name" systemctl --failed --no-legend >&2 || true
		;;
	*)
		say "machine $name did not finish booting in 60 s (state ${state:-unknown})"
		tail -20 "$st/console.log" >&2
		stop "$name"
		exit 1
		;;
	esac
}

# rmcg removes a cgroup directory and everything below it, deepest first.
rmcg() {
	[ -d "$1" ] || return 0
	find "$1" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	[ ! -d "$1" ] || say "could not remove cgroup $1"
}

stop() {
	need_root
	local name="$1" st pid i
	st="$(statedir "$name")"
	if [ -f "$st/pid" ]; then
		pid="$(cat "$st/pid")"
		if kill -0 "$pid" 2>/dev/null; then
			# nspawn asks the machine's systemd to power off (SIGRTMIN+3)
			kill -TERM "$pid" 2>/dev/null || true
			for i in $(seq 1 300); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			if kill -0 "$pid" 2>/dev/null; then
				say "machine $name did not power off in 30 s: killing it"
				kill -KILL "$pid" 2>/dev/null || true
				sleep 1
			fi
		fi
	fi
	if [ -f "$st/cgroups" ]; then
		local h
		for h in $(cat "$st/cgroups"); do
			rmcg "$h"
		done
	fi
	if mountpoint -q "$st/bpf" 2>/dev/null; then
		umount "$st/bpf" || say "could not unmount $st/bpf"
	fi
	# nspawn leaves its (empty) mount propagation directory behind when /run
	# is not a tmpfs
	rmdir "/run/systemd/nspawn/propagate/$name" 2>/dev/null || true
	rm -rf "$st"
}

reap() {
	need_root
	local st o
	for st in "$state_base"/*/; do
		[ -f "$st/owner" ] || continue
		o="$(cat "$st/owner")"
		if ! kill -0 "$o" 2>/dev/null; then
			say "stopping $(basename "$st"): its owner (pid $o) has exited"
			stop "$(basename "$st")"
		fi
	done
}

case "${1:-}" in
deps) need_root; deps ;;
image) image ;;
start) [ $# -ge 2 ] || die "usage: start NAME [DIR]"; start "$2" "${3:-}" ;;
leader) [ $# -eq 2 ] || die "usage: leader NAME"; leader "$2" ;;
exec) [ $# -ge 3 ] || die "usage: exec NAME CMD..."; n="$2"; shift 2; in_machine "$n" "$@" ;;
run)
	[ $# -ge 3 ] || die "usage: run NAME CMD..."
	n="$2"
	shift 2
	in_machine "$n" systemd-run --quiet --wait --pipe --collect --service-type=exec -- "$@"
	;;
stop) [ $# -eq 2 ] || die "usage: stop NAME"; stop "$2" ;;
reap) reap ;;
*) die "usage: nspawn.sh deps|image|start NAME [DIR]|leader NAME|exec NAME CMD...|run NAME CMD...|stop NAME|reap" ;;
esac
