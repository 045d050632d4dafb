package sandbox

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"512Mi", 512 << 20}, {"2gi", 2 << 30}, {"1.5G", 1_500_000_000}, {" 10k ", 10_000}, {"4096", 4096}, {"1Ti", 1 << 40},
	} {
		if got, err := ParseSize(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "lots", "-1Mi", "1Qi", "9999999Ti"} {
		if got, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, got)
		}
	}
}

// The flags win over the environment; bad environment values are reported
// naming the variable, bad flags by Parse; Apply fills every field.
func TestLimitsRegisterFlags(t *testing.T) {
	env := map[string]string{"BULLPEN_SANDBOX_DEFAULT_PIDS": "100", "BULLPEN_SANDBOX_DEFAULT_DISK": "1Gi"}
	var l Limits
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	check := l.RegisterFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse([]string{"--sandbox-default-disk=2Gi", "--sandbox-default-cpu=0.5", "--sandbox-default-memory=256Mi",
		"--sandbox-default-nofile=4096", "--sandbox-default-inodes=100000", "--sandbox-disk-quota=off", "--sandbox-init-pool=0"}); err != nil {
		t.Fatal(err)
	}
	if err := check(); err != nil {
		t.Fatal(err)
	}
	if l.InitPool == nil || *l.InitPool != 0 {
		t.Fatalf("init pool = %v, want 0 (off)", l.InitPool)
	}
	var c Config
	l.Apply(&c)
	if c.InitPool == nil || *c.InitPool != 0 {
		t.Fatalf("config init pool = %v, want 0 (off)", c.InitPool)
	}
	l.InitPool = nil
	want := Limits{CPU: 0.5, MemoryBytes: 256 << 20, Pids: 100, NoFile: 4096, DiskBytes: 2 << 30, Inodes: 100000, DiskQuotaOff: true}
	if l != want {
		t.Fatalf("limits = %+v, want %+v", l, want)
	}
	if c.DefaultCPU != 0.5 || c.DefaultDiskBytes != 2<<30 || c.DefaultPids != 100 || c.DefaultNoFile != 4096 ||
		c.DefaultMemoryBytes != 256<<20 || c.DefaultInodes != 100000 || !c.DiskQuotaOff {
		t.Fatalf("config = %+v", c)
	}
	for _, tt := range []struct{ env, val string }{
		{"BULLPEN_SANDBOX_DEFAULT_MEMORY", "lots"}, {"BULLPEN_SANDBOX_DISK_QUOTA", "maybe"},
		{"BULLPEN_SANDBOX_DEFAULT_CPU", "-1"}, {"BULLPEN_SANDBOX_DEFAULT_INODES", "1.5"},
		{"BULLPEN_SANDBOX_INIT_POOL", "-1"}, {"BULLPEN_SANDBOX_INIT_POOL", "lots"},
	} {
		var l Limits
		check := l.RegisterFlags(flag.NewFlagSet("t", flag.ContinueOnError), func(k string) string {
			if k == tt.env {
				return tt.val
			}
			return ""
		})
		if err := check(); err == nil || !strings.Contains(err.Error(), tt.env) {
			t.Errorf("%s=%q: check = %v, want an error naming it", tt.env, tt.val, err)
		}
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	(&Limits{}).RegisterFlags(fs, func(string) string { return "" })
	if err := fs.Parse([]string{"--sandbox-default-pids=-3"}); err == nil {
		t.Error("--sandbox-default-pids=-3 was accepted")
	}
}
