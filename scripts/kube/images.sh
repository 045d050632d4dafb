#!/usr/bin/env bash
# images.sh: the test cluster's local container images, as OCI archives.
#
#   scripts/kube/images.sh DIR     # writes DIR/pause.tar and DIR/sandbox-test.tar
#   scripts/kube/images.sh archive NAME ROOTFS OUT [CONFIG_JSON]
#                                  # any directory as an image NAME in OUT (for
#                                  # other tests' images; CONFIG_JSON is the OCI
#                                  # config's "config" object, e.g. {"Entrypoint":["/init"]})
#
# No image can be pulled where Bullpen's tests run, so both are built here and
# imported with `ctr -n k8s.io images import` by cluster.sh:
#   bullpen.local/pause:1         the pod sandbox container: one static Go
#                                 binary (internal/kubetest/pause);
#   bullpen.local/sandbox-test:1  a small "host tools" image: dash (/bin/sh),
#                                 bash, coreutils, grep, sed, findutils, gzip
#                                 and tar copied from the host's Debian
#                                 packages with the shared libraries ldd names
#                                 (about 15 MB), a root and a `sandbox` user
#                                 (uid 1000), and /tmp.
# An image is an OCI layout (one uncompressed layer) in a tar archive, named
# by the io.containerd.image.name annotation. Progress goes to stderr.
set -euo pipefail
CALLER=$PWD
cd "$(dirname "$0")/../.."

GO=${GO:-go}
PAUSE_IMAGE=bullpen.local/pause:1
TEST_IMAGE=bullpen.local/sandbox-test:1
TEST_PACKAGES="coreutils dash bash grep sed findutils gzip tar"

log() { printf 'kube/images.sh: %s\n' "$*" >&2; }

sha() { sha256sum "$1" | cut -d' ' -f1; }

# oci_archive NAME ROOTFS CONFIG_JSON OUT: an OCI image archive of ROOTFS.
oci_archive() {
	local name=$1 rootfs=$2 config=$3 out=$4 lay tmp ldig cdig mdig
	tmp=$(mktemp -d)
	mkdir -p "$tmp/blobs/sha256"
	lay=$tmp/layer.tar
	tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -C "$rootfs" -cf "$lay" .
	ldig=$(sha "$lay")
	mv "$lay" "$tmp/blobs/sha256/$ldig"
	printf '{"architecture":"amd64","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$config" "$ldig" >"$tmp/config.json"
	cdig=$(sha "$tmp/config.json")
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}' \
		"$cdig" "$(stat -c %s "$tmp/config.json")" "$ldig" "$(stat -c %s "$tmp/blobs/sha256/$ldig")" >"$tmp/manifest.json"
	mdig=$(sha "$tmp/manifest.json")
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"$mdig" "$(stat -c %s "$tmp/manifest.json")" "$name" "${name##*:}" >"$tmp/index.json"
	mv "$tmp/config.json" "$tmp/blobs/sha256/$cdig"
	mv "$tmp/manifest.json" "$tmp/blobs/sha256/$mdig"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$tmp/oci-layout"
	tar -C "$tmp" -cf "$out" oci-layout index.json blobs
	rm -rf "$tmp"
}

pause_image() {
	local dir=$1 root
	root=$(mktemp -d)
	CGO_ENABLED=0 "$GO" build -trimpath -ldflags='-s -w' -o "$root/pause" ./internal/kubetest/pause
	oci_archive "$PAUSE_IMAGE" "$root" '{"Entrypoint":["/pause"]}' "$dir/pause.tar"
	rm -rf "$root"
}

# copy_with_libs ROOT FILE: FILE and the shared libraries it loads, under ROOT/usr.
copy_with_libs() {
	local root=$1 f=$2 lib
	cp -a "$f" "$root/usr/bin/"
	for lib in $(ldd "$f" 2>/dev/null | grep -oE '/[^ ]+\.so[^ ]*'); do
		case $lib in
		/lib64/* | /usr/lib64/*) [ -e "$root/usr/lib64/${lib##*/}" ] || cp -L "$lib" "$root/usr/lib64/" ;;
		*) [ -e "$root/usr/lib/x86_64-linux-gnu/${lib##*/}" ] || cp -L "$lib" "$root/usr/lib/x86_64-linux-gnu/" ;;
		esac
	done
}

test_image() {
	local dir=$1 root f
	root=$(mktemp -d)
	mkdir -p "$root/usr/bin" "$root/usr/lib/x86_64-linux-gnu" "$root/usr/lib64" "$root/etc" \
		"$root/tmp" "$root/home/sandbox" "$root/proc" "$root/sys" "$root/dev"
	chmod 1777 "$root/tmp"
	chown 1000:1000 "$root/home/sandbox"
	ln -s usr/bin "$root/bin"
	ln -s usr/bin "$root/sbin"
	ln -s usr/lib "$root/lib"
	ln -s usr/lib64 "$root/lib64"
	# shellcheck disable=SC2086
	for f in $(dpkg -L $TEST_PACKAGES | grep -E '^(/usr)?/s?bin/'); do
		[ -f "$f" ] && [ ! -L "$f" ] && copy_with_libs "$root" "$f"
	done
	# the agent CLIs' native programs (Claude Code's, opencode's) load these too
	for f in librt.so.1 libpthread.so.0 libdl.so.2; do
		cp -L "/lib/x86_64-linux-gnu/$f" "$root/usr/lib/x86_64-linux-gnu/"
	done
	ln -sf dash "$root/usr/bin/sh"
	printf 'root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox:/home/sandbox:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\nsandbox:x:1000:\n' >"$root/etc/group"
	oci_archive "$TEST_IMAGE" "$root" '{"Cmd":["/bin/sh"],"Env":["PATH=/usr/bin:/bin"],"WorkingDir":"/"}' "$dir/sandbox-test.tar"
	rm -rf "$root"
}

main() {
	if [ "${1:-}" = archive ]; then
		[ $# -ge 4 ] || { log "usage: images.sh archive NAME ROOTFS OUT [CONFIG_JSON]"; exit 2; }
		local rootfs=$3 out=$4 config='{}'
		[ $# -lt 5 ] || config=$5
		case $rootfs in /*) ;; *) rootfs=$CALLER/$rootfs ;; esac
		case $out in /*) ;; *) out=$CALLER/$out ;; esac
		oci_archive "$2" "$rootfs" "$config" "$out"
		return
	fi
	local dir=${1:?usage: images.sh DIR}
	mkdir -p "$dir"
	pause_image "$dir"
	test_image "$dir"
	log "$PAUSE_IMAGE ($(du -h "$dir/pause.tar" | cut -f1)), $TEST_IMAGE ($(du -h "$dir/sandbox-test.tar" | cut -f1)) in $dir"
}

main "$@"
