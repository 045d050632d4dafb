package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Memory is the agents' memory as the runtime uses it; *memory.Service
// (package agents/memory) provides it. Every call names the acting member,
// and an agent reaches only its own memory.
type Memory interface {
	// Recall picks the entries of agentID for a turn in channelID
	// triggered by query, within budget tokens. It only reads: the turn
	// records what it recalled with the work packet (notePacket).
	Recall(ctx context.Context, agentID, channelID int64, query string, budget int) ([]bullpen.MemoryRecall, error)
	// WriteWith stores an entry, running fn in the same transaction.
	WriteWith(ctx context.Context, actor bullpen.Member, agentID int64, in bullpen.MemoryInput,
		fn func(tx *store.Tx, e bullpen.MemoryEntry, merged bool) error) (bullpen.MemoryEntry, bool, error)
	Search(ctx context.Context, actor bullpen.Member, agentID int64, query, kind string, limit int) ([]bullpen.MemoryHit, error)
	// ForgetWith forgets an entry, running fn in the same transaction.
	ForgetWith(ctx context.Context, actor bullpen.Member, agentID, id int64, fn func(tx *store.Tx) error) error
}

// memoryTools serves the memory tools and recalls the work packet's
// memory section; mem nil: no memory.
type memoryTools struct {
	mem Memory
	dir directory
}

// registerMemoryTools registers the memory tools, served by Config.Memory
// as the calling agent on its own memory. Their schemas are kept short
// (every token of them is in every prompt of a role that lists them);
// args still refuses unknown fields.
func (mt memoryTools) registerMemoryTools(r *Registry) error {
	return registerAll(r,
		Tool{Name: bullpen.ToolMemoryWrite, Run: mt.memoryWrite, Effect: EffectOffice,
			Description: "Remember one short sentence for later turns.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"kind":{"enum":["fact","lesson","preference","procedure"]}},"required":["text"]}`)},
		Tool{Name: bullpen.ToolMemorySearch, Run: mt.memorySearch,
			Description: "Search your memory.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
		Tool{Name: bullpen.ToolMemoryForget, Run: mt.memoryForget, Effect: EffectOffice,
			Description: "Forget a wrong memory entry by id.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)},
	)
}

func (mt memoryTools) memoryWrite(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Text string `json:"text"`
		Kind string `json:"kind"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	in := bullpen.MemoryInput{Text: a.Text, Kind: a.Kind, SourceKind: bullpen.MemorySourceTurn, SourceID: c.TurnID, ChannelID: c.Channel.ID}
	if c.TurnID == 0 {
		in.SourceKind = bullpen.MemorySourceHuman // outside a turn: the agent's own credential, no turn to link
	}
	// A lesson drawn from a human's words is theirs to word: it waits
	// for that human's Save (or Edit) before it counts.
	if a.Kind == bullpen.MemoryLesson {
		in.ProposedTo = mt.dir.proposer(ctx, c.TurnID)
	}
	result := func(e bullpen.MemoryEntry, merged bool) string {
		switch {
		case e.ProposedTo != 0:
			return fmt.Sprintf(`{"id":%d,"proposed":true,"note":"the human who corrected you must confirm this lesson (Save or Edit in your Memory tab) before you keep it; tell them in one line"}`, e.ID)
		case merged:
			return fmt.Sprintf(`{"id":%d,"merged":true}`, e.ID)
		}
		return fmt.Sprintf(`{"id":%d}`, e.ID)
	}
	return c.Write(func(record Record) (string, error) {
		e, merged, err := mt.mem.WriteWith(ctx, c.Member, c.Member.ID, in, func(tx *store.Tx, e bullpen.MemoryEntry, merged bool) error {
			return record(tx, result(e, merged))
		})
		if err != nil {
			return "", memoryToolError(err)
		}
		return result(e, merged), nil
	})
}

// memoryHit is what the model reads of an entry.
type memoryHit struct {
	ID   int64  `json:"id"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func (mt memoryTools) memorySearch(ctx context.Context, c *Call) (string, error) {
	var a struct {
		Query string `json:"query"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	hits, err := mt.mem.Search(ctx, c.Member, c.Member.ID, a.Query, "", 8)
	if err != nil {
		return "", memoryToolError(err)
	}
	out := make([]memoryHit, 0, len(hits))
	for _, h := range hits {
		// The audience rule holds for searches in a turn too.
		if c.Channel.ID != 0 && !bullpen.MemoryVisibleIn(h.Entry, c.Channel.ID) {
			continue
		}
		out = append(out, memoryHit{ID: h.Entry.ID, Kind: h.Entry.Kind, Text: h.Entry.Text})
	}
	return jsonString(out), nil
}

func (mt memoryTools) memoryForget(ctx context.Context, c *Call) (string, error) {
	var a struct {
		ID int64 `json:"id"`
	}
	if err := args(c.Args, &a); err != nil {
		return "", err
	}
	out := fmt.Sprintf(`{"forgotten":%d}`, a.ID)
	return c.Write(func(record Record) (string, error) {
		if err := mt.mem.ForgetWith(ctx, c.Member, c.Member.ID, a.ID, func(tx *store.Tx) error { return record(tx, out) }); err != nil {
			return "", memoryToolError(err)
		}
		return out, nil
	})
}

// memoryToolError tells the model what to do next.
func memoryToolError(err error) error {
	code, msg := bullpen.ErrorCode(err), bullpen.ErrorMessage(err)
	switch code {
	case bullpen.ENOTFOUND:
		msg = "not found: " + msg + "; memory_search finds your entries and their ids"
	case bullpen.EINVALID, bullpen.ETOOLARGE:
		msg = "invalid arguments: " + msg
	case bullpen.EINTERNAL:
		msg = "memory failed; try again later"
	}
	return &bullpen.Error{Code: code, Message: msg, Err: err}
}

// recallSection recalls the agent's entries for the turn's triggers and
// renders them for the work packet, after everything else the packet
// holds; "" when memory is off or nothing was recalled. A failed recall
// is logged and leaves the section out: a turn never fails for it.
func (mt memoryTools) recallSection(ctx context.Context, e *turnEnv, query []string) string {
	budget := e.role.Budgets.MemoryBudget()
	if mt.mem == nil || budget == 0 || len(query) == 0 {
		return ""
	}
	rs, err := mt.mem.Recall(ctx, e.agent.ID, e.channel.ID, clip(strings.Join(query, " "), 1000), budget)
	if err != nil {
		e.log.Warn("agents: memory recall", "err", err)
		return ""
	}
	if len(rs) == 0 {
		return ""
	}
	e.recalled = rs
	var b strings.Builder
	b.WriteString("\n## You remember\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "- #%d %s: %s\n", r.EntryID, r.Kind, strings.Join(strings.Fields(r.Text), " "))
	}
	return b.String()
}
