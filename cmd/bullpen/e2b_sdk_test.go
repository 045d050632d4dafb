package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// e2bSDKVersion is the official E2B JS SDK the compatibility test drives,
// installed by scripts/test.sh into .cache/e2b@VERSION (npm --prefix).
const e2bSDKVersion = "2.51.0"

// e2bSDK returns the SDK's module entry: $BULLPEN_E2B_SDK, else the
// repo's .cache install.
func e2bSDK(t *testing.T) string {
	if p := os.Getenv("BULLPEN_E2B_SDK"); p != "" {
		return p
	}
	p, _ := filepath.Abs(filepath.Join("..", "..", ".cache", "e2b@"+e2bSDKVersion, "node_modules", "e2b", "dist", "index.mjs"))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the e2b SDK is not installed: npm install --prefix .cache/e2b@%s e2b@%s (scripts/test.sh does)", e2bSDKVersion, e2bSDKVersion)
	}
	return p
}

// mintE2BKey mints an E2B key through the native API.
func mintE2BKey(t *testing.T, r runningMain) string {
	t.Helper()
	req, _ := http.NewRequest("POST", r.m.URL()+"api/v1/e2b/keys", nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Key string `json:"key"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusCreated || !strings.HasPrefix(v.Key, "e2b_") {
		t.Fatalf("mint: %d %v %q", resp.StatusCode, err, v.Key)
	}
	return v.Key
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
	key := mintE2BKey(t, r)
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
