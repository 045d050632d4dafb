package kubetest

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// poll is how often the waits look: short, so that measured times
// (create → Running) are not mostly polling.
const poll = 25 * time.Millisecond

// WaitRunning waits until the pod named name in e.Namespace is Running with
// every container ready, and returns it. A pod that fails, or a container
// waiting for a reason other than ContainerCreating, ends the wait early with
// that reason.
func (e *Env) WaitRunning(ctx context.Context, name string, timeout time.Duration) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := e.Client.CoreV1().Pods(e.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			return false, fmt.Errorf("pod %s ended: %s %s", name, p.Status.Phase, p.Status.Message)
		}
		for _, c := range p.Status.ContainerStatuses {
			if w := c.State.Waiting; w != nil && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
				return false, fmt.Errorf("pod %s: container %s waiting: %s: %s", name, c.Name, w.Reason, w.Message)
			}
		}
		return p.Status.Phase == corev1.PodRunning && allReady(p), nil
	})
	if err != nil {
		return pod, fmt.Errorf("kubetest: wait for pod %s Running: %w", name, err)
	}
	return pod, nil
}

func allReady(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if !c.Ready {
			return false
		}
	}
	return len(p.Status.ContainerStatuses) > 0
}

// WaitGone waits until the pod named name is deleted from e.Namespace (its
// containers stopped and the kubelet done with it).
func (e *Env) WaitGone(ctx context.Context, name string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := e.Client.CoreV1().Pods(e.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("kubetest: wait for pod %s gone: %w", name, err)
	}
	return nil
}
