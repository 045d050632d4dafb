package sbinit

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// confineThread puts the calling OS thread into a new cgroup namespace
// and applies no_new_privs, landlock (best effort) and the seccomp filter to
// it; processes forked from it inherit all four. The host has moved the
// thread into the commands' cgroup, which so becomes the root of the
// commands' view: /proc/self/cgroup shows "/" instead of host paths.
func confineThread(filter []unix.SockFilter) error {
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		return wrap("cgroup namespace", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return wrap("no_new_privs", err)
	}
	if err := landlockThread(); err != nil {
		return wrap("landlock", err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// Flags 0: this thread only (no TSYNC).
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return wrap("seccomp", errno)
	}
	return nil
}
