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
		{name: "default", want: SandboxRuntime{Runtime: RuntimeLocal, Namespace: "bullpen-sandboxes", Transport: "auto", WarmPoolImages: "host"}},
		{name: "flags", args: []string{"--sandbox-runtime=kubernetes", "--kube-config=/k", "--kube-namespace=ns", "--kube-init-image=i:1",
			"--kube-runtime-class=gvisor", "--kube-image-pull-policy=Never", "--kube-transport=pod"},
			want: SandboxRuntime{Runtime: RuntimeKubernetes, KubeConfig: "/k", Namespace: "ns", InitImage: "i:1", RuntimeClass: "gvisor", PullPolicy: "Never", Transport: "pod", WarmPoolImages: "host"}},
		{name: "env", env: map[string]string{"BULLPEN_SANDBOX_RUNTIME": "kubernetes", "BULLPEN_KUBE_INIT_IMAGE": "i:2", "BULLPEN_KUBE_HOST_IMAGE": "h"},
			want: SandboxRuntime{Runtime: RuntimeKubernetes, Namespace: "bullpen-sandboxes", InitImage: "i:2", HostImage: "h", Transport: "auto", WarmPoolImages: "host"}},
		{name: "warm pool", args: []string{"--sandbox-runtime=kubernetes", "--kube-init-image=i", "--kube-warm-pool=2", "--kube-warm-pool-images=python:3, node:22"},
			want: SandboxRuntime{Runtime: RuntimeKubernetes, Namespace: "bullpen-sandboxes", InitImage: "i", Transport: "auto", WarmPool: 2, WarmPoolImages: "python:3, node:22"}},
		{name: "warm pool from env", env: map[string]string{"BULLPEN_SANDBOX_RUNTIME": "kubernetes", "BULLPEN_KUBE_INIT_IMAGE": "i", "BULLPEN_KUBE_HOST_IMAGE": "h",
			"BULLPEN_KUBE_WARM_POOL": "3"},
			want: SandboxRuntime{Runtime: RuntimeKubernetes, Namespace: "bullpen-sandboxes", InitImage: "i", HostImage: "h", Transport: "auto", WarmPool: 3, WarmPoolImages: "host"}},
		{name: "warm pool of host without a host image", args: []string{"--sandbox-runtime=kubernetes", "--kube-init-image=i", "--kube-warm-pool=1"}, wantErr: "--kube-host-image"},
		{name: "negative warm pool", args: []string{"--sandbox-runtime=kubernetes", "--kube-init-image=i", "--kube-warm-pool=-1"}, wantErr: "want 0 (none) to 50"},
		{name: "warm pool without images", args: []string{"--sandbox-runtime=kubernetes", "--kube-init-image=i", "--kube-warm-pool=1", "--kube-warm-pool-images= , "}, wantErr: "at least one image"},
		{name: "malformed warm pool env", env: map[string]string{"BULLPEN_SANDBOX_RUNTIME": "kubernetes", "BULLPEN_KUBE_INIT_IMAGE": "i", "BULLPEN_KUBE_WARM_POOL": "two"}, wantErr: "BULLPEN_KUBE_WARM_POOL"},
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

// TestPoolImages: the list is split on commas, blanks dropped.
func TestPoolImages(t *testing.T) {
	r := SandboxRuntime{WarmPoolImages: " host,python:3 ,,node:22"}
	if got := strings.Join(r.PoolImages(), "|"); got != "host|python:3|node:22" {
		t.Errorf("PoolImages() = %q, want host|python:3|node:22", got)
	}
}
