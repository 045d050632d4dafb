package agents

import (
	"slices"

	"github.com/bullpen-hq/bullpen"
)

// WakeInput is everything the wake rules look at for one new message.
type WakeInput struct {
	Message bullpen.Message
	Author  bullpen.Member
	Channel bullpen.Channel // with MemberIDs
	// Members are the members the rules can name, by ID: at least the
	// author, the channel's members, the thread's authors and every
	// member a mention names. Active says which agents work here (hired
	// and not fired).
	Members map[int64]bullpen.Member
	Active  map[int64]bool
	// ThreadAuthors are the authors of the thread's root and replies when
	// the message is a reply.
	ThreadAuthors []int64
}

// WakeTarget is one agent to wake and why.
type WakeTarget struct {
	AgentID int64
	Reason  string
}

// WakeTargets applies the wake rules to a new message. The rules are the
// same whichever surface a human wrote from (web, REST, Telegram):
//
//   - @handle wakes that agent (mentions in code and e-mail addresses do
//     not count; ParseMentions already skipped them);
//   - @all and @here wake every agent member of the channel;
//   - a message in a DM always wakes the other side when it is an agent;
//   - a reply in a thread that mentions nobody is addressed to the thread:
//     it wakes the agents who took part in it (wrote its root or a reply),
//     when the reply is a human's — agents address each other explicitly;
//   - a muted or fired agent never wakes, an agent never wakes itself, and
//     system notices (Source "system") wake nobody;
//   - an agent hired after the message was posted never wakes for it: the
//     router may read a message late, and "@all" means those who were
//     there when it was said.
//
// Targets come ordered by member ID.
func WakeTargets(in WakeInput) []WakeTarget {
	if in.Message.Source == bullpen.SourceSystem || in.Message.Deleted {
		return []WakeTarget{}
	}
	reasons := map[int64]string{}
	add := func(id int64, reason string) {
		m, ok := in.Members[id]
		switch {
		case !ok, m.Kind != bullpen.KindAgent, !in.Active[id], m.Muted, id == in.Author.ID:
			return
		case !in.Message.CreatedAt.IsZero() && m.CreatedAt.After(in.Message.CreatedAt):
			return // hired after the message
		case in.Channel.Kind == bullpen.ChannelDM && !slices.Contains(in.Channel.MemberIDs, id):
			return // an agent cannot read a DM it is not part of
		}
		if _, seen := reasons[id]; !seen {
			reasons[id] = reason
		}
	}
	byHandle := map[string]int64{}
	for id, m := range in.Members {
		byHandle[m.Handle] = id
	}
	for _, h := range in.Message.Mentions {
		switch h {
		case "all", "here":
			for _, id := range in.Channel.MemberIDs {
				add(id, bullpen.ReasonAll)
			}
		default:
			if id, ok := byHandle[h]; ok {
				add(id, bullpen.ReasonMention)
			}
		}
	}
	if in.Channel.Kind == bullpen.ChannelDM {
		for _, id := range in.Channel.MemberIDs {
			add(id, bullpen.ReasonDM)
		}
	}
	if in.Message.ThreadID != 0 && len(in.Message.Mentions) == 0 && in.Author.Kind == bullpen.KindHuman {
		for _, id := range in.ThreadAuthors {
			add(id, bullpen.ReasonThread)
		}
	}
	out := make([]WakeTarget, 0, len(reasons))
	for id, r := range reasons {
		out = append(out, WakeTarget{AgentID: id, Reason: r})
	}
	slices.SortFunc(out, func(a, b WakeTarget) int {
		if a.AgentID < b.AgentID {
			return -1
		}
		if a.AgentID > b.AgentID {
			return 1
		}
		return 0
	})
	return out
}
