package sandbox

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

func mountCount(t *testing.T, m *Manager, sub string) int {
	return strings.Count(nsMountinfo(t, m), sub)
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	parent := "bullpen-sandbox-badinput-" + itoa(os.Getpid())
	e := newEnv(t, func(c *Config) { c.CgroupParent = parent })
	t.Cleanup(func() {
		_ = e.m.TerminateAll(context.Background())
		for _, d := range e.m.cg.dirs("") {
			os.Remove(d)
		}
	})
	ctx := context.Background()
	huge := map[string]string{}
	for i := 0; i < 400; i++ {
		huge["K"+itoa(i)] = strings.Repeat("v", 1000)
	}
	cases := []struct {
		name string
		spec Spec
		code string
	}{
		{"negative cpu", Spec{CPU: -1}, bullpen.EINVALID},
		{"cpu over host", Spec{CPU: 1000}, bullpen.EINVALID},
		{"negative memory", Spec{MemoryBytes: -5}, bullpen.EINVALID},
		{"tiny memory", Spec{MemoryBytes: 1024}, bullpen.EINVALID},
		{"memory over host", Spec{MemoryBytes: hostMemory() + 1<<30}, bullpen.EINVALID},
		{"disk over host", Spec{DiskBytes: e.m.hostDisk() + 1<<30}, bullpen.EINVALID},
		{"negative pids", Spec{Pids: -1}, bullpen.EINVALID},
		{"negative disk", Spec{DiskBytes: -1}, bullpen.EINVALID},
		{"tiny disk", Spec{DiskBytes: 4096}, bullpen.EINVALID},
		{"negative timeout", Spec{Timeout: -time.Second}, bullpen.EINVALID},
		{"tiny idle timeout", Spec{IdleTimeout: time.Millisecond}, bullpen.EINVALID},
		{"bad idle action", Spec{IdleAction: "explode"}, bullpen.EINVALID},
		{"bad name", Spec{Name: "../etc"}, bullpen.EINVALID},
		{"id-like name", Spec{Name: "sb_123"}, bullpen.EINVALID},
		{"bad tag", Spec{Tags: map[string]string{"a b": "c"}}, bullpen.EINVALID},
		{"relative workdir", Spec{Workdir: "tmp"}, bullpen.EINVALID},
		{"unknown image", Spec{Image: "no-such-image:latest"}, bullpen.ENOTFOUND},
		{"huge env", Spec{Env: huge}, bullpen.ETOOLARGE},
		{"bad env key", Spec{Env: map[string]string{"A=B": "c"}}, bullpen.EINVALID},
		{"NUL in env", Spec{Env: map[string]string{"A": "b\x00c"}}, bullpen.EINVALID},
		{"bad port", Spec{Ports: []int{70000}}, bullpen.EINVALID},
		{"bad cidr", Spec{Network: NetworkPolicy{Allow: []string{"10.0.0.300/8"}}}, bullpen.EINVALID},
		{"ipv6 cidr", Spec{Network: NetworkPolicy{Allow: []string{"::1/128"}}}, bullpen.EUNSUPPORTED},
		{"bad domain", Spec{Network: NetworkPolicy{Domains: []string{"exa mple.com"}}}, bullpen.EINVALID},
		{"duplicate secret", Spec{Secrets: []Secret{{Name: "A"}, {Name: "A"}}}, bullpen.EINVALID},
		{"relative secret file", Spec{Secrets: []Secret{{Name: "A", File: "x"}}}, bullpen.EINVALID},
		{"bad secret name", Spec{Secrets: []Secret{{Name: "1-A"}}}, bullpen.EINVALID},
	}
	mounts := mountCount(t, e.m, e.m.runDir)
	for _, c := range cases {
		_, err := e.m.Create(ctx, c.spec)
		if !bullpen.IsCode(err, c.code) {
			t.Errorf("%s: got %v, want %s", c.name, err, c.code)
		}
		if bullpen.ErrorMessage(err) == "internal error" {
			t.Errorf("%s: unclear message", c.name)
		}
	}
	// Failures late in provisioning (after the overlay and disk are
	// mounted) must undo everything.
	_, err := e.m.Create(ctx, Spec{DiskBytes: 64 << 20, Secrets: []Secret{{Name: "A", Value: "v", File: "/etc/passwd/x"}}})
	if err == nil {
		t.Fatal("secret below a file: no error")
	}
	if ents, _ := os.ReadDir(e.m.sbDir); len(ents) != 0 {
		t.Fatalf("state dirs left: %v", ents)
	}
	e.waitPool()
	pooled := e.pooled()
	if ents, _ := os.ReadDir(e.m.runDir); len(ents) != len(pooled) {
		t.Fatalf("run dir entries left: %v (pooled inits: %v)", ents, pooled)
	}
	if n := mountCount(t, e.m, e.m.runDir); n != mounts {
		t.Fatalf("mounts: %d before, %d after", mounts, n)
	}
	for _, d := range e.m.cg.dirs("") {
		ents, _ := os.ReadDir(d)
		for _, en := range ents {
			if _, ok := pooled[en.Name()]; en.IsDir() && !ok {
				t.Fatalf("cgroup left: %s/%s", d, en.Name())
			}
		}
	}
	if l, _ := e.m.List(ctx, nil); len(l) != 0 {
		t.Fatalf("sandboxes listed: %v", l)
	}

	// Bad exec and file requests on a good sandbox.
	id := e.create(Spec{}).ID
	for _, req := range []ExecRequest{{}, {Cmd: []string{""}}, {Cmd: []string{"a\x00b"}},
		{Cmd: []string{"true"}, Timeout: -1}, {Cmd: []string{"true"}, Env: map[string]string{"=": "x"}},
		{Cmd: []string{"true"}, Env: huge}, {Cmd: []string{"true"}, Workdir: "/nonexistent"}} {
		if _, err := e.m.Run(ctx, id, req); err == nil {
			t.Errorf("exec %+v: no error", req.Cmd)
		}
	}
	_, err = e.m.Exec(ctx, "sb_ffffffffffffffff", ExecRequest{Cmd: []string{"true"}})
	wantCode(t, err, bullpen.ENOTFOUND)
	for _, p := range []string{"", "a\x00b", strings.Repeat("a", 5000)} {
		if _, err := e.m.ReadFile(ctx, id, p); !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Errorf("ReadFile(%q): %v", p, err)
		}
	}
	wantCode(t, e.m.Mkdir(ctx, id, "/", false), bullpen.ECONFLICT)
	_, err = e.m.PublishPort(ctx, id, 0)
	wantCode(t, err, bullpen.EINVALID)
	wantCode(t, e.m.RevokePort(ctx, id, 1234), bullpen.ENOTFOUND)
	_, err = e.m.Snapshot(ctx, id, "")
	wantCode(t, err, bullpen.EINVALID)
	wantCode(t, e.m.SnapshotMemory(ctx, id), bullpen.EUNSUPPORTED)
	e.sh(id, "true") // the sandbox is unharmed
	_, err = New(ctx, Config{StateDir: "relative"})
	wantCode(t, err, bullpen.EINVALID)
}
