# teardown.sh: `cluster.sh down` (sourced): stop everything up started, leave nothing behind.
# shellcheck shell=bash

# stop NAME...: SIGTERM to the processes in run/NAME.pid, all at once, and
# SIGKILL to those still there after 5 s.
stop() {
	local name pid pids="" i
	for name in "$@"; do
		pid=$(cat "$STATE/run/$name.pid" 2>/dev/null) || continue
		kill "$pid" 2>/dev/null && pids="$pids $pid"
	done
	for i in $(seq 50); do
		for pid in $pids; do
			kill -0 "$pid" 2>/dev/null && break
			pids=${pids/ $pid/}
		done
		[ -n "$pids" ] || return 0
		sleep 0.1
	done
	for pid in $pids; do kill -9 "$pid" 2>/dev/null || true; done
}

# stop_containers kills every container's task through containerd, so the
# shims clean up their mounts and sockets and exit.
stop_containers() {
	local sock=$STATE/run/containerd.sock c
	[ -S "$sock" ] || return 0
	ctr -a "$sock" version >/dev/null 2>&1 || return 0
	for c in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
		ctr -a "$sock" -n k8s.io tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true
	done
	for c in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
		ctr -a "$sock" -n k8s.io tasks delete -f "$c" >/dev/null 2>&1 || true
	done
}

# kill_leftovers kills shims of this containerd and any process still in the kubelet's cgroups.
kill_leftovers() {
	local pid f
	for pid in $(pgrep -f -- "-address $STATE/run/containerd.sock" || true); do
		kill -9 "$pid" 2>/dev/null || true
	done
	for f in $(find /sys/fs/cgroup/*/"$CGROUP" /sys/fs/cgroup/"$CGROUP" -name cgroup.procs 2>/dev/null); do
		for pid in $(cat "$f" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
	done
}

remove_cgroups() {
	local d i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		for d in /sys/fs/cgroup/*/"$CGROUP" /sys/fs/cgroup/"$CGROUP"; do
			[ -d "$d" ] && { find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true; }
		done
		ls -d /sys/fs/cgroup/*/"$CGROUP" /sys/fs/cgroup/"$CGROUP" >/dev/null 2>&1 || return 0
		sleep 0.2
	done
	log "cgroups left: $(ls -d /sys/fs/cgroup/*/"$CGROUP" /sys/fs/cgroup/"$CGROUP" 2>/dev/null | tr '\n' ' ')"
}

# unmount_all unmounts every mount under the state dir, deepest first.
unmount_all() {
	local m
	for m in $(awk -v d="$STATE/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
	done
}

down() {
	STATE=${1:-}
	[ -n "$STATE" ] || { log "no cluster to stop"; return 0; }
	[ "$(id -u)" = 0 ] || die "needs root"
	[ -d "$STATE" ] || { log "$STATE: no such cluster (stopped already?)"; return 0; }
	use_slot "$(cat "$STATE/slot" 2>/dev/null || echo 0)"
	if [ -d "$STATE/run" ]; then
		stop kubelet
		stop_containers
		stop kube-scheduler kube-controller-manager kube-apiserver containerd etcd
		kill_leftovers
	fi
	remove_cgroups
	[ -d "$STATE" ] && unmount_all
	# pods' network namespaces are gone with their processes and mounts; so are their veths
	ip link del "$BRIDGE" 2>/dev/null || true
	case $STATE in
	/tmp/* | "${TMPDIR:-/tmp}"/*) rm -rf "$STATE" ;;
	*) log "not removing $STATE (not a temp dir)" ;;
	esac
	local f
	for f in "$RUN_DIR"/slot-* "$RUN_DIR"/current; do
		if [ "$(cat "$f" 2>/dev/null)" = "$STATE" ]; then rm -f "$f"; fi
	done
	leftovers || return 1
	log "stopped, $STATE removed"
}

# leftovers fails, naming them, if a process, mount, interface, cgroup or
# file of the cluster outlived down.
leftovers() {
	local left="" pid
	for pid in $(pgrep -f -- "$STATE/" || true); do
		[ "$pid" = $$ ] || [ "$pid" = "$PPID" ] || left="$left process $pid ($(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | cut -c1-80));"
	done
	grep -q " $STATE/" /proc/self/mountinfo && left="$left mounts under $STATE;"
	ip link show "$BRIDGE" >/dev/null 2>&1 && left="$left interface $BRIDGE;"
	ls -d /sys/fs/cgroup/*/"$CGROUP" /sys/fs/cgroup/"$CGROUP" >/dev/null 2>&1 && left="$left cgroup $CGROUP;"
	[ -e "$STATE" ] && left="$left $STATE;"
	[ -z "$left" ] || { log "left behind:$left"; return 1; }
}
