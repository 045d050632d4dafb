package kube

import (
	"context"
	"sort"

	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Paths inside the sandbox container.
const (
	binDir     = "/.bullpen"                    // the helper, read-only
	helperPath = binDir + "/bullpen-kube-init"  // PID 1 (serve), exec and files
	initHelper = "/bullpen-kube-init"           // in the init image
	sandboxUID = int64(1000)                    // the sandbox user, as locally
	container  = "sandbox"                      // the sandbox container's name
	secretsVol = "secrets"                      // the Secret, for file secrets
	wsVol      = "workspace"                    // the claim, at the workdir
	binVol     = "bullpen"                      // the emptyDir with the helper
	wsSuffix   = "-ws"                          // the claim's name after objName
	tokenKey   = "token"                        // the per-sandbox secret
	recordSize = 200 << 10                      // the record annotation's bound
	imageHost  = "host"                         // the local runtime's base
	netAdmin   = corev1.Capability("NET_ADMIN") // netlock's only capability
	capAll     = corev1.Capability("ALL")       // dropped everywhere else
	seccompRD  = corev1.SeccompProfileTypeRuntimeDefault
)

func ptr[T any](v T) *T { return &v }

// secretObject is the sandbox's Secret: its record, the per-sandbox
// token and the values of its secrets.
func (d *Driver) secretObject(r *record, secrets []sandbox.Secret, token string) *corev1.Secret {
	data := map[string][]byte{tokenKey: []byte(token)}
	for _, s := range secrets {
		data[secretKey(s.Name)] = []byte(s.Value)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: objName(r.Info.ID), Namespace: d.ns, Labels: d.labels(r.Info.ID),
			Annotations: map[string]string{AnnotationRecord: r.encode()}},
		Type: corev1.SecretTypeOpaque, Data: data,
	}
}

// claimObject is the workspace claim, mounted at the workdir.
func (d *Driver) claimObject(r *record) *corev1.PersistentVolumeClaim {
	size := max(d.cfg.WorkspaceBytes, r.Info.DiskBytes)
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: objName(r.Info.ID) + wsSuffix, Namespace: d.ns, Labels: d.labels(r.Info.ID)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: *resource.NewQuantity(size, resource.BinarySI)}},
		},
	}
	if d.cfg.StorageClassName != "" {
		pvc.Spec.StorageClassName = ptr(d.cfg.StorageClassName)
	}
	if r.Snapshot != "" {
		pvc.Spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: ptr(snapGroup), Kind: "VolumeSnapshot", Name: r.Snapshot}
	}
	return pvc
}

// policyObject denies the Pod's egress but to the allowed CIDRs, for
// clusters whose CNI enforces NetworkPolicy; netlock enforces the same in
// the Pod either way.
func (d *Driver) policyObject(r *record) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: objName(r.Info.ID), Namespace: d.ns, Labels: d.labels(r.Info.ID)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelSandbox: r.Info.ID}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		},
	}
	var peers []networkingv1.NetworkPolicyPeer
	for _, c := range r.Info.AllowedCIDRs {
		peers = append(peers, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: c}})
	}
	if len(peers) > 0 {
		np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: peers}}
	}
	return np
}

// resources maps the limits: cpu and memory requested and limited alike
// (a sandbox gets what it was promised), ephemeral storage limited.
func resources(in sandbox.Info) corev1.ResourceRequirements {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(in.CPU*1000), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(in.MemoryBytes, resource.BinarySI),
	}
	lim := rl.DeepCopy()
	if in.DiskBytes > 0 {
		lim[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(in.DiskBytes, resource.BinarySI)
	}
	return corev1.ResourceRequirements{Requests: rl, Limits: lim}
}

