package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
)

type channelRow struct {
	ID        int64 `gorm:"primaryKey"`
	Name      string
	Kind      string
	Topic     string
	CreatedBy int64
	CreatedAt time.Time
}

func (channelRow) TableName() string { return "channels" }

func (r *channelRow) toChannel() bullpen.Channel {
	return bullpen.Channel{ID: r.ID, Name: r.Name, Kind: bullpen.ChannelKind(r.Kind), Topic: r.Topic,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC()}
}

type channelMemberRow struct {
	ChannelID int64 `gorm:"primaryKey"`
	MemberID  int64 `gorm:"primaryKey"`
	JoinedAt  time.Time
}

func (channelMemberRow) TableName() string { return "channel_members" }

// CreateChannel inserts a channel; a taken name is ECONFLICT.
func (tx *Tx) CreateChannel(c bullpen.Channel) (bullpen.Channel, error) {
	row := channelRow{Name: c.Name, Kind: string(c.Kind), Topic: c.Topic, CreatedBy: c.CreatedBy, CreatedAt: tx.now}
	if err := tx.g.Create(&row).Error; err != nil {
		if isUniqueViolation(err) {
			return bullpen.Channel{}, bullpen.Errorf(bullpen.ECONFLICT, "channel %q already exists", c.Name)
		}
		return bullpen.Channel{}, fmt.Errorf("store: insert channel: %w", err)
	}
	return row.toChannel(), nil
}

// AddChannelMember adds a member to a channel; it reports false when the
// member was already there.
func (tx *Tx) AddChannelMember(channelID, memberID int64) (bool, error) {
	res := tx.g.Where(channelMemberRow{ChannelID: channelID, MemberID: memberID}).
		Attrs(channelMemberRow{JoinedAt: tx.now}).FirstOrCreate(&channelMemberRow{})
	if res.Error != nil {
		return false, fmt.Errorf("store: add channel member: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}

// RemoveChannelMember removes a member; it reports false when the member
// was not there.
func (tx *Tx) RemoveChannelMember(channelID, memberID int64) (bool, error) {
	res := tx.g.Where("channel_id = ? AND member_id = ?", channelID, memberID).Delete(&channelMemberRow{})
	if res.Error != nil {
		return false, fmt.Errorf("store: remove channel member: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}

// Channel returns a channel by ID with its member IDs.
func (db *DB) Channel(ctx context.Context, id int64) (bullpen.Channel, error) {
	var row channelRow
	if err := db.read(ctx).First(&row, id).Error; err != nil {
		return bullpen.Channel{}, notFound(err, "channel %d not found", id)
	}
	return db.withMembers(ctx, row.toChannel())
}

// ChannelByName returns a channel by name with its member IDs.
func (db *DB) ChannelByName(ctx context.Context, name string) (bullpen.Channel, error) {
	var row channelRow
	if err := db.read(ctx).Where("name = ?", name).First(&row).Error; err != nil {
		return bullpen.Channel{}, notFound(err, "channel %q not found", name)
	}
	return db.withMembers(ctx, row.toChannel())
}

func (db *DB) withMembers(ctx context.Context, c bullpen.Channel) (bullpen.Channel, error) {
	ids, err := db.ChannelMemberIDs(ctx, c.ID)
	c.MemberIDs = ids
	return c, err
}

// ChannelMemberIDs returns the IDs of a channel's members, ascending.
func (db *DB) ChannelMemberIDs(ctx context.Context, channelID int64) ([]int64, error) {
	var ids []int64
	err := db.read(ctx).Model(&channelMemberRow{}).Where("channel_id = ?", channelID).Order("member_id").Pluck("member_id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("store: channel members: %w", err)
	}
	return ids, nil
}

// Channels returns the public channels and the DMs that memberID belongs
// to (all DMs when memberID is 0), with member IDs, ordered by name.
func (db *DB) Channels(ctx context.Context, memberID int64) ([]bullpen.Channel, error) {
	q := db.read(ctx).Order("name")
	if memberID != 0 {
		q = q.Where("kind = ? OR id IN (?)", bullpen.ChannelPublic,
			db.read(ctx).Model(&channelMemberRow{}).Select("channel_id").Where("member_id = ?", memberID))
	}
	var rows []channelRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list channels: %w", err)
	}
	var links []channelMemberRow
	if err := db.read(ctx).Order("member_id").Find(&links).Error; err != nil {
		return nil, fmt.Errorf("store: list channel members: %w", err)
	}
	byChannel := map[int64][]int64{}
	for _, l := range links {
		byChannel[l.ChannelID] = append(byChannel[l.ChannelID], l.MemberID)
	}
	out := make([]bullpen.Channel, len(rows))
	for i := range rows {
		out[i] = rows[i].toChannel()
		out[i].MemberIDs = byChannel[rows[i].ID]
	}
	return out, nil
}
