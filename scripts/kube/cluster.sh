#!/usr/bin/env bash
# cluster.sh: a real one-node Kubernetes cluster for tests, on this machine.
#
#   eval "$(scripts/kube/cluster.sh up)"   # prints export lines (below)
#   scripts/kube/cluster.sh env            # the export lines of the newest running cluster
#   scripts/kube/cluster.sh import TAR...  # OCI/Docker image archives into its containerd
#                                          # ($BULLPEN_KUBE_DIR's cluster, else the newest)
#   scripts/kube/cluster.sh down [DIR]     # stops it and removes DIR (default $BULLPEN_KUBE_DIR;
#                                          # `down current`: the newest running cluster)
#
# `up` (as root) starts, in a temp state dir: etcd (Debian), containerd
# (Debian, with runc behind scripts/kube/runc-wrapper), kube-apiserver,
# kube-controller-manager, kube-scheduler and the kubelet (built by build.sh,
# cached per machine), waits for the node Ready, imports the local images
# (images.sh), and creates the namespace bullpen-sandboxes, a default
# StorageClass `bullpen-local` and pre-created local PersistentVolumes. It
# prints:
#   BULLPEN_TEST_KUBECONFIG  an admin kubeconfig (token, system:masters)
#   BULLPEN_KUBE_DIR         the state dir (logs: $BULLPEN_KUBE_DIR/log/)
#   BULLPEN_TEST_KUBE_IMAGE  bullpen.local/sandbox-test:1 (imagePullPolicy: Never)
#   BULLPEN_TEST_CONTAINERD  containerd's socket: `ctr -a $BULLPEN_TEST_CONTAINERD
#                            -n k8s.io images import X.tar` adds an image
# Up to 8 clusters can run at once (each with its own cgroup root, bridge,
# pod subnet and ports); `env` prints the newest one's variables. `down` is
# safe to call from a trap, twice, or on a half-started cluster: it leaves no
# process, mount, network interface or cgroup behind. Progress goes to stderr.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/kube/lib.sh
. "$HERE/lib.sh"
# shellcheck source=scripts/kube/daemons.sh
. "$HERE/daemons.sh"
# shellcheck source=scripts/kube/teardown.sh
. "$HERE/teardown.sh"

up() {
	[ "$(id -u)" = 0 ] || die "needs root (containerd, kubelet, cgroups, network)"
	mkdir -p "$RUN_DIR"
	local t0 bin
	t0=$(now_ms)
	bin=$(bash "$HERE/build.sh")
	STATE=$(mktemp -d "${TMPDIR:-/tmp}/bullpen-kube.XXXXXX")
	chmod 755 "$STATE"
	exec 8>"$RUN_DIR/.lock"
	flock 8 # one up at a time picks a slot
	use_slot "$(free_slot)"
	echo "$SLOT" >"$STATE/slot"
	echo "$STATE" >"$RUN_DIR/slot-$SLOT"
	exec 8>&- # the daemons must not hold the lock
	# any failure from here on (set -e) stops what was started
	trap 'log "up failed"; tail_logs; down "$STATE"' EXIT
	mkdir -p "$STATE/log" "$STATE/run"
	pick_ports
	echo "$bin" >"$STATE/bin"
	pki
	local t1 t2
	t1=$(now_ms)
	start_etcd
	start_containerd
	start_apiserver "$bin"
	import_images # while the apiserver starts
	wait_apiserver
	start_controllers "$bin"
	start_kubelet "$bin"
	wait_node_ready
	t2=$(now_ms)
	bootstrap_objects
	trap - EXIT
	log "node Ready $(secs $((t2 - t1))) s after the binaries started; cluster up in $(secs $(($(now_ms) - t0))) s"
	print_env
}

print_env() {
	echo "export BULLPEN_TEST_KUBECONFIG=$STATE/admin.kubeconfig"
	echo "export BULLPEN_KUBE_DIR=$STATE"
	echo "export BULLPEN_TEST_KUBE_IMAGE=$TEST_IMAGE"
	echo "export BULLPEN_TEST_CONTAINERD=$STATE/run/containerd.sock"
}

env_cmd() {
	STATE=$(newest) || die "no cluster runs (cluster.sh up)"
	print_env
}

import_cmd() {
	STATE=${BULLPEN_KUBE_DIR:-}
	[ -n "$STATE" ] || STATE=$(newest) || die "no cluster runs (cluster.sh up)"
	local f
	for f in "$@"; do
		ctr -a "$STATE/run/containerd.sock" -n k8s.io images import "$f" >&2 || die "import $f failed"
	done
}

case "${1:-}" in
up) up ;;
env) env_cmd ;;
import)
	shift
	import_cmd "$@"
	;;
down)
	dir=${2:-${BULLPEN_KUBE_DIR:-}}
	# "current": the newest running cluster, whoever started it
	[ "$dir" != current ] || dir=$(newest || true)
	down "$dir"
	;;
*) die "usage: cluster.sh up | env | import TAR... | down [DIR|current]" ;;
esac
