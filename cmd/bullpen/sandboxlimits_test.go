package main

import (
	"io"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen/sandbox"
)

func TestSandboxLimitFlags(t *testing.T) {
	t.Setenv("BULLPEN_SANDBOX_DEFAULT_PIDS", "100")
	t.Setenv("BULLPEN_SANDBOX_DEFAULT_DISK", "1Gi") // the flag below wins
	m := NewMain(io.Discard, io.Discard)
	err := m.ParseFlags("serve", []string{"--sandbox-default-disk=2Gi", "--sandbox-default-cpu=0.5",
		"--sandbox-default-memory=256Mi", "--sandbox-default-nofile=4096", "--sandbox-default-inodes=100000",
		"--sandbox-disk-quota=off"})
	if err != nil {
		t.Fatal(err)
	}
	want := sandbox.Limits{CPU: 0.5, MemoryBytes: 256 << 20, Pids: 100, NoFile: 4096, DiskBytes: 2 << 30, Inodes: 100000, DiskQuotaOff: true}
	if m.SandboxLimits != want {
		t.Fatalf("limits = %+v, want %+v", m.SandboxLimits, want)
	}
	var c sandbox.Config
	m.SandboxLimits.Apply(&c)
	if c.DefaultCPU != 0.5 || c.DefaultDiskBytes != 2<<30 || c.DefaultPids != 100 || c.DefaultNoFile != 4096 ||
		c.DefaultMemoryBytes != 256<<20 || c.DefaultInodes != 100000 || !c.DiskQuotaOff {
		t.Fatalf("config = %+v", c)
	}
	for _, tc := range []struct {
		name, env, val string
		args           []string
	}{
		{name: "bad env size", env: "BULLPEN_SANDBOX_DEFAULT_MEMORY", val: "lots"},
		{name: "bad env switch", env: "BULLPEN_SANDBOX_DISK_QUOTA", val: "maybe"},
		{name: "bad flag", args: []string{"--sandbox-default-pids=-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(tc.env, tc.val)
			}
			err := NewMain(io.Discard, io.Discard).ParseFlags("serve", tc.args)
			if err == nil || (tc.env != "" && !strings.Contains(err.Error(), tc.env)) {
				t.Fatalf("ParseFlags = %v, want an error naming the input", err)
			}
		})
	}
}
