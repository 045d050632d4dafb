package bullpen

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDecoders(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		typ     string
		payload string
		decode  func(Event) (any, error)
		want    any
	}{
		{"message", EventMessagePosted, `{"id":7,"channel_id":2,"author_id":3,"body":"hi"}`,
			func(ev Event) (any, error) { return MessageOf(ev) }, Message{ID: 7, ChannelID: 2, AuthorID: 3, Body: "hi"}},
		{"edited message", EventMessageEdited, `{"id":7,"body":"hi!"}`,
			func(ev Event) (any, error) { return MessageOf(ev) }, Message{ID: 7, Body: "hi!"}},
		{"channel", EventChannelCreated, `{"id":2,"name":"general","kind":"public"}`,
			func(ev Event) (any, error) { return ChannelOf(ev) }, Channel{ID: 2, Name: "general", Kind: ChannelPublic}},
		{"membership", EventChannelJoined, `{"channel_id":2,"member":{"id":3,"handle":"ann"}}`,
			func(ev Event) (any, error) { return MembershipOf(ev) }, Membership{ChannelID: 2, Member: Member{ID: 3, Handle: "ann"}}},
		{"member", EventMemberUpdated, `{"id":3,"handle":"ann"}`,
			func(ev Event) (any, error) { return MemberOf(ev) }, Member{ID: 3, Handle: "ann"}},
		{"wiki", EventWikiPageSaved, `{"slug":"home","revision":4,"author_id":3}`,
			func(ev Event) (any, error) { return WikiEventOf(ev) }, WikiEvent{Slug: "home", Revision: 4, AuthorID: 3}},
		{"approval", EventApprovalAnswered, `{"id":9,"agent_id":5,"state":"approved","created_at":"2026-12-01T10:00:00Z","handle":"bot"}`,
			func(ev Event) (any, error) { return ApprovalOf(ev) },
			ApprovalEvent{Approval: Approval{ID: 9, AgentID: 5, State: "approved", CreatedAt: at}, Handle: "bot"}},
		{"agent id", "agent.turn_started", `{"turn_id":1,"agent_id":5}`,
			func(ev Event) (any, error) { return AgentIDOf(ev) }, int64(5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.decode(Event{Seq: 1, Type: tt.typ, Payload: json.RawMessage(tt.payload)})
			if err != nil {
				t.Fatalf("decode(%s) error: %v", tt.payload, err)
			}
			if !jsonEqual(t, got, tt.want) {
				t.Errorf("decode(%s) = %+v, want %+v", tt.payload, got, tt.want)
			}
			// A payload of the wrong shape is an EINVALID error naming
			// the event type and wrapping the JSON error.
			_, err = tt.decode(Event{Seq: 42, Type: tt.typ, Payload: json.RawMessage(`{"id":"x","agent_id":"x","slug":1,"channel_id":"x"}`)})
			var je *json.UnmarshalTypeError
			if !IsCode(err, EINVALID) || !strings.Contains(err.Error(), tt.typ) || !strings.Contains(err.Error(), "42") || !errors.As(err, &je) {
				t.Errorf("bad payload: err = %v, want EINVALID naming %s event 42 and wrapping a JSON type error", err, tt.typ)
			}
			// An event of another type is refused rather than decoded.
			if _, err := tt.decode(Event{Seq: 43, Type: "other.thing", Payload: json.RawMessage(tt.payload)}); !IsCode(err, EINVALID) || !strings.Contains(err.Error(), "other.thing") {
				t.Errorf("wrong type: err = %v, want EINVALID naming other.thing", err)
			}
		})
	}
}

func TestDecodePayloadSyntaxError(t *testing.T) {
	_, err := MessageOf(Event{Seq: 5, Type: EventMessagePosted, Payload: json.RawMessage(`{"id":`)})
	var se *json.SyntaxError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "decode message.posted event 5") {
		t.Errorf("MessageOf(truncated) = %v, want a wrapped *json.SyntaxError naming message.posted event 5", err)
	}
}

// jsonEqual compares two values by their JSON encodings, which is what a
// decoder must preserve.
func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("marshal: %v %v", err1, err2)
	}
	return string(x) == string(y)
}
