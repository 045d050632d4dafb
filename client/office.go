package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/bullpen-hq/bullpen"
)

// Me returns the member the token belongs to.
func (c *Client) Me(ctx context.Context) (bullpen.Member, error) {
	return get[bullpen.Member](ctx, c, "/me", nil)
}

// Members lists every member of the office.
func (c *Client) Members(ctx context.Context) ([]bullpen.Member, error) {
	return list[bullpen.Member](ctx, c, "/members", nil)
}

// Member returns one member.
func (c *Client) Member(ctx context.Context, id int64) (bullpen.Member, error) {
	return get[bullpen.Member](ctx, c, p("/members/%v", id), nil)
}

// CreateMember adds a member (admins only).
func (c *Client) CreateMember(ctx context.Context, in bullpen.MemberInput) (bullpen.Member, error) {
	return send[bullpen.Member](ctx, c, http.MethodPost, "/members", in)
}

// UpdateMember changes a member's display name, title or mute.
func (c *Client) UpdateMember(ctx context.Context, id int64, up bullpen.MemberUpdate) (bullpen.Member, error) {
	return send[bullpen.Member](ctx, c, http.MethodPatch, p("/members/%v", id), up)
}

// Channels lists the channels the caller can see.
func (c *Client) Channels(ctx context.Context) ([]bullpen.Channel, error) {
	return list[bullpen.Channel](ctx, c, "/channels", nil)
}

// Channel returns one channel.
func (c *Client) Channel(ctx context.Context, id int64) (bullpen.Channel, error) {
	return get[bullpen.Channel](ctx, c, p("/channels/%v", id), nil)
}

// ChannelNamed finds a channel by name ("general" or "#general") or ID.
func (c *Client) ChannelNamed(ctx context.Context, name string) (bullpen.Channel, error) {
	name = strings.TrimPrefix(name, "#")
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		return c.Channel(ctx, id)
	}
	chs, err := c.Channels(ctx)
	if err != nil {
		return bullpen.Channel{}, err
	}
	for _, ch := range chs {
		if ch.Name == name {
			return ch, nil
		}
	}
	return bullpen.Channel{}, &Error{Status: http.StatusNotFound, Code: bullpen.ENOTFOUND, Message: "no channel #" + name + " that you can see"}
}

// CreateChannel creates a public channel.
func (c *Client) CreateChannel(ctx context.Context, in bullpen.ChannelInput) (bullpen.Channel, error) {
	return send[bullpen.Channel](ctx, c, http.MethodPost, "/channels", in)
}

// JoinChannel adds the caller to a channel.
func (c *Client) JoinChannel(ctx context.Context, id int64) (bullpen.Channel, error) {
	return send[bullpen.Channel](ctx, c, http.MethodPost, p("/channels/%v/join", id), nil)
}

// LeaveChannel removes the caller from a channel.
func (c *Client) LeaveChannel(ctx context.Context, id int64) (bullpen.Channel, error) {
	return send[bullpen.Channel](ctx, c, http.MethodPost, p("/channels/%v/leave", id), nil)
}

// OpenDM opens (or returns) the direct-message channel with a member,
// named by handle.
func (c *Client) OpenDM(ctx context.Context, handle string) (bullpen.Channel, error) {
	return send[bullpen.Channel](ctx, c, http.MethodPost, "/dms", map[string]string{"handle": strings.TrimPrefix(handle, "@")})
}

// Post posts a message in a channel; threadID 0 starts a new top-level
// message. The author is always the token's member.
func (c *Client) Post(ctx context.Context, channelID, threadID int64, body string) (bullpen.Message, error) {
	in := struct {
		Body     string `json:"body"`
		ThreadID int64  `json:"thread_id,omitempty"`
	}{body, threadID}
	return send[bullpen.Message](ctx, c, http.MethodPost, p("/channels/%v/messages", channelID), in)
}

// Messages returns a page of a channel's top-level messages, newest
// first; before is the cursor of the previous page ("" for the newest).
func (c *Client) Messages(ctx context.Context, channelID int64, before string, limit int) (bullpen.MessagePage, error) {
	q := url.Values{}
	if before != "" {
		q.Set("before", before)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return get[bullpen.MessagePage](ctx, c, p("/channels/%v/messages", channelID), q)
}

// Message returns one message.
func (c *Client) Message(ctx context.Context, id int64) (bullpen.Message, error) {
	return get[bullpen.Message](ctx, c, p("/messages/%v", id), nil)
}

// Thread returns a thread's root and its replies, oldest first.
func (c *Client) Thread(ctx context.Context, rootID int64) (root bullpen.Message, replies []bullpen.Message, err error) {
	var out struct {
		Root    bullpen.Message   `json:"root"`
		Replies []bullpen.Message `json:"replies"`
	}
	err = c.call(ctx, http.MethodGet, p("/messages/%v/thread", rootID), nil, nil, &out)
	return out.Root, out.Replies, err
}

// EditMessage replaces a message's body (its author only).
func (c *Client) EditMessage(ctx context.Context, id int64, body string) (bullpen.Message, error) {
	return send[bullpen.Message](ctx, c, http.MethodPatch, p("/messages/%v", id), map[string]string{"body": body})
}

// DeleteMessage deletes a message (its author or an admin).
func (c *Client) DeleteMessage(ctx context.Context, id int64) (bullpen.Message, error) {
	return send[bullpen.Message](ctx, c, http.MethodDelete, p("/messages/%v", id), nil)
}

// Tokens lists the caller's API tokens (never their secrets).
func (c *Client) Tokens(ctx context.Context) ([]bullpen.Token, error) {
	return list[bullpen.Token](ctx, c, "/tokens", nil)
}

// CreateToken creates a token for memberID (0: the caller) and returns
// its secret, shown only this once.
func (c *Client) CreateToken(ctx context.Context, memberID int64, name string) (string, bullpen.Token, error) {
	var out struct {
		bullpen.Token
		Secret string `json:"token"`
	}
	in := map[string]any{"name": name}
	if memberID != 0 {
		in["member_id"] = memberID
	}
	err := c.call(ctx, http.MethodPost, "/tokens", nil, in, &out)
	return out.Secret, out.Token, err
}

// RevokeToken revokes a token by ID.
func (c *Client) RevokeToken(ctx context.Context, id int64) error {
	return c.call(ctx, http.MethodDelete, p("/tokens/%v", id), nil, nil, nil)
}
