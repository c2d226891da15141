#!/usr/bin/env bash
# bench.sh: the open-loop benchmark (fwctl bench) on loopback, one command.
# Brings up a throwaway PostgreSQL (scripts/pg.sh), sqlfwd in a cgroup with
# a CPU quota, and HAProxy in TCP mode (the cost of a hop alone); writes the
# targets file; runs `fwctl bench run` against direct, sqlfwd and HAProxy;
# stops everything. When it can, it adds PgBouncer (session pooling) and,
# as root, sqlfwd with transparent interception. Then, unless --no-mysql, the same for MariaDB
# (scripts/mariadb.sh): direct, sqlfwd (explicit listener and, as root,
# intercepted), HAProxy. --no-pg skips the PostgreSQL half.
#
# Interception (root, cgroup2): the generator runs in a child cgroup2 made
# for the run and the database in another. One intercepting sqlfwd (one
# daemon per cgroup: a second on the same cgroup is refused) serves two
# targets: "sqlfwd-intercept-sockmap-on" (clients connect to 127.0.0.2,
# where nothing listens; the client leg spliced, the upstream leg loopback
# TCP to 127.0.0.1) and "sqlfwd-intercept-splice" (clients connect to
# 127.0.0.5, where the database also listens; intercept.splice_upstream on,
# so sqlfwd's leg to 127.0.0.5 is spliced too). Only one target's cell runs
# at a time, so their shared cgroup's CPU is the cell's. The daemon's
# interception counters at the end are in intercept-stats.json.
# --intercept-variant picks that daemon: on (the default: the two targets
# above), off (sockmap off) or fastpath (PostgreSQL: the experimental
# kernel fast path; MySQL: sockmap on), each a single target on 127.0.0.2
# without the splice (which needs the sockmap and excludes the fast path):
# one intercepting daemon per cgroup is all sqlfwd allows and the
# generator's connections all come from one cgroup, so variants other than
# on are compared across runs, each with direct, the listener and HAProxy.
#
#   scripts/bench.sh [--profile quick|full|ci] [--out DIR] [--quota VCPU]
#                    [--no-haproxy] [--no-pgbouncer] [--no-mysql] [--no-pg] [--no-intercept]
#                    [--intercept-variant on|off|fastpath]
#                    [--scale-out N[,N...]] [--base-bin FILE]
#                    [--bin DIR] [--baseline FILE]
#                    [--update-baseline] [--tls] [--nice N] [-- fwctl bench run flags...]
#
# quick takes about ten minutes, full about an hour and a quarter. Results go to
# bench/results/<date>-<profile>/ and <date>-<profile>-mysql/
# (results.json, report.md, SVG charts).
# --quota is sqlfwd's CPU quota in vCPUs (default 0.5, 0 for none; needs
# root and the cgroup v1 cpu controller). --bin uses prebuilt sqlfwd and
# fwctl from DIR instead of `make build`. --scale-out 2,4 adds a target of
# 2 and one of 4 sqlfwd processes sharing a port, each under the quota: the
# scale-out curves, next to the single instance, in one report.
# --base-bin FILE adds a target "sqlfwd-base" running another sqlfwd binary
# (say, main's) under the same quota: an A/B of two builds in one run.
# --nice N (root, N < 0) runs everything of the run (generator, servers,
# targets) at that nice level, and gives sqlfwd's cgroups the CPU weight
# of that level, so that other work on a shared machine disturbs the run
# less and every target alike.
#
# ci: the regression gate. A short run (about a minute after the build)
# against direct and sqlfwd at a fixed rate, results in a temporary
# directory unless --out is given, then `fwctl bench gate` against
# bench/baseline-ci.json; the exit status is the gate's.
# --update-baseline rewrites the baseline instead, from three runs (each
# entry keeps its highest ratio: load compresses ratios toward 1).
#
# --tls: every client connects with sslmode=require. PostgreSQL serves TLS
# (a certificate from a CA made for the run); sqlfwd terminates the client's
# TLS and opens its own to the server (--upstream-tls require): both legs
# encrypted, as the commercial anchor measures it; HAProxy in TCP mode
# relays the client's TLS to the server untouched; PgBouncer terminates and
# re-encrypts like sqlfwd. The MySQL half likewise: MariaDB started with
# the run's certificate, every MySQL client with TLS (sslmode=require),
# sqlfwd terminating and re-opening, HAProxy relaying. Results go to
# <date>-<profile>-tls/ and <date>-<profile>-tls-mysql/. The handshake
# cost: -- --workloads connect,select-pk-prepared (PostgreSQL) or
# -- --workloads mysql-connect,oltp-read-only (with --no-pg).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
# shellcheck source=free-port.sh
. "$here/free-port.sh"
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="/usr/local/go/bin:$PATH"
fi

