# ci.sh: the test cluster in a test run (sourced by scripts/test.sh and scripts/kube/test.sh).
#
#   . scripts/kube/ci.sh
#   trap 'kube_down; ...' EXIT
#   kube_up        # exports BULLPEN_TEST_KUBECONFIG & co, prints "kube build: N s", "cluster ready: N s"
#
# kube_up builds the binaries (cached per machine), then starts a cluster of
# the run's own (beside any other on the machine: each has its own slot),
# which kube_down stops. Not root: it skips, unless CI=true, where it fails.
# shellcheck shell=bash

KUBE_OWNED=""

kube_up() {
	local t0 t1 t2
	if [ "$(id -u)" != 0 ]; then
		[ "${CI:-}" != true ] || { echo "kubernetes: the test cluster needs root (CI=true: failing)" >&2; return 1; }
		echo "kubernetes: not root: no test cluster, the kube tests skip"
		return 0
	fi
	t0=$(date +%s%3N)
	bash scripts/kube/build.sh >/dev/null
	t1=$(date +%s%3N)
	echo "kube build: $(((t1 - t0) / 1000)) s"
	local exports
	exports=$(bash scripts/kube/cluster.sh up)
	eval "$exports"
	KUBE_OWNED=$BULLPEN_KUBE_DIR
	t2=$(date +%s%3N)
	echo "cluster ready: $(((t2 - t1) / 1000)) s"
	echo "BULLPEN_TEST_KUBECONFIG=$BULLPEN_TEST_KUBECONFIG"
}

# kube_down stops the cluster kube_up started; it fails if anything of it
# was left behind (cluster.sh down checks). Calling it again is a no-op.
kube_down() {
	[ -n "$KUBE_OWNED" ] || return 0
	local dir=$KUBE_OWNED
	KUBE_OWNED=""
	bash scripts/kube/cluster.sh down "$dir"
}
