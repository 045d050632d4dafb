package office

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Post stores a message by actor. Posting in a public channel joins it.
func (o *Office) Post(ctx context.Context, actor bullpen.Member, in bullpen.PostInput) (bullpen.Message, error) {
	return o.PostWith(ctx, actor, in, nil)
}

// PostWith is Post that also runs fn (when not nil) in the same
// transaction, after the message is stored, so that a feature's own rows
// (a bridge's message mapping and update offset) commit or roll back
// together with the message and its event. Concurrent posts are group
// committed (store.DB.TransactGrouped): fn must touch only tx, as it
// runs again should another post of its batch fail (only one run
// commits).
func (o *Office) PostWith(ctx context.Context, actor bullpen.Member, in bullpen.PostInput, fn func(tx *store.Tx, msg bullpen.Message) error) (bullpen.Message, error) {
	if err := bullpen.ValidateBody(in.Body); err != nil {
		return bullpen.Message{}, err
	}
	c, err := o.Channel(ctx, actor, in.ChannelID)
	if err != nil {
		return bullpen.Message{}, err
	}
	if c.Kind == bullpen.ChannelDM && !slices.Contains(c.MemberIDs, actor.ID) {
		return bullpen.Message{}, bullpen.Errorf(bullpen.EFORBIDDEN, "only the members of a DM can post in it")
	}
	if in.ThreadID != 0 {
		root, err := o.db.Message(ctx, in.ThreadID)
		if err != nil {
			return bullpen.Message{}, err
		}
		if root.ChannelID != c.ID || root.ThreadID != 0 {
			return bullpen.Message{}, bullpen.Errorf(bullpen.EINVALID, "thread_id %d is not a root message of this channel", in.ThreadID)
		}
	}
	var msg bullpen.Message
	_, err = o.db.TransactGrouped(ctx, func(tx *store.Tx) error {
		var err error
		if msg, err = o.PostInTx(tx, actor, c, in); err != nil || fn == nil {
			return err
		}
		return fn(tx, msg)
	})
	if err != nil {
		return msg, err
	}
	// The post is stored: a failure to name its unknown handles must not
	// make the caller think it failed (and post it again).
	if u, err := o.unresolved(ctx, msg.Mentions); err == nil {
		msg.UnresolvedMentions = u
	}
	return msg, nil
}

// PostInTx stores a message by actor in channel c, which the caller
// read with Channel (as actor) and checked the thread of, within a
// feature's own transaction, so that the message and the feature's
// change commit together. Posting in a public channel joins it.
func (o *Office) PostInTx(tx *store.Tx, actor bullpen.Member, c bullpen.Channel, in bullpen.PostInput) (bullpen.Message, error) {
	if err := bullpen.ValidateBody(in.Body); err != nil {
		return bullpen.Message{}, err
	}
	if in.Source == "" {
		in.Source = bullpen.SourceAPI
	}
	if c.Kind == bullpen.ChannelPublic && !slices.Contains(c.MemberIDs, actor.ID) {
		if err := o.join(tx, c, actor); err != nil {
			return bullpen.Message{}, err
		}
	}
	msg, err := tx.CreateMessage(bullpen.Message{ChannelID: c.ID, AuthorID: actor.ID, ThreadID: in.ThreadID, Body: in.Body,
		Mentions: bullpen.ParseMentions(in.Body), Source: in.Source, TurnID: in.TurnID})
	if err != nil {
		return msg, err
	}
	o.decorate(&msg, actor)
	_, err = tx.Emit(bullpen.EventMessagePosted, c.ID, audienceOf(c), msg)
	return msg, err
}

// unresolved returns the mentioned handles that name no member ("all" and
// "here" always resolve).
func (o *Office) unresolved(ctx context.Context, mentions []string) ([]string, error) {
	var named []string
	for _, h := range mentions {
		if h != "all" && h != "here" {
			named = append(named, h)
		}
	}
	if len(named) == 0 {
		return nil, nil
	}
	ms, err := o.db.MembersByHandle(ctx, named) // those named, not the office
	if err != nil {
		return nil, fmt.Errorf("office: resolving mentions: %w", err)
	}
	known := map[string]bool{}
	for _, m := range ms {
		known[m.Handle] = true
	}
	var out []string
	for _, h := range named {
		if !known[h] {
			out = append(out, h)
		}
	}
	return out, nil
}

// Edit replaces the body of actor's own message; the old body is kept.
func (o *Office) Edit(ctx context.Context, actor bullpen.Member, id int64, body string) (bullpen.Message, error) {
	if err := bullpen.ValidateBody(body); err != nil {
		return bullpen.Message{}, err
	}
	return o.change(ctx, actor, id, body, false)
}

