#!/usr/bin/env bash
# clis.sh: installs the pinned agent CLIs (the runtimes in agents/runtime) with npm.
#
#   bash scripts/clis.sh [DIR]
#
# Each CLI goes to DIR/<name>@<version> (npm --prefix), the layout `bullpen install-clis`
# uses under <data dir>/clis and that sandboxes mount read-only. DIR defaults to
# $BULLPEN_CLI_CACHE, else .cache/clis in the repo (gitignored), so `make test` installs once.
# An install that is already there is kept. Node and npm come from the host.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-${BULLPEN_CLI_CACHE:-.cache/clis}}
# name@version of each pinned CLI; keep in step with agents/runtime.
clis=(
	"@anthropic-ai/claude-code@2.1.328"
	"@openai/codex@0.169.0"
	"opencode-ai@1.18.33"
	"@zed-industries/claude-code-acp@0.16.2"
	"@zed-industries/codex-acp@0.16.0"
	"@google/gemini-cli@0.61.0"
	# not a CLI: the official OpenAI SDK, the Responses client that
	# cmd/bullpen's TestResponsesSDKInSandbox runs inside a sandbox.
	"openai@7.59.0"
	# the official Google Gen AI SDK, the Gemini client that
	# TestGeminiSDKInSandbox runs (3.x needs Node 22; sandboxes have 20).
	"@google/genai@2.32.0"
)

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "clis.sh: $tool is not installed: install Node.js 20 or newer with npm (e.g. apt-get install -y nodejs npm)" >&2
		exit 1
	fi
done

# files each install needs besides its package (agents/runtime Install.Files):
# opencode's read-only global config directory, so it never npm-installs its
# plugin package at start, and Bullpen's client of a running opencode server;
# Gemini CLI's system settings (gateway auth, no telemetry or update checks).
extras() {
	case "$1" in
	opencode-ai)
		mkdir -p "$2/xdg/opencode" "$2/bullpen"
		printf 'node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore' >"$2/xdg/opencode/.gitignore"
		cp agents/runtime/opencode/attach.mjs "$2/bullpen/attach.mjs"
		;;
	@google/gemini-cli)
		mkdir -p "$2/bullpen"
		cp agents/runtime/gemini/settings.json "$2/bullpen/settings.json"
		;;
	esac
}

mkdir -p "$dir"
for spec in "${clis[@]}"; do
	name=${spec%@*} version=${spec##*@}
	dest="$dir/${name//\//+}@$version"
	if [ -f "$dest/.installed" ]; then
		extras "$name" "$dest"
		echo "present: $spec ($dest)"
		continue
	fi
	echo "installing: $spec -> $dest"
	rm -rf "$dest.tmp"
	if ! npm install --prefix "$dest.tmp" --no-audit --no-fund --loglevel=error "$spec" >&2; then
		echo "clis.sh: npm install $spec failed; run: npm install --prefix $dest $spec" >&2
		rm -rf "$dest.tmp"
		exit 1
	fi
	extras "$name" "$dest.tmp"
	rm -rf "$dest"
	mv "$dest.tmp" "$dest"
	touch "$dest/.installed"
done
