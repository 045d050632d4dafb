package cli

import (
	"bytes"
	"context"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestSplitGlobal(t *testing.T) {
	tests := []struct {
		args       []string
		lead       []string
		cmd        string
		rest       []string
		ok, client bool
	}{
		{[]string{"--token", "x", "sandbox", "ls"}, []string{"--token", "x"}, "sandbox", []string{"ls"}, true, true},
		{[]string{"--json", "--server=http://h:1", "post", "#g", "hi"}, []string{"--json", "--server=http://h:1"}, "post", []string{"#g", "hi"}, true, true},
		{[]string{"sandbox", "ls", "--token", "x"}, []string{}, "sandbox", []string{"ls", "--token", "x"}, true, true},
		{[]string{"--addr", ":1"}, nil, "", nil, false, false}, // a server flag: the server's
		{[]string{"--token", "x"}, nil, "", nil, false, false}, // no command
		{[]string{"--data", "d", "demo"}, nil, "", nil, false, false},
		{[]string{"serve"}, []string{}, "serve", []string{}, true, false},
	}
	for _, tt := range tests {
		lead, cmd, rest, ok := splitGlobal(tt.args)
		if ok != tt.ok || cmd != tt.cmd || (ok && (!reflect.DeepEqual(lead, tt.lead) || !reflect.DeepEqual(rest, tt.rest))) {
			t.Errorf("splitGlobal(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tt.args, lead, cmd, rest, ok, tt.lead, tt.cmd, tt.rest, tt.ok)
		}
		if Is(tt.args) != tt.client {
			t.Errorf("Is(%q) = %v, want %v", tt.args, !tt.client, tt.client)
		}
	}
}

// The lead flags reach the command: a token given before the command is
// the one the request carries.
func TestLeadFlagsReachCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"--token", "", "--server", "http://127.0.0.1:1", "sandbox", "ls"},
		IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != ExitUsage && code != ExitError {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	errb.Reset()
	code = Run(context.Background(), []string{"--token", "bp_x", "--server", "http://127.0.0.1:1", "sandbox", "ls"},
		IO{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	if code != ExitError || !strings.Contains(errb.String(), "127.0.0.1:1") || !strings.Contains(errb.String(), "BULLPEN_URL") {
		t.Fatalf("exit %d, stderr %q: want the refused connection at the lead --server with the hint", code, errb.String())
	}
}

// Help lists every command, and each group's help every subcommand it
// dispatches, so neither drifts from the code.
func TestHelpListsEverything(t *testing.T) {
	var out bytes.Buffer
	if code := Help(context.Background(), []string{"help"}, IO{Stdout: &out, Stderr: &out}); code != ExitOK {
		t.Fatalf("help exit %d", code)
	}
	for name := range commands {
		if !strings.Contains(out.String(), "\n  "+name+" ") {
			t.Errorf("bullpen help does not list %s:\n%s", name, out.String())
		}
	}
	for _, c := range ServerCommands {
		if !strings.Contains(out.String(), "\n  "+c.Name+" ") {
			t.Errorf("bullpen help does not list %s", c.Name)
		}
	}
	for group, subs := range groups() {
		var h bytes.Buffer
		if code := Help(context.Background(), []string{"help", group}, IO{Stdout: &h, Stderr: &h}); code != ExitOK {
			t.Fatalf("help %s exit %d", group, code)
		}
		for _, s := range subs {
			if !strings.Contains(h.String(), "\n  "+s+" ") {
				t.Errorf("bullpen help %s does not list %s:\n%s", group, s, h.String())
			}
		}
	}
	if code := Help(context.Background(), []string{"help", "nope"}, IO{Stdout: &out, Stderr: &out}); code != ExitUsage {
		t.Errorf("help nope exit %d, want %d", code, ExitUsage)
	}
}

// The bash script completes for real: bash sources it and runs the
// completion function on typed lines.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	var script bytes.Buffer
	if code := Run(context.Background(), []string{"completion", "bash"}, IO{Stdout: &script, Stderr: &script}); code != ExitOK {
		t.Fatalf("completion bash exit %d: %s", code, script.String())
	}
	for line, want := range map[string]string{
		"bullpen sa":                       "sandbox",
		"bullpen --token x sandbox sn":     "snapshot",
		"bullpen sandbox p":                "pause ports",
		"bullpen completion z":             "zsh",
		"bullpen agents ":                  "fire hire list team",
		"bullpen --server http://h wiki s": "search",
	} {
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		prog := script.String() + "\nCOMP_WORDS=(" + quoteAll(words) + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_bullpen\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "-c", prog).CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("completing %q = %q (%v), want %q", line, got, err, want)
		}
	}
	var bad bytes.Buffer
	if code := Run(context.Background(), []string{"completion", "fish"}, IO{Stdout: &bad, Stderr: &bad}); code != ExitUsage {
		t.Errorf("completion fish exit %d, want %d", code, ExitUsage)
	}
}

func quoteAll(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "'" + w + "'"
	}
	return strings.Join(q, " ")
}