nice_lvl=0 profile=quick out="" quota=0.5 haproxy=auto pgbouncer=auto mysql=auto pg=1 basebin="" intercept=auto ivariant=on scale=1 bindir="" baseline=bench/baseline-ci.json update=0 tls=0
extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	--profile) profile=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--quota) quota=$2; shift 2 ;;
	--no-haproxy) haproxy=0; shift ;;
	--no-pgbouncer) pgbouncer=0; shift ;;
	--no-mysql) mysql=0; shift ;;
	--no-pg) pg=0; shift ;;
	--no-intercept) intercept=0; shift ;;
	--intercept-variant) ivariant=$2; shift 2 ;;
	--scale-out) scale=$2; shift 2 ;;
	--base-bin) basebin=$2; shift 2 ;;
	--bin) bindir=$2; shift 2 ;;
	--baseline) baseline=$2; shift 2 ;;
	--update-baseline) update=1; shift ;;
	--tls) tls=1; shift ;;
	--nice) nice_lvl=$2; shift 2 ;;
	--) shift; extra=("$@"); break ;;
	*) sed -n '2,48p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
say() { echo "bench.sh: $*" >&2; }
cg_shares=""
if [ "$nice_lvl" != 0 ]; then
	case "$nice_lvl" in -[0-9] | -1[0-9] | -20) ;; *) say "--nice wants -1 to -20, not $nice_lvl"; exit 2 ;; esac
	renice -n "$nice_lvl" -p $$ >/dev/null
	# the kernel's weight of the nice level (sched_prio_to_weight)
	cg_shares="$(echo 88761 71755 56483 46273 36291 29154 23254 18705 14949 11916 9548 7620 6100 4904 3906 3121 2501 1991 1586 1277 | awk -v n="$nice_lvl" '{print $(n + 21)}')"
	say "nice $nice_lvl: every process of the run at that level, sqlfwd cgroups cpu.shares $cg_shares"
fi
case "$ivariant" in
on | off | fastpath) ;;
*) say "--intercept-variant wants on, off or fastpath, not $ivariant"; exit 2 ;;
esac
case "$scale" in
*[!0-9,]* | "" | ,* | *, | *,,*) say "--scale-out wants instance counts like 2 or 2,4, not $scale"; exit 2 ;;
esac
if [ "$haproxy" = auto ]; then
	# The gate compares sqlfwd with direct only; HAProxy adds install time.
	if [ "$profile" = ci ]; then haproxy=0; else haproxy=1; fi
fi
if [ "$pgbouncer" = auto ]; then
	if [ "$profile" = ci ]; then pgbouncer=0; else pgbouncer=1; fi
fi
if [ "$intercept" = auto ]; then
	# sqlfwd targets that clients reach by the database's address
	# (app-host interception, --intercept-variant): root and eBPF needed.
	if [ "$profile" != ci ] && [ "$(id -u)" = 0 ]; then intercept=1; else intercept=0; fi
fi
cg2="" gencg="" dbcg="" in_gen="" in_db=""
if [ "$intercept" = 1 ]; then
	cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
	if [ -z "$cg2" ]; then
		say "no cgroup2 mount: no intercepted targets"
		intercept=0
	fi
fi
if [ "$mysql" = auto ]; then
	if [ "$profile" != ci ] && [ "$haproxy" = 1 ] && command -v mariadbd >/dev/null 2>&1; then mysql=1; else mysql=0; fi
fi

if [ -z "$bindir" ]; then
	make --no-print-directory build >/dev/null
	bindir="$root/bin"
fi
bindir="$(cd "$bindir" && pwd)"
if [ "$haproxy" = 1 ] && ! command -v haproxy >/dev/null 2>&1; then
	say "installing haproxy"
	DEBIAN_FRONTEND=noninteractive apt-get install -y haproxy >/dev/null
