package agents

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/agents/llm"
	"github.com/bullpen-hq/bullpen/agents/llm/scripted"
	"github.com/bullpen-hq/bullpen/agents/memory"
	"github.com/bullpen-hq/bullpen/store/storetest"
	"github.com/bullpen-hq/bullpen/view"
)

// testClock is a settable clock shared by the store and the agents.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

const fridayLesson = "Never deploy on Fridays; run the smoke tests first"

var lastTriggerRE = regexp.MustCompile(`(?m)^- \(\w+\) \[\d+(?: in \d+)?\] @[a-z0-9_-]+: (.*)$`)

// memoryScript is the engineer of the memory scenario. A correction
// makes it propose a lesson; a deploy request branches on whether the
// lesson is in its work packet; anything else gets a short answer.
func memoryScript(req llm.Request) (llm.Response, error) {
	v := ViewOf(req)
	if v.Steps > 0 {
		if strings.Contains(v.Last, `"proposed":true`) {
			return llm.Response{Text: "Noted: please confirm the lesson in my Memory tab."}, nil
		}
		return llm.Response{}, nil
	}
	m := lastTriggerRE.FindAllStringSubmatch(v.Packet, -1)
	trigger := strings.ToLower(m[len(m)-1][1])
	switch {
	case strings.Contains(trigger, "never deploy on fridays"):
		args, _ := json.Marshal(map[string]string{"text": fridayLesson, "kind": bullpen.MemoryLesson})
		return llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: bullpen.ToolMemoryWrite, Arguments: args}}}, nil
	case strings.Contains(trigger, "deploy"):
		if strings.Contains(v.Packet, fridayLesson) {
			return llm.Response{Text: "Not today: running the smoke tests first, deploy on Monday."}, nil
		}
		return llm.Response{Text: "Deploying now."}, nil
	}
	return llm.Response{Text: "Sure."}, nil
}

// day1 is the scenario's first day: the next Wednesday, 09:00 UTC. It
// lies ahead of the real time because a turn's deadline, taken from the
// office's clock, also bounds its contexts, which follow the real one.
func day1() time.Time {
	d := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	for d.Weekday() != time.Wednesday {
		d = d.AddDate(0, 0, 1)
	}
	return d.Add(9 * time.Hour)
}

// memoryScenario is the multi-day scenario on one dialect.
type memoryScenario struct {
	t     testing.TB
	h     *harness
	clock *testClock
	eng   bullpen.Member
	mem   *memory.Service
}

func newMemoryScenario(t testing.TB, dialect string, withMemory bool) *memoryScenario {
	clock := &testClock{t: day1()}
	cfg := storetest.Config(t, dialect)
	cfg.Now = clock.Now
	sc := &memoryScenario{t: t, clock: clock}
	sc.h = newHarnessOn(t, cfg, map[string]llm.Provider{"scripted": scripted.New(memoryScript)}, func(c *Config) {
		c.Now = clock.Now
		if withMemory {
			sc.mem = memory.New(c.DB, memory.Config{})
			c.Memory = sc.mem
		}
	})
	// The starter engineer, with the memory tools: a real prompt prefix.
	spec, err := sc.h.svc.Catalog().Role("starter/engineer")
	if err != nil {
		t.Fatal(err)
	}
	if withMemory {
		spec.Tools = append(spec.Tools, bullpen.ToolMemoryWrite, bullpen.ToolMemorySearch, bullpen.ToolMemoryForget)
	}
	hired, err := sc.h.svc.Hire(context.Background(), sc.h.admin, bullpen.HireInput{Spec: &spec})
	if err != nil {
		t.Fatalf("Hire: %v", err)
	}
	sc.eng = hired.Agent.Member
	sc.h.start()
	return sc
}

// ask posts as admin, waits for the engineer's turn and returns its
// detail and the engineer's reply.
func (sc *memoryScenario) ask(channel, thread int64, body string) (view.TurnDetail, string) {
	sc.t.Helper()
	since := sc.h.off.Hub().Last()
	sc.h.post(sc.h.admin, channel, thread, body)
	sc.h.waitIdle()
	turns, err := sc.h.svc.Turns(context.Background(), sc.h.admin, sc.eng.ID, 1)
	if err != nil || len(turns) == 0 {
		sc.t.Fatalf("engineer turns: %v, %v", turns, err)
	}
	d, err := sc.h.svc.InspectTurn(context.Background(), sc.h.admin, turns[0].ID)
	if err != nil {
		sc.t.Fatal(err)
	}
	reply := ""
	for _, m := range sc.h.messages(since) {
		if strings.HasPrefix(m, "@engineer: ") {
			reply = strings.TrimPrefix(m, "@engineer: ")
		}
	}
	return d, reply
}

func recalledIDs(d view.TurnDetail) []int64 {
	var out []int64
	for _, r := range d.Memory {
		out = append(out, r.EntryID)
	}
	return out
}

