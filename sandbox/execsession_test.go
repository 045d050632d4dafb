package sandbox

import (
	"strings"
	"testing"
)

// A command leads its own process group (so killing the group reaches
// what it forks) inside init's session, which has no controlling
// terminal; it is no session leader, so it cannot acquire one.
func TestExecProcessGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(Spec{})
	// /proc/self/stat: pid (comm) state ppid pgrp session tty_nr ...
	f := strings.Fields(e.sh(sb.ID, "exec cat /proc/self/stat"))
	if len(f) < 7 {
		t.Fatalf("stat: %q", f)
	}
	pid, pgrp, session, tty := f[0], f[4], f[5], f[6]
	if pgrp != pid {
		t.Fatalf("pgrp %s, want the command's own (%s)", pgrp, pid)
	}
	if session == pid || tty != "0" {
		t.Fatalf("session %s (pid %s), tty %s: want init's session and no terminal", session, pid, tty)
	}
	if out := e.sh(sb.ID, "exec cat /proc/1/stat"); strings.Fields(out)[6] != "0" {
		t.Fatalf("init has a controlling terminal: %q", out)
	}
}
