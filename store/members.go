package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
)

type memberRow struct {
	ID          int64 `gorm:"primaryKey"`
	Handle      string
	DisplayName string
	Kind        string
	Title       string
	IsAdmin     bool
	Muted       bool
	CreatedAt   time.Time
}

func (memberRow) TableName() string { return "members" }

func (r *memberRow) toMember() bullpen.Member {
	return bullpen.Member{ID: r.ID, Handle: r.Handle, DisplayName: r.DisplayName, Kind: bullpen.MemberKind(r.Kind),
		Title: r.Title, IsAdmin: r.IsAdmin, Muted: r.Muted, CreatedAt: r.CreatedAt.UTC()}
}

// CreateMember inserts a member; a taken handle is ECONFLICT.
func (tx *Tx) CreateMember(m bullpen.Member) (bullpen.Member, error) {
	row := memberRow{Handle: m.Handle, DisplayName: m.DisplayName, Kind: string(m.Kind), Title: m.Title,
		IsAdmin: m.IsAdmin, Muted: m.Muted, CreatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		if isUniqueViolation(err) {
			return bullpen.Member{}, bullpen.Errorf(bullpen.ECONFLICT, "handle %q is taken", m.Handle)
		}
		return bullpen.Member{}, fmt.Errorf("store: insert member: %w", err)
	}
	return row.toMember(), nil
}

// UpdateMember saves a member's display name, title and muted flag.
func (tx *Tx) UpdateMember(m bullpen.Member) error {
	res := tx.g.Model(&memberRow{}).Where("id = ?", m.ID).
		Updates(map[string]any{"display_name": m.DisplayName, "title": m.Title, "muted": m.Muted})
	if res.Error != nil {
		return fmt.Errorf("store: update member: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return bullpen.Errorf(bullpen.ENOTFOUND, "member %d not found", m.ID)
	}
	return nil
}

// Member returns a member by ID.
func (db *DB) Member(ctx context.Context, id int64) (bullpen.Member, error) {
	var row memberRow
	if err := db.read(ctx).First(&row, id).Error; err != nil {
		return bullpen.Member{}, notFound(err, "member %d not found", id)
	}
	return row.toMember(), nil
}

// MemberByHandle returns a member by handle.
func (db *DB) MemberByHandle(ctx context.Context, handle string) (bullpen.Member, error) {
	var row memberRow
	if err := db.read(ctx).Where("handle = ?", handle).First(&row).Error; err != nil {
		return bullpen.Member{}, notFound(err, "member @%s not found", handle)
	}
	return row.toMember(), nil
}

// Members returns all members ordered by handle.
func (db *DB) Members(ctx context.Context) ([]bullpen.Member, error) {
	return db.members(ctx, "list members", "")
}

// MembersByID returns the members with the given IDs, keyed by ID.
func (db *DB) MembersByID(ctx context.Context, ids []int64) (map[int64]bullpen.Member, error) {
	if len(ids) == 0 {
		return map[int64]bullpen.Member{}, nil
	}
	return byID(db.members(ctx, "members by id", "id IN ?", ids))
}

// CountMembers returns how many members exist.
func (db *DB) CountMembers(ctx context.Context) (int64, error) {
	var n int64
	if err := db.read(ctx).Model(&memberRow{}).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("store: count members: %w", err)
	}
	return n, nil
}

// MembersIn returns the members with the given IDs, ordered by handle as
// Members orders them: a channel's roster without reading the office's.
func (db *DB) MembersIn(ctx context.Context, ids []int64) ([]bullpen.Member, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return db.members(ctx, "members in", "id IN ?", ids)
}

// MembersByHandle returns the members with the given handles (unknown
// handles are left out), keyed by ID.
func (db *DB) MembersByHandle(ctx context.Context, handles []string) (map[int64]bullpen.Member, error) {
	if len(handles) == 0 {
		return map[int64]bullpen.Member{}, nil
	}
	return byID(db.members(ctx, "members by handle", "handle IN ?", handles))
}

// members reads the members a condition picks (none: all of them),
// ordered by handle; what names the read in its error.
func (db *DB) members(ctx context.Context, what, where string, args ...any) ([]bullpen.Member, error) {
	q := db.read(ctx).Order("handle")
	if where != "" {
		q = q.Where(where, args...)
	}
	var rows []memberRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	out := make([]bullpen.Member, len(rows))
	for i := range rows {
		out[i] = rows[i].toMember()
	}
	return out, nil
}

// byID keys members by ID.
func byID(ms []bullpen.Member, err error) (map[int64]bullpen.Member, error) {
	if err != nil {
		return nil, err
	}
	out := make(map[int64]bullpen.Member, len(ms))
	for _, m := range ms {
		out[m.ID] = m
	}
	return out, nil
}
