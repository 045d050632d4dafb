package podinit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A command the driver runs with a PTY gets a terminal from the helper
// itself ("exec" with the option pty=ROWSxCOLS), so that no image needs
// script(1): the helper opens a pseudo-terminal, starts the command as
// the leader of a new session with the terminal as its controlling
// one and its stdin, stdout and stderr, and copies between the
// terminal and its own stdin and stdout. "resize TAG ROWS COLS" sets
// the size of that terminal: the kernel tells the command (SIGWINCH).

// execOpts are the options of "exec" (its KILLTREE argument): "0", "1",
// or comma-separated "tree" and "pty=ROWSxCOLS".
type execOpts struct {
	killTree   bool
	rows, cols int // 0: no terminal
}

func parseExecOpts(s string) (execOpts, error) {
	var o execOpts
	for _, f := range strings.Split(s, ",") {
		switch {
		case f == "1" || f == "tree":
			o.killTree = true
		case f == "0" || f == "":
		case strings.HasPrefix(f, "pty="):
			r, c, ok := strings.Cut(strings.TrimPrefix(f, "pty="), "x")
			rows, err1 := strconv.Atoi(r)
			cols, err2 := strconv.Atoi(c)
			if !ok || err1 != nil || err2 != nil || rows < 1 || cols < 1 || rows > 1000 || cols > 1000 {
				return o, fmt.Errorf("bad terminal size %q", f)
			}
			o.rows, o.cols = rows, cols
		default:
			return o, fmt.Errorf("unknown exec option %q", f)
		}
	}
	return o, nil
}

// openPTY opens a new pseudo-terminal of rows×cols: its master and its
// slave.
func openPTY(rows, cols int) (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open a terminal: %w", err)
	}
	fd := int(m.Fd())
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0)
	}
	if err == nil {
		err = unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
	}
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("set up a terminal: %w", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("open a terminal: %w", err)
	}
	return m, s, nil
}

// startOnPTY starts cmd on a new terminal of rows×cols and relays it to
// stdin and stdout; the returned wait waits for the command and then for
// its output to be copied.
func startOnPTY(cmd *exec.Cmd, rows, cols int, stdin io.Reader, stdout io.Writer) (wait func() error, err error) {
	m, s, err := openPTY(rows, cols)
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		m.Close()
		s.Close()
		return nil, err
	}
	s.Close()
	copied := make(chan struct{})
	go func() {
		// EIO once the command and everything that held the terminal
		// are gone: the end of the output.
		_, _ = io.Copy(stdout, m)
		close(copied)
	}()
	go func() { _, _ = io.Copy(m, stdin) }() // the terminal stays open at the input's end, as script(1) does
	return func() error {
		err := cmd.Wait()
		<-copied
		m.Close()
		return err
	}, nil
}

// resizeExec is "resize TAG ROWS COLS": it sets the size of the terminal
// of the command "exec TAG" runs on a PTY (the controlling terminal of
// the helper's child).
func resizeExec(args []string) error {
	if len(args) != 4 {
		return codedError{ExitInvalid, errors.New("usage: resize TAG ROWS COLS")}
	}
	o, err := parseExecOpts("pty=" + args[2] + "x" + args[3])
	if err != nil {
		return codedError{ExitInvalid, err}
	}
	pids, err := tagged("\x00exec\x00" + args[1] + "\x00")
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return codedError{ExitNotFound, errors.New("no such exec")}
	}
	helper := pids[0]
	// Each thread lists the children it forked: the helper's are in one
	// of its threads' lists.
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(helper) + "/task/*/children")
	if err != nil {
		return err
	}
	var kids []string
	for _, t := range tasks {
		if b, err := os.ReadFile(t); err == nil {
			kids = append(kids, strings.Fields(string(b))...)
		}
	}
	for _, k := range kids {
		tty, err := os.Readlink("/proc/" + k + "/fd/0")
		if err != nil || !strings.HasPrefix(tty, "/dev/pts/") {
			continue
		}
		f, err := os.OpenFile(tty, os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.IoctlSetWinsize(int(f.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(o.rows), Col: uint16(o.cols)})
	}
	return codedError{ExitNotFound, fmt.Errorf("exec %s has no terminal", args[1])}
}
