package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The sandboxes' mounts (their disks, overlays and Spec.Mounts binds, the
// disks made ahead, the cgroup-lock hierarchy, the run dir's shared bind)
// live in a mount namespace of the Manager's own, never in the host's: a
// host mount table that grew with the sandboxes would slow down every
// process on the host that copies it (each bwrap, each container start).
// The namespace is a copy of the host's made a slave of it (host mounts
// made later still show in it; nothing made in it shows on the host), so
// host paths (Spec.Mounts sources, the host image's /usr) resolve in it as
// on the host. Files are the same in both: only the mounts differ.
//
// The host keeps it by one bind of the namespace file at runDir+".mnt"
// (nsfs), so that it outlives the Manager's process and a later New (after
// a crash too) joins it and finds its sandboxes' mounts where they were.
// That bind must not propagate (a copy in another namespace would keep the
// namespace alive): when the mount under it is shared, it goes into a
// private bind of its own directory, runDir+".ns". Those one or two lines
// are all a Manager adds to the host's mount table; Close removes them when
// it leaves no sandbox behind, and the namespace and every mount in it go
// with them.
//
// Go threads share their mount namespace unless one unshares its file
// system attributes first, and setns into a mount namespace needs exactly
// that: so the Manager does what touches the namespace's mounts on
// dedicated locked OS threads that joined it (mountNS.do). A thread never
// leaves: it ends with its goroutine. The fork-server is started from such
// a thread, so the inits it clones copy this namespace.

// mountNS is the Manager's mount namespace.
type mountNS struct {
	file   string // the nsfs bind on the host (runDir + ".mnt")
	holder string // the private bind made for it; "" if none was needed
	fd     int    // the namespace

	mu     sync.Mutex
	idle   []chan nsJob
	closed bool
}

type nsJob struct {
	fn   func() error
	done chan error
}

// maxIdleNSThreads is how many threads in the namespace wait for work;
// more run during a burst and end after their job.
const maxIdleNSThreads = 8

var errNSClosed = errors.New("sandbox: manager closed")

// openMountNS joins the namespace kept at runDir+".mnt", or makes one and
// keeps it there; fresh reports the latter.
func openMountNS(runDir string) (n *mountNS, fresh bool, err error) {
	for _, k := range []struct{ file, holder string }{{runDir + ".ns/mnt", runDir + ".ns"}, {runDir + ".mnt", ""}} {
		fd, err := unix.Open(k.file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if t, err := unix.IoctlRetInt(fd, unix.NS_GET_NSTYPE); err == nil && t == unix.CLONE_NEWNS {
			return &mountNS{file: k.file, holder: k.holder, fd: fd}, false, nil
		}
		unix.Close(fd)
	}
	n = &mountNS{file: runDir + ".mnt", fd: -1}
	if err := n.create(runDir); err != nil {
		n.release()
		return nil, false, err
	}
	return n, true, nil
}

// create makes the namespace and binds it at n.file.
func (n *mountNS) create(runDir string) error {
	dir := runDirParent(runDir)
	shared, err := mountShared(dir)
	if err != nil {
		return err
	}
	if shared {
		n.holder = runDir + ".ns"
		if err := os.MkdirAll(n.holder, 0o700); err != nil {
			return fmt.Errorf("sandbox: mount namespace: %w", err)
		}
		if err := unix.Mount(n.holder, n.holder, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("sandbox: mount namespace holder: %w", err)
		}
		if err := unix.Mount("", n.holder, "", unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("sandbox: mount namespace holder: %w", err)
		}
		n.file = n.holder + "/mnt"
	}
	f, err := os.OpenFile(n.file, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return fmt.Errorf("sandbox: mount namespace: %w", err)
	}
	f.Close()
	fdc := make(chan int, 1)
	errc := make(chan error, 1)
	goLocked(func() { // never unlocked: the thread ends with this goroutine
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			errc <- fmt.Errorf("sandbox: unshare mount namespace: %w", err)
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
			errc <- fmt.Errorf("sandbox: mount namespace: make / a slave: %w", err)
			return
		}
		fd, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("sandbox: mount namespace: %w", err)
			return
		}
		fdc <- fd
	})
	select {
	case err := <-errc:
		return err
	case n.fd = <-fdc:
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(n.fd), n.file, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("sandbox: keep mount namespace: %w", err)
	}
	return nil
}

// runDirParent is the directory holding runDir's siblings (Config.RunDir).
func runDirParent(runDir string) string {
	if i := strings.LastIndexByte(runDir, '/'); i > 0 {
		return runDir[:i]
	}
	return "/"
}

