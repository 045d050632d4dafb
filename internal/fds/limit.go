package fds

import (
	"fmt"
	"os"
	"syscall"
)

// RaiseLimit raises the process's soft limit of open descriptors
// (RLIMIT_NOFILE) to its hard limit and returns the new soft limit. A
// server holds a few descriptors per connection, per sandbox and per
// agent socket; the usual soft default of 1,024 is far below what the
// hard limit allows.
func RaiseLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("fds: read the descriptor limit: %w", err)
	}
	if lim.Cur >= lim.Max {
		return lim.Cur, nil
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("fds: raise the descriptor limit to %d: %w", lim.Max, err)
	}
	return lim.Cur, nil
}

// Usage is the process's open descriptors against its soft limit.
type Usage struct {
	Open  int `json:"open"`
	Limit int `json:"limit"`
}

// Fraction is Open over Limit (0 without a limit).
func (u Usage) Fraction() float64 {
	if u.Limit <= 0 {
		return 0
	}
	return float64(u.Open) / float64(u.Limit)
}

// Count returns the open descriptors of this process (the entries of
// /proc/self/fd) and its soft limit.
func Count() (Usage, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return Usage{}, fmt.Errorf("fds: read the descriptor limit: %w", err)
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return Usage{}, fmt.Errorf("fds: count descriptors: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return Usage{}, fmt.Errorf("fds: count descriptors: %w", err)
	}
	// The directory itself holds one descriptor while it is read.
	return Usage{Open: len(names) - 1, Limit: int(min(lim.Cur, 1<<31-1))}, nil
}
