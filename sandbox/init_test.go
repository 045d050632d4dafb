package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

func TestInitBinaryConfig(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	for _, p := range []string{"/nonexistent/" + InitBinaryName, "/bin/true", t.TempDir()} {
		_, err := New(ctx, Config{StateDir: t.TempDir(), InitPath: p})
		if !bullpen.IsCode(err, bullpen.EINVALID) {
			t.Errorf("InitPath %s: got %v, want EINVALID", p, err)
		}
	}
	// Without InitPath and with no init next to the test binary, the
	// Manager re-executes itself.
	exe, _ := os.Executable()
	if _, err := os.Stat(filepath.Join(filepath.Dir(exe), InitBinaryName)); err == nil {
		t.Skip("an init binary sits next to the test binary")
	}
	m, err := New(ctx, Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.InitPath() != "/proc/self/exe" {
		t.Fatalf("InitPath %q", m.InitPath())
	}
}

// TestInitProcess checks the dedicated init as a process: its name, its
// few threads, no handle on its own binary, orphans reaped without
// signals.
func TestInitProcess(t *testing.T) {
	if testInitPath == "" {
		t.Skip("no dedicated init binary")
	}
	t.Parallel()
	e := newEnv(t)
	id := e.create(Spec{}).ID
	e.sh(id, "true")
	s, _ := e.m.lookup(id)
	s.mu.Lock()
	pid := s.proc.pid
	s.mu.Unlock()
	dir := "/proc/" + strconv.Itoa(pid)
	comm, _ := os.ReadFile(dir + "/comm")
	if strings.TrimSpace(string(comm)) != "bullpen-sbinit" {
		t.Errorf("comm %q", comm)
	}
	tasks, _ := os.ReadDir(dir + "/task")
	t.Logf("init threads: %d", len(tasks))
	if len(tasks) > 6 {
		t.Errorf("init runs %d threads", len(tasks))
	}
	fds, _ := os.ReadDir(dir + "/fd")
	for _, f := range fds {
		if l, _ := os.Readlink(filepath.Join(dir, "fd", f.Name())); strings.Contains(l, InitBinaryName) {
			t.Errorf("init holds fd %s -> %s", f.Name(), l)
		}
	}
	if out := e.run(id, "sh", "-c", "readlink /proc/1/exe; ls -l /proc/1/fd"); out.ExitCode == 0 && len(out.Stdout) > 0 {
		t.Errorf("init's binary or fds visible: %s", out.Stdout)
	}
	// Orphans (their parent shell exits at once) are re-parented to init
	// and reaped after they die, without any exec poking init.
	e.sh(id, "(sleep 0.2 &); (sleep 0.2 &); (sleep 0.2 &)")
	deadline := time.Now().Add(5 * time.Second)
	for {
		z := zombies(pid)
		if z == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d zombies left under init", z)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// zombies counts init's children that are zombies.
func zombies(pid int) int {
	n := 0
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, task := range tasks {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/children")
		for _, c := range strings.Fields(string(b)) {
			st, _ := os.ReadFile("/proc/" + c + "/stat")
			if i := strings.LastIndexByte(string(st), ')'); i > 0 && strings.HasPrefix(string(st[i+1:]), " Z") {
				n++
			}
		}
	}
	return n
}
