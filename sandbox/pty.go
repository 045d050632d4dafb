package sandbox

import (
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// A command runs on a terminal (a PTY) under script(1) in the sandbox:
// script gives its child a terminal of its own and copies between it and
// the exec's pipes. The size is set with stty before the command starts,
// and changed later by a short command that runs stty on the child's
// terminal (PTYResizeCommand). An ExecRequest asks for it with PTY; the
// E2B API's PTYs and the dashboard's terminal both run this way.

// MaxPTYSide bounds a PTY's rows and columns.
const MaxPTYSide = 1000

func checkPTYSize(rows, cols int) error {
	if rows < 1 || cols < 1 || rows > MaxPTYSide || cols > MaxPTYSide {
		return bullpen.Errorf(bullpen.EINVALID, "pty size must be between 1 and %d rows and columns", MaxPTYSide)
	}
	return nil
}

// CheckPTYSize checks a terminal's size, for drivers that make their own
// terminals.
func CheckPTYSize(rows, cols int) error { return checkPTYSize(rows, cols) }

// ptyCommand returns cmd run on a terminal of rows×cols.
func ptyCommand(cmd []string, rows, cols int) ([]string, error) {
	if len(cmd) == 0 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "a PTY needs a command")
	}
	if err := checkPTYSize(rows, cols); err != nil {
		return nil, err
	}
	line := fmt.Sprintf("stty rows %d cols %d 2>/dev/null; exec %s", rows, cols, ShellJoin(cmd))
	return []string{"script", "-qfec", line, "/dev/null"}, nil
}

// PTYResizeCommand returns the command that, run in the same sandbox,
// resizes the terminal of the PTY command whose pid (script's, in the
// sandbox) is pid.
func PTYResizeCommand(pid, rows, cols int) ([]string, error) {
	if pid <= 0 {
		return nil, bullpen.Errorf(bullpen.EINVALID, "no PTY process to resize")
	}
	if err := checkPTYSize(rows, cols); err != nil {
		return nil, err
	}
	script := fmt.Sprintf(`for c in $(cat /proc/%d/task/*/children); do t=$(readlink /proc/$c/fd/0) && stty -F "$t" rows %d cols %d; done`, pid, rows, cols)
	return []string{"sh", "-c", script}, nil
}

// ShellJoin quotes words for sh.
func ShellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