// podObject is the sandbox's Pod.
func (d *Driver) podObject(r *record, image string) *corev1.Pod {
	in := r.Info
	name := objName(in.ID)
	noEsc := ptr(false)
	lockSC := &corev1.SecurityContext{AllowPrivilegeEscalation: noEsc, RunAsUser: ptr(int64(0)), ReadOnlyRootFilesystem: ptr(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{capAll}, Add: []corev1.Capability{netAdmin}}}
	// The init container copies 4 MB and sets a few rules: a CPU limit as
	// small as its request would throttle it for most of a second.
	small := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("32Mi")}}
	binMount := corev1.VolumeMount{Name: binVol, MountPath: binDir}
	sb := corev1.Container{
		Name: container, Image: image, ImagePullPolicy: d.cfg.PullPolicy,
		Command: []string{helperPath, "serve"}, WorkingDir: in.Workdir,
		Env: append(append(d.env(r), bridgeEnv(r)...), tokenEnv(name)), Resources: resources(in),
		Ports: []corev1.ContainerPort{{Name: "bullpen-init", ContainerPort: podinit.Port, Protocol: corev1.ProtocolTCP}},
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: noEsc, RunAsUser: ptr(sandboxUID),
			RunAsGroup: ptr(sandboxUID), RunAsNonRoot: ptr(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{capAll}}},
		VolumeMounts: []corev1.VolumeMount{{Name: binVol, MountPath: binDir, ReadOnly: true},
			{Name: wsVol, MountPath: in.Workdir}},
	}
	for _, n := range sortedKeys(r.Files) {
		sb.VolumeMounts = append(sb.VolumeMounts, corev1.VolumeMount{Name: secretsVol, MountPath: r.Files[n],
			SubPath: secretKey(n), ReadOnly: true})
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.ns, Labels: d.labels(in.ID)},
		Spec: corev1.PodSpec{
			// One init container (each costs a container start): it
			// installs the helper and locks the egress, then exits with
			// its NET_ADMIN.
			InitContainers: []corev1.Container{
				{Name: "prepare", Image: d.cfg.InitImage, ImagePullPolicy: d.cfg.PullPolicy,
					Command:         append([]string{initHelper, "prepare", binDir}, in.AllowedCIDRs...),
					SecurityContext: lockSC, Resources: small, VolumeMounts: []corev1.VolumeMount{binMount}},
			},
			Containers:                    []corev1.Container{sb},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			AutomountServiceAccountToken:  ptr(false),
			EnableServiceLinks:            ptr(false),
			TerminationGracePeriodSeconds: ptr(int64(d.cfg.GracePeriod.Seconds())),
			SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr(sandboxUID),
				SeccompProfile: &corev1.SeccompProfile{Type: seccompRD}},
			Volumes: []corev1.Volume{
				{Name: binVol, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("64Mi"))}}},
				{Name: wsVol, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name + wsSuffix}}},
				{Name: secretsVol, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name,
					DefaultMode: ptr(int32(0o400))}}},
			},
		},
	}
	vols, mounts := d.mountVolumes(r)
	pod.Spec.Volumes = append(pod.Spec.Volumes, vols...)
	pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, mounts...)
	if d.cfg.RuntimeClassName != "" {
		pod.Spec.RuntimeClassName = ptr(d.cfg.RuntimeClassName)
	}
	return pod
}

// env is the container's environment: the defaults the local runtime
// gives, the spec's, and the env secrets from the Secret (never in the
// Pod spec itself).
func (d *Driver) env(r *record) []corev1.EnvVar {
	in := r.Info
	vals := map[string]string{"HOME": "/home/sandbox", "USER": "sandbox", "LOGNAME": "sandbox", "SHELL": "/bin/sh",
		"LANG": "C.UTF-8", "TERM": "xterm"}
	for k, v := range in.Env {
		vals[k] = v
	}
	var out []corev1.EnvVar
	for _, k := range sortedKeys(vals) {
		out = append(out, corev1.EnvVar{Name: k, Value: vals[k]})
	}
	for _, n := range in.SecretNames {
		if _, isFile := r.Files[n]; isFile {
			continue
		}
		out = append(out, corev1.EnvVar{Name: n, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: objName(in.ID)}, Key: secretKey(n)}}})
	}
	return out
}

// tokenEnv gives the init its token from the Secret secret (last in the
// environment, so that no spec variable overrides it). It is optional:
// a Pod whose Secret is missing still runs, and its init, without a
// token, serves nothing (auto mode then uses pods/exec).
func tokenEnv(secret string) corev1.EnvVar {
	return corev1.EnvVar{Name: podinit.TokenEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: tokenKey, Optional: ptr(true)}}}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// imageOf maps the spec's image to the container's.
// podImage is the container image of a sandbox's Pods.
func (d *Driver) podImage(r *record) (string, error) {
	if r.Image != "" {
		return r.Image, nil
	}
	return d.imageOf(r.Info.Image)
}

// createImage resolves a new sandbox's container image, noting in r the
// snapshot it is made from, if any.
func (d *Driver) createImage(ctx context.Context, r *record) (string, error) {
	img, snap, ok, err := d.fromSnapshot(ctx, r.Info.Image)
	if err != nil || !ok {
		if err == nil {
			return d.imageOf(r.Info.Image)
		}
		return "", err
	}
	if r.Image, err = d.imageOf(img); err != nil {
		return "", err
	}
	r.Snapshot = snap
	return r.Image, nil
}

func (d *Driver) imageOf(ref string) (string, error) {
	if ref == "" || ref == imageHost {
		if d.cfg.HostImage == "" {
			return "", refuse("run the \"host\" image (set a host image in the configuration)")
		}
		return d.cfg.HostImage, nil
	}
	return ref, nil
}
