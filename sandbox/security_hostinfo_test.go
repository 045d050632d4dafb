package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Property 9 of the isolation suite: a sandbox sees no host details where
// hiding them is cheap. Its cgroup files show no host cgroup path (a cgroup
// namespace) and its mount table names none of the host's data-dir paths
// (the overlay's layers are given to the kernel as fd paths).
func TestSecurityHidesHostDetails(t *testing.T) {
	t.Parallel()
	for name, path := range initModes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			securityHidesHostDetails(t, path)
		})
	}
}

func securityHidesHostDetails(t *testing.T, initPath string) {
	e := newEnv(t, func(c *Config) { c.InitPath = initPath })
	plain := e.create(Spec{}).ID
	disk := e.create(Spec{DiskBytes: 32 << 20}).ID // upper dir on its own loop mount
	for _, id := range []string{plain, disk} {
		t.Run("cgroup "+id, func(t *testing.T) {
			for _, f := range []string{"/proc/self/cgroup", "/proc/1/cgroup"} {
				out := e.sh(id, "cat "+f)
				if !strings.Contains(out, ":/") {
					t.Fatalf("%s: no cgroup lines: %q", f, out)
				}
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					if bad := hostCgroupPath(line); bad != "" {
						t.Errorf("%s shows a host cgroup path %q in %q", f, bad, line)
					}
				}
			}
		})
		t.Run("mounts "+id, func(t *testing.T) {
			s, err := e.m.lookup(id)
			if err != nil {
				t.Fatal(err)
			}
			host := []string{e.cfg.StateDir, e.m.runDir, filepath.Dir(e.m.runDir), s.dir, s.rootfs,
				e.m.baseDir, e.m.imgDir, os.TempDir() + "/", id}
			for _, f := range []string{"/proc/mounts", "/proc/self/mountinfo", "/proc/1/mountinfo"} {
				r := e.run(id, "cat", f)
				out := string(r.Stdout)
				if f != "/proc/1/mountinfo" && !strings.Contains(out, "overlay") {
					t.Fatalf("%s: no overlay root in %q (%s)", f, out, r.Stderr)
				}
				for _, p := range host {
					if p != "" && strings.Contains(out, p) {
						t.Errorf("%s shows host path %q:\n%s", f, p, out)
					}
				}
			}
		})
	}
}

// hostCgroupPath returns the path of a /proc/PID/cgroup line
// ("id:controllers:path") if it names any cgroup by name: inside a cgroup
// namespace, the sandbox's own cgroups are "/" and the ones above it
// (init's, for the commands) "/..".
func hostCgroupPath(line string) string {
	f := strings.SplitN(line, ":", 3)
	if len(f) != 3 {
		return line
	}
	for _, seg := range strings.Split(f[2], "/") {
		if seg != "" && seg != ".." {
			return f[2]
		}
	}
	return ""
}
