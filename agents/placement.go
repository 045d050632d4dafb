package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// Placement (Config.Placement): replicas that share the database but keep
// their agents' workspaces on their own disks (the local sandbox driver)
// run each agent's turns on the replica that holds its workspace. The
// claim places the agent (store.ClaimPlacedWakes); every replica is poked
// for every pending wake (the wake events and the pending poll,
// replicas.go), so the replica that holds the agent gets to its wakes
// whichever replica they were posted to, and the others' claims leave
// them. Each replica beats every placementBeat; one silent for
// store.DefaultLiveness is dead, and its agents move, with fresh
// workspaces, to the replicas that next claim their wakes.

// replicaIDFile, in the data dir, holds the replica's ID, so that a
// restart on the same data dir (whose local sandboxes survive it) is the
// same replica.
const replicaIDFile = "replica-id"

// placementBeat is how often a replica writes its heartbeat: several
// beats fit in the liveness bound, so a slow write or two does not make a
// live replica look dead.
const placementBeat = store.DefaultLiveness / 6

var replicaIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// ReplicaID returns the replica ID kept in dir, creating it on first use.
func ReplicaID(dir string) (string, error) {
	path := filepath.Join(dir, replicaIDFile)
	id, err := readReplicaID(path)
	if !errors.Is(err, os.ErrNotExist) {
		return id, err
	}
	b := make([]byte, 6)
	rand.Read(b)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("agents: replica ID: %w", err)
	}
	// Written whole under another name, then linked: a crash leaves no
	// half-written ID, and of two processes starting at once on one data
	// dir the second reads the first's.
	tmp, err := os.CreateTemp(dir, replicaIDFile+".*")
	if err != nil {
		return "", fmt.Errorf("agents: replica ID: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(b) + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("agents: replica ID: %w", err)
	}
	return readReplicaID(path)
}

// readReplicaID reads and checks a replica ID file.
func readReplicaID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("agents: replica ID: %w", err)
	}
	id := strings.TrimSpace(string(b))
	if !replicaIDRE.MatchString(id) {
		return "", fmt.Errorf("agents: replica ID file %s holds %q, not an ID (lowercase letters, digits and dashes); remove it and this process becomes a new replica", path, id)
	}
	return id, nil
}

// placer is a replica's side of placement: its ID and its heartbeat.
type placer struct {
	db    workerStore
	place store.Placement
	log   *slog.Logger
}

// newPlacer loads the replica ID from cfg.ReplicaDir; nil when placement
// is off.
func newPlacer(cfg Config) (*placer, error) {
	if !cfg.Placement {
		return nil, nil
	}
	if cfg.ReplicaDir == "" {
		return nil, fmt.Errorf("agents: placement needs the replica's data dir")
	}
	id, err := ReplicaID(cfg.ReplicaDir)
	if err != nil {
		return nil, err
	}
	return &placer{db: cfg.DB, place: store.Placement{Replica: id}, log: cfg.Logger.With("replica", id)}, nil
}

// beat writes the heartbeat once.
func (p *placer) beat(ctx context.Context) error {
	_, err := p.db.Transact(ctx, func(tx *store.Tx) error { return tx.Heartbeat(p.place.Replica) })
	return err
}

// beatLoop writes the heartbeat every placementBeat until ctx ends.
func (p *placer) beatLoop(ctx context.Context) {
	for sleepCtx(ctx, placementBeat) {
		if err := p.beat(ctx); err != nil && ctx.Err() == nil {
			p.log.Error("agents: replica heartbeat", "err", err)
		}
	}
}

// moved says, in the log and in the turn's channel, that an agent's turns
// now run here, without the files of the workspace it had on the dead
// replica.
func (p *placer) moved(ctx context.Context, n notifier, turn bullpen.Turn, from string) {
	p.log.Warn("agents: agent moved from a dead replica; its workspace starts fresh here",
		"agent_id", turn.AgentID, "from", from, "turn", turn.ID)
	agent, err := p.db.Member(ctx, turn.AgentID)
	if err != nil {
		return
	}
	n.notice(ctx, agent, turn.ChannelID, 0, fmt.Sprintf("@%s's workspace was on replica %s, which stopped answering: its turns now run on replica %s, in a fresh workspace (the files of the old one stayed there).",
		agent.Handle, from, p.place.Replica))
}
