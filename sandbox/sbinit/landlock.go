package sbinit

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock is applied with raw syscalls to one thread (the spawner); the
// go-landlock module restricts every thread of the process through libpsx,
// which init does not want (its file and control threads stay unconfined).

type landlockRulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

type landlockPathBeneath struct {
	allowed  uint64
	parentFd int32
	_        [4]byte // the kernel struct is packed; it reads 12 bytes
}

const (
	llMakeChar  = 1 << 6
	llMakeBlock = 1 << 11
)

// landlockABI returns the kernel's landlock ABI version, 0 if none.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// landlockThread restricts the calling thread (best effort, by ABI): all
// file access stays allowed under "/" (the sandbox root) except creating
// device nodes, and from ABI 6 on, signals and abstract unix sockets are
// scoped to the sandbox's own processes, so nothing can signal or connect
// to init. Namespaces and the seccomp filter do the heavy lifting; this is
// defence in depth. A kernel without landlock is not an error.
func landlockThread() error {
	abi := landlockABI()
	if abi < 1 {
		return nil
	}
	fs := uint64(1<<13 - 1) // ABI 1: EXECUTE .. MAKE_SYM
	if abi >= 2 {
		fs |= 1 << 13 // REFER
	}
	if abi >= 3 {
		fs |= 1 << 14 // TRUNCATE
	}
	if abi >= 5 {
		fs |= 1 << 15 // IOCTL_DEV
	}
	attr := landlockRulesetAttr{handledFS: fs}
	size := unsafe.Sizeof(attr)
	if abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	} else {
		size = 16 // handled_access_net only (ABI 4, 5) or ignored
		if abi < 4 {
			size = 8
		}
	}
	rfd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return errno
	}
	defer unix.Close(int(rfd))
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	rule := landlockPathBeneath{allowed: fs &^ (llMakeChar | llMakeBlock), parentFd: int32(root)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, rfd, unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return errno
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, rfd, 0, 0); errno != 0 {
		if errors.Is(errno, unix.ENOSYS) || errors.Is(errno, unix.EOPNOTSUPP) {
			return nil
		}
		return errno
	}
	return nil
}
