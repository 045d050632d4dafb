package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/view"
)

// apiClient calls the REST API of a running Main with the admin token.
type apiClient struct {
	t     testing.TB
	base  string
	token string
}

// do sends body (JSON) and decodes the answer into out; it fails the test
// unless the status is want.
func (c apiClient) do(method, path string, body any, want int, out any) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, c.base+path, r)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// The scenario against the whole program with the real wiki and
// real sandboxes; only the model is scripted (the `bullpen demo` script).
// A human asks @lead, lead hands off to @engineer, engineer runs a real
// command in its own sandbox and writes a real wiki page, and lead answers
// the human. The event log (GET /api/v1/events) shows it all, in order.
func TestAgentsEndToEndRealWikiAndSandbox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the real sandboxes need root")
	}
	var out strings.Builder
	m := NewMain(&out, io.Discard)
	if err := m.ParseFlags("demo", []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	m.Demo = true // the scripted provider of `bullpen demo`
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	defer func() {
		if m.Sandboxes != nil {
			m.Sandboxes.Manager().TerminateAll(context.Background())
		}
		m.Close(context.Background())
	}()
	if m.Sandboxes == nil {
		t.Fatal("the server started without sandboxes")
	}
	api := apiClient{t: t, base: m.URL() + "api/v1", token: tokenRE.FindString(out.String())}

	var me bullpen.Member
	api.do("GET", "/me", nil, http.StatusOK, &me)

	// Hire the starter team through the API.
	var roles struct {
		Items []bullpen.RoleInfo `json:"items"`
	}
	api.do("GET", "/roles", nil, http.StatusOK, &roles)
	ids := map[int64]string{me.ID: me.Handle}
	for _, r := range roles.Items {
		if !strings.HasPrefix(r.ID, "starter/") {
			continue
		}
		var h view.Hired
		api.do("POST", "/agents", map[string]string{"role": r.ID}, http.StatusCreated, &h)
		ids[h.Agent.ID] = h.Agent.Handle
	}
	for _, want := range []string{"lead", "pm", "engineer", "designer"} {
		found := false
		for _, h := range ids {
			found = found || h == want
		}
		if !found {
			t.Fatalf("starter team hired %v, no @%s", ids, want)
		}
	}

	var evs struct {
		Items []bullpen.Event `json:"items"`
	}
	api.do("GET", "/events?since=0&limit=1000", nil, http.StatusOK, &evs)
	since := int64(0)
	if n := len(evs.Items); n > 0 {
		since = evs.Items[n-1].Seq
	}

	var ask bullpen.Message
	api.do("POST", "/channels/1/messages", map[string]string{"body": "@lead please check that our build machine works"}, http.StatusCreated, &ask)

	// Wait for lead's answer to the human.
	msgOf := func(ev bullpen.Event) (bullpen.Message, bool) {
		var msg bullpen.Message
		if ev.Type != bullpen.EventMessagePosted || json.Unmarshal(ev.Payload, &msg) != nil {
			return msg, false
		}
		return msg, true
	}
	answered := func() bool {
		for _, ev := range evs.Items {
			if msg, ok := msgOf(ev); ok && ids[msg.AuthorID] == "lead" && strings.Contains(msg.Body, "@"+me.Handle) {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		api.do("GET", fmt.Sprintf("/events?since=%d&limit=1000", since), nil, http.StatusOK, &evs)
		if answered() {
			break
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, ev := range evs.Items {
				fmt.Fprintf(&b, "%d %s %s\n", ev.Seq, ev.Type, ev.Payload)
			}
			t.Fatalf("lead did not answer the human within 30s; events:\n%s", b.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	type tool struct {
		Handle string `json:"handle"`
		Tool   string `json:"tool"`
		State  string `json:"state"`
		Result string `json:"result"`
		CallID int64  `json:"call_id"`
	}
	toolOf := func(ev bullpen.Event) tool {
		var p tool
		json.Unmarshal(ev.Payload, &p)
		return p
	}
	var page bullpen.WikiEvent
	var execResult bullpen.WorkspaceResult
	steps := []struct {
		what  string
		match func(ev bullpen.Event) bool
	}{
		{"the human's message", func(ev bullpen.Event) bool {
			msg, ok := msgOf(ev)
			return ok && msg.ID == ask.ID && msg.AuthorID == me.ID
		}},
		{"lead's turn", func(ev bullpen.Event) bool {
			return ev.Type == bullpen.EventTurnStarted && toolOf(ev).Handle == "lead"
		}},
		{"lead @mentions engineer", func(ev bullpen.Event) bool {
			msg, ok := msgOf(ev)
			return ok && ids[msg.AuthorID] == "lead" && strings.Contains(msg.Body, "@engineer")
		}},
		{"engineer's turn", func(ev bullpen.Event) bool {
			return ev.Type == bullpen.EventTurnStarted && toolOf(ev).Handle == "engineer"
		}},
		{"engineer's sandbox_exec finished", func(ev bullpen.Event) bool {
			p := toolOf(ev)
			if ev.Type != bullpen.EventToolFinished || p.Handle != "engineer" || p.Tool != bullpen.ToolSandboxExec {
				return false
			}
			if p.State != "ok" || json.Unmarshal([]byte(p.Result), &execResult) != nil {
				t.Errorf("sandbox_exec finished %s with %q, want ok and an exec result", p.State, p.Result)
			}
			return true
		}},
		{"engineer writes a wiki page", func(ev bullpen.Event) bool {
			if ev.Type != bullpen.EventWikiPageSaved || json.Unmarshal(ev.Payload, &page) != nil {
				return false
			}
			return page.Author == "engineer" || ids[page.AuthorID] == "engineer"
		}},
		{"engineer reports to lead", func(ev bullpen.Event) bool {
			msg, ok := msgOf(ev)
			return ok && ids[msg.AuthorID] == "engineer" && strings.Contains(msg.Body, "@lead")
		}},
		{"lead answers the human", func(ev bullpen.Event) bool {
			msg, ok := msgOf(ev)
			return ok && ids[msg.AuthorID] == "lead" && strings.Contains(msg.Body, "@"+me.Handle)
		}},
	}
	i := 0
	for _, ev := range evs.Items {
		if i < len(steps) && steps[i].match(ev) {
			i++
		}
	}
	if i < len(steps) {
		var b strings.Builder
		for _, ev := range evs.Items {
			fmt.Fprintf(&b, "%d %s %s\n", ev.Seq, ev.Type, ev.Payload)
		}
		t.Fatalf("events are missing %q (in order); got:\n%s", steps[i].what, b.String())
	}
	for _, ev := range evs.Items {
		switch ev.Type {
		case bullpen.EventTurnFailed, bullpen.EventLimitReached:
			t.Errorf("unexpected %s: %s", ev.Type, ev.Payload)
		}
	}

	// The command really ran in a Linux sandbox.
	if execResult.ExitCode != 0 || !strings.HasPrefix(execResult.Stdout, "Linux ") || !strings.Contains(execResult.Stdout, "checked\n") {
		t.Errorf("sandbox_exec result = %+v, want exit 0 and `uname -sr && echo checked` output", execResult)
	}
	// The sandbox is a real one, owned by the engineer.
	var boxes struct {
		Items []struct {
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"items"`
	}
	api.do("GET", "/sandboxes", nil, http.StatusOK, &boxes)
	if len(boxes.Items) != 1 || boxes.Items[0].Name != "agent-engineer" {
		t.Errorf("sandboxes = %+v, want engineer's agent-engineer", boxes.Items)
	}

	// The page is really in the wiki, with the command's output.
	var got struct {
		Title string `json:"title"`
		Body  string `json:"body"`
	}
	api.do("GET", "/wiki/pages/"+url.PathEscape(page.Slug), nil, http.StatusOK, &got)
	if got.Title != page.Title || !strings.Contains(got.Body, "uname -sr") || !strings.Contains(got.Body, "Linux") {
		t.Errorf("wiki page %q = %+v, want the sandbox check with its Linux output", page.Slug, got)
	}
}
