package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm/llmtest"
	"github.com/bullpen-hq/bullpen/agents/runtime"
	"github.com/bullpen-hq/bullpen/agents/runtime/runtimetest"
	"github.com/bullpen-hq/bullpen/internal/kubetest"
	"github.com/bullpen-hq/bullpen/sandbox/kube"
	"github.com/bullpen-hq/bullpen/sandbox/kube/podinit"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// shScan is pyScan for images without Python (the test cluster's): the
// secret on stdin is kept in a pattern file (which the scan leaves out),
// never in an argv, so that the scan's own processes are no hit.
const shScan = `
d=$(mktemp -d) && cat > "$d/p"
grep -rlsF -f "$d/p" --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr --exclude-dir=clis / 2>/dev/null |
	grep -v -e "^$d/" -e '^/opt/bullpen/clis/' | sed 's/^/FILE /'
for p in /proc/[0-9]*; do
	for w in environ cmdline; do
		grep -qsF -f "$d/p" "$p/$w" && echo "PROC $p $w"
	done
	tr '\0' '\n' < "$p/environ" 2>/dev/null | grep -oE 'bp_[a-z2-7]{20,}' | sed 's/^/ENV:/'
done
rm -rf "$d"
`

// TestKubeClaudeCodeEndToEnd: TestClaudeCodeEndToEnd on the kubernetes
// runtime. The real Claude Code from npm runs in the agent's Pod on the
// test cluster: the installed CLIs come from a read-only claim
// (--kube-cli-claim), and the CLI reaches the model gateway and MCP only
// through the bridge the Pod's init carries to this server, the Pod's
// network policy "none". It writes and runs a script in its workspace and
// posts the output through MCP; the provider key is nowhere in the Pod.
func TestKubeClaudeCodeEndToEnd(t *testing.T) {
	env := kubetest.Cluster(t)
	img := kubetest.InitImage(t)
	clis := runtimetest.Installer(t, runtime.ClaudeCode{}).Dir
	claim := env.HostDirClaim(t, clis)
	office := fmt.Sprintf("kube-clis-%08x", rand.Uint32())
	t.Cleanup(func() { deleteOffice(t, env, office) })
	for k, v := range map[string]string{"BULLPEN_NAME": office, "BULLPEN_SANDBOX_RUNTIME": "kubernetes",
		"BULLPEN_KUBE_CONFIG": os.Getenv("BULLPEN_TEST_KUBECONFIG"), "BULLPEN_KUBE_NAMESPACE": env.Namespace,
		"BULLPEN_KUBE_INIT_IMAGE": img, "BULLPEN_KUBE_HOST_IMAGE": env.Image, "BULLPEN_KUBE_IMAGE_PULL_POLICY": "Never",
		"BULLPEN_KUBE_CLI_CLAIM": claim} {
		t.Setenv(k, v)
	}
	var o *cliOffice
	var eng bullpen.Member
	p := &probe{}
	fake := llmtest.NewFakeAnthropic(cliScript("Bash", map[string]any{"command": scriptCommand, "description": "write and run hello.sh"},
		"mcp__bullpen__post_message", func() { o.scanWith(eng, p, "sh", "-c", shScan) }))
	defer fake.Close()
	o = startCLIOffice(t, "anthropic", fake.URL, clis)
	eng = o.hire(bullpen.RuntimeClaudeCode, "anthropic", "claude-sonnet-4-5", func(r *bullpen.Role) {
		r.Sandbox.CPU, r.Sandbox.Memory = 0.5, "1Gi" // the one test node is shared with other tests
	})
	since := o.m.Office.Hub().Last()
	o.say(0, "@engineer please write a script hello.sh in your workspace, run it, and post its output here")
	checkCLITurn(t, o, eng, since, "Bash", p)

	// The CLI ran in the workspace's Pod, with the CLIs' claim read-only
	// and its init listening for the bridge, and nothing else left
	// running there.
	id := o.workspace(eng)
	pod, err := env.Client.CoreV1().Pods(env.Namespace).Get(t.Context(), "bullpen-"+strings.TrimPrefix(id, "sb_"), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the workspace's pod: %v", err)
	}
	claimed, bridged := false, false
	for _, v := range pod.Spec.Volumes {
		claimed = claimed || v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim && v.PersistentVolumeClaim.ReadOnly
	}
	for _, e := range pod.Spec.Containers[0].Env {
		bridged = bridged || e.Name == podinit.BridgeEnv && e.Value == fmt.Sprint(bullpen.CLIBridgePort)
	}
	if !claimed || !bridged || pod.Labels[kube.LabelOffice] == "" {
		t.Fatalf("the workspace's pod: CLIs claim read-only %v, bridge port %v, labels %v", claimed, bridged, pod.Labels)
	}
	if r := o.inSandbox(eng, "", "sh", "-c", "touch /opt/bullpen/clis/x 2>&1; echo $?"); !strings.Contains(string(r.Stdout), "Read-only") {
		t.Fatalf("the CLIs' claim is writable from the sandbox: %q", r.Stdout)
	}
}
