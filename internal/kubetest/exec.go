package kubetest

import (
	"bytes"
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// Exec runs cmd in a container of a pod of e.Namespace through the
// apiserver's pods/exec subresource, over the websocket protocol (v5), and
// returns what it wrote to stdout and stderr. stdin may be nil. A command
// that exits non-zero returns a k8s.io/client-go/util/exec.ExitError.
func (e *Env) Exec(ctx context.Context, pod, container string, cmd []string, stdin io.Reader) (stdout, stderr string, err error) {
	req := e.Client.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(e.Namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container,
			Command:   cmd,
			Stdin:     stdin != nil,
			Stdout:    true,
			Stderr:    true,
		}, scheme.ParameterCodec)
	ex, err := remotecommand.NewWebSocketExecutor(e.Config, "GET", req.URL().String())
	if err != nil {
		return "", "", fmt.Errorf("kubetest: exec %s: %w", pod, err)
	}
	var out, errOut bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: &out, Stderr: &errOut})
	if err != nil {
		err = fmt.Errorf("kubetest: exec %v in %s: %w", cmd, pod, err)
	}
	return out.String(), errOut.String(), err
}
