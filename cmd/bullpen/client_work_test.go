package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/client"
)

// clientWork exercises the client's tasks, routines, memory, team hire and
// E2B keys against the real server, checking what each call answers.
func clientWork(t *testing.T, ctx context.Context, c *client.Client, used calls, check func(string, error)) {
	used.use("HireTeam", "Tasks", "Task", "CreateTask", "UpdateTask", "ClaimTask", "ReleaseTask", "HandoffTask", "SubmitTask",
		"ReviewTask", "Routines", "Routine", "CreateRoutine", "UpdateRoutine", "DeleteRoutine", "RoutineTicks", "Memory", "MemoryEntry",
		"WriteMemory", "UpdateMemory", "ForgetMemory", "MemoryHistory", "ExportMemory", "ImportMemory", "ConfirmMemory",
		"MintE2BKey", "E2BKeyWorks", "Server")
	team, err := c.HireTeam(ctx, "starter")
	check("hire team", err)
	if len(team) == 0 {
		t.Fatal("hire team: nobody hired")
	}
	agent := team[0].Member
	me, err := c.Me(ctx)
	check("me", err)
	general, err := c.ChannelNamed(ctx, bullpen.GeneralChannel)
	check("general", err)

	// Tasks: create, change, claim, release, hand off, submit, review.
	tk, err := c.CreateTask(ctx, bullpen.TaskInput{Title: "Client task", Body: "from the Go client", ChannelID: general.ID,
		Labels: []string{"client"}, ReviewHuman: true})
	check("create task", err)
	title := "Client task, renamed"
	tk, err = c.UpdateTask(ctx, tk.ID, bullpen.TaskPatch{Title: &title})
	check("update task", err)
	if tk.Title != title {
		t.Fatalf("task after update = %q, want %q", tk.Title, title)
	}
	tk, err = c.ClaimTask(ctx, tk.ID)
	check("claim task", err)
	if tk.OwnerID != me.ID {
		t.Fatalf("claimed task's owner = %d, want %d", tk.OwnerID, me.ID)
	}
	_, err = c.ReleaseTask(ctx, tk.ID, "not now")
	check("release task", err)
	_, err = c.HandoffTask(ctx, tk.ID, me.ID, "back to me")
	check("hand off task", err)
	working := bullpen.TaskInProgress
	_, err = c.UpdateTask(ctx, tk.ID, bullpen.TaskPatch{State: &working})
	check("start task", err)
	_, err = c.SubmitTask(ctx, tk.ID, "done")
	check("submit task", err)
	tk, err = c.ReviewTask(ctx, tk.ID, true, "fine")
	check("review task", err)
	if tk.State != bullpen.TaskDone {
		t.Fatalf("reviewed task's state = %q, want done", tk.State)
	}
	got, err := c.Task(ctx, tk.ID)
	check("task", err)
	list, err := c.Tasks(ctx, bullpen.TaskFilter{Label: "client"})
	check("tasks", err)
	if got.ID != tk.ID || len(list) != 1 || list[0].ID != tk.ID {
		t.Fatalf("task %d read back as %d, listed %d", tk.ID, got.ID, len(list))
	}

	// Routines: create, change, list, ticks, delete.
	name, interval, action, prompt := "client routine", int64(3600), bullpen.RoutineWake, "look around"
	r, err := c.CreateRoutine(ctx, bullpen.RoutineInput{Name: &name, IntervalSec: &interval, Action: &action,
		ChannelID: &general.ID, AgentID: &agent.ID, Prompt: &prompt})
	check("create routine", err)
	off := false
	r, err = c.UpdateRoutine(ctx, r.ID, bullpen.RoutineInput{Enabled: &off})
	check("update routine", err)
	if r.Enabled {
		t.Fatal("routine still enabled after turning it off")
	}
	if again, err := c.Routine(ctx, r.ID); err != nil || again.ID != r.ID || again.Enabled || again.Name != name {
		t.Fatalf("routine %d read back as %+v, %v", r.ID, again, err)
	}
	rs, err := c.Routines(ctx)
	check("routines", err)
	_, err = c.RoutineTicks(ctx, r.ID)
	check("routine ticks", err)
	check("delete routine", c.DeleteRoutine(ctx, r.ID))
	if len(rs) != 1 {
		t.Fatalf("%d routines listed, want 1", len(rs))
	}

	// Memory: write, read, change, export, import, history, forget.
	w, err := c.WriteMemory(ctx, agent.ID, bullpen.MemoryInput{Text: "The staging database is called stage-2", Kind: bullpen.MemoryFact})
	check("write memory", err)
	pin := true
	_, err = c.UpdateMemory(ctx, agent.ID, w.ID, bullpen.MemoryUpdate{Pinned: &pin})
	check("update memory", err)
	e, err := c.MemoryEntry(ctx, agent.ID, w.ID)
	check("memory entry", err)
	if !e.Pinned || e.Text != "The staging database is called stage-2" {
		t.Fatalf("memory entry = %+v", e)
	}
	if _, err := c.ConfirmMemory(ctx, agent.ID, w.ID, nil); err == nil {
		t.Error("confirmed an entry that was never proposed")
	}
	var jsonl bytes.Buffer
	check("export memory", c.ExportMemory(ctx, agent.ID, &jsonl))
	check("forget memory", c.ForgetMemory(ctx, agent.ID, w.ID))
	_, err = c.ImportMemory(ctx, agent.ID, jsonl.Bytes())
	check("import memory", err)
	es, err := c.Memory(ctx, agent.ID, bullpen.MemoryListOptions{Query: "staging"})
	check("memory", err)
	hist, err := c.MemoryHistory(ctx, agent.ID)
	check("memory history", err)
	if len(es) != 1 || len(hist) == 0 {
		t.Fatalf("after forget and import: %d entries, %d history rows; want 1 and some", len(es), len(hist))
	}

	// E2B keys: minted, accepted by the E2B API on this server.
	k, err := c.MintE2BKey(ctx)
	check("mint e2b key", err)
	if !c.E2BKeyWorks(ctx, k.APIPath, k.Key) || c.E2BKeyWorks(ctx, k.APIPath, "e2b_"+"00") || c.Server() == "" {
		t.Fatalf("e2b key %q at %q not accepted, or a bogus key was", k.Key, k.APIPath)
	}
}
