package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Limits are the operator's default limits for sandboxes whose spec
// leaves them out; zero fields keep the library's defaults.
type Limits struct {
	CPU          float64
	MemoryBytes  int64
	Pids         int64
	NoFile       int64
	DiskBytes    int64
	Inodes       int64
	DiskQuotaOff bool
	// InitPool is Config.InitPool: nil keeps the default, 0 turns the
	// pool of pre-started inits off.
	InitPool *int
}

// Apply copies the limits into a Config.
func (l Limits) Apply(c *Config) {
	c.DefaultCPU, c.DefaultMemoryBytes, c.DefaultPids, c.DefaultNoFile = l.CPU, l.MemoryBytes, l.Pids, l.NoFile
	c.DefaultDiskBytes, c.DefaultInodes, c.DiskQuotaOff = l.DiskBytes, l.Inodes, l.DiskQuotaOff
	if l.InitPool != nil {
		c.InitPool = new(*l.InitPool)
	}
}

// RegisterFlags registers the limit flags on fs, each falling back to its
// environment variable (BULLPEN_ and the flag's name in capitals) read
// through getenv. The caller parses fs, then calls the returned func: it
// reports environment values that did not parse, naming the variable.
func (l *Limits) RegisterFlags(fs *flag.FlagSet, getenv func(string) string) func() error {
	var errs []error
	for _, f := range []struct {
		name, usage string
		set         func(string) error
	}{
		{"sandbox-default-cpu", "cores per sandbox (default 1)", floatFlag(&l.CPU)},
		{"sandbox-default-memory", "memory per sandbox, e.g. 512Mi (default 512Mi)", sizeFlag(&l.MemoryBytes)},
		{"sandbox-default-pids", "tasks per sandbox (default 256)", intFlag(&l.Pids)},
		{"sandbox-default-nofile", "open files per sandbox process (default 1024)", intFlag(&l.NoFile)},
		{"sandbox-default-disk", "writable disk per sandbox, e.g. 2Gi (default 1Gi)", sizeFlag(&l.DiskBytes)},
		{"sandbox-default-inodes", "inodes of that disk (default 65536)", intFlag(&l.Inodes)},
		{"sandbox-init-pool", fmt.Sprintf("sandbox inits kept started ahead of creates; 0 turns the pool off (default %d)", DefaultInitPool), poolFlag(&l.InitPool)},
		{"sandbox-disk-quota", "on, or off where the host cannot enforce disk quotas (no loop devices or mkfs.ext4): sandboxes then show \"unbounded disk\"", onOffFlag(&l.DiskQuotaOff)},
	} {
		env := "BULLPEN_" + strings.ToUpper(strings.ReplaceAll(f.name, "-", "_"))
		fs.Func(f.name, f.usage+" (env "+env+")", f.set)
		if v := getenv(env); v != "" {
			if err := f.set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", env, err))
			}
		}
	}
	return func() error { return errors.Join(errs...) }
}

func poolFlag(p **int) func(string) error {
	return func(s string) error {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > 64 {
			return fmt.Errorf("%q is not a number of inits from 0 to 64", s)
		}
		*p = &v
		return nil
	}
}

func floatFlag(p *float64) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) {
			return fmt.Errorf("%q is not a number of cores", s)
		}
		*p = v
		return nil
	}
}

func intFlag(p *int64) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("%q is not a positive whole number", s)
		}
		*p = v
		return nil
	}
}

func onOffFlag(off *bool) func(string) error {
	return func(s string) error {
		switch strings.ToLower(s) {
		case "on":
			*off = false
		case "off":
			*off = true
		default:
			return fmt.Errorf("%q: want on or off", s)
		}
		return nil
	}
}

func sizeFlag(p *int64) func(string) error {
	return func(s string) error {
		v, err := ParseSize(s)
		if err != nil {
			return err
		}
		*p = v
		return nil
	}
}

// sizeUnits are the suffixes ParseSize accepts (as the REST API does):
// binary Ki/Mi/Gi/Ti, decimal k/M/G/T, case-insensitive.
var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"ki", 1 << 10}, {"mi", 1 << 20}, {"gi", 1 << 30}, {"ti", 1 << 40},
	{"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12},
}

// ParseSize reads a byte size such as 512Mi, 2Gi or 1.5G; it refuses
// negative sizes and sizes beyond 2^62 bytes.
func ParseSize(s string) (int64, error) {
	t, mult := strings.ToLower(strings.TrimSpace(s)), 1.0
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = num, u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*mult > 1<<62 {
		return 0, fmt.Errorf("%q is not a size such as 512Mi or 2Gi", s)
	}
	return int64(v * mult), nil
}