// mountShared reports whether the mount dir is on (in this thread's
// namespace) propagates to peers.
func mountShared(dir string) (bool, error) {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir, 0, unix.STATX_MNT_ID, &stx); err != nil {
		return false, fmt.Errorf("sandbox: run dir: %w", err)
	}
	if stx.Mask&unix.STATX_MNT_ID == 0 {
		return true, nil // cannot tell: assume the worst
	}
	f, err := os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		return false, fmt.Errorf("sandbox: mountinfo: %w", err)
	}
	defer f.Close()
	id := strconv.FormatUint(stx.Mnt_id, 10)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 7 || fs[0] != id {
			continue
		}
		for _, o := range fs[6:] {
			if o == "-" {
				break
			}
			if strings.HasPrefix(o, "shared:") {
				return true, nil
			}
		}
		return false, nil
	}
	return true, sc.Err()
}

// do runs fn on a thread in the namespace and returns its error.
func (n *mountNS) do(fn func() error) error {
	j := nsJob{fn: fn, done: make(chan error, 1)}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return errNSClosed
	}
	if k := len(n.idle); k > 0 {
		w := n.idle[k-1]
		n.idle = n.idle[:k-1]
		n.mu.Unlock()
		w <- j
	} else {
		n.mu.Unlock()
		goLocked(func() { n.thread(j) })
	}
	return <-j.done
}

// thread joins the namespace on its goroutine's locked OS thread (never
// unlocked: the thread ends with the goroutine) and runs j, then the jobs
// do hands it while it waits idle.
func (n *mountNS) thread(j nsJob) {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		j.done <- fmt.Errorf("sandbox: enter mount namespace: %w", err)
		return
	}
	if err := unix.Setns(n.fd, unix.CLONE_NEWNS); err != nil {
		j.done <- fmt.Errorf("sandbox: enter mount namespace: %w", err)
		return
	}
	jobs := make(chan nsJob, 1)
	for {
		j.done <- j.fn()
		n.mu.Lock()
		if n.closed || len(n.idle) >= maxIdleNSThreads {
			n.mu.Unlock()
			return
		}
		n.idle = append(n.idle, jobs)
		n.mu.Unlock()
		if j = <-jobs; j.fn == nil {
			return
		}
	}
}

// mountinfo returns the namespace's mount table.
func (n *mountNS) mountinfo() (string, error) {
	var b []byte
	err := n.do(func() (err error) {
		b, err = os.ReadFile("/proc/thread-self/mountinfo")
		return err
	})
	return string(b), err
}

// close ends the namespace's threads; with release it also removes the
// host's binds that keep it, so the namespace and its mounts go once its
// last process (the fork-server) has exited.
func (n *mountNS) close(release bool) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.closed = true
	idle := n.idle
	n.idle = nil
	n.mu.Unlock()
	for _, w := range idle {
		w <- nsJob{}
	}
	if release {
		n.release()
	} else if n.fd >= 0 {
		unix.Close(n.fd)
		n.fd = -1
	}
}

// release unmounts and removes the host's binds.
func (n *mountNS) release() {
	if n.fd >= 0 {
		unix.Close(n.fd)
		n.fd = -1
	}
	_ = unix.Unmount(n.file, unix.MNT_DETACH)
	os.Remove(n.file)
	if n.holder != "" {
		_ = unix.Unmount(n.holder, unix.MNT_DETACH)
		os.Remove(n.holder)
	}
}

// onHostThread runs fn on a thread in the host's mount namespace (any
// thread but the namespace's locked ones), from one of those.
func onHostThread(fn func() (int, error)) (int, error) {
	type res struct {
		n   int
		err error
	}
	c := make(chan res, 1)
	go func() {
		n, err := fn()
		c <- res{n, err}
	}()
	r := <-c
	return r.n, r.err
}

// goLocked runs fn on a new goroutine locked to an OS thread that is not
// the process's main thread. The main thread stands for the process in
// /proc/<pid> (mountinfo, root, cwd): moved into the namespace, it would
// show the namespace's mounts as the whole server's; and Go parks it for
// good, rather than ending it, when its goroutine exits locked. A
// goroutine that finds itself on the main thread keeps it (locked, so it
// runs nothing else) until a second one has locked a thread of its own.
func goLocked(fn func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			fn()
			return
		}
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(locked)
			fn()
		}()
		<-locked
		runtime.UnlockOSThread()
	}()
}
