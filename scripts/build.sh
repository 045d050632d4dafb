#!/usr/bin/env bash
# Builds bin/bullpen and bin/bullpen-sandbox-init without debug tables
# (-ldflags=-s -w) and without cgo (static binaries: nothing to compile
# with gcc, and the init runs in any image), saying what it does all the
# way: a first build downloads modules and compiles about 500 packages, so
# it prints each download and how far the compile is every few seconds.
# It ends with figure lines (binary_mib, build_s) for make bench.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export CGO_ENABLED=${CGO_ENABLED:-0}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
t0=$(now)

# modules: the first step that can be slow on a fresh machine. go list
# downloads only the modules the binaries import (not test-only ones) and
# names each on stderr ("go: downloading …") as it fetches it.
echo "build: resolving packages (a first run downloads the modules it needs, each named below)"
$GO list -deps ./cmd/bullpen ./cmd/bullpen-sandbox-init >/dev/null
echo "build: modules ready after $(since "$t0") s"

# build OUT PKG: go build -v names each package as it compiles it (nothing
# when all are cached); print the count every few seconds while it runs.
build() {
	local out=$1 pkg=$2 total start pid n
	total=$($GO list -deps "$pkg" | wc -l)
	start=$(date +%s)
	echo "build: $out from $pkg ($total packages with its dependencies)"
	$GO build -v -trimpath -ldflags='-s -w' -o "$out" "$pkg" >"$log" 2>&1 &
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
	echo "build: $out done in $(($(date +%s) - start)) s, $(mib "$out") MiB"
}

mib() { awk -v n="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", n / 1048576 }'; }

build bin/bullpen ./cmd/bullpen
build bin/bullpen-sandbox-init ./cmd/bullpen-sandbox-init
took=$(since "$t0")
echo "build: done in $took s"
echo "figure binary_mib $(mib bin/bullpen) MiB"
echo "figure build_s $took s"