fi
if [ "$pgbouncer" = 1 ] && ! [ -x /usr/sbin/pgbouncer ] && ! command -v pgbouncer >/dev/null 2>&1; then
	say "installing pgbouncer"
	DEBIAN_FRONTEND=noninteractive apt-get install -y pgbouncer >/dev/null
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-bench.XXXXXX")"
chmod 755 "$work"
cgdirs=()
cg2dirs=()
if [ "$intercept" = 1 ]; then
	# the generator (and every target it starts) in one child cgroup2, the
	# servers in another: the intercepting sqlfwd attaches to the first
	# and, for the upstream splice, its sockops also to the second
	gencg="$cg2/sqlfw-bench-$$" dbcg="$cg2/sqlfw-bench-$$-db"
	mkdir "$gencg" "$dbcg"
	cg2dirs=("$gencg" "$dbcg")
	in_gen="$here/bench-in-cgroup2.sh $gencg"
	in_db="$here/bench-in-cgroup2.sh $dbcg"
fi
# resume undoes a self-check pause that fwctl could not (it was killed
# while the server was SIGSTOPped): SIGCONT to the server and its children.
resume() {
	local pid
	pid="$(head -n1 "$1" 2>/dev/null)" || return 0
	[ -n "$pid" ] || return 0
	kill -CONT "$pid" 2>/dev/null
	for c in $(pgrep -P "$pid"); do kill -CONT "$c" 2>/dev/null; done
}
cleanup() {
	set +e
	resume "$work/pg/data/postmaster.pid"
	resume "$work/my/pid"
	"$here/pg.sh" stop --dir "$work/pg" >/dev/null 2>&1
	[ -d "$work/my" ] && "$here/mariadb.sh" stop --dir "$work/my" >/dev/null 2>&1
	# fwctl has stopped sqlfwd (it owns it), so the cgroups are empty.
	for d in "${cgdirs[@]}"; do rmdir "$d" 2>/dev/null; done
	for d in ${cg2dirs[@]+"${cg2dirs[@]}"}; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$d" 2>/dev/null && break; sleep 0.5; done
	done
	rm -rf "$work"
}
trap cleanup EXIT

$in_db "$here/pg.sh" start --dir "$work/pg" >/dev/null
eval "$("$here/pg.sh" env --dir "$work/pg")"
pgport=$SQLFW_PG_PORT
if [ "$intercept" = 1 ]; then
	# the splice target's address: PostgreSQL listens there too
	"$SQLFW_PG_BIN/psql" -X -q -h 127.0.0.1 -p "$pgport" -U "$SQLFW_PG_USER" -d "$SQLFW_PG_DATABASE" \
		-c "ALTER SYSTEM SET listen_addresses = '127.0.0.1,127.0.0.5'" >/dev/null
	"$here/pg.sh" stop --dir "$work/pg" >/dev/null
	$in_db "$here/pg.sh" start --dir "$work/pg" --port "$pgport" >/dev/null
fi
# --tls: a CA and a certificate for 127.0.0.1 and localhost, PostgreSQL
# switched to TLS (ssl is reloadable), and what every target line and
# sqlfwd command gets (tls_key, fwtls).
tls_key="" fwtls=""
if [ "$tls" = 1 ]; then
	t="$work/tls"
	mkdir -p "$t"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=sqlfw-bench-ca \
		-keyout "$t/ca.key" -out "$t/ca.pem" 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
		-keyout "$t/server.key" -out "$t/server.csr" 2>/dev/null
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:127.0.0.2,IP:127.0.0.3\n' >"$t/san.ext"
	openssl x509 -req -in "$t/server.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -CAcreateserial -days 2 \
		-extfile "$t/san.ext" -out "$t/server.pem" 2>/dev/null
	chmod 600 "$t/server.key"
	cp "$t/server.pem" "$work/pg/data/bench-server.pem"
	install -m 600 "$t/server.key" "$work/pg/data/bench-server.key"
	if [ "$(id -u)" = 0 ]; then chown postgres: "$work/pg/data/bench-server.pem" "$work/pg/data/bench-server.key"; fi
	"$SQLFW_PG_BIN/psql" -X -q -h 127.0.0.1 -p "$pgport" -U "$SQLFW_PG_USER" -d "$SQLFW_PG_DATABASE" \
		-c "ALTER SYSTEM SET ssl_cert_file = 'bench-server.pem'" -c "ALTER SYSTEM SET ssl_key_file = 'bench-server.key'" \
		-c "ALTER SYSTEM SET ssl = on" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	tls_key="sslmode=require"
	fwtls=" --tls-cert $t/server.pem --tls-key $t/server.key --upstream-tls require"
	say "TLS: clients sslmode=require; sqlfwd and PgBouncer terminate and re-encrypt, HAProxy relays TLS"
