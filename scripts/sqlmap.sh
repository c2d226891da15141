#!/usr/bin/env bash
# sqlmap.sh points sqlmap (Debian's package) at a deliberately injectable test
# application (e2e/injectapp) in front of PostgreSQL 15 and MariaDB 10.11:
# directly, through sqlfwd with the embedded default policy, and through
# sqlfwd with an allowlist learned from the application's legitimate traffic
# (fwctl learn), and through sqlfwd with a learned scope promoted by fwctl
# learn promote --form scope (docs/learn.md). It writes a markdown report and
# a TSV of every run
# (docs/sqlmap.md says what is measured and how to read it).
#
#   scripts/sqlmap.sh                       # the whole matrix (make sqlmap)
#   scripts/sqlmap.sh --targets pg --modes direct,learned --endpoints item
#
# Options (defaults in brackets):
#   --targets pg,my                 --modes direct,default,learned,scope
#   --endpoints item,search,list,login
#   --tampers 'none space2comment,between,randomcase,charencode'
#                                   (space-separated sets; none = no tamper)
#   --level 3  --risk 2  --technique BEUSTQ  --time-sec 2
#   --run-timeout 300               seconds one sqlmap run may take (timeout -k)
#   --fingerprint                   no --dbms: sqlmap fingerprints the server itself
#   --enumerate table|dump-all|all  [table] what sqlmap is asked to get: the
#                                   secrets table named (-D <schema> -T secrets
#                                   --dump), or, discovering the schema itself,
#                                   --dump-all, or --all (banner, users,
#                                   passwords, privileges, every table dumped)
#   --sqlmap-args 'ARGS'            more sqlmap options, word-split (e.g. --threads 2)
#   --report FILE [docs/sqlmap-results.md]
#   --tsv FILE [none]               every run's row; FILE.legit the legitimate requests' result per mode
#   --work DIR                      keep the work files there (default: a temp dir, removed)
#
# With SQLFW_PG_PORT/SQLFW_PG_LOG (and SQLFW_MY_PORT/SQLFW_MY_LOG) exported, as
# scripts/test.sh does, it uses those servers; otherwise it starts throwaway
# ones with statement logging (scripts/pg.sh, scripts/mariadb.sh) and stops
# them. Everything listens on and connects to 127.0.0.1 only. sqlmap runs with
# --batch, stdin from /dev/null (so it can never be asked to file a GitHub
# issue), without --update or --check-internet (both off by default; no -c
# config file is read), and is only ever given a 127.0.0.1 URL.
#
# Exit status: 0 when every run completed (whatever it found), 1 when the
# harness itself failed (a server, sqlfwd or the application did not start,
# learning learned nothing).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=free-port.sh
. "$here/free-port.sh"
say() { echo "sqlmap.sh: $*" >&2; }
die() { say "$*"; exit 1; }

targets=pg,my modes=direct,default,learned,scope endpoints=item,search,list,login
tampers='none space2comment,between,randomcase,charencode'
level=3 risk=2 technique=BEUSTQ timesec=2 run_timeout=300 fingerprint=0 enumerate=table extra_args=""
report="$root/docs/sqlmap-results.md" tsv="" keepwork=""
while [ $# -gt 0 ]; do
	case "$1" in
	--targets) targets="$2"; shift 2 ;;
	--modes) modes="$2"; shift 2 ;;
	--endpoints) endpoints="$2"; shift 2 ;;
	--tampers) tampers="$2"; shift 2 ;;
	--level) level="$2"; shift 2 ;;
	--risk) risk="$2"; shift 2 ;;
	--technique) technique="$2"; shift 2 ;;
	--time-sec) timesec="$2"; shift 2 ;;
	--run-timeout) run_timeout="$2"; shift 2 ;;
	--fingerprint) fingerprint=1; shift ;;
	--enumerate) enumerate="$2"; shift 2 ;;
	--sqlmap-args) extra_args="$2"; shift 2 ;;
	--report) report="$2"; shift 2 ;;
	--tsv) tsv="$2"; shift 2 ;;
	--work) keepwork="$2"; shift 2 ;;
	-h | --help) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument: $1" ;;
	esac
done
case "$enumerate" in table | dump-all | all) ;; *) die "--enumerate: table, dump-all or all, not $enumerate" ;; esac
command -v sqlmap >/dev/null 2>&1 || die "sqlmap is not installed: run scripts/deps.sh"
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="/usr/local/go/bin:$PATH"
fi

