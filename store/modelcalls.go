package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/internal/redact"
)

// Default caps of the model-call record (RecordCaps).
const (
	DefaultBodyCap = 256 << 10 // bytes kept of one request or response body
	DefaultTurnCap = 4 << 20   // bytes kept of all the bodies of one turn
)

// RecordCaps bound what the turn inspector keeps of model calls. A body
// longer than BodyCap, or than what is left of TurnCap for its turn, is
// cut and marked as cut; its whole size is kept. Zero means the default.
type RecordCaps struct {
	BodyCap int
	TurnCap int
}

func (c RecordCaps) orDefaults() RecordCaps {
	if c.BodyCap <= 0 {
		c.BodyCap = DefaultBodyCap
	}
	if c.TurnCap <= 0 {
		c.TurnCap = DefaultTurnCap
	}
	return c
}

type modelCallRow struct {
	ID                int64 `gorm:"primaryKey"`
	TurnID            int64
	AgentID           int64
	Seq               int
	Via               string
	Provider          string
	Model             string
	Method            string
	URL               string `gorm:"column:url"`
	Simulated         bool
	Request           string
	RequestBytes      int
	RequestTruncated  bool
	Response          string
	ResponseBytes     int
	ResponseTruncated bool
	StoredBytes       int
	Status            int
	Error             string
	InputTokens       int
	CachedInputTokens int
	CacheWriteTokens  int
	OutputTokens      int
	StartedAt         time.Time
	DurationMs        int64
}

func (modelCallRow) TableName() string { return "agent_model_calls" }

func (r *modelCallRow) toModelCall() bullpen.ModelCall {
	return bullpen.ModelCall{ID: r.ID, TurnID: r.TurnID, AgentID: r.AgentID, Seq: r.Seq, Via: r.Via, Provider: r.Provider,
		Model: r.Model, Method: r.Method, URL: r.URL, Simulated: r.Simulated,
		Request: r.Request, RequestBytes: r.RequestBytes, RequestTruncated: r.RequestTruncated,
		Response: r.Response, ResponseBytes: r.ResponseBytes, ResponseTruncated: r.ResponseTruncated,
		Status: r.Status, Error: r.Error, InputTokens: r.InputTokens, CachedInputTokens: r.CachedInputTokens,
		CacheWriteTokens: r.CacheWriteTokens, OutputTokens: r.OutputTokens, StartedAt: r.StartedAt.UTC(), DurationMS: r.DurationMs}
}

// RecordModelCall stores one model call of a turn, giving it the next
// sequence number of that turn. Bodies over the caps are cut and marked
// (Request/ResponseTruncated) with their whole sizes kept. The built-in
// loop and the model gateway both record through it. EINVALID for a call
// without a turn or with an unknown Via, ENOTFOUND for an unknown turn.
func (db *DB) RecordModelCall(ctx context.Context, c bullpen.ModelCall) error {
	if c.TurnID == 0 {
		return bullpen.Errorf(bullpen.EINVALID, "a model call needs its turn")
	}
	if c.Via != bullpen.ViaBuiltin && c.Via != bullpen.ViaGateway {
		return bullpen.Errorf(bullpen.EINVALID, "model call via %q: want %q or %q", c.Via, bullpen.ViaBuiltin, bullpen.ViaGateway)
	}
	_, err := db.Transact(ctx, func(tx *Tx) error { return tx.recordModelCall(c, db.caps.orDefaults()) })
	return err
}

