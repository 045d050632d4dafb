# lib.sh: helpers of cluster.sh (sourced): names, ports, certificates, kubeconfigs.
# shellcheck shell=bash

NODE=bullpen-kube                # the node's name
SLOTS=8                          # clusters that may run at once on one machine
SERVICE_CIDR=10.96.0.0/16        # ClusterIPs exist but do not route (no kube-proxy)
NAMESPACE=bullpen-sandboxes
PAUSE_IMAGE=bullpen.local/pause:1
TEST_IMAGE=bullpen.local/sandbox-test:1
PV_COUNT=${BULLPEN_KUBE_PVS:-16} # local PersistentVolumes pre-created by up
RUN_DIR=/run/bullpen-kube       # slot-N: the state dir of the cluster in slot N
KUBE_CACHE=${BULLPEN_CACHE:-$HOME/.cache/bullpen}/kube

# use_slot N: the names of the cluster in slot N. Each of the (few) clusters
# that may run at once on one machine (a CI run beside a developer's) has
# its own cgroup root, bridge and pod subnet; ports are picked free.
use_slot() {
	SLOT=$1
	CGROUP=bullpen-kube                 # the kubelet's cgroup root, under each v1 controller (or the v2 root)
	[ "$SLOT" = 0 ] || CGROUP=bullpen-kube-$SLOT
	BRIDGE=bpkube$SLOT                  # the CNI bridge
	POD_CIDR=10.244.$SLOT.0/24          # pod IPs, routed from the host through the bridge
}

# free_slot prints the first slot no live cluster holds.
free_slot() {
	local n
	for n in $(seq 0 $((SLOTS - 1))); do
		if ! [ -f "$RUN_DIR/slot-$n" ] || ! alive "$(cat "$RUN_DIR/slot-$n")"; then
			echo "$n"
			return
		fi
	done
	die "$SLOTS clusters run already (cluster.sh down DIR stops one)"
}

# newest prints the state dir of the most recently started live cluster.
newest() {
	local f
	for f in $(ls -t "$RUN_DIR"/slot-* 2>/dev/null); do
		if alive "$(cat "$f")"; then
			cat "$f"
			return
		fi
	done
	return 1
}

[[ $PV_COUNT =~ ^[0-9]+$ ]] || { echo "kube/cluster.sh: BULLPEN_KUBE_PVS=$PV_COUNT: want a number" >&2; exit 1; }

log() { printf 'kube/cluster.sh: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}
now_ms() { date +%s%3N; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }

# alive DIR: whether the cluster in DIR still has a running apiserver.
alive() {
	local pid
	pid=$(cat "$1/run/kube-apiserver.pid" 2>/dev/null) || return 1
	kill -0 "$pid" 2>/dev/null
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && ! (exec 3<>"/dev/tcp/$NODE_IP/$1") 2>/dev/null; }

free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		port_free "$p" && ! grep -qw "$p" "$STATE/ports" 2>/dev/null && { echo "$p" >>"$STATE/ports"; echo "$p"; return; }
	done
}

# pick_ports sets the node IP and a free port for each listener.
pick_ports() {
	NODE_IP=$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
	# the kubelet refuses a loopback node IP: without a default route, use the first global address
	[ -n "$NODE_IP" ] || NODE_IP=$(ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -1)
	[ -n "$NODE_IP" ] || die "no non-loopback IPv4 address for the node"
	ETCD_PORT=$(free_port)
	ETCD_PEER_PORT=$(free_port)
	API_PORT=$(free_port)
	KUBELET_PORT=$(free_port)
	printf 'NODE_IP=%s\nETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPI_PORT=%s\nKUBELET_PORT=%s\n' \
		"$NODE_IP" "$ETCD_PORT" "$ETCD_PEER_PORT" "$API_PORT" "$KUBELET_PORT" >"$STATE/env"
}

# cert NAME CN ORG SANS: NAME.crt and NAME.key signed by the cluster CA.
cert() {
	local name=$1 cn=$2 org=$3 sans=$4 p=$STATE/pki
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$p/$name.key" \
		-subj "/CN=$cn${org:+/O=$org}" -out "$p/$name.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[ -z "$sans" ] || echo "subjectAltName=$sans"
	} >"$p/$name.ext"
	openssl x509 -req -in "$p/$name.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial \
		-days 30 -extfile "$p/$name.ext" -out "$p/$name.crt" 2>/dev/null
	rm -f "$p/$name.csr" "$p/$name.ext"
}

# pki writes the CA, the serving and client certificates, the service-account
# key pair, the token file and the kubeconfigs.
pki() {
	local p=$STATE/pki svc_ip=10.96.0.1
	mkdir -p "$p"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
		-keyout "$p/ca.key" -out "$p/ca.crt" -subj "/CN=bullpen-kube-ca" 2>/dev/null
	cert apiserver kube-apiserver "" "IP:127.0.0.1,IP:$svc_ip,IP:$NODE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters ""
	cert kubelet "system:node:$NODE" system:nodes "IP:$NODE_IP,DNS:$NODE"
	openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
	openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
	local admin cm sched kubelet
	admin=$(openssl rand -hex 24) cm=$(openssl rand -hex 24) sched=$(openssl rand -hex 24) kubelet=$(openssl rand -hex 24)
	{
		echo "$admin,bullpen-admin,uid-admin,\"system:masters\""
		echo "$cm,system:kube-controller-manager,uid-cm"
		echo "$sched,system:kube-scheduler,uid-scheduler"
		echo "$kubelet,system:node:$NODE,uid-node,\"system:nodes\""
	} >"$p/tokens.csv"
	chmod 600 "$p"/*.key "$p/tokens.csv"
	kubeconfig "$STATE/admin.kubeconfig" "$admin" bullpen-admin
	kubeconfig "$STATE/controller-manager.kubeconfig" "$cm" system:kube-controller-manager
	kubeconfig "$STATE/scheduler.kubeconfig" "$sched" system:kube-scheduler
	kubeconfig "$STATE/kubelet.kubeconfig" "$kubelet" "system:node:$NODE"
	echo "$admin" >"$p/admin.token"
}

# kubeconfig FILE TOKEN USER: a kubeconfig for the apiserver on 127.0.0.1.
kubeconfig() {
	cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: bullpen-kube
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(base64 -w0 <"$STATE/pki/ca.crt")
users:
- name: $3
  user:
    token: $2
contexts:
- name: bullpen-kube
  context:
    cluster: bullpen-kube
    user: $3
current-context: bullpen-kube
KC
	chmod 600 "$1"
}

# api METHOD PATH [BODY]: one request to the apiserver as the admin; prints the response.
api() {
	curl -sS --fail-with-body --max-time 10 --cacert "$STATE/pki/ca.crt" \
		-H "Authorization: Bearer $(cat "$STATE/pki/admin.token")" -H 'Content-Type: application/json' \
		-X "$1" ${3:+--data "$3"} "https://127.0.0.1:$API_PORT$2"
}

tail_logs() {
	local f
	for f in "$STATE"/log/*.log; do
		[ -f "$f" ] || continue
		printf -- '--- %s (last 15 lines)\n' "$f" >&2
		tail -n 15 "$f" >&2
	done
}