// Delete marks actor's own message deleted (admins may delete any). The
// body is kept as a revision, never shown again.
func (o *Office) Delete(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Message, error) {
	return o.change(ctx, actor, id, "", true)
}

func (o *Office) change(ctx context.Context, actor bullpen.Member, id int64, body string, del bool) (bullpen.Message, error) {
	msg, err := o.db.Message(ctx, id)
	if err != nil {
		return msg, err
	}
	c, err := o.Channel(ctx, actor, msg.ChannelID)
	if err != nil {
		return msg, bullpen.Errorf(bullpen.ENOTFOUND, "message %d not found", id)
	}
	switch {
	case msg.Deleted:
		return msg, bullpen.Errorf(bullpen.ENOTFOUND, "message %d was deleted", id)
	case msg.AuthorID != actor.ID && !(del && actor.IsAdmin):
		return msg, bullpen.Errorf(bullpen.EFORBIDDEN, "you can only change your own messages")
	}
	typ := bullpen.EventMessageEdited
	if del {
		typ = bullpen.EventMessageDeleted
	}
	_, err = o.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if msg, err = tx.UpdateMessageBody(id, body, bullpen.ParseMentions(body), del); err != nil {
			return err
		}
		author, err := o.db.Member(ctx, msg.AuthorID)
		if err != nil {
			return err
		}
		o.decorate(&msg, author)
		_, err = tx.Emit(typ, c.ID, audienceOf(c), msg)
		return err
	})
	return msg, err
}

// Message returns one message actor may see.
func (o *Office) Message(ctx context.Context, actor bullpen.Member, id int64) (bullpen.Message, error) {
	msg, err := o.db.Message(ctx, id)
	if err != nil {
		return msg, err
	}
	if _, err := o.Channel(ctx, actor, msg.ChannelID); err != nil {
		return msg, bullpen.Errorf(bullpen.ENOTFOUND, "message %d not found", id)
	}
	return msg, o.decorateAll(ctx, []*bullpen.Message{&msg})
}

// ListMessages returns a page of a channel's root messages, oldest first,
// before the cursor ("" for the newest).
func (o *Office) ListMessages(ctx context.Context, actor bullpen.Member, channelID int64, cursor string, limit int) (bullpen.MessagePage, error) {
	var page bullpen.MessagePage
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 200 {
		return page, bullpen.Errorf(bullpen.EINVALID, "limit must be between 1 and 200")
	}
	var before int64
	if cursor != "" {
		var err error
		if before, err = strconv.ParseInt(cursor, 10, 64); err != nil || before <= 0 {
			return page, bullpen.Errorf(bullpen.EINVALID, "cursor %q is not valid", cursor)
		}
	}
	if _, err := o.Channel(ctx, actor, channelID); err != nil {
		return page, err
	}
	items, more, err := o.db.ChannelMessages(ctx, channelID, before, limit)
	if err != nil {
		return page, err
	}
	page.Items = items
	if more && len(items) > 0 {
		page.Next = strconv.FormatInt(items[0].ID, 10)
	}
	ptrs := make([]*bullpen.Message, len(items))
	for i := range items {
		ptrs[i] = &page.Items[i]
	}
	return page, o.decorateAll(ctx, ptrs)
}

// Thread returns a root message and its replies (up to 1000).
func (o *Office) Thread(ctx context.Context, actor bullpen.Member, rootID int64) (bullpen.Message, []bullpen.Message, error) {
	root, err := o.Message(ctx, actor, rootID)
	if err != nil {
		return root, nil, err
	}
	if root.ThreadID != 0 {
		return o.Thread(ctx, actor, root.ThreadID)
	}
	replies, err := o.db.ThreadReplies(ctx, rootID, 1000)
	if err != nil {
		return root, nil, err
	}
	ptrs := make([]*bullpen.Message, len(replies))
	for i := range replies {
		ptrs[i] = &replies[i]
	}
	return root, replies, o.decorateAll(ctx, ptrs)
}

// decorate fills the author and the rendered HTML; deleted messages show
// neither body nor HTML.
func (o *Office) decorate(m *bullpen.Message, author bullpen.Member) {
	a := author
	m.Author = &a
	if m.Deleted {
		m.Body, m.HTML, m.Mentions = "", "", []string{}
		return
	}
	m.HTML = o.render.Markdown(m.Body)
}

func (o *Office) decorateAll(ctx context.Context, msgs []*bullpen.Message) error {
	ids := make([]int64, 0, len(msgs))
	for _, m := range msgs {
		ids = append(ids, m.AuthorID)
	}
	authors, err := o.db.MembersByID(ctx, ids)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		o.decorate(m, authors[m.AuthorID])
	}
	return nil
}
