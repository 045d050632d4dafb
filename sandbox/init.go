package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox/sbinit"
	"golang.org/x/sys/unix"
)

// The inside of a sandbox (its PID 1) is package sbinit. The Manager runs
// it from a dedicated binary, cmd/bullpen-sandbox-init, when it has one,
// else by re-executing its own binary (which then must call MaybeRunInit).

// initEnv marks a process as a sandbox init; its value is the JSON
// sbinit.Config.
const initEnv = sbinit.EnvConfig

// InitBinaryName is the file name of the dedicated init binary that New
// looks for next to the running executable when Config.InitPath is empty.
const InitBinaryName = "bullpen-sandbox-init"

type (
	initConfig = sbinit.Config
	bindMount  = sbinit.Bind
)

// MaybeRunInit turns the process into a sandbox init if it was started as
// one by a Manager, and never returns in that case. Call it first thing in
// main (and in TestMain of tests that create sandboxes): without a
// dedicated init binary (see Config.InitPath) the Manager re-executes
// /proc/self/exe to start each sandbox's PID 1.
func MaybeRunInit() {
	sbinit.MaybeRun()
}

// initBinary is the executable a Manager starts its sandboxes' inits from.
type initBinary struct {
	path string // the dedicated binary; "" = re-execute /proc/self/exe
	// fd is an O_PATH handle on it, opened at New and kept for the
	// Manager's life (a stopped sandbox can be started at any time; the
	// finalizer closes it once the Manager is gone).
	fd *os.File
}

// execPath is what the Manager executes: the dedicated binary through its
// handle (so that path permissions inside the new user namespace and a
// binary replaced on disk do not matter), or /proc/self/exe.
func (b *initBinary) execPath() string {
	if b.fd == nil {
		return "/proc/self/exe"
	}
	return "/proc/self/fd/" + strconv.Itoa(int(b.fd.Fd()))
}

// findInit picks the init binary: Config.InitPath (which must work;
// "/proc/self/exe" asks for the re-exec), else InitBinaryName next to the
// executable (if it works), else none: re-exec.
func findInit(ctx context.Context, configured string) (*initBinary, error) {
	if configured == "/proc/self/exe" {
		return &initBinary{}, nil
	}
	if configured != "" {
		p, err := filepath.Abs(configured)
		if err == nil {
			var b *initBinary
			if b, err = openInit(ctx, p); err == nil {
				return b, nil
			}
		}
		return nil, &bullpen.Error{Code: bullpen.EINVALID, Message: fmt.Sprintf("Config.InitPath %q: %v", configured, err), Err: err}
	}
	if exe, err := os.Executable(); err == nil {
		if b, err := openInit(ctx, filepath.Join(filepath.Dir(exe), InitBinaryName)); err == nil {
			return b, nil
		}
	}
	return &initBinary{}, nil
}

// openInit opens p and checks that it is an init speaking our version.
func openInit(ctx context.Context, p string) (*initBinary, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o001 == 0 {
		unix.Close(fd)
		if err == nil {
			err = errors.New("not a regular file executable by others (the sandboxes' root is an unprivileged uid)")
		}
		return nil, err
	}
	// A high fd number cannot collide with the fds exec.Cmd moves around
	// for the child (0-4 and a few above).
	hi, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 100)
	unix.Close(fd)
	if err != nil {
		return nil, err
	}
	b := &initBinary{path: p, fd: os.NewFile(uintptr(hi), p)}
	if err := b.probe(ctx); err != nil {
		b.fd.Close()
		return nil, err
	}
	return b, nil
}

// probe runs the binary in version-probe mode.
func (b *initBinary) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.execPath())
	cmd.Args = []string{InitBinaryName}
	cmd.Env = []string{sbinit.EnvProbe + "=1"}
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("not a working sandbox init: %v", err)
	}
	want := InitBinaryName + " " + strconv.Itoa(sbinit.Version)
	if got := strings.TrimSpace(string(out)); got != want {
		return fmt.Errorf("not a sandbox init of this version (it says %q, want %q): rebuild it with the server", got, want)
	}
	return nil
}

func (b *initBinary) close() {
	if b.fd != nil {
		b.fd.Close()
	}
}
