package kube

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/bullpen-hq/bullpen/sandbox"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options are the operator's settings of the driver, as main's flags
// give them.
type Options struct {
	// KubeConfig is a kubeconfig file; "" uses the in-cluster service
	// account.
	KubeConfig string
	Namespace  string
	// Office is the office's name; its label value is derived from it.
	Office                     string
	InitImage, HostImage       string
	RuntimeClass, StorageClass string
	PullPolicy                 string
	// Transport is Config's: auto, pod or apiserver.
	Transport string
	// WarmPool and WarmPoolImages are Config's.
	WarmPool       int
	WarmPoolImages []string
	// SnapshotClass is the VolumeSnapshotClass of snapshots; "" for the
	// cluster's default.
	SnapshotClass string
	// Mounts are Config's: a sandbox path and the claim that holds it.
	Mounts map[string]string
	Logger *slog.Logger
}

// Open connects to the cluster and opens a Driver with the sandbox
// configuration sc (OnEvent, defaults).
func (o Options) Open(ctx context.Context, sc sandbox.Config) (*Driver, error) {
	rc, err := restConfig(o.KubeConfig)
	if err != nil {
		return nil, err
	}
	// Each create polls its Pod and each command and file operation is a
	// request: client-go's default 5 per second would queue them.
	rc.QPS, rc.Burst = 100, 200
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kube: client: %w", err)
	}
	return New(ctx, Config{Client: c, REST: rc, Namespace: o.Namespace, Office: LabelValue(o.Office),
		InitImage: o.InitImage, HostImage: o.HostImage, RuntimeClassName: o.RuntimeClass, StorageClassName: o.StorageClass,
		PullPolicy: corev1.PullPolicy(o.PullPolicy), Transport: o.Transport, SnapshotClassName: o.SnapshotClass, Mounts: o.Mounts, WarmPool: o.WarmPool, WarmPoolImages: o.WarmPoolImages, Sandbox: sc, Logger: o.Logger})
}

func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kube: in-cluster credentials (set --kube-config outside a cluster): %w", err)
		}
		return rc, nil
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kube: kubeconfig %s: %w", path, err)
	}
	return rc, nil
}

var notLabel = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// LabelValue turns a name into a valid label value: other characters
// become "-", at most 63, alphanumeric at both ends ("default" if
// nothing is left).
func LabelValue(s string) string {
	s = notLabel.ReplaceAllString(s, "-")
	if len(s) > 63 {
		s = s[:63]
	}
	s = strings.Trim(s, "-_.")
	if s == "" {
		return "default"
	}
	return s
}
