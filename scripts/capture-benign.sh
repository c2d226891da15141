#!/usr/bin/env bash
# capture-benign.sh regenerates engine/pgsql/testdata/adversarial/90-benign-psql-pgdump.tsv:
# the statements psql 15's backslash commands and pg_dump 15 send, captured
# from a throwaway PostgreSQL's statement log (log_statement=all), one
# "allow" corpus line each (see engine/pgsql/adversarial_test.go for the format).
#
#   scripts/capture-benign.sh [OUT]      # OUT defaults to the file above
#
# It starts its own server with scripts/pg.sh in a temporary directory, builds
# a small database (table, index, view, materialized view, function, trigger,
# sequence, enum type, domain, comments, rows), runs each psql command and
# pg_dump against it and cuts that command's statements out of the log. A
# statement the embedded default policy denies today (fwctl check) is written
# commented out as "# FALSE POSITIVE (rule-id): allow<TAB>...", and listed on
# standard error, so that the corpus stays green and the list says what the
# policy's owners have to fix; rerun the script after a fix to re-enable them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="${1:-$root/engine/pgsql/testdata/adversarial/90-benign-psql-pgdump.tsv}"
case "$out" in
/*) ;;
*) out="$PWD/$out" ;;
esac
cd "$root"
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="/usr/local/go/bin:$PATH"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/sqlfw-capture.XXXXXX")"
chmod 755 "$work"
cleanup() {
	"$here/pg.sh" stop --dir "$work/pg" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$work/fwctl" ./cmd/fwctl
"$here/pg.sh" start --dir "$work/pg" --log-statements 2>/dev/null
eval "$("$here/pg.sh" env --dir "$work/pg")"
log="$SQLFW_PG_LOG"
conn=(-X -q -h "$SQLFW_PG_HOST" -p "$SQLFW_PG_PORT" -U postgres)
export PGOPTIONS= PSQLRC=/dev/null PGCONNECT_TIMEOUT=5

"$SQLFW_PG_BIN/psql" "${conn[@]}" -d postgres -v ON_ERROR_STOP=1 -c 'CREATE DATABASE capture' >/dev/null
"$SQLFW_PG_BIN/psql" "${conn[@]}" -d capture -v ON_ERROR_STOP=1 -f "$here/capture-benign.sql" >/dev/null

psql_cmds=(
	'\d' '\d t' '\d+ t' '\d v_t' '\d+ v_t' '\d mv_t' '\d t_name_idx' '\d order_seq' '\d app.*'
	'\dt' '\dt+' '\dt app.*' '\dtS pg_class' '\df' '\df+' '\df add' '\dfS+ now' '\dn' '\dn+'
	'\du' '\dg' '\l' '\l+' '\dv' '\dv+' '\dm' '\di' '\di+' '\ds' '\ds+' '\dx' '\dx+' '\dT' '\dT+'
	'\dD' '\dD+' '\dc' '\dC' '\dd' '\ddp' '\da' '\dA' '\db' '\dE' '\des' '\det' '\deu' '\dew'
	'\dF' '\dFd' '\dFp' '\dFt' '\dL' '\do' '\dO' '\dP' '\dRp' '\dRs' '\dX' '\dy' '\dl'
	'\lo_list' '\sf add' '\sf+ touch' '\sv v_t' '\z' '\dp' '\dp t' '\dconfig' '\dconfig+ log*'
	'\drds'
)

# segment LABEL CMD...: runs CMD and appends the statements it caused to the
# log, as "G<TAB>LABEL" and one "S<TAB>json-string" line each, to $work/raw
# (sorted when $sorted is 1).
segment() {
	local label="$1"
	shift
	local off
	off=$(stat -c %s "$log")
	"$@" >/dev/null 2>"$work/err" || {
		echo "capture-benign.sh: $label failed:" >&2
		cat "$work/err" >&2
		exit 1
	}
	printf 'G\t%s\n' "$label" >>"$work/raw"
	# An entry is a line starting with the log_line_prefix (scripts/pg.sh:
	# '%m [%p] '); PostgreSQL puts a tab after every newline of a message, so
	# a continuation line is one that starts with a tab, and the tab is not
	# part of the statement.
	tail -c +"$((off + 1))" "$log" | awk '
		function flush() {
			if (!incap) return
			s = cur
			gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s)
			gsub(/\n/, "\\n", s); gsub(/\t/, "\\t", s); gsub(/\r/, "\\r", s)
			printf "S\t\"%s\"\n", s
			incap = 0; cur = ""
		}
		/^\t/ { if (incap) cur = cur "\n" substr($0, 2); next }
		{
			flush()
			if (match($0, /^[0-9-]+ [0-9:.]+ [A-Z]+ \[[0-9]+\] LOG:  (statement|execute [^:]*): /)) {
				cur = substr($0, RLENGTH + 1); incap = 1
			}
		}
		END { flush() }' | if [ "${sorted:-0}" = 1 ]; then sort; else cat; fi >>"$work/raw"
}

for c in "${psql_cmds[@]}"; do
	segment "psql $c" "$SQLFW_PG_BIN/psql" "${conn[@]}" -d capture -c "$c"
done
# psql's tab completion: the keystrokes go through a pseudo-terminal
# (script(1)) so that readline runs; TAB TAB asks for completions, ^U clears
# the line.
completions=(
	'SELECT * FROM ' 'SELECT * FROM app.' 'SELECT * FROM t WHERE ' 'INSERT INTO t (' 'UPDATE t SET '
	'DELETE FROM ' 'ALTER TABLE ' 'ALTER TABLE t ALTER COLUMN ' 'DROP FUNCTION ' 'DROP VIEW ' 'CREATE INDEX ON t ('
	'GRANT SELECT ON ' 'GRANT SELECT ON t TO ' 'ALTER ROLE ' 'SET ' 'SHOW ' 'COMMENT ON TABLE ' 'ALTER TYPE mood RENAME VALUE '
	'\d ' '\df a' '\dT ' '\c ' 'TRUNCATE ' 'LOCK TABLE ' 'VACUUM ' 'REFRESH MATERIALIZED VIEW ' 'SELECT add'
)
# Readline must neither ask "Display all N possibilities?" nor page them,
# and psql must not start a pager: either would eat the keystrokes.
printf 'set completion-query-items 0\nset page-completions off\nset bell-style none\n' >"$work/inputrc"
tabcomplete() {
	{
		for c in "${completions[@]}"; do
			printf '%s\t\t' "$c"
			sleep 0.3
			printf '\025'
		done
		printf '\\q\n'
		sleep 0.3
	} | INPUTRC="$work/inputrc" PAGER=cat TERM=dumb timeout 60 \
		script -qfec "$SQLFW_PG_BIN/psql -X -P pager=off -h $SQLFW_PG_HOST -p $SQLFW_PG_PORT -U postgres -d capture" /dev/null
}
segment "psql tab completion (${#completions[@]} prompts)" tabcomplete

printf '4,d,ok,4\n5,e,happy,5\n' >"$work/rows.csv"
segment 'psql \copy t TO' "$SQLFW_PG_BIN/psql" "${conn[@]}" -d capture -c '\copy t TO '"'$work/out.csv'"' CSV HEADER'
segment 'psql \copy (SELECT ...) TO' "$SQLFW_PG_BIN/psql" "${conn[@]}" -d capture -c '\copy (SELECT id, name FROM t ORDER BY id) TO '"'$work/out.csv'"
segment 'psql \copy t FROM' "$SQLFW_PG_BIN/psql" "${conn[@]}" -d capture -c '\copy t (id, name, m, n) FROM '"'$work/rows.csv'"' CSV'

dump=(-h "$SQLFW_PG_HOST" -p "$SQLFW_PG_PORT" -U postgres)
segment "pg_dump (plain, schema and data)" "$SQLFW_PG_BIN/pg_dump" "${dump[@]}" -d capture -f "$work/dump.sql"
segment "pg_dump -Fc" "$SQLFW_PG_BIN/pg_dump" "${dump[@]}" -d capture -Fc -f "$work/dump.bin"
# The workers' statements interleave differently each run: sorted.
sorted=1 segment "pg_dump -Fd -j 2 (parallel workers, sorted)" "$SQLFW_PG_BIN/pg_dump" "${dump[@]}" -d capture -Fd -j 2 -f "$work/dump.dir"
segment "pg_dump --inserts --schema-only/--data-only" sh -c '"$0" "$@" --schema-only -f /dev/null && "$0" "$@" --data-only --inserts -f /dev/null' "$SQLFW_PG_BIN/pg_dump" "${dump[@]}" -d capture

# Restores replay the dump: the DDL, COPY and setval statements a migration
# or a restore sends.
"$SQLFW_PG_BIN/psql" "${conn[@]}" -d postgres -v ON_ERROR_STOP=1 -c 'CREATE DATABASE restore_plain' -c 'CREATE DATABASE restore_fc' >/dev/null
segment "psql -f (restore of the plain dump)" "$SQLFW_PG_BIN/psql" "${conn[@]}" -d restore_plain -v ON_ERROR_STOP=1 -f "$work/dump.sql"
segment "pg_restore (of the -Fc dump)" "$SQLFW_PG_BIN/pg_restore" "${dump[@]}" -d restore_fc --exit-on-error "$work/dump.bin"

# Keep each statement once, where it first appeared; judge them all with the
# embedded default policy.
awk -F '\t' '$1 == "G" { print; next } !seen[$2]++ { print }' "$work/raw" >"$work/uniq"
awk -F '\t' '$1 == "S" { printf "{\"sql\": %s}\n", $2 }' "$work/uniq" >"$work/check.jsonl"
rc=0
"$work/fwctl" check --user app --database app --jsonl "$work/check.jsonl" >"$work/verdicts" 2>"$work/err" || rc=$?
if [ "$rc" -gt 1 ]; then
	echo "capture-benign.sh: fwctl check failed:" >&2
	cat "$work/err" >&2
	exit 1
fi

{
	printf '# psql 15 backslash commands and pg_dump 15: the statements they send, captured\n'
	printf '# from the server log by scripts/capture-benign.sh (rerun it, do not edit by hand).\n'
	printf '# "# FALSE POSITIVE (rule-id): " lines are denied by the default policy today.\n'
	awk -F '\t' '
		FNR == NR { verdict[$1] = $2; rule[$1] = $3; next }
		$1 == "G" { printf "\n# %s\n", $2; next }
		{
			n++
			sql = $2
			# Plain text when it needs no quoting (the corpus takes a line
			# as written unless it starts with a double quote).
			if (sql !~ /\\/) { sql = substr(sql, 2, length(sql) - 2) }
			if (verdict[n] != "allow" && verdict[n] != "log") {
				printf "# FALSE POSITIVE (%s): ", rule[n]
			}
			printf "allow\t%s\n", sql
		}' "$work/verdicts" "$work/uniq"
} >"$out"

fp=$(grep -c '^# FALSE POSITIVE' "$out" || true)
total=$(grep -cE '^(# FALSE POSITIVE \([^)]*\): )?allow' "$out" || true)
echo "capture-benign.sh: $total statements in $out, $fp denied by the default policy:" >&2
grep '^# FALSE POSITIVE' "$out" | sed -E 's/^# FALSE POSITIVE \(([^)]*)\): allow\t(.{0,100}).*/  \1\t\2/' >&2 || true
