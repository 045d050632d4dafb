package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen/cli"
)

// e2bSDKVersion is the official E2B JS SDK the compatibility test drives,
// installed by scripts/test.sh into .cache/e2b@VERSION (npm --prefix).
const e2bSDKVersion = "2.51.0"

// e2bSDK returns the SDK's module entry: $BULLPEN_E2B_SDK, else the
// repo's .cache install.
func e2bSDK(t testing.TB) string {
	if p := os.Getenv("BULLPEN_E2B_SDK"); p != "" {
		return p
	}
	p, _ := filepath.Abs(filepath.Join("..", "..", ".cache", "e2b@"+e2bSDKVersion, "node_modules", "e2b", "dist", "index.mjs"))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the e2b SDK is not installed: npm install --prefix .cache/e2b@%s e2b@%s (scripts/test.sh does)", e2bSDKVersion, e2bSDKVersion)
	}
	return p
}

// e2bEnvVerb runs `bullpen e2b env` against r with the given environment
// and returns the variables its export lines set.
func e2bEnvVerb(t testing.TB, r runningMain, environ map[string]string) map[string]string {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), []string{"e2b", "env", "--server", r.m.URL(), "--token", r.token},
		cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return environ[k] }})
	if code != 0 {
		t.Fatalf("bullpen e2b env: exit %d: %s", code, errb.String())
	}
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || !strings.HasPrefix(line, "export ") {
			t.Fatalf("not an export line: %q", line)
		}
		vars[k] = v
	}
	return vars
}

// e2bEnv is the environment the SDK runs with against r.
func e2bEnv(r runningMain, key string) []string {
	base := strings.TrimSuffix(r.m.URL(), "/")
	return append(os.Environ(), "E2B_API_URL="+base+"/e2b", "E2B_SANDBOX_URL="+base+"/e2b/sandbox", "E2B_API_KEY="+key,
		"BULLPEN_URL="+r.m.URL(), "BULLPEN_TOKEN="+r.token)
}

// The official e2b SDK, unchanged, drives the whole E2B surface of a real
// server with real sandboxes: create, commands (streamed, background,
// stdin, SIGTERM, SIGKILL), PTY with resize, files up and down (100 MB
// by SHA-256), make dir, move, list, stat, watch, list with metadata and
// state filters, timeout, pause and resume with files kept, metrics,
// published ports, bad input (unknown template, bad key shape, foreign
// sandbox id: E2B's errors, nothing changes) and kill. e2b/testdata/sdk.mjs
// checks each result against the native API.
func TestE2BSDK(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sandboxes need root")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	sdk := e2bSDK(t)
	r := startMainWith(t)
	// bullpen e2b env mints a key, then keeps a working one.
	vars := e2bEnvVerb(t, r, nil)
	key := vars["E2B_API_KEY"]
	base := strings.TrimSuffix(r.m.URL(), "/")
	if vars["E2B_API_URL"] != base+"/e2b" || vars["E2B_SANDBOX_URL"] != base+"/e2b/sandbox" || !strings.HasPrefix(key, "e2b_") {
		t.Fatalf("bullpen e2b env: %v", vars)
	}
	if again := e2bEnvVerb(t, r, map[string]string{"E2B_API_KEY": key}); again["E2B_API_KEY"] != key {
		t.Fatalf("a working key was replaced: %v", again)
	}
	if other := e2bEnvVerb(t, r, map[string]string{"E2B_API_KEY": "e2b_" + strings.Repeat("0", 40)}); other["E2B_API_KEY"] == key || !strings.HasPrefix(other["E2B_API_KEY"], "e2b_") {
		t.Fatalf("a key the server does not know was kept: %v", other)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("..", "..", "e2b", "testdata", "sdk.mjs"))
	cmd.Env = append(e2bEnv(r, key), "E2B_SDK="+sdk, "RUN_ID=sdk-test")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Log(out.String())
	if err != nil || !strings.Contains(out.String(), "ALL OK") {
		t.Fatalf("the SDK run failed: %v", err)
	}
}

// BenchmarkE2BFirstOutput prints create → first command output through
// the official e2b SDK and through the native REST API, interleaved in
// one run against one server (p50 of BENCH_N, default 20, each), and
// their ratio (target ≤ 1.5).
func BenchmarkE2BFirstOutput(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("sandboxes need root")
	}
	sdk := e2bSDK(b)
	for i := 0; i < b.N; i++ {
		r := startMainWith(b)
		vars := e2bEnvVerb(b, r, nil)
		cmd := exec.Command("node", filepath.Join("..", "..", "e2b", "testdata", "bench.mjs"))
		cmd.Env = append(os.Environ(), "E2B_SDK="+sdk, "BULLPEN_URL="+r.m.URL(), "BULLPEN_TOKEN="+r.token,
			"E2B_API_URL="+vars["E2B_API_URL"], "E2B_SANDBOX_URL="+vars["E2B_SANDBOX_URL"], "E2B_API_KEY="+vars["E2B_API_KEY"])
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("bench.mjs: %v\n%s", err, out.String())
		}
		fmt.Print(out.String())
	}
}
