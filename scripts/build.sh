#!/usr/bin/env bash
# Builds bin/bullpen and bin/bullpen-sandbox-init without debug tables
# (-ldflags=-s -w), saying what it does: a first build compiles several
# hundred packages and takes minutes, so it prints how far it is.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# build OUT PKG: go build -v names each package as it compiles it (nothing
# when all are cached); print the count every few seconds while it runs.
build() {
	local out=$1 pkg=$2 total start pid n
	total=$($GO list -deps "$pkg" | wc -l)
	start=$(date +%s)
	echo "build: $out from $pkg ($total packages with its dependencies)"
	$GO build -v -ldflags='-s -w' -o "$out" "$pkg" >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		if kill -0 "$pid" 2>/dev/null; then
			n=$(grep -c -v -e '^#' -e ' ' "$log" || true)
			echo "build: $out: compiled $n of at most $total packages, $(($(date +%s) - start)) s so far (a first build takes minutes)"
		fi
	done
	if ! wait "$pid"; then
		grep -e '^#' -e ' ' "$log" >&2 || cat "$log" >&2
		echo "build: $out failed" >&2
		return 1
	fi
	echo "build: $out done in $(($(date +%s) - start)) s, $(du -m "$out" | cut -f1) MB"
}

build bin/bullpen ./cmd/bullpen
build bin/bullpen-sandbox-init ./cmd/bullpen-sandbox-init
