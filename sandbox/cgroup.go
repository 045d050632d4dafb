package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

// cgroups manages per-sandbox cgroups by writing the cgroupfs files
// directly: v2 when a cgroup2 hierarchy has the memory, cpu and pids
// controllers, else v1 (memory, cpu, cpuacct, pids, freezer).
type cgroups struct {
	v2     bool
	root   string            // v2 mount point
	v1     map[string]string // v1 controller -> mount point
	parent string
	// defaultCPU (cores) replaces a cpu of 0, which only metadata from
	// before cpu had a default holds: such sandboxes are bounded too once
	// they start again.
	defaultCPU float64
}

var v1Controllers = []string{"memory", "cpu", "cpuacct", "pids", "freezer"}

func detectCgroups(parent string) (*cgroups, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("sandbox: cgroups: %w", err)
	}
	defer f.Close()
	v1 := map[string]string{}
	var v2root string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fields {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || len(fields) < sep+4 {
			continue
		}
		mnt, fstype, opts := unescapeMount(fields[4]), fields[sep+1], fields[sep+3]
		switch fstype {
		case "cgroup2":
			b, _ := os.ReadFile(filepath.Join(mnt, "cgroup.controllers"))
			ctrls := " " + strings.TrimSpace(string(b)) + " "
			if strings.Contains(ctrls, " memory ") && strings.Contains(ctrls, " pids ") && strings.Contains(ctrls, " cpu ") {
				v2root = mnt
			}
		case "cgroup":
			for _, o := range strings.Split(opts, ",") {
				for _, c := range v1Controllers {
					if o == c {
						v1[c] = mnt
					}
				}
			}
		}
	}
	if v2root != "" {
		cg := &cgroups{v2: true, root: v2root, parent: parent}
		// Enable the controllers for our subtree.
		_ = os.WriteFile(filepath.Join(v2root, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0)
		p := filepath.Join(v2root, parent)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: cgroup parent: %w", err)
		}
		if err := os.WriteFile(filepath.Join(p, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0); err != nil {
			return nil, fmt.Errorf("sandbox: cgroup v2 controllers: %w", err)
		}
		return cg, nil
	}
	for _, c := range v1Controllers {
		if v1[c] == "" {
			return nil, bullpen.Errorf(bullpen.EUNSUPPORTED, "no usable cgroup hierarchy: cgroup v2 lacks controllers and v1 %s is not mounted", c)
		}
	}
	return &cgroups{v1: v1, parent: parent}, nil
}

// initPidsHeadroom is how many tasks init may use beyond Spec.Pids: its own
// threads live outside the "user" sub-cgroup that holds the commands, so a
// fork bomb cannot starve it of threads.
const initPidsHeadroom = 64

// dirs returns the sandbox's cgroup directories, children first.
func (c *cgroups) dirs(id string) []string {
	if id == "" {
		return c.roots()
	}
	if c.v2 {
		d := filepath.Join(c.root, c.parent, id)
		return []string{filepath.Join(d, "user"), d}
	}
	out := []string{filepath.Join(c.v1["pids"], c.parent, id, "user")}
	seen := map[string]bool{}
	for _, ctrl := range v1Controllers {
		d := filepath.Join(c.v1[ctrl], c.parent, id)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// roots returns the parent cgroup directories.
func (c *cgroups) roots() []string {
	if c.v2 {
		return []string{filepath.Join(c.root, c.parent)}
	}
	var out []string
	for _, ctrl := range v1Controllers {
		out = append(out, filepath.Join(c.v1[ctrl], c.parent))
	}
	return out
}

// userDir is the sub-cgroup (pids hierarchy) that holds the commands.
func (c *cgroups) userDir(id string) string {
	return filepath.Join(c.dir("pids", id), "user")
}

func (c *cgroups) dir(ctrl, id string) string {
	if c.v2 {
		return filepath.Join(c.root, c.parent, id)
	}
	return filepath.Join(c.v1[ctrl], c.parent, id)
}

func writeCg(dir, file, val string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(val), 0); err != nil {
		return fmt.Errorf("sandbox: cgroup %s: %w", file, err)
	}
	return nil
}

// create makes the sandbox's cgroups and sets its limits.
func (c *cgroups) create(id string, cpu float64, mem, pids int64) error {
	for _, d := range c.dirs(id) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("sandbox: create cgroup: %w", err)
		}
	}
	if cpu == 0 {
		cpu = c.defaultCPU
	}
	quota := "max"
	if cpu > 0 {
		q := int64(cpu * 100000)
		if q < 1000 {
			q = 1000
		}
		quota = strconv.FormatInt(q, 10)
	}
	if c.v2 {
		d := c.dir("", id)
		if err := writeCg(d, "memory.max", strconv.FormatInt(mem, 10)); err != nil {
			return err
		}
		_ = writeCg(d, "memory.swap.max", "0")
		if err := writeCg(d, "pids.max", strconv.FormatInt(pids+initPidsHeadroom, 10)); err != nil {
			return err
		}
		if err := writeCg(d, "cpu.max", quota+" 100000"); err != nil {
			return err
		}
		u := c.userDir(id)
		_ = writeCg(u, "cgroup.type", "threaded")
		return writeCg(u, "pids.max", strconv.FormatInt(pids, 10))
	}
	if err := c.setMemV1(c.dir("memory", id), strconv.FormatInt(mem, 10)); err != nil {
		return err
	}
	if err := writeCg(c.dir("pids", id), "pids.max", strconv.FormatInt(pids+initPidsHeadroom, 10)); err != nil {
		return err
	}
	if err := writeCg(c.userDir(id), "pids.max", strconv.FormatInt(pids, 10)); err != nil {
		return err
	}
	cd := c.dir("cpu", id)
	if err := writeCg(cd, "cpu.cfs_period_us", "100000"); err != nil {
		return err
	}
	if quota == "max" {
		quota = "-1"
	}
	return writeCg(cd, "cpu.cfs_quota_us", quota)
}

