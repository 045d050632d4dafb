package sandbox

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Library defaults of Config's limits: every sandbox is bounded unless the
// operator raises them.
const (
	defaultMemoryBytes = 512 << 20
	defaultPids        = 256
	defaultCPU         = 1.0
	defaultNoFile      = 1024
	defaultDiskBytes   = 1 << 30
	defaultInodes      = 65536
	minNoFile          = 64
	maxNoFile          = 1 << 20
	bytesPerInode      = 4096 // default inodes on small disks: one per 4 KiB
	minBytesPerInode   = 1024 // ext4's floor
)

// setLimitDefaults fills in and checks Config's default limits.
func setLimitDefaults(c *Config) error {
	def := func(p *int64, v int64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.DefaultMemoryBytes, defaultMemoryBytes)
	def(&c.DefaultPids, defaultPids)
	def(&c.DefaultNoFile, defaultNoFile)
	def(&c.DefaultDiskBytes, defaultDiskBytes)
	def(&c.DefaultInodes, defaultInodes)
	if c.DefaultCPU == 0 {
		c.DefaultCPU = min(defaultCPU, float64(runtime.NumCPU()))
	}
	switch {
	case c.DefaultMemoryBytes < minMemoryBytes:
		return invalid("Config.DefaultMemoryBytes must be at least %d MiB", minMemoryBytes>>20)
	case c.DefaultPids < 8:
		return invalid("Config.DefaultPids must be at least 8")
	case c.DefaultCPU < 0.01 || c.DefaultCPU != c.DefaultCPU:
		return invalid("Config.DefaultCPU must be at least 0.01 cores")
	case c.DefaultNoFile < minNoFile || c.DefaultNoFile > maxNoFile:
		return invalid("Config.DefaultNoFile must be between %d and %d", minNoFile, maxNoFile)
	case c.DefaultDiskBytes < minDiskBytes:
		return invalid("Config.DefaultDiskBytes must be at least %d MiB", minDiskBytes>>20)
	case c.DefaultInodes < 1024:
		return invalid("Config.DefaultInodes must be at least 1024")
	}
	c.DefaultCPU = min(c.DefaultCPU, float64(runtime.NumCPU()))
	return nil
}

// fillLimits applies the Config defaults to a validated spec's zero limits.
func (m *Manager) fillLimits(sp *Spec) error {
	c := &m.cfg
	if sp.CPU == 0 {
		sp.CPU = c.DefaultCPU
	}
	if sp.MemoryBytes == 0 {
		sp.MemoryBytes = c.DefaultMemoryBytes
	}
	if sp.Pids == 0 {
		sp.Pids = c.DefaultPids
	}
	if sp.NoFile == 0 {
		sp.NoFile = c.DefaultNoFile
	}
	if sp.DiskBytes == 0 && !c.DiskQuotaOff {
		sp.DiskBytes = c.DefaultDiskBytes
	}
	switch {
	case sp.NoFile < minNoFile || sp.NoFile > maxNoFile:
		return invalid("nofile must be between %d and %d", minNoFile, maxNoFile)
	case sp.Inodes < 0:
		return invalid("limits must not be negative")
	case sp.Inodes > 0 && sp.DiskBytes == 0:
		return invalid("inodes need a disk quota (disk quotas are off on this host)")
	case sp.DiskBytes == 0:
		return nil
	case sp.Inodes == 0:
		sp.Inodes = m.defaultInodes(sp.DiskBytes)
	case sp.Inodes < 1024 || sp.Inodes > sp.DiskBytes/minBytesPerInode:
		return invalid("inodes must be between 1024 and one per KiB of disk (%d)", sp.DiskBytes/minBytesPerInode)
	}
	return nil
}

// setNoFile sets RLIMIT_NOFILE (soft and hard) of a sandbox's init, which
// every command inherits; nothing in the sandbox may raise a hard limit.
// 0 (metadata from before NoFile existed) means the Config default.
func (m *Manager) setNoFile(pid int, n int64) error {
	if n == 0 {
		n = m.cfg.DefaultNoFile
	}
	lim := unix.Rlimit{Cur: uint64(n), Max: uint64(n)}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		return fmt.Errorf("sandbox: limit open files: %w", err)
	}
	return nil
}
