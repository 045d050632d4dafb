package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// eventRow is the events table.
type eventRow struct {
	Seq       int64 `gorm:"primaryKey"`
	Type      string
	ChannelID *int64
	ActorID   int64
	Audience  string
	Payload   string
	CreatedAt time.Time
}

func (eventRow) TableName() string { return "events" }

// Emit stores an event in the transaction. Audience limits who may see it
// (nil: everyone).
func (tx *Tx) Emit(typ string, channelID int64, audience []int64, payload any) (bullpen.Event, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return bullpen.Event{}, fmt.Errorf("store: encode %s event: %w", typ, err)
	}
	body = tx.db.secrets.Bytes(body) // no event shows a secret
	if audience, err = tx.audience(typ, channelID, audience, body); err != nil {
		return bullpen.Event{}, err
	}
	seq, err := tx.seq()
	if err != nil {
		return bullpen.Event{}, err
	}
	row := eventRow{Seq: seq, Type: typ, ActorID: actorOf(typ, payload, body), Audience: joinIDs(audience),
		Payload: string(body), CreatedAt: tx.now}
	if channelID != 0 {
		row.ChannelID = &channelID
	}
	if err := tx.insertEvent(&row); err != nil {
		return bullpen.Event{}, fmt.Errorf("store: insert %s event: %w", typ, err)
	}
	ev := row.toEvent()
	if ev.Encoded, err = json.Marshal(ev); err != nil {
		return bullpen.Event{}, fmt.Errorf("store: encode %s event: %w", typ, err)
	}
	tx.events = append(tx.events, ev)
	return ev, nil
}

// actorOf is bullpen.EventActorID without decoding what Emit just
// encoded, for the payload written most (a message's events name its
// author).
func actorOf(typ string, payload any, body []byte) int64 {
	if m, ok := payload.(bullpen.Message); ok && strings.HasPrefix(typ, "message.") {
		return m.AuthorID
	}
	return bullpen.EventActorID(typ, body)
}

func (r *eventRow) toEvent() bullpen.Event {
	ev := bullpen.Event{Seq: r.Seq, Type: r.Type, ActorID: r.ActorID, Payload: json.RawMessage(r.Payload),
		At: r.CreatedAt.UTC(), Audience: splitIDs(r.Audience)}
	if r.ChannelID != nil {
		ev.ChannelID = *r.ChannelID
	}
	return ev
}

// EventsAfter returns up to limit stored events with seq > since, in order.
func (db *DB) EventsAfter(ctx context.Context, since int64, limit int) ([]bullpen.Event, error) {
	var rows []eventRow
	err := db.read(ctx).Where("seq > ?", since).Order("seq").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: events after %d: %w", since, err)
	}
	out := make([]bullpen.Event, len(rows))
	for i := range rows {
		out[i] = rows[i].toEvent()
	}
	return out, nil
}

// LastSeq returns the highest stored event sequence, 0 when there is none.
func (db *DB) LastSeq(ctx context.Context) (int64, error) {
	var seq *int64
	if err := db.read(ctx).Model(&eventRow{}).Select("MAX(seq)").Scan(&seq).Error; err != nil {
		return 0, fmt.Errorf("store: last seq: %w", err)
	}
	if seq == nil {
		return 0, nil
	}
	return *seq, nil
}
