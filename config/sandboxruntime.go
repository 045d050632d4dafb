package config

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// maxWarmPool bounds --kube-warm-pool: each member holds a Pod and a
// workspace claim.
const maxWarmPool = 50

// Sandbox runtimes (--sandbox-runtime).
const (
	RuntimeLocal      = "local"
	RuntimeKubernetes = "kubernetes"
)

// SandboxRuntime says which driver runs the sandboxes and, for the
// kubernetes one, where; main hands the values to package sandbox/kube.
type SandboxRuntime struct {
	// Runtime is RuntimeLocal (namespaces on this host, needs root) or
	// RuntimeKubernetes (a Pod per sandbox).
	Runtime string
	// KubeConfig is a kubeconfig file; "" uses the in-cluster service
	// account.
	KubeConfig string
	// Namespace holds the sandboxes' objects.
	Namespace string
	// InitImage is the Bullpen init image (bullpen-kube-init);
	// HostImage runs sandboxes whose image is "host" ("" refuses them).
	InitImage, HostImage string
	// RuntimeClass and StorageClass name the Pods' runtime class and the
	// workspace claims' storage class ("" for the cluster's defaults).
	RuntimeClass, StorageClass string
	// PullPolicy is the containers' imagePullPolicy ("" for
	// IfNotPresent).
	PullPolicy string
	// Transport of commands and files: "auto" (the pod network, the
	// apiserver's exec where it does not answer), "pod" or "apiserver".
	Transport string
	// WarmPool is the number of pre-started sandbox Pods the kubernetes
	// runtime keeps per template (0: no pool); WarmPoolImages lists the
	// templates' images, comma-separated (each with the default limits
	// and network none).
	WarmPool       int
	WarmPoolImages string
	// SnapshotClass is the VolumeSnapshotClass of sandbox snapshots
	// ("" for the cluster's default).
	SnapshotClass string
	// CLIClaim is the PersistentVolumeClaim, in Namespace, that holds the
	// agent CLIs (what `bullpen install-clis` puts in <data dir>/clis):
	// agent CLI sandboxes mount it read-only ("" refuses agent CLIs).
	CLIClaim string
}

// KubeMounts maps the sandbox paths the kubernetes runtime can mount to
// their claims: the agent CLIs' directory, when CLIClaim is set.
func (r *SandboxRuntime) KubeMounts() map[string]string {
	if r.CLIClaim == "" {
		return nil
	}
	return map[string]string{bullpen.CLIMountDir: r.CLIClaim}
}

