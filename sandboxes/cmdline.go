package sandboxes

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxCommandLine bounds the command line an exec event carries.
const maxCommandLine = 300

// commandLine renders a command for events and the exec history, clipped:
// as a shell would read it back, so an argument's quoting survives
// (["python3", "-c", "print('a b')"] is python3 -c "print('a b')", not
// python3 -c print('a b')). A command line run by sh -c (the API's string
// form, agents' sandbox_exec) is shown as it was written.
func commandLine(cmd []string) string {
	s := shellJoin(cmd)
	if len(cmd) == 3 && cmd[1] == "-c" && isShell(cmd[0]) {
		s = cmd[2]
	}
	if len(s) > maxCommandLine {
		s = s[:maxCommandLine]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

func isShell(name string) bool {
	switch name {
	case "sh", "/bin/sh", "bash", "/bin/bash", "/usr/bin/bash":
		return true
	}
	return false
}

// shellJoin joins words, quoting those a shell would split or expand.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellWord(w)
	}
	return strings.Join(q, " ")
}

// shellWord quotes w when it needs it: in single quotes, or in double
// quotes when it holds a single quote and nothing double quotes expand.
func shellWord(w string) string {
	switch {
	case w == "":
		return "''"
	case strings.IndexFunc(w, needsQuote) < 0:
		return w
	case !strings.Contains(w, "'"):
		return "'" + w + "'"
	case !strings.ContainsAny(w, "\"$`\\!"):
		return `"` + w + `"`
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// needsQuote reports whether r, unquoted, means something to a shell (or
// is not visible).
func needsQuote(r rune) bool {
	if r < utf8.RuneSelf {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r))
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}
