package store

import (
	"context"
	"fmt"
	"time"

	"github.com/bullpen-hq/bullpen"
	"gorm.io/gorm/clause"
)

// Replicas that share the database but keep their sandboxes on their own
// disks (the local sandbox driver) place each agent on one replica: the
// one that holds its workspace. The placement is a row per agent, taken
// in the claim's own transaction (ClaimPlacedWakes), and each replica
// writes a heartbeat (Heartbeat); an agent whose replica stopped beating
// moves to the next replica that claims its wakes, with a fresh
// workspace there (its files stayed on the dead replica's disk).

// DefaultLiveness is how long a replica may go without a heartbeat before
// its agents move to another replica.
const DefaultLiveness = 30 * time.Second

// Placement is the claiming replica's side of a placed claim.
type Placement struct {
	// Replica is the claiming replica's ID; it must survive a restart of
	// the same process on the same data dir.
	Replica string
	// Liveness is how long a replica may go without a heartbeat before
	// its agents move (0: DefaultLiveness).
	Liveness time.Duration
}

// Placed reports what a placed claim did to the agent's placement.
type Placed struct {
	// New: the agent had no placement and is now placed on the claimer.
	New bool
	// From names the dead replica the agent moved from ("" when it did
	// not move): its workspace files stayed there.
	From string
}

type replicaRow struct {
	ID     string `gorm:"primaryKey"`
	SeenAt time.Time
}

func (replicaRow) TableName() string { return "replicas" }

type placementRow struct {
	AgentID   int64 `gorm:"primaryKey;autoIncrement:false"`
	ReplicaID string
	PlacedAt  time.Time
}

func (placementRow) TableName() string { return "agent_placements" }

// Heartbeat records that replica is alive now.
func (tx *Tx) Heartbeat(replica string) error {
	if replica == "" {
		return bullpen.Errorf(bullpen.EINVALID, "no replica ID")
	}
	err := tx.g.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "id"}}, DoUpdates: clause.AssignmentColumns([]string{"seen_at"})}).
		Create(&replicaRow{ID: replica, SeenAt: tx.now}).Error
	if err != nil {
		return fmt.Errorf("store: heartbeat: %w", err)
	}
	return nil
}

// ReplicaSeen returns when a replica last wrote its heartbeat; ENOTFOUND
// when it never did.
func (db *DB) ReplicaSeen(ctx context.Context, replica string) (time.Time, error) {
	var row replicaRow
	if err := db.read(ctx).Where("id = ?", replica).First(&row).Error; err != nil {
		return time.Time{}, notFound(err, "replica %s has no heartbeat", replica)
	}
	return row.SeenAt.UTC(), nil
}

// AgentReplica returns the replica an agent is placed on; ENOTFOUND when
// it is placed nowhere.
func (db *DB) AgentReplica(ctx context.Context, agentID int64) (string, error) {
	var row placementRow
	if err := db.read(ctx).Where("agent_id = ?", agentID).First(&row).Error; err != nil {
		return "", notFound(err, "agent %d is placed on no replica", agentID)
	}
	return row.ReplicaID, nil
}

// ClaimPlacedWakes is ClaimWakes for replicas that place their agents
// (see Placement). In the claim's transaction, and before any wake is
// locked: an agent placed on another live replica is left to it
// (ENOTFOUND, as when its turn runs elsewhere); an unplaced agent is
// placed on p.Replica; an agent whose replica is dead (no heartbeat for
// p.Liveness) moves to p.Replica, and Placed.From names where it was. A
// claim that finds nothing pending changes no placement.
func (tx *Tx) ClaimPlacedWakes(p Placement, agentID int64, owner string, leaseUntil time.Time, max int) (bullpen.Turn, []bullpen.Wake, Placed, error) {
	if p.Replica == "" {
		return bullpen.Turn{}, nil, Placed{}, bullpen.Errorf(bullpen.EINVALID, "no replica ID")
	}
	if err := tx.runningElsewhere(agentID, owner); err != nil {
		return bullpen.Turn{}, nil, Placed{}, err
	}
	placed, err := tx.place(agentID, p)
	if err != nil {
		return bullpen.Turn{}, nil, Placed{}, err
	}
	turn, wakes, err := tx.takeWakes(agentID, owner, leaseUntil, max)
	return turn, wakes, placed, err // an error rolls the placement back with the claim
}

// place places the agent on p.Replica unless another live replica holds
// it (ENOTFOUND). The placement row is locked until the transaction ends,
// so two claimers never both take the agent.
func (tx *Tx) place(agentID int64, p Placement) (Placed, error) {
	liveness := p.Liveness
	if liveness <= 0 {
		liveness = DefaultLiveness
	}
	for range 2 {
		cur, found, err := tx.lockPlacement(agentID)
		if err != nil {
			return Placed{}, err
		}
		if !found {
			res := tx.g.Clauses(clause.OnConflict{DoNothing: true}).Create(&placementRow{AgentID: agentID, ReplicaID: p.Replica, PlacedAt: tx.now})
			if res.Error != nil {
				return Placed{}, fmt.Errorf("store: place agent %d: %w", agentID, res.Error)
			}
			if res.RowsAffected == 1 {
				return Placed{New: true}, nil
			}
			continue // another claimer placed it first: read where
		}
		switch {
		case cur.ReplicaID == p.Replica:
			return Placed{}, nil
		case cur.SeenAt != nil && !cur.SeenAt.Before(tx.now.Add(-liveness)):
			return Placed{}, bullpen.Errorf(bullpen.ENOTFOUND, "agent %d is placed on live replica %s", agentID, cur.ReplicaID)
		}
		err = tx.g.Model(&placementRow{}).Where("agent_id = ?", agentID).
			Updates(map[string]any{"replica_id": p.Replica, "placed_at": tx.now}).Error
		if err != nil {
			return Placed{}, fmt.Errorf("store: move agent %d: %w", agentID, err)
		}
		return Placed{From: cur.ReplicaID}, nil
	}
	return Placed{}, bullpen.Errorf(bullpen.ENOTFOUND, "agent %d is being placed by another replica", agentID)
}

// currentPlacement is an agent's placement row with its replica's last
// heartbeat (nil when the replica never beat).
type currentPlacement struct {
	ReplicaID string
	SeenAt    *time.Time
}

// lockPlacement reads the agent's placement with one indexed lookup and,
// on PostgreSQL, locks its row until the transaction ends (SQLite has one
// writer).
func (tx *Tx) lockPlacement(agentID int64) (currentPlacement, bool, error) {
	q := `SELECT p.replica_id, r.seen_at FROM agent_placements p LEFT JOIN replicas r ON r.id = p.replica_id WHERE p.agent_id = ?`
	if tx.db.dialect == Postgres {
		q += " FOR UPDATE OF p"
	}
	var rows []currentPlacement
	if err := tx.g.Raw(q, agentID).Scan(&rows).Error; err != nil {
		return currentPlacement{}, false, fmt.Errorf("store: agent %d placement: %w", agentID, err)
	}
	if len(rows) == 0 {
		return currentPlacement{}, false, nil
	}
	return rows[0], true, nil
}
