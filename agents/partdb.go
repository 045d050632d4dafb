package agents

import (
	"context"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
)

// partDB is *store.DB as a part sees it: the reads its own interface
// declares, and Transact over T, the interface of the writes the part
// makes in a transaction, which *store.Tx provides. A part that declares
// its writes so is built in a test with fakes of its interfaces alone,
// without a database (router_part_test.go, call_part_test.go).
type partDB[T any] struct{ *store.DB }

// Transact runs fn in a write transaction of the database: its changes
// and their events commit together, or, when fn fails, not at all.
func (d partDB[T]) Transact(ctx context.Context, fn func(T) error) error {
	_, err := d.DB.Transact(ctx, func(tx *store.Tx) error { return fn(any(tx).(T)) })
	return err
}

// eventWriter stores an event in the transaction of the change it
// describes; *store.Tx provides it.
type eventWriter interface {
	Emit(typ string, channelID int64, audience []int64, payload any) (bullpen.Event, error)
}

// The writes each part declares, made by *store.Tx (so partDB's
// assertion holds).
var (
	_ routerTx = (*store.Tx)(nil)
	_ callTx   = (*store.Tx)(nil)
)
