package agents

import (
	"context"
	"fmt"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// directoryStore is what the directory reads of the office's members, as
// the system; *store.DB provides it.
type directoryStore interface {
	Members(ctx context.Context) ([]bullpen.Member, error)
	MembersIn(ctx context.Context, ids []int64) ([]bullpen.Member, error)
	MembersByID(ctx context.Context, ids []int64) (map[int64]bullpen.Member, error)
	CountMembers(ctx context.Context) (int64, error)
	FiredAgentMembers(ctx context.Context) (map[int64]bool, error)
	Member(ctx context.Context, id int64) (bullpen.Member, error)
	MemberByHandle(ctx context.Context, handle string) (bullpen.Member, error)
	Wakes(ctx context.Context, turnID int64) ([]bullpen.Wake, error)
	Message(ctx context.Context, id int64) (bullpen.Message, error)
}

// directory answers who is who for prompts and tools: the roster, the
// handles of message lines, a handle's member and a lesson's proposer.
type directory struct{ db directoryStore }

// rosterFull is the most members the prompt's roster lists in full. A
// larger office's roster lists the turn's channel's members and counts
// the others, so that a prompt grows with the channel, not the office;
// list_members still names everyone.
const rosterFull = 40

// roster lists the office's members by handle, fired agents left out: all
// of them when channel is nil or the office has at most rosterFull,
// otherwise those in channel, and how many more there are.
func (d directory) roster(ctx context.Context, channel *bullpen.Channel) (string, error) {
	// Neither the agents' specs nor, past rosterFull, the members outside
	// the channel are read: a turn's start costs the same in an office of
	// 200 as in one of 10 (BenchmarkManyAgents).
	fired, err := d.db.FiredAgentMembers(ctx)
	if err != nil {
		return "", err
	}
	var listed []bullpen.Member
	others, full := 0, true
	if channel != nil {
		n, err := d.db.CountMembers(ctx)
		if err != nil {
			return "", err
		}
		if office := int(n) - len(fired); office > rosterFull {
			in, err := d.db.MembersIn(ctx, channel.MemberIDs) // ordered by handle
			if err != nil {
				return "", err
			}
			for _, m := range in {
				if !fired[m.ID] {
					listed = append(listed, m)
				}
			}
			others, full = office-len(listed), false
		}
	}
	if full {
		members, err := d.db.Members(ctx) // ordered by handle
		if err != nil {
			return "", err
		}
		for _, m := range members {
			if !fired[m.ID] {
				listed = append(listed, m)
			}
		}
	}
	var b strings.Builder
	for _, m := range listed {
		fmt.Fprintf(&b, "@%s — %s", m.Handle, m.DisplayName)
		if m.Title != "" {
			fmt.Fprintf(&b, ", %s", m.Title)
		}
		fmt.Fprintf(&b, " (%s", m.Kind)
		if m.Muted {
			b.WriteString(", muted")
		}
		b.WriteString(")\n")
	}
	if others > 0 {
		fmt.Fprintf(&b, "(and %d more members of the office, not in this channel: list_members names everyone)\n", others)
	}
	return b.String(), nil
}

// handles maps member IDs to handles, for compact message lines.
func (d directory) handles(ctx context.Context) map[int64]string {
	out := map[int64]string{}
	members, _ := d.db.Members(ctx)
	for _, m := range members {
		out[m.ID] = m.Handle
	}
	return out
}

// handlesOf maps the given member IDs to handles, reading only those
// members (a work packet names a few authors, whatever the office's size).
func (d directory) handlesOf(ctx context.Context, ids []int64) map[int64]string {
	out := map[int64]string{}
	byID, _ := d.db.MembersByID(ctx, ids)
	for id, m := range byID {
		out[id] = m.Handle
	}
	return out
}

// proposer returns the human whose message woke the turn (the latest
// one), who must confirm a lesson the agent draws from it; 0 when no
// human's message did.
func (d directory) proposer(ctx context.Context, turnID int64) int64 {
	if turnID == 0 {
		return 0
	}
	ws, err := d.db.Wakes(ctx, turnID)
	if err != nil {
		return 0
	}
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].MessageID == 0 {
			continue
		}
		m, err := d.db.Message(ctx, ws[i].MessageID)
		if err != nil {
			continue
		}
		if a, err := d.db.Member(ctx, m.AuthorID); err == nil && a.Kind == bullpen.KindHuman {
			return a.ID
		}
	}
	return 0
}

func (d directory) memberNamed(ctx context.Context, handle string) (int64, error) {
	m, err := d.db.MemberByHandle(ctx, strings.TrimPrefix(handle, "@"))
	if bullpen.IsCode(err, bullpen.ENOTFOUND) {
		return 0, bullpen.Errorf(bullpen.EINVALID, "no member @%s", strings.TrimPrefix(handle, "@"))
	}
	return m.ID, err
}
