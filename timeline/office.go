package timeline

import (
	"fmt"

	"github.com/bullpen-hq/bullpen"
)

func init() {
	register(bullpen.EventMessagePosted, messagePosted)
	register(bullpen.EventMessageEdited, messageChanged("edited"))
	register(bullpen.EventMessageDeleted, messageChanged("deleted"))
	register(bullpen.EventChannelCreated, channelCreated)
	register(bullpen.EventChannelJoined, membership("joined"))
	register(bullpen.EventChannelLeft, membership("left"))
	register(bullpen.EventMemberCreated, memberCreated)
	register(bullpen.EventMemberUpdated, memberUpdated)
	register(bullpen.EventWikiPageSaved, wikiSaved)
	register(bullpen.EventWikiPageDeleted, wikiState("deleted"))
	register(bullpen.EventWikiPageUndeleted, wikiState("restored"))
	register(bullpen.EventApprovalRequested, approvalRequested)
	register(bullpen.EventApprovalAnswered, approvalAnswered)
}

func root(m bullpen.Message) int64 {
	if m.ThreadID != 0 {
		return m.ThreadID
	}
	return m.ID
}

// messagePosted: "@ada posted in #general: “ship it”", or "replied in".
func messagePosted(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	m, err := bullpen.MessageOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	verb := "posted"
	if m.ThreadID != 0 {
		verb = "replied"
	}
	text := join(actor(n, m.AuthorID), verb, where(n, m.ChannelID)) + ": “" + clip(m.Body, 80) + "”"
	return bullpen.EventLine{Text: text, Link: channelLink(n, m.ChannelID, root(m))}, nil
}

func messageChanged(verb string) describe {
	return func(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
		m, err := bullpen.MessageOf(ev)
		if err != nil {
			return bullpen.EventLine{}, err
		}
		text := join(actor(n, m.AuthorID), verb, "a message", where(n, m.ChannelID))
		return bullpen.EventLine{Text: text, Link: channelLink(n, m.ChannelID, root(m))}, nil
	}
}

func channelCreated(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	c, err := bullpen.ChannelOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	if c.Kind == bullpen.ChannelDM {
		return bullpen.EventLine{Text: actor(n, c.CreatedBy) + " opened a direct message", Link: channelLink(n, c.ID, 0)}, nil
	}
	return bullpen.EventLine{Text: join(actor(n, c.CreatedBy), "created", "#"+c.Name), Link: channelLink(n, c.ID, 0)}, nil
}

func membership(verb string) describe {
	return func(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
		m, err := bullpen.MembershipOf(ev)
		if err != nil {
			return bullpen.EventLine{}, err
		}
		return bullpen.EventLine{Text: join(at(m.Member.Handle), verb, chanRef(n, m.ChannelID)),
			Link: channelLink(n, m.ChannelID, 0)}, nil
	}
}

// memberCreated names the display name beside the handle: display names
// are free text, the handle is what tells two "Alice"s apart.
func memberCreated(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	m, err := bullpen.MemberOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	return bullpen.EventLine{Text: fmt.Sprintf("%s (%s), %s, joined the office", m.DisplayName, at(m.Handle), m.Kind)}, nil
}

func memberUpdated(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	m, err := bullpen.MemberOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	if m.Muted {
		return bullpen.EventLine{Text: at(m.Handle) + " was muted"}, nil
	}
	return bullpen.EventLine{Text: at(m.Handle) + " was updated"}, nil
}

// wikiSaved: "@pm edited [[Launch plan]] (+12 −3)"; the link opens the
// revision's diff in the wiki panel.
func wikiSaved(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
	w, err := bullpen.WikiEventOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	verb := "edited"
	switch {
	case w.Created:
		verb = "created"
	case w.RestoredFrom != 0:
		verb = fmt.Sprintf("restored revision %d of", w.RestoredFrom)
	}
	text := fmt.Sprintf("%s %s [[%s]] (+%d −%d)", at(w.Author), verb, w.Title, w.Added, w.Removed)
	link := fmt.Sprintf("#wiki-diff/%s/%d", w.Slug, w.Revision)
	if w.Created {
		link = "#wiki/" + w.Slug
	}
	return bullpen.EventLine{Text: text, Link: link}, nil
}

func wikiState(verb string) describe {
	return func(ev bullpen.Event, _ bullpen.EventNames) (bullpen.EventLine, error) {
		w, err := bullpen.WikiEventOf(ev)
		if err != nil {
			return bullpen.EventLine{}, err
		}
		return bullpen.EventLine{Text: fmt.Sprintf("%s %s [[%s]]", at(w.Author), verb, w.Title), Link: "#wiki/" + w.Slug}, nil
	}
}

func approvalRequested(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	a, err := bullpen.ApprovalOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	text := join(at(a.Handle), "asks approval for", a.Tool, where(n, a.ChannelID)) + ": " + clip(a.Reason, 80)
	return bullpen.EventLine{Text: text, Link: turnLink(a.TurnID)}, nil
}

func approvalAnswered(ev bullpen.Event, n bullpen.EventNames) (bullpen.EventLine, error) {
	a, err := bullpen.ApprovalOf(ev)
	if err != nil {
		return bullpen.EventLine{}, err
	}
	text := join(actor(n, a.AnsweredBy), a.State, at(a.Handle)+"'s", a.Tool)
	return bullpen.EventLine{Text: text, Link: turnLink(a.TurnID)}, nil
}
