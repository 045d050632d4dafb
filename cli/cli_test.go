package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/client"
)

func TestParseFlagsAnywhere(t *testing.T) {
	tests := []struct {
		args []string
		pos  []string
		json bool
	}{
		{[]string{"#general", "hi", "--json"}, []string{"#general", "hi"}, true},
		{[]string{"--json", "#general", "hi"}, []string{"#general", "hi"}, true},
		{[]string{"sb_1", "--", "ls", "--json"}, []string{"sb_1", "ls", "--json"}, false}, // after -- all is the command's
		{[]string{"sb_1", "echo", "x"}, []string{"sb_1", "echo", "x"}, false},
	}
	for _, tt := range tests {
		e := &env{io: IO{Stderr: &bytes.Buffer{}}}
		fs := e.flags("x", "x", "")
		pos, err := parse(fs, tt.args)
		if err != nil || !reflect.DeepEqual(pos, tt.pos) || e.json != tt.json {
			t.Errorf("parse(%q) = %q, json=%v, %v; want %q, json=%v", tt.args, pos, e.json, err, tt.pos, tt.json)
		}
	}
	e := &env{io: IO{Stderr: &bytes.Buffer{}}}
	if _, err := parse(e.flags("x", "x", ""), []string{"--no-such-flag"}); e.exit(err) != ExitUsage {
		t.Errorf("an unknown flag exits %d, want %d", e.exit(err), ExitUsage)
	}
}

func TestNetworkOf(t *testing.T) {
	tests := map[string]*client.NetworkPolicy{
		"none":                      nil,
		"":                          nil,
		"open":                      {Allow: []string{"0.0.0.0/0"}},
		"10.0.0.0/8,pypi.org":       {Allow: []string{"10.0.0.0/8"}, Domains: []string{"pypi.org"}},
		"1.2.3.4, example.com , ":   {Allow: []string{"1.2.3.4"}, Domains: []string{"example.com"}},
		"github.com,api.github.com": {Domains: []string{"github.com", "api.github.com"}},
	}
	for in, want := range tests {
		if got := networkOf(in); !reflect.DeepEqual(got, want) {
			t.Errorf("networkOf(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestRemoteAndExitCodes(t *testing.T) {
	for arg, want := range map[string][3]string{
		"sb_1:/home/x": {"sb_1", "/home/x", "true"},
		"./local":      {"", "./local", "false"},
		"/abs/path":    {"", "/abs/path", "false"},
		"-":            {"", "-", "false"},
		"plainfile":    {"", "plainfile", "false"},
	} {
		id, p, ok := remote(arg)
		if id != want[0] || p != want[1] || (ok && want[2] != "true") || (!ok && want[2] == "true") {
			t.Errorf("remote(%q) = %q %q %v", arg, id, p, ok)
		}
	}
	codes := []struct {
		res  client.ExecResult
		want int
	}{
		{client.ExecResult{ExitCode: 0}, 0},
		{client.ExecResult{ExitCode: 3}, 3},
		{client.ExecResult{TimedOut: true, ExitCode: -1}, 124},
		{client.ExecResult{Signal: "SIGKILL", ExitCode: -1}, 137},
		{client.ExecResult{Signal: "terminated", ExitCode: -1}, 137},
	}
	e := &env{io: IO{Stderr: &bytes.Buffer{}}}
	for _, c := range codes {
		if got := e.exit(exitOf(c.res)); got != c.want {
			t.Errorf("exit of %+v = %d, want %d", c.res, got, c.want)
		}
	}
}

// The token and server come from the flags, then the env, then the
// config file; a bad config file is an error, an explicit missing one too.
func TestConnectPrecedence(t *testing.T) {
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		w.Write([]byte(`{"id":1,"handle":"x"}`))
	}))
	defer ts.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cli.json")
	os.WriteFile(cfg, []byte(`{"server":"`+ts.URL+`","token":"bp_file"}`), 0o600)
	vars := map[string]string{"BULLPEN_CONFIG": cfg}
	e := &env{ctx: context.Background(), io: IO{Getenv: func(k string) string { return vars[k] }}}
	me := func() {
		t.Helper()
		if err := e.connect(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Me(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	me()
	vars["BULLPEN_TOKEN"] = "bp_env"
	me()
	e.token = "bp_flag"
	me()
	if want := []string{"Bearer bp_file", "Bearer bp_env", "Bearer bp_flag"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("tokens sent %q, want %q", seen, want)
	}
	os.WriteFile(cfg, []byte(`{not json`), 0o600)
	if err := e.connect(); err == nil || !strings.Contains(err.Error(), "config") {
		t.Errorf("a bad config file: %v", err)
	}
	e2 := &env{io: IO{Getenv: func(string) string { return "" }}, config: filepath.Join(dir, "missing.json")}
	if err := e2.connect(); err == nil {
		t.Error("an explicit missing config file was accepted")
	}
}

func TestUsageWithoutServer(t *testing.T) {
	var out, errb bytes.Buffer
	io := IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if code := Run(context.Background(), []string{"post", "#general"}, io); code != ExitUsage {
		t.Errorf("post with one argument exits %d, want %d", code, ExitUsage)
	}
	if code := Run(context.Background(), []string{"sandbox", "ls"}, io); code != ExitUsage || !strings.Contains(errb.String(), "no token") {
		t.Errorf("no token: exit %d, stderr %q", code, errb.String())
	}
	if code := Run(context.Background(), []string{"wiki", "--help"}, io); code != ExitOK {
		t.Errorf("wiki --help exits %d", code)
	}
}

// A history row is one line, a consolidation's new entries included.
func TestHistoryLine(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    bullpen.MemoryHistory
		want string
	}{
		{bullpen.MemoryHistory{EntryID: 7, Action: "consolidated", Actor: "eng", Before: "Never deploy on Fridays",
			After: "#12: Deploys: never on Fridays\n#13: Standup at 9:30", CreatedAt: at},
			"2026-12-02 09:30\t#7\tconsolidated\t@eng\tNever deploy on Fridays\t#12: Deploys: never on Fridays | #13: Standup at 9:30"},
		{bullpen.MemoryHistory{EntryID: 8, Action: "forgot", Actor: "ada", CreatedAt: at}, "2026-12-02 09:30\t#8\tforgot\t@ada\t\t"},
	} {
		if got := historyLine(tc.h); got != tc.want {
			t.Errorf("historyLine(%+v) = %q, want %q", tc.h, got, tc.want)
		}
	}
}
