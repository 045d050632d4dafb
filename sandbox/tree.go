package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A KillTree exec runs in its own cgroup below the sandbox's "user" one.
// init forks every command from one spawner thread, so the host moves that
// thread into a fresh cgroup just for the fork (Manager.spawnMu keeps other
// execs from forking meanwhile) and back. Everything the command starts,
// setsid or double-forked daemons included, inherits the cgroup and cannot
// leave it (no cgroupfs inside), so killing the cgroup's tasks until none
// is left ends the whole tree.

var treeSeq atomic.Int64

// tasksFile lists the threads of a cgroup (the file a tid is written to).
func (c *cgroups) tasksFile() string {
	if c.v2 {
		return "cgroup.threads"
	}
	return "tasks"
}

// spawnerTid finds init's spawner thread: the one thread of init (host
// pid initPid) in the user sub-cgroup.
func (c *cgroups) spawnerTid(id string, initPid int) (int, error) {
	b, err := os.ReadFile(filepath.Join(c.userDir(id), c.tasksFile()))
	if err != nil {
		return 0, fmt.Errorf("sandbox: tree: %w", err)
	}
	for _, f := range strings.Fields(string(b)) {
		tid, _ := strconv.Atoi(f)
		if tid > 0 && tgid(tid) == initPid {
			return tid, nil
		}
	}
	return 0, errors.New("sandbox: tree: init's spawner thread is not in the user cgroup")
}

func tgid(tid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// treeEnter makes a cgroup for one exec and moves init's spawner thread
// into it; call leave once init has forked the command.
func (c *cgroups) treeEnter(id string, initPid int) (dir string, leave func(), err error) {
	tid, err := c.spawnerTid(id, initPid)
	if err != nil {
		return "", nil, err
	}
	dir = filepath.Join(c.userDir(id), "tree-"+strconv.FormatInt(treeSeq.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("sandbox: tree cgroup: %w", err)
	}
	if c.v2 {
		_ = writeCg(dir, "cgroup.type", "threaded")
	}
	if err := writeCg(dir, c.tasksFile(), strconv.Itoa(tid)); err != nil {
		_ = unix.Rmdir(dir)
		return "", nil, err
	}
	leave = func() { _ = writeCg(c.userDir(id), c.tasksFile(), strconv.Itoa(tid)) }
	return dir, leave, nil
}

// killTree kills every task in the exec cgroup dir until none is left and
// removes it. Tasks forked meanwhile land in dir too and are caught by the
// next round; the pids limit bounds how many there can be.
func killTree(dir, tasksFile string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, tasksFile))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		ids := strings.Fields(string(b))
		if len(ids) == 0 {
			if err := unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) {
				return nil
			} else if !errors.Is(err, unix.EBUSY) {
				return fmt.Errorf("sandbox: remove tree cgroup: %w", err)
			}
		}
		for _, f := range ids {
			if n, err := strconv.Atoi(f); err == nil {
				_ = unix.Kill(n, unix.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox: tree cgroup %s: %d tasks would not die", filepath.Base(dir), len(ids))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// killTrees kills and removes every exec cgroup of the sandbox (before its
// user cgroup can be removed).
func (c *cgroups) killTrees(id string) {
	ents, _ := os.ReadDir(c.userDir(id))
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "tree-") {
			_ = killTree(filepath.Join(c.userDir(id), e.Name()), c.tasksFile())
		}
	}
}

// KillStrays kills every process of a KillTree command's tree but the
// command itself: whatever it started and left running (a server serving
// turn after turn keeps running; what a turn started through it does not
// outlive the turn). It reports how many processes it killed.
func (p *Process) KillStrays() (int, error) {
	if p.tree == "" {
		return 0, errors.New("sandbox: KillStrays needs a KillTree exec")
	}
	killed := map[int]bool{}
	deadline := time.Now().Add(2 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(p.tree, p.treeTasks))
		if errors.Is(err, os.ErrNotExist) {
			return len(killed), nil // the tree is gone
		} else if err != nil {
			return len(killed), fmt.Errorf("sandbox: strays: %w", err)
		}
		left := 0
		for _, f := range strings.Fields(string(b)) {
			tid, _ := strconv.Atoi(f)
			pid := tgid(tid)
			if pid == 0 || nsPid(pid) == p.pid {
				continue
			}
			left++
			if !killed[pid] {
				killed[pid] = true
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		if left == 0 {
			return len(killed), nil
		}
		if time.Now().After(deadline) {
			return len(killed), fmt.Errorf("sandbox: %d stray tasks would not die", left)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// nsPid is a host process's pid in its innermost pid namespace (the
// sandbox's), from the NSpid line of its status.
func nsPid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}
