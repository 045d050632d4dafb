package main

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/client"
)

// calls records which methods of the client a test used.
type calls map[string]bool

func (c calls) use(names ...string) {
	for _, n := range names {
		c[n] = true
	}
}

// Every method of the Go client, against the real server with sandboxes.
// The test binary's HTTP traffic goes through the OpenAPI validator (see
// TestMain), so each call also checks the client against the spec; the
// last step fails when a client method was added but not exercised here.
func TestClientWholeAPI(t *testing.T) {
	r := startMainWith(t)
	c, err := client.New(r.m.URL(), r.token)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	used := calls{}
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	clientOffice(t, ctx, r.m.URL(), c, used, check)
	clientAgentsAndWiki(t, ctx, c, used, check)
	clientSandboxes(t, ctx, c, used, check)
	clientWork(t, ctx, c, used, check)

	var missing []string
	ty := reflect.TypeOf(c)
	for i := range ty.NumMethod() {
		if name := ty.Method(i).Name; !used[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("client methods not exercised: %v", missing)
	}
}

func clientOffice(t *testing.T, ctx context.Context, url string, c *client.Client, used calls, check func(string, error)) {
	used.use("Me", "Members", "Member", "CreateMember", "UpdateMember", "Channels", "Channel", "ChannelNamed", "CreateChannel",
		"JoinChannel", "LeaveChannel", "OpenDM", "Post", "Messages", "Message", "Thread", "EditMessage", "DeleteMessage",
		"Tokens", "CreateToken", "RevokeToken", "Events", "Subscribe")
	me, err := c.Me(ctx)
	check("me", err)
	bob, err := c.CreateMember(ctx, bullpen.MemberInput{Handle: "bob", DisplayName: "Bob", Kind: bullpen.KindHuman})
	check("create member", err)
	title := "Tester"
	_, err = c.UpdateMember(ctx, bob.ID, bullpen.MemberUpdate{Title: &title})
	check("update member", err)
	ms, err := c.Members(ctx)
	check("members", err)
	if _, err := c.Member(ctx, bob.ID); err != nil || len(ms) < 2 {
		t.Fatalf("member: %v (%d members)", err, len(ms))
	}
	ch, err := c.CreateChannel(ctx, bullpen.ChannelInput{Name: "client-test", Topic: "from the Go client"})
	check("create channel", err)
	_, err = c.LeaveChannel(ctx, ch.ID)
	check("leave", err)
	_, err = c.JoinChannel(ctx, ch.ID)
	check("join", err)
	if got, err := c.ChannelNamed(ctx, "#client-test"); err != nil || got.ID != ch.ID {
		t.Fatalf("channel named: %v %+v", err, got)
	}
	chs, err := c.Channels(ctx)
	check("channels", err)
	_, err = c.Channel(ctx, chs[0].ID)
	check("channel", err)
	dm, err := c.OpenDM(ctx, "@bob")
	check("dm", err)
	feed, err := c.Subscribe(ctx, -1)
	check("subscribe", err)
	defer feed.Close()
	root, err := c.Post(ctx, ch.ID, 0, "hello from the client")
	check("post", err)
	if ev, err := feed.Next(ctx); err != nil || ev.Type != bullpen.EventMessagePosted {
		t.Fatalf("feed: %v %+v", err, ev)
	}
	reply, err := c.Post(ctx, ch.ID, root.ID, "a reply")
	check("reply", err)
	_, err = c.Post(ctx, dm.ID, 0, "psst")
	check("dm post", err)
	_, err = c.EditMessage(ctx, reply.ID, "an edited reply")
	check("edit", err)
	if r, replies, err := c.Thread(ctx, root.ID); err != nil || r.ID != root.ID || len(replies) != 1 || replies[0].Body != "an edited reply" {
		t.Fatalf("thread: %v %d", err, len(replies))
	}
	page, err := c.Messages(ctx, ch.ID, "", 10)
	check("messages", err)
	if len(page.Items) != 1 {
		t.Fatalf("messages: %d top-level, want 1", len(page.Items))
	}
	_, err = c.DeleteMessage(ctx, reply.ID)
	check("delete", err)
	_, err = c.Message(ctx, root.ID)
	check("message", err)
	evs, err := c.Events(ctx, 0, 100)
	check("events", err)
	if len(evs) == 0 {
		t.Fatal("no stored events")
	}
	secret, tok, err := c.CreateToken(ctx, 0, "client-test")
	check("create token", err)
	c2, _ := client.New(url, secret)
	if m, err := c2.Me(ctx); err != nil || m.ID != me.ID {
		t.Fatalf("new token: %v %+v", err, m)
	}
	_, err = c.Tokens(ctx)
	check("tokens", err)
	check("revoke", c.RevokeToken(ctx, tok.ID))
	if _, err := c2.Me(ctx); client.StatusOf(err) != 401 {
		t.Fatalf("revoked token: %v", err)
	}
}

func clientAgentsAndWiki(t *testing.T, ctx context.Context, c *client.Client, used calls, check func(string, error)) {
	used.use("Roles", "Agents", "Agent", "AgentNamed", "Hire", "UpdateAgent", "Fire", "OpenSession", "PostToAgent", "Turns",
		"Approvals", "Answer")
	roles, err := c.Roles(ctx)
	check("roles", err)
	if len(roles) == 0 {
		t.Fatal("no roles")
	}
	h, err := c.Hire(ctx, bullpen.HireInput{Role: "starter/engineer", Handle: "cli-eng"})
	check("hire", err)
	title := "Client engineer"
	_, err = c.UpdateAgent(ctx, h.Agent.ID, bullpen.AgentUpdate{Title: &title})
	check("update agent", err)
	if a, err := c.AgentNamed(ctx, "@cli-eng"); err != nil || a.Title != title {
		t.Fatalf("agent named: %v %+v", err, a)
	}
	_, err = c.Agents(ctx)
	check("agents", err)
	_, err = c.Agent(ctx, h.Agent.ID)
	check("agent", err)
	_, err = c.OpenSession(ctx, h.Agent.ID)
	check("session", err)
	_, err = c.PostToAgent(ctx, h.Agent.ID, "hello agent")
	check("post to agent", err)
	_, err = c.Turns(ctx, h.Agent.ID, 10)
	check("turns", err)
	aps, err := c.Approvals(ctx, "pending")
	check("approvals", err)
	if len(aps) > 0 {
		_, err = c.Answer(ctx, aps[0].ID, false, "no")
		check("answer", err)
	} else if _, err := c.Answer(ctx, 999999, false, "no"); client.StatusOf(err) != 404 {
		t.Fatalf("answer of no approval: %v", err)
	}
	_, err = c.Fire(ctx, h.Agent.ID)
	check("fire", err)

	used.use("WikiPage", "WikiPages", "CreateWikiPage", "SaveWikiPage", "DeleteWikiPage", "WikiRevisions", "WikiDiff", "SearchWiki")
	pg, err := c.CreateWikiPage(ctx, bullpen.WikiSaveInput{Title: "Client Notes", Body: "first", Tags: []string{"client"}})
	check("create page", err)
	pg2, err := c.SaveWikiPage(ctx, pg.Slug, pg.Title, "second, about kittens", nil, "more", pg.Revision)
	check("save page", err)
	if _, err := c.SaveWikiPage(ctx, pg.Slug, pg.Title, "stale", nil, "", pg.Revision); !client.IsConflict(err) {
		t.Fatalf("stale save: %v", err)
	}
	if got, err := c.WikiPage(ctx, pg.Slug); err != nil || got.Revision != pg2.Revision {
		t.Fatalf("page: %v %+v", err, got)
	}
	_, err = c.WikiPages(ctx, true, 10, 0)
	check("pages", err)
	_, err = c.WikiRevisions(ctx, pg.Slug)
	check("revisions", err)
	_, err = c.WikiDiff(ctx, pg.Slug, 1, 2)
	check("diff", err)
	if hits, err := c.SearchWiki(ctx, "kittens", 5); err != nil || len(hits) != 1 {
		t.Fatalf("search: %v %d", err, len(hits))
	}
	_, err = c.DeleteWikiPage(ctx, pg.Slug)
	check("delete page", err)
}

func clientSandboxes(t *testing.T, ctx context.Context, c *client.Client, used calls, check func(string, error)) {
	used.use("CreateSandbox", "Sandbox", "Sandboxes", "TerminateSandbox", "SandboxAction", "SandboxStats", "Snapshot", "Images",
		"Ports", "PublishPort", "RevokePort", "Exec", "Run", "ReadFile", "WriteFile", "ListFiles", "Stat", "Mkdir", "Rename", "RemoveFile")
	sb, err := c.CreateSandbox(ctx, client.SandboxSpec{Name: "client", Memory: "256Mi", Timeout: "10m", Tags: map[string]string{"t": "client"}})
	check("create", err)
	defer c.TerminateSandbox(context.Background(), sb.ID)
	var out, errb bytes.Buffer
	res, err := c.Exec(ctx, sb.ID, client.ExecRequest{Cmd: []string{"sh", "-c", "cat; echo oops >&2; exit 3"}, Stdin: []byte("in\n")}, &out, &errb)
	check("exec", err)
	if res.ExitCode != 3 || out.String() != "in\n" || errb.String() != "oops\n" {
		t.Fatalf("exec: %+v %q %q", res, out.String(), errb.String())
	}
	rr, err := c.Run(ctx, sb.ID, client.ExecRequest{Cmd: []string{"echo", "ran"}}, 0)
	check("run", err)
	if rr.Stdout != "ran\n" {
		t.Fatalf("run: %+v", rr)
	}
	_, err = c.Mkdir(ctx, sb.ID, "/home/sandbox/d/e", true)
	check("mkdir", err)
	_, err = c.WriteFile(ctx, sb.ID, "/home/sandbox/d/f.txt", strings.NewReader("file body"), 0o600)
	check("write", err)
	_, err = c.Rename(ctx, sb.ID, "/home/sandbox/d/f.txt", "/home/sandbox/d/g.txt")
	check("rename", err)
	if fi, err := c.Stat(ctx, sb.ID, "/home/sandbox/d/g.txt"); err != nil || fi.Size != 9 || fi.Mode.Perm() != 0o600 {
		t.Fatalf("stat: %v %+v", err, fi)
	}
	rc, err := c.ReadFile(ctx, sb.ID, "/home/sandbox/d/g.txt")
	check("read", err)
	body, _ := io.ReadAll(rc)
	rc.Close()
	if string(body) != "file body" {
		t.Fatalf("read %q", body)
	}
	files, err := c.ListFiles(ctx, sb.ID, "/home/sandbox/d")
	check("list", err)
	if len(files) != 2 {
		t.Fatalf("list: %+v", files)
	}
	check("remove", c.RemoveFile(ctx, sb.ID, "/home/sandbox/d", true))
	_, err = c.PublishPort(ctx, sb.ID, 8000)
	check("publish", err)
	ps, err := c.Ports(ctx, sb.ID)
	check("ports", err)
	if len(ps) != 1 {
		t.Fatalf("ports: %+v", ps)
	}
	check("revoke port", c.RevokePort(ctx, sb.ID, 8000))
	_, err = c.SandboxStats(ctx, sb.ID)
	check("stats", err)
	for _, a := range []string{client.ActionPause, client.ActionResume, client.ActionStop, client.ActionStart} {
		if got, err := c.SandboxAction(ctx, sb.ID, a); err != nil {
			t.Fatalf("%s: %v", a, err)
		} else if a == client.ActionPause && got.State != "paused" {
			t.Fatalf("after pause: %s", got.State)
		}
	}
	ref, err := c.Snapshot(ctx, sb.ID, "client-snap")
	check("snapshot", err)
	if ref != "client-snap" {
		t.Fatalf("snapshot named %q, want the name to create from, client-snap", ref)
	}
	imgs, err := c.Images(ctx)
	check("images", err)
	if !slices.ContainsFunc(imgs, func(im client.Image) bool { return slices.Contains(im.Names, ref) }) {
		t.Fatalf("images %+v do not list the snapshot %s", imgs, ref)
	}
	if l, err := c.Sandboxes(ctx, map[string]string{"t": "client"}, true); err != nil || len(l) != 1 {
		t.Fatalf("sandboxes by tag: %v %d", err, len(l))
	}
	_, err = c.Sandbox(ctx, "client")
	check("get by name", err)
	check("terminate", c.TerminateSandbox(ctx, sb.ID))
	if got, err := c.Sandbox(ctx, sb.ID); err == nil && got.State != "terminated" || err != nil && client.StatusOf(err) != 404 {
		t.Fatalf("terminated sandbox: %v %s", err, got.State)
	}
}
