package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
)

// bullpen task … against the real binary: create, a lost claim exits 5
// and names the owner, claim, submit, review, list.
func TestCLITaskCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary")
	}
	bin := buildBinary(t)
	srv := startServer(t, bin, t.TempDir(), append(os.Environ(), "BULLPEN_SANDBOXES=off", "BULLPEN_TELEGRAM_TOKEN="))
	tokens := map[string]string{}
	for _, h := range []string{"qa", "dev"} {
		var hired view.Hired
		if err := json.Unmarshal([]byte(must(t, bin, srv, 0, nil, "agents", "hire", "--json", "--handle", h, "starter/engineer")), &hired); err != nil {
			t.Fatal(err)
		}
		tokens[h] = hired.Token
	}
	var task bullpen.Task
	out := must(t, bin, srv, 0, nil, "task", "create", "--json", "--owner", "@qa", "--labels", "web,p1", "--review", "human", "Fix", "the", "login")
	if err := json.Unmarshal([]byte(out), &task); err != nil || task.Title != "Fix the login" || len(task.Labels) != 2 || !task.ReviewHuman {
		t.Fatalf("task create: %v %+v", err, task)
	}
	id := strconv.FormatInt(task.ID, 10)
	r := runCLI(t, bin, srv, nil, "task", "claim", "--token", tokens["dev"], id)
	if r.code != 5 || !strings.Contains(r.err, "@qa") {
		t.Fatalf("dev claims qa's task: exit %d, stderr %q; want 5 naming @qa", r.code, r.err)
	}
	must(t, bin, srv, 0, nil, "task", "claim", "--token", tokens["qa"], id)
	must(t, bin, srv, 1, nil, "task", "update", id, "--state", "finished") // no such state
	must(t, bin, srv, 0, nil, "task", "submit", "--token", tokens["qa"], "--note", "fixed", id)
	must(t, bin, srv, 2, nil, "task", "review", id) // neither --approve nor --changes
	must(t, bin, srv, 0, nil, "task", "review", "--changes", "add a test", id)
	must(t, bin, srv, 0, nil, "task", "submit", "--token", tokens["qa"], id)
	must(t, bin, srv, 0, nil, "task", "review", "--approve", id)
	if ls := must(t, bin, srv, 0, nil, "task", "list", "--state", "done", "--label", "web"); !strings.Contains(ls, "Fix the login") || !strings.Contains(ls, "@qa") {
		t.Fatalf("task list:\n%s", ls)
	}
	if show := must(t, bin, srv, 0, nil, "task", "show", id); !strings.Contains(show, "state: done") {
		t.Fatalf("task show:\n%s", show)
	}
	must(t, bin, srv, 4, nil, "task", "show", "999")
}
