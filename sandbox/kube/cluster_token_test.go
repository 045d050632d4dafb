package kube_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/sandbox"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterTokenNotReadable attacks the init's token from inside the
// sandbox, as its own commands (same uid as PID 1) would: its
// environment, PID 1's environ, memory and command line, and the
// environment of every process. None may show the token.
func TestClusterTokenNotReadable(t *testing.T) {
	d, env := clusterDriver(t)
	ctx := context.Background()
	in, err := d.Create(ctx, sandbox.Spec{Image: "host"})
	if err != nil {
		t.Fatal(err)
	}
	sec, err := env.Client.CoreV1().Secrets(env.Namespace).Get(ctx, "bullpen-"+strings.TrimPrefix(in.ID, "sb_"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := string(sec.Data["token"])
	if len(token) < 32 {
		t.Fatalf("the sandbox's Secret holds no token (%d bytes)", len(token))
	}
	attack := `env; echo ---; cat /proc/1/environ; echo ---; cat /proc/1/cmdline; echo ---
for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; echo; done; echo ---
dd if=/proc/1/mem bs=4096 skip=1 count=1024 2>&1 | head -c 100000; echo ---
grep -r . /proc/1/task/*/environ 2>/dev/null`
	r, err := d.Run(ctx, in.ID, sandbox.ExecRequest{Cmd: []string{"bash", "-c", attack}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Stdout) + string(r.Stderr)
	if i := strings.Index(out, token); i >= 0 {
		t.Fatalf("a command read the init's token: %q", out[max(0, i-200):i+len(token)])
	}
	if !strings.Contains(out, "PATH=") {
		t.Fatalf("the attack printed no environment at all, so it proves nothing:\n%.2000s", out)
	}
	if strings.Contains(out, "BULLPEN_INIT_TOKEN") {
		t.Fatalf("the token's variable is visible to commands:\n%.4000s", out)
	}
}