// setMemV1 sets a v1 memory cgroup's memory and memory+swap limits to v.
// The kernel keeps memory <= memory+swap at every write, so raising the
// limits of an existing cgroup (a pooled init's, made with the defaults)
// writes memory+swap first, lowering them memory first.
func (c *cgroups) setMemV1(md, v string) error {
	sw := filepath.Join(md, "memory.memsw.limit_in_bytes")
	if _, err := os.Stat(sw); err != nil { // no swap accounting
		return writeCg(md, "memory.limit_in_bytes", v)
	}
	err := writeCg(md, "memory.limit_in_bytes", v)
	if errors.Is(err, unix.EINVAL) { // above memory+swap: raise that first
		if err = writeCg(md, "memory.memsw.limit_in_bytes", v); err == nil {
			err = writeCg(md, "memory.limit_in_bytes", v)
		}
		return err
	}
	if err != nil {
		return err
	}
	_ = writeCg(md, "memory.memsw.limit_in_bytes", v)
	return nil
}

// addThread moves one thread (host tid) of init into the user sub-cgroup;
// everything it forks starts there.
func (c *cgroups) addThread(id string, tid int) error {
	f := "tasks"
	if c.v2 {
		f = "cgroup.threads"
	}
	return writeCg(c.userDir(id), f, strconv.Itoa(tid))
}

// add moves pid into the sandbox's cgroups.
func (c *cgroups) add(id string, pid int) error {
	for _, d := range c.dirs(id)[1:] {
		if err := writeCg(d, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// freeze freezes or thaws every process of the sandbox.
func (c *cgroups) freeze(id string, frozen bool) error {
	if c.v2 {
		d := c.dir("", id)
		v := "0"
		if frozen {
			v = "1"
		}
		if err := writeCg(d, "cgroup.freeze", v); err != nil {
			return err
		}
		want := "frozen " + v
		return pollFile(filepath.Join(d, "cgroup.events"), func(s string) bool { return strings.Contains(s, want) })
	}
	d := c.dir("freezer", id)
	state := "THAWED"
	if frozen {
		state = "FROZEN"
	}
	if err := writeCg(d, "freezer.state", state); err != nil {
		return err
	}
	return pollFile(filepath.Join(d, "freezer.state"), func(s string) bool { return strings.TrimSpace(s) == state })
}

func pollFile(p string, ok func(string) bool) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("sandbox: read %s: %w", filepath.Base(p), err)
		}
		if ok(string(b)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox: timed out waiting on %s", filepath.Base(p))
		}
		time.Sleep(time.Millisecond)
	}
}

// usage reads the sandbox's resource usage.
func (c *cgroups) usage(id string) (Usage, error) {
	var u Usage
	readInt := func(p string) (int64, error) {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	var err error
	if c.v2 {
		d := c.dir("", id)
		if u.MemoryBytes, err = readInt(filepath.Join(d, "memory.current")); err != nil {
			return u, fmt.Errorf("sandbox: stats: %w", err)
		}
		u.Pids, _ = readInt(filepath.Join(c.userDir(id), "pids.current"))
		b, _ := os.ReadFile(filepath.Join(d, "cpu.stat"))
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				u.CPUSeconds = float64(n) / 1e6
			}
		}
		return u, nil
	}
	if u.MemoryBytes, err = readInt(filepath.Join(c.dir("memory", id), "memory.usage_in_bytes")); err != nil {
		return u, fmt.Errorf("sandbox: stats: %w", err)
	}
	u.Pids, _ = readInt(filepath.Join(c.userDir(id), "pids.current"))
	ns, _ := readInt(filepath.Join(c.dir("cpuacct", id), "cpuacct.usage"))
	u.CPUSeconds = float64(ns) / 1e9
	return u, nil
}

// procs returns the pids in the sandbox's cgroup.
func (c *cgroups) procs(id string) []int {
	var out []int
	for _, d := range []string{c.userDir(id), c.dir("pids", id)} {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// remove kills anything left in the sandbox's cgroups and removes them.
func (c *cgroups) remove(id string) error {
	c.killTrees(id)
	var errs []error
	for _, d := range c.dirs(id) {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			continue
		}
		var err error
		for try := 0; try < 200; try++ {
			if err = unix.Rmdir(d); err == nil || errors.Is(err, unix.ENOENT) {
				err = nil
				break
			}
			if !errors.Is(err, unix.EBUSY) {
				break
			}
			if try == 0 {
				// Thaw and kill stragglers (a frozen task cannot die).
				if c.v2 {
					_ = writeCg(d, "cgroup.freeze", "0")
					_ = writeCg(d, "cgroup.kill", "1")
				} else if strings.HasPrefix(d, c.v1["freezer"]) {
					_ = writeCg(d, "freezer.state", "THAWED")
				}
				for _, p := range c.procs(id) {
					_ = unix.Kill(p, unix.SIGKILL)
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sandbox: remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// exists reports whether any of the sandbox's cgroups exists.
func (c *cgroups) exists(id string) bool {
	for _, d := range c.dirs(id) {
		if _, err := os.Stat(d); err == nil {
			return true
		}
	}
	return false
}