fi
fwport="$(free_port)"
hpport="$(free_port)"
for _ in 1 2 3 4 5; do [ "$hpport" != "$fwport" ] && break; hpport="$(free_port)"; done
pbport="$(free_port)"
for _ in 1 2 3 4 5; do [ "$pbport" != "$fwport" ] && [ "$pbport" != "$hpport" ] && break; pbport="$(free_port)"; done

# sqlfwd's cgroups, one per sqlfwd target: cgroup v1 cpu (quota,
# throttling) and cpuacct (usage). sqlfw_cg NAME sets into_cg (a shell
# prefix that moves the started process there) and cpu_keys (for the
# targets file); the directories are listed in cgdirs for cleanup.
into_cg=""
cpu_keys=""
use_cg=0
if [ "$quota" != 0 ] && [ "$(id -u)" = 0 ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	use_cg=1
	say "sqlfwd quota: $quota vCPU per sqlfwd target (/sys/fs/cgroup/cpu/sqlfw-bench-$$-*)"
elif [ "$quota" != 0 ]; then
	say "no cgroup v1 cpu controller or not root: sqlfwd runs without a CPU quota"
	quota=0
fi
sqlfw_cg() {
	into_cg="" cpu_keys=""
	[ "$use_cg" = 1 ] || return 0
	local c="/sys/fs/cgroup/cpu/sqlfw-bench-$$-$1" a
	mkdir -p "$c"
	cgdirs+=("$c")
	[ -z "$cg_shares" ] || echo "$cg_shares" >"$c/cpu.shares"
	echo 100000 >"$c/cpu.cfs_period_us"
	awk -v q="$quota" 'BEGIN {printf "%d\n", q * 100000}' >"$c/cpu.cfs_quota_us"
	into_cg="echo \$\$ > $c/cgroup.procs; "
	cpu_keys="cpu_cgroup=$c"
	if [ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then
		a="/sys/fs/cgroup/cpuacct/sqlfw-bench-$$-$1"
		mkdir -p "$a"
		cgdirs+=("$a")
		into_cg="$into_cg echo \$\$ > $a/cgroup.procs; "
		cpu_keys="$cpu_keys cpu_acct=$a"
	fi
}

# intercept_yaml PROTOCOL PORT FILE CONTROL writes the intercepting sqlfwd's
# configuration: interception in the generator's cgroup, the sockmap on,
# the upstream splice for the servers' cgroup; database "sockmap-on"
# protects 127.0.0.2:PORT and dials 127.0.0.1:PORT (not protected, so its
# upstream leg stays TCP), "splice" protects and dials 127.0.0.5:PORT.
intercept_yaml() {
	local tlsy=""
	if [ "$tls" = 1 ]; then
		tlsy="$(printf '    tls: {cert: %s, key: %s}\n    upstream_tls: {mode: require}' "$work/tls/server.pem" "$work/tls/server.key")"
	fi
	cat >"$3" <<YAML
# Written by scripts/bench.sh.
log_level: warn
control_socket: $4
intercept:
  cgroup: $gencg
  sockmap: true
  splice_upstream: [$dbcg]
databases:
  - name: sockmap-on
    protocol: $1
    upstream: 127.0.0.1:$2
    intercept: app-host
    protect: [127.0.0.2:$2]
$tlsy
  - name: splice
    protocol: $1
    upstream: 127.0.0.5:$2
    intercept: app-host
    protect: [127.0.0.5:$2]
$tlsy
YAML
}
pgver="$("$SQLFW_PG_BIN/postgres" --version | awk '{print $3}')"
fwver="$("$bindir/sqlfwd" --version 2>&1 | sed -n 1p)"
targets="$work/targets"
{
	printf 'direct 127.0.0.1:%s version="PostgreSQL %s" pause_pidfile=%s '"$tls_key"'\n' "$pgport" "$pgver" "$work/pg/data/postmaster.pid"
	sqlfw_cg explicit
	printf 'sqlfwd 127.0.0.1:%s version="%s, enforce, default policy, quota %s vCPU" %s start="%sexec %s/sqlfwd --protocol postgres --listen 127.0.0.1:%s --upstream 127.0.0.1:%s --control-socket %s/ctl.sock --log-level warn'"$fwtls"'" '"$tls_key"'\n' \
		"$fwport" "$fwver" "$quota" "$cpu_keys" "$into_cg" "$bindir" "$fwport" "$pgport" "$work"
	if [ -n "$basebin" ]; then
		baseport="$(free_port)"
		basever="$("$basebin" --version 2>&1 | sed -n 1p)"
		sqlfw_cg base
		printf 'sqlfwd-base 127.0.0.1:%s version="%s (--base-bin), enforce, default policy, quota %s vCPU" %s start="%sexec %s --protocol postgres --listen 127.0.0.1:%s --upstream 127.0.0.1:%s --control-socket %s/ctl-base.sock --log-level warn'"$fwtls"'" '"$tls_key"'\n' \
			"$baseport" "$basever" "$quota" "$cpu_keys" "$into_cg" "$(cd "$(dirname "$basebin")" && pwd)/$(basename "$basebin")" "$baseport" "$pgport" "$work"
	fi
	for n in ${scale//,/ }; do
		[ "$n" -gt 1 ] || continue
		# N sqlfwd processes share one port (SO_REUSEPORT), each under its
		# own quota in a child of one parent cgroup, which the harness reads
		# for CPU. Throttling counters are per child, so the parent shows
		# none: read the per-instance ones with fwctl stats if needed.
		xport="$(free_port)"
		sqlfw_cg "x$n"
		parent_cpu=${cpu_keys#cpu_cgroup=}
		parent_cpu=${parent_cpu%% *}
		if [ "$use_cg" = 1 ]; then
			# the parent must not cap the children: N times the quota
			awk -v q="$quota" -v n="$n" 'BEGIN {printf "%d\n", n * q * 100000}' >"$parent_cpu/cpu.cfs_quota_us"
		fi
		{
			echo '#!/usr/bin/env bash'
			echo 'pids=()'
			for i in $(seq 1 "$n"); do
				child_cpu="" child_acct=""
				if [ "$use_cg" = 1 ]; then
					child_cpu="$parent_cpu/i$i"
					mkdir -p "$child_cpu"
					echo 100000 >"$child_cpu/cpu.cfs_period_us"
					awk -v q="$quota" 'BEGIN {printf "%d\n", q * 100000}' >"$child_cpu/cpu.cfs_quota_us"
					cgdirs=("$child_cpu" "${cgdirs[@]}")
				fi
				printf "sh -c 'for c in %s; do echo \$\$ > \$c/cgroup.procs; done; exec %s/sqlfwd --protocol postgres --listen 127.0.0.1:%s --reuse-port --upstream 127.0.0.1:%s --control-socket %s/ctl-x%s.sock --log-level warn $fwtls' &\n" \
					"$child_cpu" "$bindir" "$xport" "$pgport" "$work" "$i"
				echo 'pids+=($!)'
			done
			echo 'trap '"'"'kill -TERM "${pids[@]}" 2>/dev/null; wait'"'"' TERM INT'
			echo 'wait'
		} >"$work/start-x$n.sh"
		# the parent's cpuacct child must exist for usage; processes join
		# the parent cpuacct group (usage of all instances)
		acct_key=""
		case "$cpu_keys" in *cpu_acct=*) acct_key="cpu_acct=${cpu_keys##*cpu_acct=}" ;; esac
		if [ -n "$acct_key" ]; then
			sed -i "s#for c in \([^;]*\);#for c in \1 ${acct_key#cpu_acct=};#" "$work/start-x$n.sh"
		fi
		printf 'sqlfwd-x%s 127.0.0.1:%s version="%s, enforce, default policy, %s processes on one port (SO_REUSEPORT), quota %s vCPU each" %s start="exec bash %s/start-x%s.sh" '"$tls_key"'\n' \
			"$n" "$xport" "$fwver" "$n" "$quota" "$cpu_keys" "$work" "$n"
	done
	if [ "$intercept" = 1 ]; then
		case "$ivariant" in
		on)
			# One intercepting sqlfwd, two databases (see the header): the
			# first target owns it and is reached where nothing listens, so
			# the run cannot start unless the connects are redirected.
			sqlfw_cg intercept
			intercept_yaml postgres "$pgport" "$work/intercept.yaml" "$work/ctl-icept.sock"
			printf 'sqlfwd-intercept-sockmap-on 127.0.0.2:%s version="%s, enforce, default policy, app-host interception, sockmap on, quota %s vCPU (one daemon with the splice target)" %s start="%sexec %s/sqlfwd --config %s"'" $tls_key"'\n' \
				"$pgport" "$fwver" "$quota" "$cpu_keys" "$into_cg" "$bindir" "$work/intercept.yaml"
			printf 'sqlfwd-intercept-splice 127.0.0.5:%s version="%s, enforce, default policy, app-host interception, sockmap on, splice_upstream on (experimental), quota %s vCPU (one daemon with the sockmap-on target)" %s stop="%s/fwctl stats --json --control-socket %s > %s/intercept-stats.json"'" $tls_key"'\n' \
				"$pgport" "$fwver" "$quota" "$cpu_keys" "$bindir" "$work/ctl-icept.sock" "$work"
			;;
		off)
			sqlfw_cg "intercept-off"
			printf 'sqlfwd-intercept-sockmap-off 127.0.0.2:%s version="%s, enforce, default policy, app-host interception, sockmap off, quota %s vCPU" %s start="%sexec %s/sqlfwd --protocol postgres --upstream 127.0.0.1:%s --intercept --cgroup %s --protect 127.0.0.2:%s --sockmap off --control-socket %s/ctl-off.sock --log-level warn'"$fwtls"'" '"$tls_key"'\n' \
				"$pgport" "$fwver" "$quota" "$cpu_keys" "$into_cg" "$bindir" "$pgport" "$gencg" "$pgport" "$work"
			;;
		fastpath)
			# The experimental kernel fast path (intercept.fastpath): the
			# kernel relays server-to-client messages the session need not
			# see. Its sk_skb redirects are sent by kworker threads, outside
			# sqlfwd's cgroup: the CPU figure of this target leaves that time
			# (and the softirq time spent on its behalf) out.
			sqlfw_cg "intercept-fastpath"
			printf 'sqlfwd-intercept-fastpath 127.0.0.2:%s version="%s, enforce, default policy, app-host interception, sockmap on, EXPERIMENTAL kernel fast path (its kworker CPU not counted), quota %s vCPU" %s start="%sexec %s/sqlfwd --protocol postgres --upstream 127.0.0.1:%s --intercept --cgroup %s --protect 127.0.0.2:%s --sockmap on --fastpath --control-socket %s/ctl-fastpath.sock --log-level warn'"$fwtls"'" '"$tls_key"'\n' \
				"$pgport" "$fwver" "$quota" "$cpu_keys" "$into_cg" "$bindir" "$pgport" "$gencg" "$pgport" "$work"
			;;
		esac
	fi
	if [ "$haproxy" = 1 ]; then
		cat >"$work/haproxy.cfg" <<CFG
# Written by scripts/bench.sh: a plain TCP hop, the cost of a proxy alone.
global
	maxconn 4096
defaults
	mode tcp
	timeout connect 5s
	timeout client 5m
	timeout server 5m
listen pg
	bind 127.0.0.1:$hpport
	server pg 127.0.0.1:$pgport
CFG
		hpver="$(haproxy -v | awk 'NR == 1 {print $1, $3}')"
		printf 'haproxy 127.0.0.1:%s version="%s, TCP mode" start="exec haproxy -db -f %s/haproxy.cfg" '"$tls_key"'\n' "$hpport" "$hpver" "$work"
	fi
	if [ "$pgbouncer" = 1 ]; then
		# Session pooling: each client keeps its server connection, so
		# named prepared statements work as they do direct. PgBouncer
		# refuses to run as root: as root it runs as postgres.
		pb="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
		mkdir -p "$work/pgbouncer"
		cat >"$work/pgbouncer/pgbouncer.ini" <<CFG
; Written by scripts/bench.sh: PgBouncer in session mode in front of PostgreSQL.
[databases]
* = host=127.0.0.1 port=$pgport user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $pbport
unix_socket_dir =
auth_type = any
pool_mode = session
max_client_conn = 1000
default_pool_size = 100
ignore_startup_parameters = extra_float_digits
log_connections = 0
log_disconnections = 0
CFG
		if [ "$tls" = 1 ]; then
			cp "$work/tls/server.pem" "$work/tls/server.key" "$work/pgbouncer/"
			printf 'client_tls_sslmode = require\nclient_tls_cert_file = %s\nclient_tls_key_file = %s\nserver_tls_sslmode = require\n' \
				"$work/pgbouncer/server.pem" "$work/pgbouncer/server.key" >>"$work/pgbouncer/pgbouncer.ini"
		fi
		asuser=""
		if [ "$(id -u)" = 0 ]; then
			chown -R postgres: "$work/pgbouncer"
			asuser="setpriv --reuid=postgres --regid=postgres --init-groups "
		fi
		pbver="$("$pb" --version | sed -n 1p)"
		printf 'pgbouncer 127.0.0.1:%s version="%s, session pooling" start="exec %s%s %s/pgbouncer/pgbouncer.ini" '"$tls_key"'\n' "$pbport" "$pbver" "$asuser" "$pb" "$work"
	fi
} >"$targets"

