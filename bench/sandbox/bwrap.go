package main

import (
	"fmt"
	"io"
	"os/exec"
	"time"
)

// bwrapper runs `bwrap --unshare-all … echo hi`, the reference a create
// -> first output is compared with; its trials are interleaved with ours.
type bwrapper struct {
	path string
	args []string
}

// newBwrap finds (or installs) bubblewrap and warms it up.
func newBwrap() (*bwrapper, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		fmt.Println("installing bubblewrap (apt-get install -y bubblewrap)...")
		out, err := exec.Command("apt-get", "install", "-y", "bubblewrap").CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("apt-get: %v: %s", err, tail(out))
		}
		if path, err = exec.LookPath("bwrap"); err != nil {
			return nil, err
		}
	}
	b := &bwrapper{path: path, args: []string{"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin", "--proc", "/proc", "--dev", "/dev",
		"--tmpfs", "/tmp", "--unshare-all", "--uid", "1000", "--gid", "1000", "--die-with-parent", "--new-session",
		"echo", "hi"}}
	for range 3 {
		if _, err := b.once(); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// once times one bwrap run to the first byte of its output.
func (b *bwrapper) once() (time.Duration, error) {
	t0 := time.Now()
	cmd := exec.Command(b.path, b.args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(out, one); err != nil {
		cmd.Wait()
		return 0, fmt.Errorf("bwrap produced no output: %v", err)
	}
	d := time.Since(t0)
	cmd.Wait()
	return d, nil
}

// reportBwrap prints the bwrap figure and the ratios; it returns bwrap's
// median (0 when not measured).
func reportBwrap(times []time.Duration, oursCold, oursWarm time.Duration) time.Duration {
	if len(times) == 0 {
		return 0
	}
	fmt.Println()
	report("bwrap --unshare-all echo hi: first output", times)
	b := median(times)
	fmt.Printf("  ratio create->first output / bwrap: %.2fx;  warm exec / bwrap: %.2fx (bwrap runs interleaved with the creates)\n",
		float64(oursCold)/float64(b), float64(oursWarm)/float64(b))
	fmt.Println("  (bwrap: fresh user/pid/net/mount/ipc/uts namespaces, no cgroups, overlay, seccomp or network setup)")
	return b
}
