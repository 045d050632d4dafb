#!/usr/bin/env bash
# test.sh: the one test command (make test, .ci/run).
#
# 1. installs what the tests need when it is missing (as root, with apt):
#    chromium (browser tests), bubblewrap, nftables, iproute2, e2fsprogs (sandbox disks), postgresql,
#    and the agent CLIs from npm (scripts/clis.sh into .cache/clis);
# 2. starts a throwaway PostgreSQL and exports BULLPEN_TEST_POSTGRES_URL, and a one-node
#    Kubernetes cluster (scripts/kube/: binaries built once per machine) exporting BULLPEN_TEST_KUBECONFIG;
# 3. checks gofmt, go vet, staticcheck, and that the templ output is generated and committed;
# 4. runs go test -race on every package.
# Any failure exits non-zero. GO_TEST_FLAGS adds flags to go test.
set -euo pipefail
cd "$(dirname "$0")/.."

section() { printf '\n==== %s ====\n' "$*"; }

section "tools"
# command -> Debian package
missing=()
for pair in chromium:chromium bwrap:bubblewrap nft:nftables ip:iproute2 mkfs.ext4:e2fsprogs; do
	cmd=${pair%%:*} pkg=${pair#*:}
	if ! command -v "$cmd" >/dev/null 2>&1 && ! [ -x "/usr/sbin/$cmd" ]; then
		missing+=("$pkg")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "missing packages: ${missing[*]} (not root: install them; tests that need them skip or fail)" >&2
	else
		echo "installing: ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		apt-get install -y -q "${missing[@]}"
	fi
else
	echo "chromium, bubblewrap, nftables, iproute2, e2fsprogs: present"
fi
go version

section "agent CLIs"
# The pinned agent CLIs the runtime tests run, installed once into .cache/clis.
bash scripts/clis.sh
[ -f .cache/e2b@2.51.0/node_modules/e2b/package.json ] || npm install --prefix .cache/e2b@2.51.0 --no-audit --no-fund --loglevel=error e2b@2.51.0 # the official E2B SDK, pinned (TestE2BSDK)

section "postgresql"
eval "$(bash scripts/pg.sh start)"
trap 'bash scripts/pg.sh stop "$BULLPEN_PG_DIR"' EXIT
echo "BULLPEN_TEST_POSTGRES_URL=$BULLPEN_TEST_POSTGRES_URL"

section "kubernetes"
# shellcheck source=scripts/kube/ci.sh
. scripts/kube/ci.sh
trap 'kube_down || echo "kubernetes: the test cluster left something behind (above)" >&2; bash scripts/pg.sh stop "$BULLPEN_PG_DIR"' EXIT
kube_up

section "gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "not gofmt-ed (run gofmt -w):" >&2
	echo "$unformatted" >&2
	exit 1
fi
echo ok

section "go vet"
go vet ./...
echo ok

section "staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
echo ok

section "templ generate"
go tool templ generate
if ! git diff --exit-code --stat -- '*_templ.go'; then
	echo "generated *_templ.go files differ from the committed ones: run make generate and commit" >&2
	exit 1
fi
untracked=$(git ls-files --others --exclude-standard -- '*_templ.go')
if [ -n "$untracked" ]; then
	echo "generated files not committed (git add them):" >&2
	echo "$untracked" >&2
	exit 1
fi
echo ok

section "go test -race"
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
go test -race -count=1 -timeout 30m ${GO_TEST_FLAGS:-} ./...