if [ -z "$out" ]; then
	if [ "$profile" = ci ]; then
		out="$work/ci"
	else
		out="bench/results/$(date -u +%Y-%m-%d)-$profile"
		[ "$tls" = 0 ] || out="$out-tls"
	fi
fi
say "profile $profile: $(grep -c . "$targets") targets, results in $out"
status=0
if [ "$profile" = ci ] && [ "$update" = 1 ]; then
	runs=()
	for i in 1 2 3; do
		"$bindir/fwctl" bench run --quiet --targets "$targets" --profile ci --out "$out-$i" "${extra[@]}"
		runs+=("$out-$i")
	done
	"$bindir/fwctl" bench baseline --out "$baseline" "${runs[@]}"
	exit 0
fi
if [ "$pg" = 1 ]; then
	$in_gen "$bindir/fwctl" bench run --targets "$targets" --profile "$profile" --out "$out" "${extra[@]}" || status=$?
	cp "$targets" "$out/targets" 2>/dev/null || true
	[ ! -f "$work/intercept-stats.json" ] || mv "$work/intercept-stats.json" "$out/intercept-stats.json"
fi
if [ "$pg" = 1 ] && [ "$profile" = ci ] && [ "$status" = 0 ]; then
	"$bindir/fwctl" bench gate --baseline "$baseline" "$out" || status=$?