func (tx *Tx) recordModelCall(c bullpen.ModelCall, caps RecordCaps) error {
	c = RedactModelCall(tx.db.secrets, c)
	var turn turnRow
	if err := tx.g.Select("id", "agent_id").First(&turn, c.TurnID).Error; err != nil {
		return notFound(err, "turn %d not found", c.TurnID)
	}
	if c.AgentID == 0 {
		c.AgentID = turn.AgentID
	}
	if c.AgentID != turn.AgentID {
		return bullpen.Errorf(bullpen.EINVALID, "turn %d is not agent %d's", c.TurnID, c.AgentID)
	}
	var agg struct {
		Seq    int
		Stored int
	}
	err := tx.g.Model(&modelCallRow{}).Select("COALESCE(MAX(seq), 0) AS seq, COALESCE(SUM(stored_bytes), 0) AS stored").
		Where("turn_id = ?", c.TurnID).Scan(&agg).Error
	if err != nil {
		return fmt.Errorf("store: model calls of turn %d: %w", c.TurnID, err)
	}
	row := modelCallRowOf(c, tx.now)
	row.Seq = agg.Seq + 1
	left := max(caps.TurnCap-agg.Stored, 0)
	row.Request, row.RequestBytes, row.RequestTruncated = capBody(c.Request, c.RequestBytes, c.RequestTruncated, min(caps.BodyCap, left))
	left -= len(row.Request)
	row.Response, row.ResponseBytes, row.ResponseTruncated = capBody(c.Response, c.ResponseBytes, c.ResponseTruncated, min(caps.BodyCap, left))
	row.StoredBytes = len(row.Request) + len(row.Response)
	if err := tx.g.Create(&row).Error; err != nil {
		return fmt.Errorf("store: insert model call: %w", err)
	}
	return nil
}

func modelCallRowOf(c bullpen.ModelCall, now time.Time) modelCallRow {
	started := c.StartedAt
	if started.IsZero() {
		started = now
	}
	return modelCallRow{TurnID: c.TurnID, AgentID: c.AgentID, Via: c.Via, Provider: c.Provider, Model: c.Model,
		Method: c.Method, URL: c.URL, Simulated: c.Simulated, Status: c.Status, Error: textSafe(c.Error),
		InputTokens: c.InputTokens, CachedInputTokens: c.CachedInputTokens, CacheWriteTokens: c.CacheWriteTokens,
		OutputTokens: c.OutputTokens, StartedAt: started.UTC(), DurationMs: c.DurationMS}
}

// capBody cuts body to at most limit bytes, at a character boundary. whole
// is the size the caller saw (a caller may have cut already); the larger
// of it and the body's own length is kept.
func capBody(body string, whole int, cut bool, limit int) (string, int, bool) {
	body = textSafe(body)
	whole = max(whole, len(body))
	if len(body) <= limit {
		return body, whole, cut
	}
	n := limit
	for n > 0 && !utf8.RuneStart(body[n]) {
		n--
	}
	return body[:n], whole, true
}

// textSafe makes s storable in a TEXT column on both dialects: PostgreSQL
// refuses invalid UTF-8 and NUL bytes. Model APIs speak JSON and SSE, so
// this changes nothing they send in practice.
func textSafe(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// ModelCalls returns a turn's model calls in order.
func (db *DB) ModelCalls(ctx context.Context, turnID int64) ([]bullpen.ModelCall, error) {
	var rows []modelCallRow
	if err := db.read(ctx).Where("turn_id = ?", turnID).Order("seq").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: model calls of turn %d: %w", turnID, err)
	}
	out := make([]bullpen.ModelCall, len(rows))
	for i := range rows {
		out[i] = rows[i].toModelCall()
	}
	return out, nil
}

// ToolCalls returns a turn's tool calls in order.
func (db *DB) ToolCalls(ctx context.Context, turnID int64) ([]bullpen.ToolCall, error) {
	var rows []toolCallRow
	if err := db.read(ctx).Where("turn_id = ?", turnID).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: tool calls of turn %d: %w", turnID, err)
	}
	out := make([]bullpen.ToolCall, len(rows))
	for i := range rows {
		out[i] = rows[i].toToolCall()
	}
	return out, nil
}

// RedactModelCall blanks the secrets of sec (and any URL's user
// information) in what c shows: its address, bodies and error.
func RedactModelCall(sec *redact.Secrets, c bullpen.ModelCall) bullpen.ModelCall {
	c.URL, c.Request, c.Response, c.Error = sec.String(c.URL), sec.String(c.Request), sec.String(c.Response), sec.String(c.Error)
	c.Provider, c.Model = sec.String(c.Provider), sec.String(c.Model)
	return c
}
