# daemons.sh: starting the cluster's processes and its first objects (sourced by cluster.sh).
# shellcheck shell=bash

# spawn NAME CMD...: CMD in its own session, logging to log/NAME.log, its pid in run/NAME.pid.
spawn() {
	local name=$1
	shift
	setsid "$@" >"$STATE/log/$name.log" 2>&1 </dev/null &
	echo $! >"$STATE/run/$name.pid"
}

# wait_for DESC SECONDS CMD...: polls CMD every 0.1 s until it succeeds.
wait_for() {
	local desc=$1 deadline=$(($(now_ms) + $2 * 1000))
	shift 2
	until "$@" >/dev/null 2>&1; do
		[ "$(now_ms)" -lt "$deadline" ] || { log "timed out waiting for $desc"; return 1; }
		sleep 0.1
	done
}

start_etcd() {
	spawn etcd etcd --name default --data-dir "$STATE/etcd" --log-level warn --logger zap \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT"
}

start_containerd() {
	local c=$STATE/containerd
	mkdir -p "$c" "$STATE/cni/net.d" "$STATE/cni/ipam"
	cat >"$STATE/cni/net.d/10-bullpen-kube.conflist" <<CNI
{"cniVersion": "0.4.0", "name": "bullpen-kube", "plugins": [{"type": "bridge", "bridge": "$BRIDGE",
 "isGateway": true, "ipMasq": false, "hairpinMode": true,
 "ipam": {"type": "host-local", "dataDir": "$STATE/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]],
  "routes": [{"dst": "0.0.0.0/0"}]}}]}
CNI
	cat >"$c/config.toml" <<TOML
version = 2
root = "$c/root"
state = "$c/state"
oom_score = 0
[grpc]
  address = "$STATE/run/containerd.sock"
[ttrpc]
  address = "$STATE/run/containerd-ttrpc.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$c/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$HERE/runc-wrapper"
        Root = "$STATE/runc"
        SystemdCgroup = false
TOML
	spawn containerd containerd --config "$c/config.toml"
	wait_for containerd 30 ctr -a "$STATE/run/containerd.sock" version
}

start_apiserver() {
	local p=$STATE/pki
	spawn kube-apiserver "$1/kube-apiserver" \
		--etcd-servers="http://127.0.0.1:$ETCD_PORT" --etcd-prefix=/bullpen-kube \
		--bind-address=127.0.0.1 --secure-port="$API_PORT" --advertise-address="$NODE_IP" \
		--endpoint-reconciler-type=none --service-cluster-ip-range="$SERVICE_CIDR" \
		--tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
		--client-ca-file="$p/ca.crt" --token-auth-file="$p/tokens.csv" \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allow-privileged=true \
		--service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$p/sa.pub" \
		--service-account-signing-key-file="$p/sa.key" \
		--kubelet-client-certificate="$p/apiserver-kubelet-client.crt" --kubelet-client-key="$p/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$p/ca.crt" --kubelet-preferred-address-types=InternalIP \
		--profiling=false --v=1
}

wait_apiserver() {
	wait_for "the apiserver's /readyz" 60 api GET /readyz
}

start_controllers() {
	local p=$STATE/pki
	spawn kube-controller-manager "$1/kube-controller-manager" \
		--kubeconfig="$STATE/controller-manager.kubeconfig" --secure-port=0 --leader-elect=false \
		--use-service-account-credentials=true --service-account-private-key-file="$p/sa.key" \
		--root-ca-file="$p/ca.crt" --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
		--concurrent-gc-syncs=5 --profiling=false --v=1
	spawn kube-scheduler "$1/kube-scheduler" \
		--kubeconfig="$STATE/scheduler.kubeconfig" --secure-port=0 --leader-elect=false --profiling=false --v=1
}