fi

if [ "$mysql" = 1 ]; then
	myssl=()
	if [ "$tls" = 1 ]; then
		myssl=(--ssl-cert "$work/tls/server.pem" --ssl-key "$work/tls/server.key")
		say "TLS: MariaDB serves TLS, MySQL clients sslmode=require; sqlfwd terminates and re-encrypts, HAProxy relays TLS"
	fi
	mybind=127.0.0.1
	[ "$intercept" = 0 ] || mybind=127.0.0.1,127.0.0.5 # the splice target's address too
	$in_db "$here/mariadb.sh" start --dir "$work/my" --bind "$mybind" ${myssl[@]+"${myssl[@]}"} >/dev/null
	eval "$("$here/mariadb.sh" env --dir "$work/my")"
	myhp="$(free_port)"
	cat >"$work/haproxy-my.cfg" <<CFG
# Written by scripts/bench.sh: a plain TCP hop in front of MariaDB.
global
	maxconn 4096
defaults
	mode tcp
	timeout connect 5s
	timeout client 5m
	timeout server 5m
listen my
	bind 127.0.0.1:$myhp
	server my 127.0.0.1:$SQLFW_MY_PORT
CFG
	myver="$(mariadbd --version | awk '{print $3}')"
	myport=$SQLFW_MY_PORT
	myfw="$(free_port)"
	for _ in 1 2 3 4 5; do [ "$myfw" != "$myhp" ] && break; myfw="$(free_port)"; done
	{
		printf 'direct 127.0.0.1:%s version="MariaDB %s" pause_pidfile=%s '"$tls_key"'\n' "$myport" "$myver" "$work/my/pid"
		# sqlfwd as for PostgreSQL: its own cgroup and quota, enforce, the
		# default MySQL policy
		sqlfw_cg my-explicit
		printf 'sqlfwd 127.0.0.1:%s version="%s, enforce, default policy, quota %s vCPU" %s start="%sexec %s/sqlfwd --protocol mysql --listen 127.0.0.1:%s --upstream 127.0.0.1:%s --control-socket %s/ctl-my.sock --log-level warn'"$fwtls"'" '"$tls_key"'\n' \
			"$myfw" "$fwver" "$quota" "$cpu_keys" "$into_cg" "$bindir" "$myfw" "$myport" "$work"
		if [ -n "$basebin" ]; then
			mybase="$(free_port)"
			sqlfw_cg my-base
			printf 'sqlfwd-base 127.0.0.1:%s version="%s (--base-bin), enforce, default policy, quota %s vCPU" %s start="%sexec %s --protocol mysql --listen 127.0.0.1:%s --upstream 127.0.0.1:%s --control-socket %s/ctl-my-base.sock --log-level warn'"$fwtls"'" '"$tls_key"'\n' \
				"$mybase" "$basever" "$quota" "$cpu_keys" "$into_cg" "$(cd "$(dirname "$basebin")" && pwd)/$(basename "$basebin")" "$mybase" "$myport" "$work"
		fi
		if [ "$intercept" = 1 ]; then
			if [ "$ivariant" = on ]; then
				# as for PostgreSQL: one intercepting sqlfwd for the
				# sockmap-on target (127.0.0.2, nothing listens there) and
				# the splice target (127.0.0.5, MariaDB binds it too)
				sqlfw_cg my-intercept
				intercept_yaml mysql "$myport" "$work/intercept-my.yaml" "$work/ctl-my-icept.sock"
				printf 'sqlfwd-intercept-sockmap-on 127.0.0.2:%s version="%s, enforce, default policy, app-host interception, sockmap on, quota %s vCPU (one daemon with the splice target)" %s start="%sexec %s/sqlfwd --config %s"'" $tls_key"'\n' \
					"$myport" "$fwver" "$quota" "$cpu_keys" "$into_cg" "$bindir" "$work/intercept-my.yaml"
				printf 'sqlfwd-intercept-splice 127.0.0.5:%s version="%s, enforce, default policy, app-host interception, sockmap on, splice_upstream on (experimental), quota %s vCPU (one daemon with the sockmap-on target)" %s stop="%s/fwctl stats --json --control-socket %s > %s/intercept-stats-my.json"'" $tls_key"'\n' \
					"$myport" "$fwver" "$quota" "$cpu_keys" "$bindir" "$work/ctl-my-icept.sock" "$work"
			else
				# off: the sockmap off; fastpath: PostgreSQL's alone, so
				# MySQL's intercepted target keeps the sockmap on
				sm=on
				[ "$ivariant" != off ] || sm=off
				sqlfw_cg my-intercept-$sm
				printf 'sqlfwd-intercept-sockmap-%s 127.0.0.2:%s version="%s, enforce, default policy, app-host interception, sockmap %s, quota %s vCPU" %s start="%sexec %s/sqlfwd --protocol mysql --upstream 127.0.0.1:%s --intercept --cgroup %s --protect 127.0.0.2:%s --sockmap %s --control-socket %s/ctl-my-%s.sock --log-level warn'"$fwtls"'" '"$tls_key"'\n' \
					"$sm" "$myport" "$fwver" "$sm" "$quota" "$cpu_keys" "$into_cg" "$bindir" "$myport" "$gencg" "$myport" "$sm" "$work" "$sm"
			fi
		fi
		printf 'haproxy 127.0.0.1:%s version="%s, TCP mode" start="exec haproxy -db -f %s/haproxy-my.cfg" '"$tls_key"'\n' "$myhp" "$hpver" "$work"
	} >"$work/targets-my"
	say "profile mysql-$profile: $(grep -c . "$work/targets-my") targets, results in $out-mysql"
	mystatus=0
	$in_gen "$bindir/fwctl" bench run --targets "$work/targets-my" --profile "mysql-$profile" \
		--user "$SQLFW_MY_USER" --database "$SQLFW_MY_DATABASE" --out "$out-mysql" "${extra[@]}" || mystatus=$?
	cp "$work/targets-my" "$out-mysql/targets" 2>/dev/null || true
	[ ! -f "$work/intercept-stats-my.json" ] || mv "$work/intercept-stats-my.json" "$out-mysql/intercept-stats.json"
	[ "$status" = 0 ] && status=$mystatus
fi
exit "$status"