if [ -n "$keepwork" ]; then
	work="$keepwork"
	mkdir -p "$work"
else
	work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-sqlmap.XXXXXX")"
fi
chmod 755 "$work"
pids=() started_pg=0 started_my=0
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	if [ "$started_pg" = 1 ]; then "$here/pg.sh" stop --dir "$work/pg" >/dev/null 2>&1 || true; fi
	if [ "$started_my" = 1 ]; then "$here/mariadb.sh" stop --dir "$work/mariadb" >/dev/null 2>&1 || true; fi
	if [ -z "$keepwork" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "building sqlfwd, fwctl and the test application in $work/bin"
(cd "$root" && go build -o "$work/bin/" ./cmd/sqlfwd ./cmd/fwctl ./e2e/injectapp) || die "go build failed"
bin="$work/bin"

# The servers: those of the environment, or our own.
if [[ ",$targets," == *,pg,* ]]; then
	if [ -z "${SQLFW_PG_PORT:-}" ] || [ -z "${SQLFW_PG_LOG:-}" ]; then
		started_pg=1
		"$here/pg.sh" start --dir "$work/pg" --log-statements
		eval "$("$here/pg.sh" env --dir "$work/pg")"
	fi
	[ "${SQLFW_PG_HOST:-127.0.0.1}" = 127.0.0.1 ] || die "SQLFW_PG_HOST must be 127.0.0.1"
fi
if [[ ",$targets," == *,my,* ]]; then
	if [ -z "${SQLFW_MY_PORT:-}" ] || [ -z "${SQLFW_MY_LOG:-}" ]; then
		started_my=1
		"$here/mariadb.sh" start --dir "$work/mariadb" --log-statements
		eval "$("$here/mariadb.sh" env --dir "$work/mariadb")"
	fi
	[ "${SQLFW_MY_HOST:-127.0.0.1}" = 127.0.0.1 ] || die "SQLFW_MY_HOST must be 127.0.0.1"
fi

# wait_port waits until something listens on 127.0.0.1:$1.
wait_port() {
	local i
	for i in $(seq 1 150); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}

# start_sqlfwd DIR PROTOCOL UPSTREAM [ARGS...]: sets fw_port, fw_ctl.
start_sqlfwd() {
	local dir="$1" proto="$2" up="$3"
	shift 3
	mkdir -p "$dir"
	fw_port="$(free_port)" fw_ctl="$dir/control.sock"
	"$bin/sqlfwd" --protocol "$proto" --listen "127.0.0.1:$fw_port" --upstream "$up" --mode enforce \
		--control-socket "$fw_ctl" --audit-log "$dir/audit.jsonl" "$@" >>"$dir/sqlfwd.log" 2>&1 &
	fw_pid=$!
	pids+=("$fw_pid")
	wait_port "$fw_port" || { tail -n 20 "$dir/sqlfwd.log" >&2; die "sqlfwd did not listen"; }
}

# start_app DIR DRIVER DBADDR USER: sets app_url.
start_app() {
	local dir="$1" port
	port="$(free_port)"
	"$bin/injectapp" serve -driver "$2" -addr "$3" -user "$4" -db sqlmap_app -listen "127.0.0.1:$port" >>"$dir/app.log" 2>&1 &
	app_pid=$!
	pids+=("$app_pid")
	wait_port "$port" || { tail -n 20 "$dir/app.log" >&2; die "the application did not listen"; }
	app_url="http://127.0.0.1:$port"
}

stop_pid() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# count_secret_statements LOG OFFSET PROTO: statements naming the secrets
# table that the server logged after byte OFFSET.
count_secret_statements() {
	local pat
	if [ "$3" = postgres ]; then
		pat='(LOG|ERROR):  +(statement|execute [^:]*):.*secrets'
	else
		pat='(Query|Execute)[[:space:]].*secrets'
	fi
	tail -c +"$(($2 + 1))" "$1" | grep -Eic "$pat" || true
}

# first_secret_statement LOG OFFSET PROTO: the first such statement, cut to
# 160 characters, for the report's "why".
first_secret_statement() {
	local pat
	if [ "$3" = postgres ]; then
		pat='(LOG|ERROR):  +(statement|execute [^:]*):.*secrets'
	else
		pat='(Query|Execute)[[:space:]].*secrets'
	fi
	tail -c +"$(($2 + 1))" "$1" | grep -Ei -m1 "$pat" |
		sed -E 's/^.*(statement|execute [^:]*): //; s/^.*(Query|Execute)[[:space:]]+//' | tr -d '\t`' | cut -c1-160 | sed 's/|/\\|/g' || true
}

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

results="$work/results.tsv"
printf 'target\tmode\tendpoint\ttamper\tsecrets_dumped\tinjectable\ttechniques\tserver_secret_statements\tblocked\tblocking_rules\tseconds\tstatus\tfirst_secret_statement\n' >"$results"

# run_sqlmap TARGET MODE ENDPOINT TAMPER URL DBMS SCHEMA PROTO LOG RUNDIR AUDIT
run_sqlmap() {
	local target="$1" mode="$2" ep="$3" tamper="$4" url="$5" dbms="$6" schema="$7" proto="$8" log="$9" rundir="${10}" audit="${11}"
	local args=(-u "$url/item?id=1" -p id)
	case "$ep" in
	item) ;;
	search) args=(-u "$url/search?q=nut" -p q) ;;
	list) args=(-u "$url/list?sort=name" -p sort) ;;
	login) args=(-u "$url/login" --data "user=alice&pass=wonderland" -p user) ;;
	*) die "unknown endpoint $ep" ;;
	esac
	case "$url" in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL $url" ;; esac
	if [ "$tamper" != none ]; then args+=(--tamper "$tamper"); fi
	if [ "$fingerprint" = 0 ]; then args+=(--dbms="$dbms"); fi
	case "$enumerate" in
	table) args+=(-D "$schema" -T secrets --dump) ;;
	dump-all) args+=(--dump-all) ;;
	all) args+=(--all) ;;
	esac
	local extra=()
	if [ -n "$extra_args" ]; then read -r -a extra <<<"$extra_args"; fi
	mkdir -p "$rundir/out"
	local off aoff t0 rc=0
	off="$(size "$log")" aoff="$(size "$audit")" t0=$(date +%s)
	timeout -k 10 "$run_timeout" sqlmap "${args[@]}" --batch --technique="$technique" \
		--level "$level" --risk "$risk" --time-sec "$timesec" --timeout 10 --retries 1 \
		"${extra[@]}" --output-dir "$rundir/out" --disable-coloring \
		</dev/null >"$rundir/sqlmap.log" 2>&1 || rc=$?
	local secs=$(($(date +%s) - t0))
	sleep 0.3 # the servers write their logs asynchronously
	local status=completed
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status="timeout ${run_timeout}s"; elif [ "$rc" != 0 ]; then status="exit $rc"; fi
	local dumped=0 s
	while read -r s; do
		[ -n "$s" ] || continue
		if grep -rqF -- "$s" "$rundir/out" "$rundir/sqlmap.log" 2>/dev/null; then dumped=$((dumped + 1)); fi
	done <"$secrets"
	local injectable=no techs
	if grep -q "sqlmap identified the following injection point" "$rundir/sqlmap.log"; then injectable=yes; fi
	techs="$(grep -E '^ +Type: ' "$rundir/sqlmap.log" | sed -E 's/^ +Type: //' | sort -u | paste -sd, - || true)"
	local stmts blocked rules
	stmts="$(count_secret_statements "$log" "$off" "$proto")"
	local sample=""
	if [ "$stmts" != 0 ]; then sample="$(first_secret_statement "$log" "$off" "$proto")"; fi
	blocked=0 rules=""
	if [ -f "$audit" ]; then
		blocked="$(tail -c +"$((aoff + 1))" "$audit" | grep -c '"outcome":"blocked"' || true)"
		rules="$(tail -c +"$((aoff + 1))" "$audit" | grep '"outcome":"blocked"' | grep -o '"rule":"[^"]*"' | cut -d'"' -f4 |
			sort | uniq -c | sort -rn | head -n 4 | awk '{printf "%s%s %s", (NR>1?", ":""), $2, $1}' || true)"
	fi
	printf '%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$mode" "$ep" "$tamper" "$dumped" "$(grep -c . "$secrets")" \
		"$injectable" "${techs:--}" "$stmts" "$blocked" "${rules:--}" "$secs" "$status" "${sample:--}" >>"$results"
	say "$target $mode $ep tamper=$tamper: dumped $dumped secrets, injectable=$injectable, $stmts statements on secrets at the server, $blocked blocked (${secs}s, $status)"
}

