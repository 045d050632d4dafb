// Package sandbox runs isolated sandboxes for untrusted code on one Linux
// host, in pure Go and without a container daemon: create a sandbox with
// limits and a network policy, run commands in it with streamed output,
// read and write its files, pause, stop, snapshot and terminate it, and
// publish its ports on the host's loopback.
//
// # Use
//
//	func main() {
//		sandbox.MaybeRunInit() // first thing: the fallback init is this binary
//		m, err := sandbox.New(ctx, sandbox.Config{StateDir: "/var/lib/app/sandboxes"})
//		...
//		sb, err := m.Create(ctx, sandbox.Spec{MemoryBytes: 256 << 20, Timeout: time.Hour})
//		res, err := m.Run(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"python3", "-c", "print(1)"}})
//	}
//
// Each sandbox's PID 1 is an init process (package sandbox/sbinit). The
// Manager runs it from the dedicated binary cmd/bullpen-sandbox-init when
// it finds one (Config.InitPath, or bullpen-sandbox-init next to the
// running executable; make build puts it next to bin/bullpen), else it
// re-executes its own binary, which is why main calls MaybeRunInit. The
// dedicated binary is the one to deploy: a big server binary would run all
// its package initializers in every sandbox, and keep their memory.
//
// Tests that create sandboxes call MaybeRunInit from TestMain. Everything
// needs root on the host.
//
// # How a sandbox is built
//
// Create resolves the image into overlay lower layers (the built-in "host"
// image is a small skeleton: /etc/passwd with user sandbox, uid 1000,
// /home/sandbox, /tmp, ... plus read-only binds of the host's /usr and
// /etc/ssl, /etc/alternatives, /etc/ld.so.cache; merged-/usr symlinks such
// as /bin are replicated), mounts the overlay (upper and work directories in
// a size-limited ext4 loop image, or in StateDir when disk quotas are off) at
// RunDir/<hash>/<id>, makes cgroups, and starts the init binary as the
// sandbox's PID 1 in new user, pid, mount, net, uts and ipc namespaces. The
// Manager opens the init binary once, at New, and executes it through that
// handle (/proc/self/fd/N), so the path need not be reachable by the
// sandbox uids and is never mounted into a sandbox.
// Uid 0..65535 inside map to host ids IDMapBase.. (default 100000), so
// nothing in a sandbox runs as a host uid anyone else uses.
//
// A fresh Create usually skips starting init: the Manager keeps
// Config.InitPool (default 2) inits started ahead, each with its sandbox
// id, its cgroups (default limits) and its control socket (pool.go). A
// pooled init pivots at once into a staging tmpfs that holds only what it
// will need (a recursive bind of RunDir/<hash>, the host binds' sources,
// six /dev nodes, /proc), so it pins none of the host's other mounts, and
// waits. RunDir/<hash> is a shared mount (in the Manager's mount
// namespace, below), so the overlay the Create mounts there later reaches
// the pooled init by propagation; Create then
// writes the sandbox's limits if they differ, and the assignment (id,
// hostname, host binds or not) on the init's go-ahead pipe. The pool
// refills once Creates pause; Start of a stopped sandbox, and a Create
// that finds the pool empty, start an init as before.
//
// The sandboxes' mounts (disks, overlays, Spec.Mounts binds, the disks
// made ahead, the run dir's shared bind, the cgroup-lock hierarchy) live
// in a mount namespace of the Manager's own, a slave copy of the host's
// (mountns.go), never in the host's mount table: a table that grew with
// the sandboxes would slow every process on the host that copies it. One
// bind of that namespace's nsfs file at RunDir/<hash>.mnt (or, when the
// run dir's mount is shared, RunDir/<hash>.ns/mnt inside a private bind
// of its own) keeps it beyond the Manager's process, so a New after a
// crash joins it; Close removes that bind when no sandbox is left. The
// Manager touches those mounts from locked threads that joined the
// namespace, and the fork-server runs in it. Spec.Mounts sources are
// cloned from the host's namespace, so a host mount made after New is
// bound as the host sees it; the host image's binds (/usr, ...) are the
// namespace's view of them (host mounts propagate into it only where the
// host's mounts are shared).
//
// init bind-mounts the host binds read-only, mounts /proc (with /proc/sys
// and friends read-only and kcore, keys, timer_list masked), a minimal /dev
// (null, zero, full, random, urandom, tty, a private devpts, /dev/shm), and
// pivots into the overlay, detaching the host's tree. It then serves exec
// requests on a unix socket that the host bound and passed it and init
// listens on (the socket file lives in RunDir, mode 0600, invisible to the
// sandbox). Each
// request carries the command's stdio pipe ends as SCM_RIGHTS, so output
// streams with no copying through init. Commands are forked from one
// dedicated init thread that has no_new_privs, a landlock domain and the
// seccomp filter (assembled by the Manager and handed to init as BPF);
// each command runs as uid/gid 1000 with no capabilities, in its own
// session, with its process group killed on timeout, Kill or context
// cancellation. init watches its commands through pidfds and reaps orphans
// with wait4(WNOHANG) sweeps (no signal-handling thread), runs with
// GOMAXPROCS=1 on four or five OS threads, and returns free memory to the
// kernel whenever it has been idle for a second.
//
// # Security properties and how they are enforced
//
//   - Host files: the mount namespace holds only the overlay, the read-only
//     binds and /proc, /dev; the host's /etc/shadow, /root, /home, /work,
//     the server's data dir and other sandboxes' files are not in it.
//   - Base image: lower layers are never written (overlay); host binds are
//     read-only bind mounts (EROFS even for root inside).
//   - Processes: a new pid namespace; /proc shows only the sandbox. init is
//     non-dumpable, runs as a different uid than commands, and is outside
//     the commands' landlock signal scope.
//   - Only stdio crosses: init closes every fd it inherited and does not
//     need, keeps the rest close-on-exec and marks every fd above 2
//     close-on-exec before each fork, so a command starts with fds 0-2
//     only, whatever fds the server was started with. The control channel
//     is authenticated both ways by SO_PEERCRED: init answers only peers
//     outside its pid namespace with an unmapped (host) uid, and the host
//     talks only to the peer that listens, which must be the sandbox's
//     init pid, and only after that peer's first frame has shown the
//     secret key the init got at start (kept in the sandbox's state dir
//     for adoption), so even a process holding a copy of init's listener
//     receives no request: this covers exec requests, with their env, and
//     the adoption pings after a restart.
//   - Host details: commands run in a cgroup namespace rooted at their
//     cgroup (/proc/self/cgroup shows "/"), and the overlay's layers are
//     named by /proc/self/fd paths at mount time, so /proc/mounts shows
//     none of the host's data-dir paths.
//   - Privileges: commands have empty capability sets, no_new_privs, and a
//     seccomp allow-list modelled on Docker's default profile (mount,
//     unshare/setns and namespace clone flags, module loading, ptrace,
//     bpf, keyctl, reboot, ... fail with EPERM; clone3 with ENOSYS).
//   - Network: a private network namespace with loopback only. With an
//     allowlist, a veth pair (host end in Config.RouterNetNS, default the
//     Manager's namespace) and a per-sandbox nftables table (inet family)
//     forward only replies and the allowed IPv4 CIDRs and reject the rest,
//     IPv6 included. An allowlist never reaches the router itself: packets
//     from the veth to any of its addresses (fib daddr type local,
//     broadcast, multicast; checked before DNAT) or into the sandbox pool
//     are rejected, input from the veth is dropped, and the router's own
//     processes cannot connect into the sandbox (published ports are the
//     way in). 0.0.0.0/0 thus means "anywhere but this host and other
//     sandboxes". Domains are resolved once,
//     at Create, into /32s (also written to the sandbox's /etc/hosts); no
//     DNS server is reachable unless allowed. No NAT or forwarding is set
//     up: reaching beyond the router namespace needs the operator to
//     enable forwarding and masquerading there.
//   - Resources: cgroup v2 when it has the memory, cpu and pids controllers,
//     else v1 (memory, cpu, cpuacct, pids, freezer). Memory limits swap
//     too; commands live in a "user" pids sub-cgroup limited to Spec.Pids
//     while init keeps a little headroom, so a fork bomb cannot starve it;
//     init's oom_score_adj is -900 and each command's is reset to 0, so the
//     OOM killer picks the command. Every limit has a Config default, cpu
//     included (1 core). RLIMIT_NOFILE (Config.DefaultNoFile, soft and
//     hard) is set on init and inherited by every command. The writable
//     layer lives on an ext4 image of DiskBytes with Inodes inodes
//     (default 1 GiB, 65536), copied from a template for the default size,
//     eight of which are kept made and mounted ahead of time (disk-ready);
//     this needs mkfs.ext4 and loop devices, else Create fails with
//     EUNSUPPORTED unless the operator set Config.DiskQuotaOff (then
//     Info.DiskUnbounded). Snapshots count files at their apparent size
//     against the quota and fail with ETOOLARGE beyond it.
//   - File API: works on the host side on the overlay mount, resolving
//     every path with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
//     RESOLVE_NO_XDEV) from the sandbox root, so ".." and symlinks made in
//     the sandbox resolve inside it; the final component of a write is
//     never followed; recursive removal never follows symlinks; FIFOs and
//     devices are refused. It sees the sandbox's layers, not the host binds
//     (/usr of the "host" image) or /proc and /dev. Files it creates are
//     owned by the sandbox user.
//
// # Mounts, bridges and process trees (agent CLIs)
//
// Spec.Mounts bind host directories read-only (the host binds them onto
// mount points it opens without following symlinks; init's recursive bind
// of the root takes them along, their read-only flag locked in the
// sandbox's less privileged mount namespace): EROFS for everyone inside.
// Paths over or above what the sandbox needs (/proc, /dev, /etc, /usr, …)
// and host paths overlapping the Manager's own directories are refused.
// Spec.Bridges each listen on 127.0.0.1:Port inside the sandbox's network
// namespace (the socket made there by the Manager, on a thread that
// switches back at once) and forward each connection to a host unix
// socket: the one deliberate channel out, whatever the network policy;
// the socket file is never in the sandbox. Attach replaces both on an
// existing sandbox (a restart). ExecRequest.KillTree runs a command in a
// cgroup of its own below the commands' one (the host moves init's spawner
// thread there for the fork only), so when it ends by exit, crash,
// timeout, Kill or cancellation everything it started dies with it, even
// setsid'd and double-forked children; Wait returns after that.
//
// # Lifecycle
//
// running -> Pause (freezer; memory kept) -> paused -> Resume -> running;
// running/paused -> Stop (all processes end, files kept) -> stopped ->
// Start -> running; any -> Terminate (everything removed) -> terminated.
// Timeout terminates; IdleTimeout (no exec or file activity, no exec
// running) applies IdleAction: stop (default), pause or terminate. Both are
// enforced by the Manager every Config.CheckInterval.
//
// Exec needs a running sandbox (ECONFLICT otherwise); the file API also
// works on paused and stopped ones. Published ports survive Stop/Start.
//
// # Restart safety
//
// Each sandbox's metadata is in StateDir/sandboxes/<id>/meta.json (0600);
// secret values are in secrets.json (0600) so Start can inject them again.
// inits do not depend on the Manager process. New re-adopts sandboxes whose
// init still runs (checked by pid and start time, then a ping), keeps
// stopped ones stopped (remounting their filesystem), marks dead ones
// stopped, and reaps half-created ones; with OnRestart = RestartReap it
// removes them all (processes killed, cgroups, veths, nftables tables and
// mounts removed, directories deleted). Published ports get their old host
// address again when it is free, else a new one.
//
// # Images and snapshots
//
// Spec.Image is "host", a snapshot kept locally, or a reference for
// Config.Images (an ImageSource such as *image.Store from package
// sandbox/image). Snapshot freezes a running sandbox, copies its upper
// directory (whiteouts, opaque-dir xattrs, owners and modes kept; secret
// files left out) and hands the copy to ImageSource.Commit, or, without an
// ImageSource, keeps it under StateDir/images/<name> as a layer on the host
// base. Memory snapshots are not available (SnapshotMemory returns
// EUNSUPPORTED): CRIU does not work on the hosts this was built for.
//
// # Deviations from the first API sketch
//
// Process has Close and Pid besides Stdout, Stderr, Wait and Kill. Exit
// codes of commands killed by a signal are 128+signal, with Signal set.
// Spec has IdleAction. Info carries SecretNames (never values) and the
// resolved AllowedCIDRs. Manager has TerminateAll and SnapshotMemory.
// Config has RunDir, RouterNetNS, Resolve, IDMapBase, CgroupParent,
// defaults, RunOutputLimit, CheckInterval, OnRestart and InitPath (and
// Manager.InitPath reports the init binary in use).
//
// Errors carry the codes of package bullpen: EINVALID for bad input,
// ENOTFOUND, ECONFLICT for a wrong state or a taken name, ETOOLARGE for
// oversized input or a full disk, EUNSUPPORTED for what the host cannot do.
package sandbox
