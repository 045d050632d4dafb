package agents

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bullpen-hq/bullpen"
)

// fakeDirectory is the directory's store (directoryStore) in memory:
// members ordered by handle, fired agents, wakes by turn, messages.
type fakeDirectory struct {
	members  []bullpen.Member
	fired    map[int64]bool
	wakes    map[int64][]bullpen.Wake
	messages map[int64]bullpen.Message
}

func (f *fakeDirectory) Members(context.Context) ([]bullpen.Member, error) { return f.members, nil }

func (f *fakeDirectory) MembersIn(_ context.Context, ids []int64) ([]bullpen.Member, error) {
	var out []bullpen.Member
	for _, m := range f.members {
		if slices.Contains(ids, m.ID) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (f *fakeDirectory) MembersByID(_ context.Context, ids []int64) (map[int64]bullpen.Member, error) {
	in, _ := f.MembersIn(context.Background(), ids)
	out := map[int64]bullpen.Member{}
	for _, m := range in {
		out[m.ID] = m
	}
	return out, nil
}

func (f *fakeDirectory) CountMembers(context.Context) (int64, error) {
	return int64(len(f.members)), nil
}

func (f *fakeDirectory) FiredAgentMembers(context.Context) (map[int64]bool, error) {
	return f.fired, nil
}

func (f *fakeDirectory) Member(_ context.Context, id int64) (bullpen.Member, error) {
	for _, m := range f.members {
		if m.ID == id {
			return m, nil
		}
	}
	return bullpen.Member{}, bullpen.Errorf(bullpen.ENOTFOUND, "member %d not found", id)
}

func (f *fakeDirectory) MemberByHandle(_ context.Context, handle string) (bullpen.Member, error) {
	for _, m := range f.members {
		if m.Handle == handle {
			return m, nil
		}
	}
	return bullpen.Member{}, bullpen.Errorf(bullpen.ENOTFOUND, "member @%s not found", handle)
}

func (f *fakeDirectory) Wakes(_ context.Context, turnID int64) ([]bullpen.Wake, error) {
	return f.wakes[turnID], nil
}

func (f *fakeDirectory) Message(_ context.Context, id int64) (bullpen.Message, error) {
	m, ok := f.messages[id]
	if !ok {
		return m, bullpen.Errorf(bullpen.ENOTFOUND, "message %d not found", id)
	}
	return m, nil
}

// TestDirectoryAlone builds the directory part on a fake of the one
// interface it declares (directoryStore): no service, no database.
func TestDirectoryAlone(t *testing.T) {
	ctx := context.Background()
	ann := bullpen.Member{ID: 1, Handle: "ann", DisplayName: "Ann", Kind: bullpen.KindHuman}
	lead := bullpen.Member{ID: 2, Handle: "lead", DisplayName: "Lead", Title: "Team lead", Kind: bullpen.KindAgent}
	gone := bullpen.Member{ID: 3, Handle: "old", DisplayName: "Old", Kind: bullpen.KindAgent}
	st := &fakeDirectory{members: []bullpen.Member{ann, lead, gone}, fired: map[int64]bool{gone.ID: true},
		wakes:    map[int64][]bullpen.Wake{9: {{MessageID: 10}, {MessageID: 11}, {ApprovalID: 4}}},
		messages: map[int64]bullpen.Message{10: {ID: 10, AuthorID: ann.ID}, 11: {ID: 11, AuthorID: lead.ID}}}
	d := directory{db: st}

	roster, err := d.roster(ctx, nil)
	if want := "@ann — Ann (human)\n@lead — Lead, Team lead (agent)\n"; err != nil || roster != want {
		t.Errorf("roster = %q, %v; want %q (a fired agent left out)", roster, err, want)
	}
	if got := d.proposer(ctx, 9); got != ann.ID {
		t.Errorf("proposer = %d, want %d: the latest human whose message woke the turn", got, ann.ID)
	}
	if got := d.proposer(ctx, 0); got != 0 {
		t.Errorf("proposer outside a turn = %d, want 0", got)
	}
	if id, err := d.memberNamed(ctx, "@lead"); err != nil || id != lead.ID {
		t.Errorf("memberNamed(@lead) = %d, %v; want %d", id, err, lead.ID)
	}
	if _, err := d.memberNamed(ctx, "nobody"); !bullpen.IsCode(err, bullpen.EINVALID) {
		t.Errorf("memberNamed(nobody) = %v, want EINVALID", err)
	}

	for i := range rosterFull {
		st.members = append(st.members, bullpen.Member{ID: int64(100 + i), Handle: fmt.Sprintf("p%02d", i), Kind: bullpen.KindHuman})
	}
	roster, err = d.roster(ctx, &bullpen.Channel{MemberIDs: []int64{ann.ID, lead.ID}})
	if err != nil || !strings.HasPrefix(roster, "@ann — Ann (human)\n@lead — Lead, Team lead (agent)\n(and 40 more members") {
		t.Errorf("a large office's roster in a channel of two = %q, %v; want the two and a count of the others", roster, err)
	}
}
