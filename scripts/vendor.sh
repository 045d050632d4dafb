#!/usr/bin/env bash
# Re-fetches the browser libraries Bullpen vendors into static/vendor, at
# the exact versions pinned here, with npm's own client (npm pack checks the
# package integrity against the registry's record). Nothing is built at
# run time: the files are committed and embedded as they are.
#
#   bash scripts/vendor.sh        # rewrite static/vendor/xterm*
set -euo pipefail

XTERM_VERSION=6.0.0
FIT_VERSION=0.11.0

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/static/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# fetch NAME VERSION: unpacks the package tarball into $work/NAME.
fetch() {
	local name="$1" version="$2" dir="$work/${1##*/}"
	mkdir -p "$dir"
	(cd "$dir" && npm pack --silent "$name@$version" >/dev/null && tar -xzf ./*.tgz)
	echo "$dir/package"
}

# vendor SRC DST NAME VERSION COMMENT: copies SRC to DST behind a licence
# header; CSS and JS both take a /* */ comment.
vendor() {
	local src="$1" dst="$2" name="$3" version="$4" licence="$5"
	{
		printf '/*! %s %s, vendored by scripts/vendor.sh from its npm package.\n' "$name" "$version"
		sed 's/^/ * /' "$licence"
		printf ' */\n'
		# the source maps are not vendored: drop the reference to them
		grep -v "^//# sourceMappingURL=" "$src"
	} >"$dst"
}

xterm="$(fetch @xterm/xterm "$XTERM_VERSION")"
fit="$(fetch @xterm/addon-fit "$FIT_VERSION")"
mkdir -p "$dest"
vendor "$xterm/lib/xterm.js" "$dest/xterm.js" @xterm/xterm "$XTERM_VERSION" "$xterm/LICENSE"
vendor "$xterm/css/xterm.css" "$dest/xterm.css" @xterm/xterm "$XTERM_VERSION" "$xterm/LICENSE"
vendor "$fit/lib/addon-fit.js" "$dest/xterm-addon-fit.js" @xterm/addon-fit "$FIT_VERSION" "$fit/LICENSE"
echo "vendored @xterm/xterm $XTERM_VERSION and @xterm/addon-fit $FIT_VERSION into static/vendor"