# cgroup_roots creates the kubelet's cgroup root under each cgroup v1 controller (or the v2 root).
cgroup_roots() {
	local d
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		mkdir -p "/sys/fs/cgroup/$CGROUP"
		return
	fi
	for d in /sys/fs/cgroup/*/; do
		[ -L "${d%/}" ] && continue
		mkdir -p "$d$CGROUP"
		if [ -f "${d}cpuset.cpus" ]; then
			cat "${d}cpuset.cpus" >"$d$CGROUP/cpuset.cpus"
			cat "${d}cpuset.mems" >"$d$CGROUP/cpuset.mems"
		fi
	done
}

start_kubelet() {
	local k=$STATE/kubelet v1=false
	[ -f /sys/fs/cgroup/cgroup.controllers ] || v1=true
	mkdir -p "$k/pki" "$STATE/pod-logs"
	cgroup_roots
	cat >"$k/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
healthzPort: 0
readOnlyPort: 0
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP
containerRuntimeEndpoint: unix://$STATE/run/containerd.sock
tlsCertFile: $STATE/pki/kubelet.crt
tlsPrivateKeyFile: $STATE/pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: AlwaysAllow}
oomScoreAdj: 0
failSwapOn: false
podLogsDir: $STATE/pod-logs
podCIDR: $POD_CIDR
maxPods: 110
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 50Mi, nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
serializeImagePulls: false
YAML
	$v1 || sed -i '/^failCgroupV1/d' "$k/config.yaml"
	spawn kubelet "$1/kubelet" --config="$k/config.yaml" --kubeconfig="$STATE/kubelet.kubeconfig" \
		--root-dir="$k" --cert-dir="$k/pki" --hostname-override="$NODE" --node-ip="$NODE_IP" --v=1
}

node_ready() {
	api GET "/api/v1/nodes/$NODE" | jq -e '.status.conditions[] | select(.type == "Ready" and .status == "True")'
}

wait_node_ready() {
	wait_for "node $NODE Ready" 120 node_ready
}

# import_images builds the local images once per content (cached) and imports them into containerd.
import_images() {
	local sum dir f
	sum=$(cat "$HERE/images.sh" "$HERE/../../internal/kubetest/pause/main.go" | sha256sum | cut -c1-16)
	dir=$KUBE_CACHE/images/$sum
	[ -f "$dir/sandbox-test.tar" ] || bash "$HERE/images.sh" "$dir"
	for f in pause sandbox-test; do
		ctr -a "$STATE/run/containerd.sock" -n k8s.io images import "$dir/$f.tar" >"$STATE/log/import-$f.log" 2>&1 ||
			{ cat "$STATE/log/import-$f.log" >&2; return 1; }
	done
}

# bootstrap_objects creates the sandbox namespace, the local StorageClass and its PersistentVolumes.
bootstrap_objects() {
	local i
	api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$NAMESPACE\"}}" >/dev/null
	api POST /apis/storage.k8s.io/v1/storageclasses '{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass",
		"metadata":{"name":"bullpen-local","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},
		"provisioner":"kubernetes.io/no-provisioner","volumeBindingMode":"WaitForFirstConsumer","reclaimPolicy":"Retain"}' >/dev/null
	for i in $(seq 1 "$PV_COUNT"); do
		mkdir -p "$STATE/pv/$i"
		chmod 777 "$STATE/pv/$i"
		api POST /api/v1/persistentvolumes "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",
			\"metadata\":{\"name\":\"bullpen-local-$i\",\"labels\":{\"bullpen.dev/test-cluster\":\"true\"}},
			\"spec\":{\"capacity\":{\"storage\":\"10Gi\"},\"accessModes\":[\"ReadWriteOnce\"],
			\"persistentVolumeReclaimPolicy\":\"Retain\",\"storageClassName\":\"bullpen-local\",
			\"local\":{\"path\":\"$STATE/pv/$i\"},\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":
			[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\",\"values\":[\"$NODE\"]}]}]}}}}" >/dev/null
	done
	# pods need the namespace's default ServiceAccount (the controller-manager creates it)
	wait_for "the default ServiceAccount of $NAMESPACE" 60 api GET "/api/v1/namespaces/$NAMESPACE/serviceaccounts/default"
}
