package agents

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A role file's YAML problems are all reported, each at its line in the
// file: in a Markdown role the front matter starts on line 2.
func TestRoleFileAllErrorsAndLines(t *testing.T) {
	body := "---\nhandle: qa\nname: QA\ntols: [post_message]\nbudgets:\n  max_stepz: 3\n---\nYou test.\n"
	_, errs := parseRole("roles/qa.md", []byte(body))
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, problemText(e))
	}
	got := strings.Join(msgs, "\n")
	if len(errs) != 2 || !strings.Contains(got, `field "tols": unknown field (line 4)`) || !strings.Contains(got, `field "budgets.max_stepz": unknown field (line 6)`) {
		t.Errorf("problems =\n%s\nwant tols at line 4 and budgets.max_stepz at line 6", got)
	}
	// Value problems are all listed too, not only the first.
	bad := strings.NewReplacer("max_steps: 5", "max_steps: -1", "provider: openai", "provider: \"no such!\"").Replace(goodRole)
	if _, errs := parseRole("roles/qa.md", []byte(bad)); len(errs) != 2 {
		t.Errorf("a role with a bad provider and bad budgets gave %d problems (%v), want 2", len(errs), errs)
	}
	// A YAML syntax error counts lines from the file's first line too.
	if _, err := ParseRole("roles/qa.md", []byte("---\nhandle: qa\nname: QA\n  bad: x\n---\nYou test.\n")); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("syntax error = %v, want it at line 4", err)
	}
}

// Role files are watched: a saved change is hireable without a restart; a
// file that breaks lists all its problems under its path in the data
// directory and keeps its last good version; fixing it clears them; a new
// file appears and a removed one goes.
func TestCatalogWatchesRoleFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "roles")
	os.MkdirAll(dir, 0o755)
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("qa.md", goodRole)
	c, err := LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Watch(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	defer func() { cancel(); <-done }()
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if cond() {
				return
			}
		}
		t.Fatalf("%s: never happened; problems %+v", what, c.Problems())
	}
	title := func(id string) string {
		r, err := c.Role(id)
		if err != nil {
			return ""
		}
		return r.Title
	}

	write("qa.md", strings.Replace(goodRole, "title: Tester", "title: Senior tester", 1))
	until("the edit is live", func() bool { return title("local/qa") == "Senior tester" })

	write("qa.md", strings.NewReplacer("title: Tester", "title: Broken", "max_steps: 5", "max_steps: -1", "provider: openai", "provider: \"no such!\"").Replace(goodRole))
	until("the problems show", func() bool { return len(c.Problems()) == 1 })
	p := c.Problems()[0]
	if p.Path != filepath.Join("roles", "qa.md") || len(p.Errors) != 2 || !p.Kept || strings.Contains(p.Error, dir) {
		t.Errorf("problem = %+v, want roles/qa.md, 2 errors, kept, and no absolute path", p)
	}
	if got := title("local/qa"); got != "Senior tester" {
		t.Errorf("the broken role's title is %q, want the last good version's", got)
	}

	write("qa.md", goodRole)
	until("fixed", func() bool { return len(c.Problems()) == 0 && title("local/qa") == "Tester" })
	write("ops.yaml", "handle: ops\nname: Ops\ntools: [post_message]\nprompt: You run things.\n")
	until("a new file", func() bool { return title("local/ops") == "" && hasRole(c, "local/ops") })
	os.Remove(filepath.Join(dir, "ops.yaml"))
	until("a removed file", func() bool { return !hasRole(c, "local/ops") })
}

func hasRole(c *Catalog, id string) bool { _, err := c.Role(id); return err == nil }
