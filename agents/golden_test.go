package agents

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/internal/golden"
	"github.com/bullpen-hq/bullpen/store"
)

// The golden tests pin, byte for byte, what a model is sent: the stable
// prompt prefix (role prompt, office rules, roster) that provider prompt
// caches key on, the tool schemas in the order they are offered, and the
// work packet. A changed byte fails them. After an intended change (a
// prompt edit, a new or reworded tool) regenerate every file with
//
//	go test ./agents -run TestGolden -update
//
// and review the diff of testdata/golden before committing it.

// TestGoldenPrompt records the engineer's requests in a small office on a
// fresh database (so ids are fixed) and pins its system prompt, its tools
// and the work packets of a channel wake and of a thread wake.
func TestGoldenPrompt(t *testing.T) {
	var mu sync.Mutex
	var reqs []llm.Request
	prov := scripted.New(func(req llm.Request) (llm.Response, error) {
		mu.Lock()
		reqs = append(reqs, req)
		mu.Unlock()
		return llm.Response{}, nil
	})
	h := newHarness(t, store.SQLite, map[string]llm.Provider{"scripted": prov}, nil)
	h.start()
	h.hire("starter/lead")
	h.hire("starter/engineer")
	ctx := context.Background()
	ann, err := h.off.CreateMember(ctx, h.admin, bullpen.MemberInput{Handle: "ann", DisplayName: "Ann Example", Title: "CTO"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.wiki.Write(ctx, h.admin, "Deploy notes", "Deploys go out on Tuesdays from the staging box.", 0); err != nil {
		t.Fatal(err)
	}
	h.post(ann, h.general.ID, 0, "The release is on Friday.")
	h.post(h.admin, h.general.ID, 0, "Noted, thanks.")
	root := h.post(ann, h.general.ID, 0, "@engineer please check the deploy notes before Friday")
	h.waitIdle()
	h.post(ann, h.general.ID, root.ID, "@engineer and look at the staging box too")
	h.waitIdle()

	mu.Lock()
	defer mu.Unlock()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d, want 2 (one per wake)", len(reqs))
	}
	golden.Check(t, "prompt/engineer.system.txt", []byte(reqs[0].System))
	golden.Check(t, "prompt/engineer.tools.txt", toolsText(reqs[0].Tools))
	golden.Check(t, "prompt/packet.channel.md", []byte(ViewOf(reqs[0]).Packet))
	golden.Check(t, "prompt/packet.thread.md", []byte(ViewOf(reqs[1]).Packet))
	if reqs[0].System != reqs[1].System || string(toolsText(reqs[0].Tools)) != string(toolsText(reqs[1].Tools)) {
		t.Error("the prompt prefix or the tools changed between two wakes of the same agent")
	}
}

// TestGoldenRolePrefixes pins the prefix and the tool schemas of every
// built-in role, as they would be for the role's own handle in a fixed
// roster.
func TestGoldenRolePrefixes(t *testing.T) {
	h := newHarness(t, store.SQLite, nil, nil)
	roster := "@admin — admin (human)\n@ann — Ann Example, CTO (human)\n"
	for _, info := range h.svc.Catalog().List() {
		if !strings.HasPrefix(info.ID, "starter/") && !strings.HasPrefix(info.ID, "coding/") {
			continue
		}
		t.Run(info.ID, func(t *testing.T) {
			r := info.Role
			me := bullpen.Member{Handle: r.Handle, DisplayName: r.Name, Title: r.Title, Kind: bullpen.KindAgent}
			_, tools := h.svc.toolsFor(r)
			name := strings.ReplaceAll(info.ID, "/", ".")
			golden.Check(t, "roles/"+name+".system.txt", []byte(prefix(r, me, roster)))
			golden.Check(t, "roles/"+name+".tools.txt", toolsText(tools))
		})
	}
}

// toolsText writes tools as the model receives them, in order, with each
// schema's bytes untouched (re-indenting would hide a changed byte).
func toolsText(tools []llm.Tool) []byte {
	var b strings.Builder
	for _, t := range tools {
		fmt.Fprintf(&b, "## %s\n%s\n%s\n\n", t.Name, t.Description, t.Parameters)
	}
	return []byte(b.String())
}