// TestMemoryScenario is the scripted multi-day scenario: a
// lesson taught on day 1 (and confirmed by the human who taught it)
// changes what the engineer does on day 3; an unrelated request does not
// recall it; a fact learned in a DM never reaches a #general turn.
func TestMemoryScenario(t *testing.T) {
	for _, d := range storetest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			sc := newMemoryScenario(t, d, true)
			ctx := context.Background()
			general := sc.h.general.ID

			// Day 1, Wednesday: a deploy, and the human's correction.
			_, reply := sc.ask(general, 0, "@engineer please deploy the release")
			if reply != "Deploying now." {
				t.Fatalf("day 1 reply = %q, want the untaught answer", reply)
			}
			msgs, _ := sc.h.db.RecentMessages(ctx, general, 0, 0, 1)
			_, reply = sc.ask(general, msgs[0].ID, "@engineer no: never deploy on Fridays; run the smoke tests first")
			if !strings.Contains(reply, "confirm the lesson") {
				t.Fatalf("correction reply = %q", reply)
			}
			props, err := sc.mem.List(ctx, sc.h.admin, sc.eng.ID, bullpen.MemoryListOptions{Kind: bullpen.MemoryLesson})
			if err != nil || len(props) != 1 || props[0].ProposedTo != sc.h.admin.ID || props[0].SourceKind != bullpen.MemorySourceTurn {
				t.Fatalf("proposed lessons = %+v, %v; want one proposed to @admin from the turn", props, err)
			}
			lesson := props[0]
			// Until the human saves it, the lesson is not recalled.
			if d, _ := sc.ask(general, 0, "@engineer can you deploy the hotfix"); len(d.Memory) != 0 {
				t.Errorf("an unconfirmed proposal was recalled: %v", recalledIDs(d))
			}
			if _, err := sc.mem.Confirm(ctx, sc.eng, sc.eng.ID, lesson.ID, nil); !bullpen.IsCode(err, bullpen.EFORBIDDEN) {
				t.Errorf("the agent confirmed its own lesson: %v", err)
			}
			if _, err := sc.mem.Confirm(ctx, sc.h.admin, sc.eng.ID, lesson.ID, nil); err != nil {
				t.Fatalf("Confirm: %v", err)
			}

			// Day 3, Friday: the lesson is recalled and changes the answer.
			day3 := day1().AddDate(0, 0, 2).Add(time.Hour)
			sc.clock.Set(day3)
			d3, reply := sc.ask(general, 0, "@engineer please deploy the release")
			if !strings.Contains(d3.WorkPacket, fridayLesson) || len(d3.Memory) != 1 || d3.Memory[0].EntryID != lesson.ID || d3.Memory[0].Score <= 0 {
				t.Fatalf("day 3 deploy: recalled %+v, packet:\n%s", d3.Memory, d3.WorkPacket)
			}
			if !strings.Contains(reply, "smoke tests first") {
				t.Errorf("day 3 reply = %q, want the lesson followed", reply)
			}
			// The same day, an unrelated request does not recall it.
			other, reply := sc.ask(general, 0, "@engineer what is the guest wifi called")
			if strings.Contains(other.WorkPacket, fridayLesson) || len(other.Memory) != 0 || reply != "Sure." {
				t.Errorf("unrelated request recalled %v (reply %q)", recalledIDs(other), reply)
			}

			// A fact taught in a DM stays in that DM.
			dm, err := sc.h.off.OpenDM(ctx, sc.h.admin, sc.eng.ID)
			if err != nil {
				t.Fatal(err)
			}
			sc.ask(dm.ID, 0, "remember: my badge number is 4471")
			facts, _ := sc.mem.List(ctx, sc.h.admin, sc.eng.ID, bullpen.MemoryListOptions{Query: "badge number"})
			if len(facts) != 1 || facts[0].ChannelID != dm.ID || facts[0].SourceKind != bullpen.MemorySourceMessage {
				t.Fatalf("DM fact = %+v, want one entry with the DM as audience and the message as source", facts)
			}
			inGeneral, _ := sc.ask(general, 0, "@engineer what is my badge number")
			if strings.Contains(inGeneral.WorkPacket, "4471") || len(inGeneral.Memory) != 0 {
				t.Errorf("the DM fact reached a #general turn: %v\n%s", recalledIDs(inGeneral), inGeneral.WorkPacket)
			}
			inDM, _ := sc.ask(dm.ID, 0, "what is my badge number")
			if !strings.Contains(inDM.WorkPacket, "4471") {
				t.Errorf("the DM fact is not recalled in its own DM:\n%s", inDM.WorkPacket)
			}
			if e, _ := sc.mem.Get(ctx, sc.h.admin, sc.eng.ID, lesson.ID); e.RecallCount != 1 || e.LastRecalledAt == nil ||
				!e.LastRecalledAt.Equal(day3) {
				t.Errorf("lesson recall count %d, last %v; want 1 on day 3", e.RecallCount, e.LastRecalledAt)
			}
		})
	}
}
