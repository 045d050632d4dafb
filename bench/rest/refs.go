package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// bwrapTimes times `bwrap --unshare-all echo hi` n times; none without bwrap.
func bwrapTimes(n int) []time.Duration {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		fmt.Println("bwrap not installed: no ratio")
		return nil
	}
	var out []time.Duration
	for range n {
		t0 := time.Now()
		cmd := exec.Command(path, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "echo", "hi")
		if d, err := firstByte(cmd, t0); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// firstByte starts cmd and returns the time from t0 to its first byte of
// stdout, then waits for it.
func firstByte(cmd *exec.Cmd, t0 time.Time) (time.Duration, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	_, err = bufio.NewReader(stdout).ReadByte()
	d := time.Since(t0)
	if werr := cmd.Wait(); err == nil {
		err = werr
	}
	if err != nil && stderr.Len() > 0 {
		err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return d, err
}

// crunTimes times `crun run` of an OCI bundle running echo hi, n times:
// a read-only root of the host's /usr in new user, pid, network, ipc, uts
// and mount namespaces (crun's default spec plus a user namespace), with
// crun's cgroups. An error when crun is not installed.
//
// crun refuses a "hybrid" host whose cgroup2 hierarchy has any controller
// (here hugetlb): it then runs from a thread with a mount namespace of its
// own in which /sys/fs/cgroup/unified is unmounted, so crun sees (and
// uses) the cgroup v1 controllers; the host's mounts are not touched.
func crunTimes(n int) ([]time.Duration, error) {
	path, err := exec.LookPath("crun")
	if err != nil {
		return nil, fmt.Errorf("crun is not installed (apt-get install -y crun)")
	}
	type answer struct {
		d   []time.Duration
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		// Never unlocked: the thread, with its mount namespace, ends with
		// the goroutine.
		runtime.LockOSThread()
		if err := v1Only(); err != nil {
			ch <- answer{nil, err}
			return
		}
		d, err := crunLoop(path, n)
		ch <- answer{d, err}
	}()
	a := <-ch
	return a.d, a.err
}

// v1Only gives the calling thread a private mount namespace without the
// host's cgroup2 mount (when it is the hybrid layout's unified one).
func v1Only() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	var st unix.Statfs_t
	if unix.Statfs("/sys/fs/cgroup/unified", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		if err := unix.Unmount("/sys/fs/cgroup/unified", unix.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount cgroup2 (in a private namespace): %w", err)
		}
	}
	return nil
}

func crunLoop(path string, n int) ([]time.Duration, error) {
	bundle, err := os.MkdirTemp("", "bullpen-restbench-crun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(bundle)
	// The container's root is an unprivileged host uid: it must reach the rootfs.
	if err := os.Chmod(bundle, 0o755); err != nil {
		return nil, err
	}
	if err := writeBundle(path, bundle); err != nil {
		return nil, err
	}
	var out []time.Duration
	for i := range n + 3 {
		id := fmt.Sprintf("bullpen-restbench-%d-%d", os.Getpid(), i)
		t0 := time.Now()
		cmd := exec.Command(path, "run", "--bundle", bundle, id)
		d, err := firstByte(cmd, t0)
		if err != nil {
			_ = exec.Command(path, "delete", "-f", id).Run()
			return nil, fmt.Errorf("crun run: %w", err)
		}
		if i >= 3 { // warm-up
			out = append(out, d)
		}
	}
	return out, nil
}

// writeBundle writes config.json (from `crun spec`) and the rootfs.
func writeBundle(crun, bundle string) error {
	if out, err := exec.Command(crun, "spec", "--bundle", bundle).CombinedOutput(); err != nil {
		return fmt.Errorf("crun spec: %v: %s", err, out)
	}
	root := filepath.Join(bundle, "rootfs")
	for _, d := range []string{"usr", "proc", "dev", "sys", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		if err := os.Symlink("usr/"+l, filepath.Join(root, l)); err != nil {
			return err
		}
	}
	p := filepath.Join(bundle, "config.json")
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("crun spec: %w", err)
	}
	proc := spec["process"].(map[string]any)
	proc["args"], proc["terminal"] = []string{"echo", "hi"}, false
	spec["mounts"] = append(spec["mounts"].([]any), map[string]any{"destination": "/usr", "type": "bind",
		"source": "/usr", "options": []string{"rbind", "ro", "nosuid", "nodev"}})
	lin := spec["linux"].(map[string]any)
	lin["namespaces"] = append(lin["namespaces"].([]any), map[string]any{"type": "user"})
	idmap := []map[string]any{{"containerID": 0, "hostID": 300000, "size": 65536}}
	lin["uidMappings"], lin["gidMappings"] = idmap, idmap
	if b, err = json.Marshal(spec); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}