legit_log="$work/legit.tsv"
: >"$legit_log"

for target in ${targets//,/ }; do
	case "$target" in
	pg) proto=postgres driver=postgres dbms=PostgreSQL schema=public
		dbaddr="127.0.0.1:$SQLFW_PG_PORT" dbuser="${SQLFW_PG_USER:-postgres}" admindb="${SQLFW_PG_DATABASE:-postgres}" log="$SQLFW_PG_LOG"
		policy_default="$root/engine/pgsql/default_policy.yaml" ;;
	my) proto=mysql driver=mysql dbms=MySQL schema=sqlmap_app
		dbaddr="127.0.0.1:$SQLFW_MY_PORT" dbuser="${SQLFW_MY_USER:-root}" admindb="${SQLFW_MY_DATABASE:-sqlfw}" log="$SQLFW_MY_LOG"
		policy_default="$root/engine/mysql/default_policy.yaml" ;;
	*) die "unknown target $target (pg or my)" ;;
	esac
	tdir="$work/$target"
	mkdir -p "$tdir"
	secrets="$tdir/secrets"
	"$bin/injectapp" setup -driver "$driver" -addr "$dbaddr" -user "$dbuser" -admin-db "$admindb" -db sqlmap_app -secrets-out "$secrets" ||
		die "$target: setting up the application's tables failed"
	for mode in ${modes//,/ }; do
		mdir="$tdir/$mode"
		mkdir -p "$mdir"
		fw_pid="" audit="$mdir/audit.jsonl"
		case "$mode" in
		direct) appaddr="$dbaddr" ;;
		default)
			start_sqlfwd "$mdir" "$proto" "$dbaddr"
			appaddr="127.0.0.1:$fw_port" ;;
		learned)
			# Learn from the application's legitimate requests through a
			# sqlfwd with the default policy, then enforce: the default
			# policy, the learned allow rules, and a deny of the rest.
			start_sqlfwd "$mdir/learn" "$proto" "$dbaddr"
			"$bin/fwctl" learn start --control-socket "$fw_ctl" >/dev/null
			start_app "$mdir/learn" "$driver" "127.0.0.1:$fw_port" "$dbuser"
			"$bin/injectapp" traffic -url "$app_url" -rounds 3 >/dev/null || die "$target: legitimate traffic failed while learning"
			"$bin/fwctl" learn stop --control-socket "$fw_ctl" >/dev/null
			"$bin/fwctl" learn export --control-socket "$fw_ctl" >"$mdir/learned.yaml"
			stop_pid "$app_pid"
			stop_pid "$fw_pid"
			grep -q 'fingerprints:' "$mdir/learned.yaml" || die "$target: fwctl learn export learned nothing"
			{
				cat "$policy_default"
				echo
				echo "  # learned by scripts/sqlmap.sh from the application's legitimate requests"
				sed '/^rules:/d' "$mdir/learned.yaml"
				echo "  - id: not-learned"
				echo "    action: deny"
				echo "    reason: statement not in the learned allowlist"
				echo "    match: {}"
			} >"$mdir/policy.yaml"
			start_sqlfwd "$mdir" "$proto" "$dbaddr" --policy "$mdir/policy.yaml"
			appaddr="127.0.0.1:$fw_port" ;;
		scope)
			# The operator's road (docs/learn.md) on one sqlfwd: learn the
			# application's scope (tables, columns, statement kinds) from its
			# legitimate requests, promote it in enforce mode; the same sqlfwd
			# then judges sqlmap.
			start_sqlfwd "$mdir" "$proto" "$dbaddr" --learn --learned-policy "$mdir/learned.yaml"
			start_app "$mdir" "$driver" "127.0.0.1:$fw_port" "$dbuser"
			"$bin/injectapp" traffic -url "$app_url" -rounds 3 >/dev/null || die "$target: legitimate traffic failed while learning"
			stop_pid "$app_pid"
			"$bin/fwctl" learn status --control-socket "$fw_ctl" >"$mdir/learn-status.txt"
			"$bin/fwctl" learn promote --form scope --mode enforce --control-socket "$fw_ctl" >"$mdir/promote.txt" ||
				die "$target: fwctl learn promote failed: $(cat "$mdir/promote.txt")"
			"$bin/fwctl" learn stop --control-socket "$fw_ctl" >/dev/null
			grep -q 'within:' "$mdir/learned.yaml" || die "$target: fwctl learn promote learned no scope"
			appaddr="127.0.0.1:$fw_port" ;;
		*) die "unknown mode $mode (direct, default, learned or scope)" ;;
		esac
		start_app "$mdir" "$driver" "$appaddr" "$dbuser"
		if out="$("$bin/injectapp" traffic -url "$app_url" -rounds 1 2>"$mdir/legit.err")"; then
			printf '%s\t%s\tok\t%s\n' "$target" "$mode" "$out" >>"$legit_log"
		else
			printf '%s\t%s\tFAILED\t%s\n' "$target" "$mode" "$out" >>"$legit_log"
			say "$target $mode: legitimate requests failed: $(head -c 600 "$mdir/legit.err")"
		fi
		n=0
		for ep in ${endpoints//,/ }; do
			for tamper in $tampers; do
				n=$((n + 1))
				run_sqlmap "$target" "$mode" "$ep" "$tamper" "$app_url" "$dbms" "$schema" "$proto" "$log" "$mdir/run$n-$ep" "$audit"
			done
		done
		stop_pid "$app_pid"
		if [ -n "$fw_pid" ]; then stop_pid "$fw_pid"; fi
	done
	"$bin/injectapp" teardown -driver "$driver" -addr "$dbaddr" -user "$dbuser" -admin-db "$admindb" -db sqlmap_app ||
		die "$target: dropping the application's database failed"
done

if [ -n "$tsv" ]; then
	cp "$results" "$tsv"
	cp "$legit_log" "$tsv.legit"
fi

# The markdown report.
{
	echo "# sqlmap against the injectable test application"
	echo
	echo "Generated by \`scripts/sqlmap.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') ($(sqlmap --version 2>/dev/null | head -n1 | tr -d '\r'),"
	echo "sqlfw $(cd "$root" && git describe --always --dirty 2>/dev/null || echo dev)); docs/sqlmap.md explains the columns."
	echo
	case "$enumerate" in table) what="-D <schema> -T secrets --dump" ;; *) what="--$enumerate" ;; esac
	if [ "$fingerprint" = 0 ]; then what="--dbms=<target> $what"; fi
	echo "sqlmap options: \`--batch $what --technique=$technique --level $level --risk $risk --time-sec $timesec"
	echo "--timeout 10 --retries 1${extra_args:+ $extra_args}\`, each run bounded by \`timeout $run_timeout\`."
	echo
	echo "Legitimate requests of the application in each setting:"
	echo
	echo "| target | mode | result |"
	echo "|---|---|---|"
	awk -F'\t' '{printf "| %s | %s | %s: %s |\n", $1, $2, $3, $4}' "$legit_log"
	echo
	echo "Summary: secrets dumped of 3, and in brackets the statements naming \`secrets\` that reached the server,"
	echo "without tamper scripts / with \`$(echo "$tampers" | tr ' ' '\n' | grep -v '^none$' | head -n1)\`:"
	echo
	echo "| target | endpoint | direct | default policy | learned allowlist | learned scope |"
	echo "|---|---|---|---|---|---|"
	tail -n +2 "$results" | awk -F'\t' '
		{ k = $1 SUBSEP $3; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		  c = $5 " (" $8 ")"; cell[k, $2] = (cell[k, $2] == "" ? c : cell[k, $2] " / " c) }
		END { for (i = 1; i <= n; i++) { split(order[i], p, SUBSEP); k = order[i]
			printf "| %s | %s | %s | %s | %s | %s |\n", p[1], p[2], (cell[k, "direct"] == "" ? "-" : cell[k, "direct"]),
				(cell[k, "default"] == "" ? "-" : cell[k, "default"]), (cell[k, "learned"] == "" ? "-" : cell[k, "learned"]),
				(cell[k, "scope"] == "" ? "-" : cell[k, "scope"]) } }'
	echo
	echo "Every run:"
	echo
	echo "| target | mode | endpoint | tamper | secrets dumped | injectable (sqlmap) | techniques found | statements on \`secrets\` at the server | blocked by sqlfwd | top blocking rules | s | run | first statement on \`secrets\` the server logged |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	tail -n +2 "$results" | awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | `%s` |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13}'
} >"$report"
say "report: $report"
cut -f1-12 "$results" | column -t -s $'\t' >&2 || cat "$results" >&2
