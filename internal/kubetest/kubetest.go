// Package kubetest connects tests to the real one-node Kubernetes cluster
// that scripts/kube/cluster.sh starts on the test machine (make
// test-kubernetes, scripts/test.sh): Cluster reads its admin kubeconfig from
// BULLPEN_TEST_KUBECONFIG and gives clients for it, plus the few waits and
// the exec a test needs. Without the variable a test skips, except under
// CI=true, where a missing cluster fails the run instead.
//
// The cluster has no image registry: pods use the locally imported image
// Image names (BULLPEN_TEST_KUBE_IMAGE, bullpen.local/sandbox-test:1: sh,
// coreutils, grep, sed) with imagePullPolicy Never. It has no kube-proxy and
// no cluster DNS: pod IPs route from the host, Service ClusterIPs do not.
package kubetest

import (
	"os"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Namespace is the namespace cluster.sh creates for sandboxes.
const Namespace = "bullpen-sandboxes"

// DefaultImage is the local test image cluster.sh imports.
const DefaultImage = "bullpen.local/sandbox-test:1"

// Env is a connection to the test cluster.
type Env struct {
	// Config is the admin's client configuration (system:masters).
	Config *rest.Config
	// Client is a typed clientset for Config.
	Client kubernetes.Interface
	// Dynamic is a dynamic client for Config (unstructured objects).
	Dynamic dynamic.Interface
	// Namespace is the sandbox namespace (Namespace).
	Namespace string
	// Image is the local test image (imagePullPolicy Never).
	Image string
}

// Cluster connects to the cluster named by BULLPEN_TEST_KUBECONFIG. It skips
// tb when the variable is unset, and fails it instead under CI=true, where
// the cluster is part of the run (scripts/test.sh starts it).
func Cluster(tb testing.TB) *Env {
	tb.Helper()
	path := os.Getenv("BULLPEN_TEST_KUBECONFIG")
	if path == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("BULLPEN_TEST_KUBECONFIG is not set under CI=true: scripts/test.sh (or make test-kubernetes) starts the test cluster")
		}
		tb.Skip(`no test cluster: BULLPEN_TEST_KUBECONFIG is not set (as root: eval "$(scripts/kube/cluster.sh up)")`)
	}
	env, err := Connect(path)
	if err != nil {
		tb.Fatal(err)
	}
	return env
}

// Connect builds an Env from the kubeconfig at path.
func Connect(path string) (*Env, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	// tests create and poll many objects quickly: client-go's default 5 qps throttles them
	cfg.QPS, cfg.Burst = 100, 200
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	image := os.Getenv("BULLPEN_TEST_KUBE_IMAGE")
	if image == "" {
		image = DefaultImage
	}
	return &Env{Config: cfg, Client: client, Dynamic: dyn, Namespace: Namespace, Image: image}, nil
}
