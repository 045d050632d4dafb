#!/usr/bin/env bash
# test.sh: make test-kubernetes: the Kubernetes tests alone, with the test
# cluster up (started here and stopped at exit).
# KUBE_TEST_PKGS names the packages (default: every package that uses
# internal/kubetest); GO_TEST_FLAGS adds flags to go test.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/kube/ci.sh
. scripts/kube/ci.sh
trap kube_down EXIT
kube_up
pkgs=${KUBE_TEST_PKGS:-$(grep -rl --include='*_test.go' 'bullpen/internal/kubetest"' . | xargs -n1 dirname | sort -u | tr '\n' ' ')}
pkgs="./internal/kubetest/ $pkgs"
t0=$(date +%s)
# shellcheck disable=SC2086 # lists of packages and flags
go test -count=1 -timeout 20m ${GO_TEST_FLAGS:-} $pkgs
echo "kube tests: $(($(date +%s) - t0)) s"
kube_down # here rather than only in the trap: anything left behind fails the run
