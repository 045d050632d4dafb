package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
	"github.com/bullpen-hq/bullpen/web"
)

const secretValue = "s3cr3t-value-never-shown"

// Every lifecycle call over HTTP, with a real sandbox: create with the full
// spec, get by id and name, list by tag, stats, pause/resume, stop/start
// (files kept), snapshot to an image a new sandbox starts from, terminate.
func TestSandboxLifecycleAPI(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.Token, map[string]any{
		"name": "work", "tags": map[string]string{"team": "core"}, "workdir": "/home/sandbox",
		"cpu": 0.5, "memory": "256Mi", "pids": 128, "env": map[string]string{"GREETING": "hi"},
		"secrets": []map[string]string{{"name": "API_KEY", "value": secretValue},
			{"name": "KEYFILE", "value": secretValue + "-file", "file": "/home/sandbox/.key"}},
		"timeout": "1h", "idle_timeout": 600, "network": map[string]any{"allow": []string{}}, "ports": []int{},
	})
	if sb.State != "running" || sb.Name != "work" || sb.MemoryBytes != 256<<20 || sb.Tags["team"] != "core" ||
		sb.Timeout != 3600 || sb.OwnerID != 1 || len(sb.SecretNames) != 2 {
		t.Fatalf("created %+v", sb)
	}
	if _, ok := sb.Tags["bullpen.owner"]; ok {
		t.Errorf("reserved owner tag shown in tags: %v", sb.Tags)
	}
	if out, _ := s.run(s.Token, sb.ID, `echo "$GREETING $API_KEY"; cat /home/sandbox/.key`); out != "hi "+secretValue+"\n"+secretValue+"-file" {
		t.Errorf("env and secrets inside: %q", out)
	}

	var got sbView
	for _, ref := range []string{sb.ID, "work"} {
		if st := s.do("GET", "/api/v1/sandboxes/"+ref, s.Token, nil, &got); st != 200 || got.ID != sb.ID {
			t.Errorf("GET %s = %d %+v", ref, st, got)
		}
	}
	var page struct{ Items []sbView }
	s.create(s.Token, map[string]any{"tags": map[string]string{"team": "other"}})
	if st := s.do("GET", "/api/v1/sandboxes?tag=team=core", s.Token, nil, &page); st != 200 || len(page.Items) != 1 || page.Items[0].ID != sb.ID {
		t.Errorf("list by tag = %d %+v", st, page.Items)
	}
	if st := s.do("GET", "/api/v1/sandboxes?stats=true", s.Token, nil, &page); st != 200 || len(page.Items) != 2 || page.Items[0].Usage == nil {
		t.Errorf("list with stats = %d %+v", st, page.Items)
	}
	var usage struct {
		MemoryBytes int64 `json:"memory_bytes"`
		Pids        int64 `json:"pids"`
	}
	if st := s.do("GET", "/api/v1/sandboxes/"+sb.ID+"/stats", s.Token, nil, &usage); st != 200 || usage.MemoryBytes <= 0 || usage.Pids < 1 {
		t.Errorf("stats = %d %+v", st, usage)
	}

	action := func(name, wantState string) {
		t.Helper()
		var v sbView
		if st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/"+name, s.Token, nil, &v); st != 200 || v.State != wantState {
			t.Fatalf("%s = %d state %q, want %s", name, st, v.State, wantState)
		}
	}
	action("pause", "paused")
	var e apiError
	st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/run", s.Token, map[string]any{"cmd": "true"}, &e)
	wantError(t, "run in a paused sandbox", st, e, 409, bullpen.ECONFLICT)
	action("resume", "running")
	s.run(s.Token, sb.ID, "echo kept > kept.txt")
	action("stop", "stopped")
	action("start", "running")
	if out, _ := s.run(s.Token, sb.ID, "cat kept.txt"); out != "kept\n" {
		t.Errorf("after stop/start: %q", out)
	}

	var snap struct{ Image, Name string }
	if st := s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/snapshot", s.Token, map[string]any{"name": "work-snap"}, &snap); st != 201 || snap.Image == "" || snap.Name != "work-snap" {
		t.Fatalf("snapshot = %d %+v, want an image ID and the name work-snap", st, snap)
	}
	byName := s.create(s.Token, map[string]any{"image": snap.Name})
	if out, _ := s.run(s.Token, byName.ID, "cat kept.txt"); out != "kept\n" {
		t.Errorf("sandbox from the snapshot's name: %q", out)
	}
	s.do("DELETE", "/api/v1/sandboxes/"+byName.ID, s.Token, nil, nil)
	st = s.do("POST", "/api/v1/sandboxes/"+sb.ID+"/snapshot", s.Token, map[string]any{"name": "work-snap"}, &e)
	wantError(t, "snapshot onto an existing name", st, e, 409, bullpen.ECONFLICT)
	from := s.create(s.Token, map[string]any{"image": snap.Image})
	if out, _ := s.run(s.Token, from.ID, "cat kept.txt; test -e .key || echo no-secret-file"); out != "kept\nno-secret-file\n" {
		t.Errorf("sandbox from snapshot: %q", out)
	}
	s.do("DELETE", "/api/v1/sandboxes/"+from.ID, s.Token, nil, nil)

	if st := s.do("DELETE", "/api/v1/sandboxes/work", s.Token, nil, nil); st != 204 {
		t.Fatalf("terminate = %d", st)
	}
	if st := s.do("GET", "/api/v1/sandboxes/work", s.Token, nil, &e); st != 404 {
		t.Errorf("GET by name after terminate = %d, want 404", st)
	}

	// Secret values never leave: not in any read, not in the event log.
	for _, path := range []string{"/api/v1/sandboxes", "/api/v1/sandboxes/" + sb.ID, "/api/v1/events?limit=1000"} {
		resp := s.req("GET", path, s.Token, nil, "")
		body := readAll(t, resp)
		if strings.Contains(body, secretValue) {
			t.Errorf("%s shows a secret value: %s", path, body)
		}
	}
}

