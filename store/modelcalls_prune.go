package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// PruneResult counts what a retention pass removed.
type PruneResult struct {
	ModelCalls  int64 // model-call records deleted
	ToolResults int64 // tool-call results emptied
	Responses   int64 // gateway responses (previous_response_id) deleted
}

// PruneTurnRecords deletes the model calls (and the gateway's kept
// Responses answers) of turns that started before cutoff and are no
// longer running, and empties their tool calls' results
// longer than bigResult characters (the call itself, its arguments and outcome
// stay). The turn rows and their usage stay: budgets and the turn list
// still count them.
func (db *DB) PruneTurnRecords(ctx context.Context, cutoff time.Time, bigResult int) (PruneResult, error) {
	var res PruneResult
	_, err := db.Transact(ctx, func(tx *Tx) error {
		old := tx.g.Model(&turnRow{}).Select("id").Where("started_at < ? AND state <> ?", cutoff.UTC(), bullpen.TurnRunning)
		del := tx.g.Where("turn_id IN (?)", old).Delete(&modelCallRow{})
		if del.Error != nil {
			return fmt.Errorf("store: prune model calls: %w", del.Error)
		}
		res.ModelCalls = del.RowsAffected
		up := tx.g.Model(&toolCallRow{}).Where("turn_id IN (?) AND LENGTH(result) > ?", old, bigResult).
			Update("result", PrunedResult)
		if up.Error != nil {
			return fmt.Errorf("store: prune tool results: %w", up.Error)
		}
		res.ToolResults = up.RowsAffected
		gone := tx.g.Where("turn_id IN (?)", old).Delete(&gatewayResponseRow{})
		if gone.Error != nil {
			return fmt.Errorf("store: prune gateway responses: %w", gone.Error)
		}
		res.Responses = gone.RowsAffected
		return nil
	})
	return res, err
}

// PrunedResult replaces a tool call's result removed by retention.
const PrunedResult = "(removed: older than the turn retention period)"

// Storage is the size of the database, for the per-turn storage figures.
type Storage struct {
	// Database is the SQLite file (with its write-ahead log) or the
	// PostgreSQL database, in bytes.
	Database int64
	// Records is the on-disk size of the model-call and tool-call tables
	// with their indexes (PostgreSQL pg_total_relation_size; 0 on SQLite,
	// which does not tell per table).
	Records int64
	// RecordBytes is the bytes of bodies kept: model-call requests and
	// responses, tool-call arguments and results.
	RecordBytes int64
}

// StorageSize measures the database. SQLite is checkpointed first, so the
// file holds every committed page.
func (db *DB) StorageSize(ctx context.Context) (Storage, error) {
	var s Storage
	g := db.read(ctx)
	octets := "LENGTH(CAST(%[1]s AS BLOB))"
	if db.dialect == Postgres {
		octets = "OCTET_LENGTH(%[1]s)"
	}
	err := g.Raw(`SELECT (SELECT COALESCE(SUM(stored_bytes), 0) FROM agent_model_calls) +
		(SELECT COALESCE(SUM(` + fmt.Sprintf(octets, "arguments") + ` + ` + fmt.Sprintf(octets, "result") + `), 0) FROM agent_tool_calls)`).
		Scan(&s.RecordBytes).Error
	if err != nil {
		return s, fmt.Errorf("store: record bytes: %w", err)
	}
	if db.dialect == Postgres {
		err = g.Raw(`SELECT pg_database_size(current_database()),
			pg_total_relation_size('agent_model_calls') + pg_total_relation_size('agent_tool_calls')`).Row().Scan(&s.Database, &s.Records)
		if err != nil {
			return s, fmt.Errorf("store: database size: %w", err)
		}
		return s, nil
	}
	if err := g.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
		return s, fmt.Errorf("store: checkpoint: %w", err)
	}
	for _, name := range []string{"bullpen.db", "bullpen.db-wal"} {
		if fi, err := os.Stat(filepath.Join(db.dataDir, name)); err == nil {
			s.Database += fi.Size()
		}
	}
	return s, nil
}
