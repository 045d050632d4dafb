package config

import (
	"strings"
	"testing"
)

// TestSandboxRuntime: local by default; kubernetes takes its settings
// from flags or the environment and refuses to start without an init
// image or with an unknown runtime.
func TestSandboxRuntime(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    SandboxRuntime
		wantErr string
	}{
		{name: "default", want: SandboxRuntime{Runtime: RuntimeLocal, Namespace: "bullpen-sandboxes", Transport: "auto"}},
		{name: "flags", args: []string{"--sandbox-runtime=kubernetes", "--kube-config=/k", "--kube-namespace=ns", "--kube-init-image=i:1",
			"--kube-runtime-class=gvisor", "--kube-image-pull-policy=Never", "--kube-transport=pod"},
			want: SandboxRuntime{Runtime: RuntimeKubernetes, KubeConfig: "/k", Namespace: "ns", InitImage: "i:1", RuntimeClass: "gvisor", PullPolicy: "Never", Transport: "pod"}},
		{name: "env", env: map[string]string{"BULLPEN_SANDBOX_RUNTIME": "kubernetes", "BULLPEN_KUBE_INIT_IMAGE": "i:2", "BULLPEN_KUBE_HOST_IMAGE": "h"},
			want: SandboxRuntime{Runtime: RuntimeKubernetes, Namespace: "bullpen-sandboxes", InitImage: "i:2", HostImage: "h", Transport: "auto"}},
		{name: "no init image", args: []string{"--sandbox-runtime=kubernetes"}, wantErr: "--kube-init-image"},
		{name: "unknown runtime", args: []string{"--sandbox-runtime=docker"}, wantErr: "want local or kubernetes"},
		{name: "bad transport", args: []string{"--sandbox-runtime=kubernetes", "--kube-init-image=i", "--kube-transport=ssh"}, wantErr: "want auto, pod or apiserver"},
		{name: "bad pull policy", args: []string{"--sandbox-runtime=kubernetes", "--kube-init-image=i", "--kube-image-pull-policy=Sometimes"}, wantErr: "Always"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cfg Config
			err := cfg.Parse("serve", c.args, env(c.env))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Parse(%v) = %v, want an error with %q", c.args, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.SandboxRuntime != c.want {
				t.Errorf("SandboxRuntime = %+v, want %+v", cfg.SandboxRuntime, c.want)
			}
		})
	}
}