// PoolImages returns WarmPoolImages as a list.
func (r *SandboxRuntime) PoolImages() []string {
	var out []string
	for _, s := range strings.Split(r.WarmPoolImages, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// RegisterFlags registers the runtime flags on fs, defaulting to their
// environment variables; the returned func checks the values.
func (r *SandboxRuntime) RegisterFlags(fs *flag.FlagSet, getenv func(string) string) func() error {
	fs.StringVar(&r.Runtime, "sandbox-runtime", envOr(getenv, "BULLPEN_SANDBOX_RUNTIME", RuntimeLocal),
		"local or kubernetes: where sandboxes run (env BULLPEN_SANDBOX_RUNTIME)")
	fs.StringVar(&r.KubeConfig, "kube-config", envOr(getenv, "BULLPEN_KUBE_CONFIG", ""),
		"kubeconfig file of the kubernetes runtime; empty: in-cluster credentials (env BULLPEN_KUBE_CONFIG)")
	fs.StringVar(&r.Namespace, "kube-namespace", envOr(getenv, "BULLPEN_KUBE_NAMESPACE", "bullpen-sandboxes"),
		"namespace of the kubernetes runtime's sandboxes (env BULLPEN_KUBE_NAMESPACE)")
	fs.StringVar(&r.InitImage, "kube-init-image", envOr(getenv, "BULLPEN_KUBE_INIT_IMAGE", ""),
		"image holding /bullpen-kube-init, copied into every sandbox pod (env BULLPEN_KUBE_INIT_IMAGE)")
	fs.StringVar(&r.HostImage, "kube-host-image", envOr(getenv, "BULLPEN_KUBE_HOST_IMAGE", ""),
		"image of kubernetes sandboxes created with the image \"host\"; empty refuses them (env BULLPEN_KUBE_HOST_IMAGE)")
	fs.StringVar(&r.RuntimeClass, "kube-runtime-class", envOr(getenv, "BULLPEN_KUBE_RUNTIME_CLASS", ""),
		"runtimeClassName of the sandbox pods, e.g. gvisor (env BULLPEN_KUBE_RUNTIME_CLASS)")
	fs.StringVar(&r.StorageClass, "kube-storage-class", envOr(getenv, "BULLPEN_KUBE_STORAGE_CLASS", ""),
		"storage class of the sandboxes' workspace claims; empty: the cluster's default (env BULLPEN_KUBE_STORAGE_CLASS)")
	fs.StringVar(&r.PullPolicy, "kube-image-pull-policy", envOr(getenv, "BULLPEN_KUBE_IMAGE_PULL_POLICY", ""),
		"imagePullPolicy of the sandbox pods' containers: Always, IfNotPresent (empty) or Never (env BULLPEN_KUBE_IMAGE_PULL_POLICY)")
	fs.StringVar(&r.SnapshotClass, "kube-snapshot-class", envOr(getenv, "BULLPEN_KUBE_SNAPSHOT_CLASS", ""),
		"VolumeSnapshotClass of kubernetes sandbox snapshots (CSI); empty: the cluster's default (env BULLPEN_KUBE_SNAPSHOT_CLASS)")
	fs.StringVar(&r.CLIClaim, "kube-cli-claim", envOr(getenv, "BULLPEN_KUBE_CLI_CLAIM", ""),
		"persistentVolumeClaim in the sandbox namespace holding the agent CLIs (as installed by bullpen install-clis), mounted read-only into agent CLI sandboxes; empty refuses agent CLIs (env BULLPEN_KUBE_CLI_CLAIM)")
	fs.StringVar(&r.Transport, "kube-transport", envOr(getenv, "BULLPEN_KUBE_TRANSPORT", "auto"),
		"how commands and files reach kubernetes sandboxes: pod (their init over the pod network), apiserver (pods/exec) or auto (env BULLPEN_KUBE_TRANSPORT)")
	fs.IntVar(&r.WarmPool, "kube-warm-pool", envInt(getenv, "BULLPEN_KUBE_WARM_POOL", 0),
		"pre-started sandbox pods kept per template of the kubernetes runtime, claimed by a create that fits one; 0: none (env BULLPEN_KUBE_WARM_POOL)")
	fs.StringVar(&r.WarmPoolImages, "kube-warm-pool-images", envOr(getenv, "BULLPEN_KUBE_WARM_POOL_IMAGES", "host"),
		"images of the warm pool's templates, comma-separated, each with the default limits and network none (env BULLPEN_KUBE_WARM_POOL_IMAGES)")
	rawPool := getenv("BULLPEN_KUBE_WARM_POOL")
	return func() error {
		if _, err := strconv.Atoi(rawPool); rawPool != "" && err != nil {
			return fmt.Errorf("BULLPEN_KUBE_WARM_POOL=%q: want a whole number", rawPool)
		}
		return r.check()
	}
}

func (r *SandboxRuntime) check() error {
	switch r.Runtime {
	case RuntimeLocal:
		return nil
	case RuntimeKubernetes:
	default:
		return fmt.Errorf("--sandbox-runtime=%q: want local or kubernetes", r.Runtime)
	}
	switch r.PullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return fmt.Errorf("--kube-image-pull-policy=%q: want Always, IfNotPresent or Never", r.PullPolicy)
	}
	switch r.Transport {
	case "auto", "pod", "apiserver":
	default:
		return fmt.Errorf("--kube-transport=%q: want auto, pod or apiserver", r.Transport)
	}
	if r.WarmPool < 0 || r.WarmPool > maxWarmPool {
		return fmt.Errorf("--kube-warm-pool=%d: want 0 (none) to %d", r.WarmPool, maxWarmPool)
	}
	if r.WarmPool > 0 && len(r.PoolImages()) == 0 {
		return fmt.Errorf("--kube-warm-pool=%d needs at least one image in --kube-warm-pool-images", r.WarmPool)
	}
	if r.WarmPool > 0 && slices.Contains(r.PoolImages(), "host") && r.HostImage == "" {
		return fmt.Errorf("--kube-warm-pool-images includes \"host\": set --kube-host-image, or list other images")
	}
	if r.Namespace == "" || r.InitImage == "" {
		return fmt.Errorf("--sandbox-runtime=kubernetes needs --kube-namespace and --kube-init-image")
	}
	return nil
}