// Lifecycle changes and commands are stored office events the owner (and
// admins) see; another member does not.
func TestSandboxEvents(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	sb := s.create(s.BobToken, map[string]any{"name": "bobs"})
	r := s.exec(s.BobToken, sb.ID, map[string]any{"cmd": []string{"sh", "-c", "echo hi; exit 3"}})
	s.do("POST", "/api/v1/sandboxes/bobs/stop", s.BobToken, nil, nil)
	s.do("DELETE", "/api/v1/sandboxes/bobs", s.BobToken, nil, nil)

	carol, carolToken := s.addMember("carol", false)
	_ = carol
	type ev struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	var evs struct{ Items []ev }
	deadline := time.Now().Add(5 * time.Second)
	want := []string{"sandbox.created", "sandbox.exec_started", "sandbox.exec_finished", "sandbox.state", "sandbox.state"}
	var got []string
	for time.Now().Before(deadline) {
		s.do("GET", "/api/v1/events?limit=1000", s.BobToken, nil, &evs)
		got = got[:0]
		for _, e := range evs.Items {
			if strings.HasPrefix(e.Type, "sandbox.") {
				got = append(got, e.Type)
			}
		}
		if len(got) >= len(want) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("sandbox events for the owner = %v, want %v", got, want)
	}
	var fin struct {
		Command    string `json:"command"`
		ExitCode   int    `json:"exit_code"`
		ExecID     string `json:"exec_id"`
		DurationMS *int64 `json:"duration_ms"`
	}
	var states []string
	for _, e := range evs.Items {
		switch e.Type {
		case "sandbox.exec_finished":
			json.Unmarshal(e.Payload, &fin)
		case "sandbox.state":
			var p struct{ State string }
			json.Unmarshal(e.Payload, &p)
			states = append(states, p.State)
		}
	}
	if fin.Command != "echo hi; exit 3" || fin.ExitCode != 3 || fin.ExecID != r.ExecID { // a sh -c command line shows as written
		t.Errorf("exec_finished payload %+v (stream exec id %s)", fin, r.ExecID)
	}
	if strings.Join(states, ",") != "stopped,terminated" {
		t.Errorf("states %v", states)
	}
	s.do("GET", "/api/v1/events?limit=1000", carolToken, nil, &evs)
	for _, e := range evs.Items {
		if strings.HasPrefix(e.Type, "sandbox.") {
			t.Errorf("another member sees %s", e.Type)
		}
	}
	s.do("GET", "/api/v1/events?limit=1000", s.Token, nil, &evs)
	n := 0
	for _, e := range evs.Items {
		if strings.HasPrefix(e.Type, "sandbox.") {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("the admin sees %d sandbox events, want %d", n, len(want))
	}
}

// Members see and act only on their own sandboxes (others' are "not
// found"); admins on all; agents only on their own; image management is
// for admins.
func TestSandboxPermissions(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	mine := s.create(s.BobToken, map[string]any{"name": "bob-box"})
	_, carol := s.addMember("carol", false)
	_, agent := s.addMember("robo", true)

	var page struct{ Items []sbView }
	if s.do("GET", "/api/v1/sandboxes", carol, nil, &page); len(page.Items) != 0 {
		t.Errorf("carol lists %d sandboxes, want 0", len(page.Items))
	}
	const cmd = `{"cmd":"touch /tmp/pwned"}`
	denied := []struct{ method, path, body string }{
		{"GET", "/api/v1/sandboxes/" + mine.ID, ""},
		{"GET", "/api/v1/sandboxes/bob-box", ""},
		{"GET", "/api/v1/sandboxes/" + mine.ID + "/stats", ""},
		{"POST", "/api/v1/sandboxes/" + mine.ID + "/exec", cmd},
		{"POST", "/api/v1/sandboxes/" + mine.ID + "/run", cmd},
		{"GET", "/api/v1/sandboxes/" + mine.ID + "/files?path=/etc/passwd", ""},
		{"PUT", "/api/v1/sandboxes/" + mine.ID + "/files?path=x", "data"},
		{"DELETE", "/api/v1/sandboxes/" + mine.ID + "/files?path=/home/sandbox", ""},
		{"GET", "/api/v1/sandboxes/" + mine.ID + "/files/list", ""},
		{"POST", "/api/v1/sandboxes/" + mine.ID + "/files/mkdir", `{"path":"d"}`},
		{"POST", "/api/v1/sandboxes/" + mine.ID + "/stop", ""},
		{"POST", "/api/v1/sandboxes/" + mine.ID + "/snapshot", `{"name":"stolen"}`},
		{"GET", "/api/v1/sandboxes/" + mine.ID + "/ports", ""},
		{"POST", "/api/v1/sandboxes/" + mine.ID + "/ports", `{"port":80}`},
		{"DELETE", "/api/v1/sandboxes/" + mine.ID, ""},
	}
	for _, who := range []struct{ name, token string }{{"carol", carol}, {"agent", agent}} {
		for _, d := range denied {
			resp := s.req(d.method, d.path, who.token, strings.NewReader(d.body), "application/json")
			got := readAll(t, resp)
			if resp.StatusCode != 404 || !strings.Contains(got, `"not_found"`) {
				t.Errorf("%s: %s %s = %d %s, want 404", who.name, d.method, d.path, resp.StatusCode, got)
			}
		}
	}
	if out, _ := s.run(s.BobToken, mine.ID, "test -e /tmp/pwned && echo pwned || echo clean"); out != "clean\n" {
		t.Errorf("another member's command ran: %q", out)
	}
	// The agent has its own; bob cannot see it, the admin sees both.
	theirs := s.create(agent, map[string]any{})
	if st := s.do("GET", "/api/v1/sandboxes/"+theirs.ID, s.BobToken, nil, nil); st != 404 {
		t.Errorf("bob GET agent's sandbox = %d, want 404", st)
	}
	if st := s.do("GET", "/api/v1/sandboxes/"+theirs.ID, agent, nil, nil); st != 200 {
		t.Errorf("agent GET own sandbox = %d", st)
	}
	if s.do("GET", "/api/v1/sandboxes", s.Token, nil, &page); len(page.Items) != 2 {
		t.Errorf("admin lists %d sandboxes, want 2", len(page.Items))
	}
	if out, _ := s.run(s.Token, mine.ID, "echo admin"); out != "admin\n" {
		t.Errorf("admin run in bob's sandbox: %q", out)
	}
	// Owner tags cannot be forged or filtered on.
	var e apiError
	st := s.do("POST", "/api/v1/sandboxes", carol, map[string]any{"tags": map[string]string{"bullpen.owner": "2"}}, &e)
	wantError(t, "forged owner tag", st, e, 400, bullpen.EINVALID)
	st = s.do("GET", "/api/v1/sandboxes?tag=bullpen.owner=2", carol, nil, &e)
	wantError(t, "filter on owner tag", st, e, 400, bullpen.EINVALID)
	// A member has at most MaxPerMember (4 here) sandboxes.
	for i := 0; i < 3; i++ {
		s.create(s.BobToken, map[string]any{})
	}
	st = s.do("POST", "/api/v1/sandboxes", s.BobToken, map[string]any{}, &e)
	wantError(t, "fifth sandbox", st, e, 429, bullpen.ERATELIMIT)
	// Images: listing is for everyone, changes for admins.
	if st := s.do("GET", "/api/v1/images", carol, nil, nil); st != 200 {
		t.Errorf("carol lists images: %d", st)
	}
	st = s.do("POST", "/api/v1/images/pull", carol, map[string]any{"ref": "127.0.0.1:1/x:1"}, &e)
	wantError(t, "member pulls", st, e, 403, bullpen.EFORBIDDEN)
	st = s.do("DELETE", "/api/v1/images/anything", carol, nil, &e)
	wantError(t, "member removes an image", st, e, 403, bullpen.EFORBIDDEN)
	resp := s.req("POST", "/api/v1/images/import?name=x", carol, strings.NewReader("tar"), "application/x-tar")
	if resp.StatusCode != 403 {
		t.Errorf("member imports: %d", resp.StatusCode)
	}
	resp.Body.Close()
	// Unauthenticated: nothing.
	if st := s.do("GET", "/api/v1/sandboxes", "", nil, nil); st != http.StatusUnauthorized {
		t.Errorf("no token: %d", st)
	}
}

// Without a sandbox service the API answers "unavailable" and the rest of
// the server works.
func TestSandboxesUnavailable(t *testing.T) {
	ts := newServer(t, web.Config{})
	var e apiError
	st := ts.do("GET", "/api/v1/sandboxes", ts.Token, nil, &e)
	wantError(t, "list", st, e, 503, bullpen.EUNAVAILABLE)
	if !strings.Contains(e.Error.Message, "root") {
		t.Errorf("message %q does not say why", e.Error.Message)
	}
	st = ts.do("PUT", "/api/v1/sandboxes/x/files?path=a", ts.Token, strings.Repeat("x", 100000), &e)
	wantError(t, "upload", st, e, 503, bullpen.EUNAVAILABLE)
	if st := ts.do("GET", "/api/v1/channels", ts.Token, nil, nil); st != 200 {
		t.Errorf("channels: %d", st)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Ensure gives an agent one persistent workspace: created on first use,
// the same one after, started again when stopped; the agent sees it
// through the API as its own.
func TestSandboxEnsure(t *testing.T) {
	s := newSandboxServer(t, web.Config{})
	robo, roboToken := s.addMember("robo", true)
	ctx := context.Background()
	first, err := s.Svc.Ensure(ctx, robo, sandbox.Spec{MemoryBytes: 128 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if bullpen.SandboxName(first.Name, first.Tags) != "agent-robo" || first.State != sandbox.StateRunning {
		t.Fatalf("first Ensure = %+v", first)
	}
	if err := s.Svc.Stop(ctx, robo, first.ID); err != nil {
		t.Fatal(err)
	}
	again, err := s.Svc.Ensure(ctx, robo, sandbox.Spec{})
	if err != nil || again.ID != first.ID || again.State != sandbox.StateRunning {
		t.Fatalf("second Ensure = %+v, %v; want %s running", again, err, first.ID)
	}
	var v sbView
	if st := s.do("GET", "/api/v1/sandboxes/agent-robo", roboToken, nil, &v); st != 200 || v.OwnerID != robo.ID {
		t.Errorf("agent GET its workspace = %d %+v", st, v)
	}
	if st := s.do("GET", "/api/v1/sandboxes/agent-robo", s.BobToken, nil, nil); st != 404 {
		t.Errorf("bob GET the agent's workspace = %d, want 404", st)
	}
	// Another member's workspace is its own, named alike, even when
	// someone else has a sandbox of that name.
	s.create(s.Token, map[string]any{"name": "agent-bob"})
	bobs, err := s.Svc.Ensure(ctx, s.Bob, sandbox.Spec{})
	if err != nil || bobs.ID == first.ID || bullpen.SandboxName(bobs.Name, bobs.Tags) != "agent-bob" || bullpen.SandboxOwner(bobs.Tags) != s.Bob.ID {
		t.Errorf("Ensure for bob with agent-bob taken by the admin = %+v, %v", bobs, err)
	}
}
