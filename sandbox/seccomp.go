package sandbox

import (
	"fmt"
	"sync"

	"github.com/bullpen-hq/bullpen/sandbox/sbinit"
	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompFilter returns the commands' seccomp filter, assembled once, in
// the form sbinit.Config.Seccomp carries it to init: the init binary stays
// free of the assembler and its syscall tables.
func seccompFilter() ([]byte, error) {
	filterOnce.Do(func() {
		policy, err := seccompPolicy()
		if err != nil {
			filterErr = err
			return
		}
		insts, err := policy.Assemble()
		if err != nil {
			filterErr = err
			return
		}
		raw, err := bpf.Assemble(insts)
		if err != nil {
			filterErr = err
			return
		}
		prog := make([]unix.SockFilter, len(raw))
		for i, r := range raw {
			prog[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
		}
		filterBytes = sbinit.EncodeFilter(prog)
	})
	if filterErr != nil {
		return nil, fmt.Errorf("sandbox: seccomp filter: %w", filterErr)
	}
	return filterBytes, nil
}

var (
	filterOnce  sync.Once
	filterBytes []byte
	filterErr   error
)

// nsCloneFlags are the clone flags that create namespaces; clone with any
// of them is refused, as in Docker's default profile for processes without
// CAP_SYS_ADMIN.
const nsCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// seccompPolicy is an allow-list modelled on Docker's default profile for a
// container without added capabilities: everything not listed fails with
// EPERM. Differences from Docker's: ptrace, process_vm_readv/writev,
// personality changes and io_uring are refused; clone3 fails with ENOSYS
// so libc falls back to clone, whose flags can be checked.
func seccompPolicy() (*seccomp.Policy, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range allowedSyscalls {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	p := &seccomp.Policy{
		DefaultAction: seccomp.ActionErrno,
		Syscalls: []seccomp.SyscallGroup{
			{Names: names, Action: seccomp.ActionAllow},
			{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
			{NamesWithCondtions: []seccomp.NameWithConditions{
				{Name: "clone", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.BitsNotSet, Value: nsCloneFlags}}},
				// socket: everything but AF_VSOCK (40).
				{Name: "socket", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.NotEqual, Value: 40}}},
				// personality: only the harmless queries/values Docker allows.
				{Name: "personality", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.Equal, Value: 0}}},
				{Name: "personality", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.Equal, Value: 8}}},
				{Name: "personality", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.Equal, Value: 0xffffffff}}},
			}, Action: seccomp.ActionAllow},
		},
	}
	return p, nil
}

// allowedSyscalls is Docker's default allow-list (moby profiles/seccomp,
// unconditional part) minus ptrace, process_vm_*, io_uring_* and the
// 32-bit-only names.
var allowedSyscalls = []string{
	"accept", "accept4", "access", "adjtimex", "alarm", "arch_prctl", "bind", "brk", "cachestat",
	"capget", "capset", "chdir", "chmod", "chown", "clock_adjtime", "clock_getres",
	"clock_gettime", "clock_nanosleep", "close", "close_range", "connect", "copy_file_range",
	"creat", "dup", "dup2", "dup3", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait",
	"epoll_pwait2", "epoll_wait", "eventfd", "eventfd2", "execve", "execveat", "exit",
	"exit_group", "faccessat", "faccessat2", "fadvise64", "fallocate", "fanotify_mark", "fchdir",
	"fchmod", "fchmodat", "fchmodat2", "fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr",
	"flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstatfs", "fsync",
	"ftruncate", "futex", "futex_requeue", "futex_wait", "futex_waitv", "futex_wake", "futimesat",
	"getcpu", "getcwd", "getdents", "getdents64", "getegid", "geteuid", "getgid", "getgroups",
	"getitimer", "getpeername", "getpgid", "getpgrp", "getpid", "getppid", "getpriority",
	"getrandom", "getresgid", "getresuid", "getrlimit", "get_robust_list", "getrusage", "getsid",
	"getsockname", "getsockopt", "get_thread_area", "gettid", "gettimeofday", "getuid",
	"getxattr", "inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch",
	"io_cancel", "ioctl", "io_destroy", "io_getevents", "io_pgetevents", "ioprio_get",
	"ioprio_set", "io_setup", "io_submit", "kill", "landlock_add_rule",
	"landlock_create_ruleset", "landlock_restrict_self", "lchown", "lgetxattr", "link", "linkat",
	"listen", "listxattr", "llistxattr", "lremovexattr", "lseek", "lsetxattr", "lstat",
	"madvise", "map_shadow_stack", "membarrier", "memfd_create", "memfd_secret", "mincore",
	"mkdir", "mkdirat", "mknod", "mknodat", "mlock", "mlock2", "mlockall", "mmap", "mprotect",
	"mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink",
	"mremap", "mseal", "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock", "munlockall",
	"munmap", "name_to_handle_at", "nanosleep", "newfstatat", "open", "openat", "openat2",
	"pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc", "pkey_free",
	"pkey_mprotect", "poll", "ppoll", "prctl", "pread64", "preadv", "preadv2", "prlimit64",
	"process_mrelease", "pselect6", "pwrite64", "pwritev", "pwritev2", "read", "readahead",
	"readlink", "readlinkat", "readv", "recvfrom", "recvmmsg", "recvmsg", "remap_file_pages",
	"removexattr", "rename", "renameat", "renameat2", "restart_syscall", "rmdir", "rseq",
	"rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn",
	"rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo", "sched_getaffinity",
	"sched_getattr", "sched_getparam", "sched_get_priority_max", "sched_get_priority_min",
	"sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity", "sched_setattr",
	"sched_setparam", "sched_setscheduler", "sched_yield", "seccomp", "select", "semctl",
	"semget", "semop", "semtimedop", "sendfile", "sendmmsg", "sendmsg", "sendto", "setfsgid",
	"setfsuid", "setgid", "setgroups", "setitimer", "setpgid", "setpriority", "setregid",
	"setresgid", "setresuid", "setreuid", "setrlimit", "set_robust_list", "setsid", "setsockopt",
	"set_thread_area", "set_tid_address", "setuid", "setxattr", "shmat", "shmctl", "shmdt",
	"shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4", "socketpair", "splice", "stat",
	"statfs", "statx", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo",
	"tee", "tgkill", "time", "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime",
	"timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime", "times", "tkill",
	"truncate", "umask", "uname", "unlink", "unlinkat", "utime", "utimensat", "utimes", "vfork",
	"vmsplice", "wait4", "waitid", "write", "writev",
}
