package tasks

import (
	"context"
	"fmt"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// checkRefs checks, inside tx, that task id's parent and dependencies
// exist and make no cycle (id 0: a new task, which nothing points to yet).
func (s *Service) checkRefs(tx *store.Tx, id, parentID int64, deps []int64) error {
	if parentID != 0 {
		if err := checkParent(tx, id, parentID); err != nil {
			return err
		}
	}
	for _, d := range deps {
		if d == id {
			return bullpen.Errorf(bullpen.EINVALID, "task %d cannot depend on itself", id)
		}
		dep, err := tx.Task(d)
		if bullpen.IsCode(err, bullpen.ENOTFOUND) {
			return bullpen.Errorf(bullpen.EINVALID, "depends_on names task %d, which does not exist", d)
		}
		if err != nil {
			return err
		}
		if dep.State == bullpen.TaskCancelled {
			return bullpen.Errorf(bullpen.EINVALID, "task %d is cancelled: nothing can wait for it", d)
		}
	}
	if id == 0 || len(deps) == 0 {
		return nil
	}
	return checkNoCycle(tx, id, deps)
}

func checkParent(tx *store.Tx, id, parentID int64) error {
	for at, hops := parentID, 0; at != 0; hops++ {
		if at == id || hops > 1000 {
			return bullpen.Errorf(bullpen.EINVALID, "parent %d would make task %d its own ancestor", parentID, id)
		}
		p, err := tx.Task(at)
		if bullpen.IsCode(err, bullpen.ENOTFOUND) {
			return bullpen.Errorf(bullpen.EINVALID, "parent task %d does not exist", at)
		}
		if err != nil {
			return err
		}
		if at == parentID && p.Closed() {
			return bullpen.Errorf(bullpen.EINVALID, "parent task %d is %s", at, p.State)
		}
		at = p.ParentID
	}
	return nil
}

// checkNoCycle walks the dependency graph from deps and refuses a path
// back to id: task id would wait, through them, for itself.
func checkNoCycle(tx *store.Tx, id int64, deps []int64) error {
	seen := map[int64]bool{}
	frontier := deps
	for len(frontier) > 0 {
		next, err := tx.TaskDeps(frontier)
		if err != nil {
			return err
		}
		var more []int64
		for _, ds := range next {
			for _, d := range ds {
				if d == id {
					return bullpen.Errorf(bullpen.EINVALID, "depending on %v would make a cycle: task %d would wait for itself", deps, id)
				}
				if !seen[d] {
					seen[d] = true
					more = append(more, d)
				}
			}
		}
		frontier = more
	}
	return nil
}

// unfinishedDeps returns an EINVALID error naming t's dependencies that
// are not done, nil when all are.
func unfinishedDeps(tx *store.Tx, t bullpen.Task) error {
	open, err := tx.UnfinishedTasks(t.DependsOn)
	if err != nil {
		return err
	}
	if len(open) > 0 {
		return bullpen.Errorf(bullpen.EINVALID, "task %d waits for tasks %v: it cannot be in progress before they are done", t.ID, open)
	}
	return nil
}

// Commit is a caller's own write that must commit with a task change (an
// agent's record of its tool call, so that a resumed turn never repeats
// the change). It sees the task as changed.
type Commit func(tx *store.Tx, t bullpen.Task) error

// change runs fn on task id inside a transaction, with the task read
// under the writers' lock and its channel, then commit (when not nil).
func (s *Service) change(ctx context.Context, id int64, commit Commit, fn func(tx *store.Tx, t *bullpen.Task, c bullpen.Channel) error) (bullpen.Task, error) {
	t, c, err := s.taskAndChannel(ctx, id)
	if err != nil {
		return t, err
	}
	_, err = s.db.Transact(ctx, func(tx *store.Tx) error {
		var err error
		if t, err = tx.Task(id); err != nil {
			return err
		}
		if err := fn(tx, &t, c); err != nil || commit == nil {
			return err
		}
		return commit(tx, t)
	})
	return t, err
}

func (s *Service) taskAndChannel(ctx context.Context, id int64) (bullpen.Task, bullpen.Channel, error) {
	if id <= 0 {
		return bullpen.Task{}, bullpen.Channel{}, bullpen.Errorf(bullpen.EINVALID, "task ID must be positive")
	}
	t, err := s.db.Task(ctx, id)
	if err != nil {
		return t, bullpen.Channel{}, err
	}
	c, err := s.db.Channel(ctx, t.ChannelID)
	if err != nil {
		return t, c, fmt.Errorf("tasks: channel of task %d: %w", id, err)
	}
	return t, c, nil
}

// save writes t and its event.
func (s *Service) save(tx *store.Tx, t *bullpen.Task, c bullpen.Channel, typ string, ev bullpen.TaskEvent) error {
	saved, err := tx.UpdateTask(*t)
	if err != nil {
		return err
	}
	*t = saved
	ev.Task = saved
	return s.emit(tx, c, typ, ev)
}
