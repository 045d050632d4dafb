package agents

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
)

func TestWakeTargets(t *testing.T) {
	const (
		human, lead, eng, muted, fired, other = 1, 2, 3, 4, 5, 6
	)
	members := map[int64]bullpen.Member{
		human: {ID: human, Handle: "ada", Kind: bullpen.KindHuman},
		lead:  {ID: lead, Handle: "lead", Kind: bullpen.KindAgent},
		eng:   {ID: eng, Handle: "engineer", Kind: bullpen.KindAgent},
		muted: {ID: muted, Handle: "quiet", Kind: bullpen.KindAgent, Muted: true},
		fired: {ID: fired, Handle: "gone", Kind: bullpen.KindAgent},
		other: {ID: other, Handle: "bob", Kind: bullpen.KindHuman},
	}
	active := map[int64]bool{lead: true, eng: true, muted: true}
	public := bullpen.Channel{ID: 10, Kind: bullpen.ChannelPublic, MemberIDs: []int64{human, lead, eng, muted, fired, other}}
	dm := bullpen.Channel{ID: 11, Kind: bullpen.ChannelDM, MemberIDs: []int64{human, lead}}
	agentDM := bullpen.Channel{ID: 12, Kind: bullpen.ChannelDM, MemberIDs: []int64{lead, eng}}
	msg := func(author int64, body string, thread int64, source string) bullpen.Message {
		return bullpen.Message{ID: 100, AuthorID: author, Body: body, Mentions: bullpen.ParseMentions(body), ThreadID: thread, Source: source}
	}
	tests := []struct {
		name    string
		msg     bullpen.Message
		channel bullpen.Channel
		thread  []int64
		want    []WakeTarget
	}{
		{"mention wakes", msg(human, "@lead hi", 0, "web"), public, nil, []WakeTarget{{lead, bullpen.ReasonMention}}},
		{"two mentions", msg(human, "@engineer and @lead", 0, "web"), public, nil, []WakeTarget{{lead, bullpen.ReasonMention}, {eng, bullpen.ReasonMention}}},
		{"no mention no wake", msg(human, "hello all", 0, "web"), public, nil, []WakeTarget{}},
		{"mention in code span", msg(human, "run `@lead`", 0, "web"), public, nil, []WakeTarget{}},
		{"mention in code block", msg(human, "```\n@lead\n```", 0, "web"), public, nil, []WakeTarget{}},
		{"email is not a mention", msg(human, "mail lead@example.com", 0, "web"), public, nil, []WakeTarget{}},
		{"human is never woken", msg(lead, "@ada done", 0, "agent"), public, nil, []WakeTarget{}},
		{"@all wakes every active agent", msg(human, "@all standup", 0, "web"), public, nil, []WakeTarget{{lead, bullpen.ReasonAll}, {eng, bullpen.ReasonAll}}},
		{"@here too", msg(human, "@here standup", 0, "api"), public, nil, []WakeTarget{{lead, bullpen.ReasonAll}, {eng, bullpen.ReasonAll}}},
		{"mention beats all", msg(human, "@lead @all", 0, "web"), public, nil, []WakeTarget{{lead, bullpen.ReasonMention}, {eng, bullpen.ReasonAll}}},
		{"muted never wakes", msg(human, "@quiet hi", 0, "web"), public, nil, []WakeTarget{}},
		{"fired never wakes", msg(human, "@gone hi", 0, "web"), public, nil, []WakeTarget{}},
		{"never self", msg(lead, "@lead note to self", 0, "agent"), public, nil, []WakeTarget{}},
		{"@all not self", msg(lead, "@all ship it", 0, "agent"), public, nil, []WakeTarget{{eng, bullpen.ReasonAll}}},
		{"DM wakes the other side", msg(human, "hi there", 0, "web"), dm, nil, []WakeTarget{{lead, bullpen.ReasonDM}}},
		{"DM from telegram the same", msg(human, "hi there", 0, "telegram"), dm, nil, []WakeTarget{{lead, bullpen.ReasonDM}}},
		{"DM reply from agent wakes nobody human", msg(lead, "hello", 0, "agent"), dm, nil, []WakeTarget{}},
		{"agent DM wakes the other agent", msg(lead, "ping", 0, "agent"), agentDM, nil, []WakeTarget{{eng, bullpen.ReasonDM}}},
		{"mention of outsider in DM", msg(human, "@engineer look", 0, "web"), dm, nil, []WakeTarget{{lead, bullpen.ReasonDM}}},
		{"thread reply wakes participants", msg(human, "and now?", 50, "web"), public, []int64{human, lead}, []WakeTarget{{lead, bullpen.ReasonThread}}},
		{"thread reply from REST the same", msg(other, "and now?", 50, "api"), public, []int64{human, lead, eng}, []WakeTarget{{lead, bullpen.ReasonThread}, {eng, bullpen.ReasonThread}}},
		{"addressed thread reply wakes only the addressed", msg(human, "@engineer you", 50, "web"), public, []int64{human, lead, eng}, []WakeTarget{{eng, bullpen.ReasonMention}}},
		{"agent thread reply must address", msg(eng, "done", 50, "agent"), public, []int64{human, lead, eng}, []WakeTarget{}},
		{"thread: muted participant stays asleep", msg(human, "more", 50, "web"), public, []int64{human, muted}, []WakeTarget{}},
		{"system notices wake nobody", msg(lead, "⚠️ @engineer limit", 0, "system"), public, nil, []WakeTarget{}},
	}
	// An agent hired after a message never wakes for it, @all or not.
	posted := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	newcomer := bullpen.Member{ID: 7, Handle: "writer", Kind: bullpen.KindAgent, CreatedAt: posted.Add(time.Second)}
	members[newcomer.ID], active[newcomer.ID] = newcomer, true
	withNew := public
	withNew.MemberIDs = append(slices.Clone(public.MemberIDs), newcomer.ID)
	early := msg(human, "@all and @writer, standup", 0, "web")
	early.CreatedAt = posted
	later := early
	later.CreatedAt = posted.Add(2 * time.Second)
	tests = append(tests, []struct {
		name    string
		msg     bullpen.Message
		channel bullpen.Channel
		thread  []int64
		want    []WakeTarget
	}{
		{"hired after the message: not woken", early, withNew, nil, []WakeTarget{{lead, bullpen.ReasonAll}, {eng, bullpen.ReasonAll}}},
		{"hired before the message: woken", later, withNew, nil, []WakeTarget{{lead, bullpen.ReasonAll}, {eng, bullpen.ReasonAll}, {newcomer.ID, bullpen.ReasonAll}}},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WakeTargets(WakeInput{Message: tt.msg, Author: members[tt.msg.AuthorID], Channel: tt.channel,
				Members: members, Active: active, ThreadAuthors: tt.thread})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("WakeTargets(%q by %d) = %v, want %v", tt.msg.Body, tt.msg.AuthorID, got, tt.want)
			}
		})
	}
}
