package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
)

// testInitPath is the dedicated init binary TestMain built; "" if it could
// not (then every test uses the /proc/self/exe fallback).
var testInitPath string

// testInitEnv hands a test binary re-executed by a test the init binary
// its parent built, so that it does not build it again.
const testInitEnv = "BULLPEN_TEST_INIT_PATH"

func TestMain(m *testing.M) {
	MaybeRunInit() // the fallback re-executes this test binary
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if p, ok := os.LookupEnv(testInitEnv); ok {
		testInitPath = p
	} else if os.Geteuid() == 0 {
		dir, err := os.MkdirTemp("", "sandbox-init-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandbox tests:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if p, err := buildInit(dir); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox tests: cannot build %s, testing the /proc/self/exe fallback only: %v\n", InitBinaryName, err)
		} else {
			testInitPath = p
		}
	}
	return m.Run()
}

// buildInit builds cmd/bullpen-sandbox-init into dir (mode 0700: the
// Manager must not need the sandbox uids to reach it).
func buildInit(dir string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, InitBinaryName)
	out, err := exec.Command(gobin, "build", "-o", p, "github.com/bullpen-hq/bullpen/cmd/bullpen-sandbox-init").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return p, nil
}

// initModes are the init binaries to test: the dedicated one (when built)
// and the re-exec fallback.
func initModes() map[string]string {
	modes := map[string]string{"reexec": "/proc/self/exe"}
	if testInitPath != "" {
		modes["dedicated"] = testInitPath
	}
	return modes
}

// testEnv is a Manager on a fresh state dir; cleanup terminates everything
// and checks nothing leaked.
type testEnv struct {
	t      *testing.T
	m      *Manager
	cfg    Config
	mu     sync.Mutex
	events []Event
}

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("sandbox tests need root (namespaces, cgroups, overlay, nftables)")
	}
}

func newEnv(t *testing.T, mod ...func(*Config)) *testEnv {
	t.Helper()
	needRoot(t)
	e := &testEnv{t: t}
	e.cfg = Config{
		InitPath:      testInitPath,
		StateDir:      t.TempDir(),
		CheckInterval: 50 * time.Millisecond,
		OnEvent: func(ev Event) {
			e.mu.Lock()
			e.events = append(e.events, ev)
			e.mu.Unlock()
		},
	}
	// BULLPEN_TEST_INIT_POOL=0 runs the suite on the cold start path.
	if v, ok := os.LookupEnv("BULLPEN_TEST_INIT_POOL"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("BULLPEN_TEST_INIT_POOL: %v", err)
		}
		e.cfg.InitPool = &n
	}
	for _, f := range mod {
		f(&e.cfg)
	}
	m, err := New(context.Background(), e.cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.m = m
	// Creates take pre-started inits only once the pool has filled: wait,
	// so that the tests exercise the pooled path they would get in use.
	e.waitPool()
	t.Cleanup(func() {
		if e.m == nil {
			return
		}
		ids := e.ids()
		pooled := e.pooled()
		if err := e.m.TerminateAll(context.Background()); err != nil {
			t.Errorf("TerminateAll: %v", err)
		}
		e.m.Close()
		for _, id := range ids {
			e.checkGone(id)
		}
		e.checkPoolGone(pooled)
	})
	return e
}

func (e *testEnv) ids() []string {
	infos, _ := e.m.List(context.Background(), nil)
	var out []string
	for _, in := range infos {
		out = append(out, in.ID)
	}
	return out
}

// checkGone verifies that nothing of sandbox id is left on the host.
func (e *testEnv) checkGone(id string) {
	t := e.t
	t.Helper()
	if e.m.cg.exists(id) {
		t.Errorf("%s: cgroup left", id)
	}
	if mi := nsMountinfo(t, e.m); strings.Contains(mi, id) {
		t.Errorf("%s: mount left in mountinfo", id)
	}
	if _, err := os.Stat(filepath.Join(e.m.sbDir, id)); err == nil {
		t.Errorf("%s: state dir left", id)
	}
	if _, err := os.Stat(filepath.Join(e.m.runDir, id)); err == nil {
		t.Errorf("%s: mount point left", id)
	}
	if e.m.net.exists(id) {
		t.Errorf("%s: network left", id)
	}
}

func (e *testEnv) create(spec Spec) Info {
	e.t.Helper()
	in, err := e.m.Create(context.Background(), spec)
	if err != nil {
		e.t.Fatalf("Create: %v", err)
	}
	return in
}

func (e *testEnv) run(id string, cmd ...string) RunResult {
	e.t.Helper()
	r, err := e.m.Run(context.Background(), id, ExecRequest{Cmd: cmd, Timeout: 30 * time.Second})
	if err != nil {
		e.t.Fatalf("Run %v: %v", cmd, err)
	}
	return r
}

// sh runs a shell script and returns stdout; it fails the test on a
// non-zero exit.
func (e *testEnv) sh(id, script string) string {
	e.t.Helper()
	r := e.run(id, "/bin/sh", "-c", script)
	if r.ExitCode != 0 {
		e.t.Fatalf("sh %q: exit %d\nstdout: %s\nstderr: %s", script, r.ExitCode, r.Stdout, r.Stderr)
	}
	return string(r.Stdout)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if !bullpen.IsCode(err, code) {
		t.Fatalf("got error %v, want code %s", err, code)
	}
}

func (e *testEnv) eventTypes(id string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.events {
		if ev.SandboxID == id {
			out = append(out, string(ev.Type))
		}
	}
	return out
}

var _ = fmt.Sprintf

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
