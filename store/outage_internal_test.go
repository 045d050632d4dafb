package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
)

// liteErr is an error shaped like the SQLite driver's, with its result code.
type liteErr int

func (e liteErr) Error() string { return fmt.Sprintf("sqlite error %d: database is locked", int(e)) }
func (e liteErr) Code() int     { return int(e) }

// A write that failed because of the database is answered as unavailable
// (503) and is still an outage to the agents' turns, which retry it: the
// two views of one failure agree.
func TestWriteFailureIsOutageAndUnavailable(t *testing.T) {
	db := &DB{}
	err := db.wrote(time.Now(), fmt.Errorf("store: post: %w", liteErr(5)))
	if !bullpen.IsCode(err, bullpen.EUNAVAILABLE) {
		t.Fatalf("wrote(busy) = %v, want code unavailable", err)
	}
	if !IsOutage(err) {
		t.Errorf("IsOutage(%v) = false after wrote made it unavailable, want true", err)
	}
	if db.WriteTrouble() == nil {
		t.Error("WriteTrouble = nil after a failed write")
	}
	bad := errors.New("UNIQUE constraint failed: members.handle")
	if err := db.wrote(time.Now(), bad); IsOutage(err) || bullpen.IsCode(err, bullpen.EUNAVAILABLE) {
		t.Errorf("a constraint error became %v (outage %v)", err, IsOutage(err))
	}
	other := bullpen.Errorf(bullpen.EUNAVAILABLE, "sandboxes: connection refused by init")
	if IsOutage(other) {
		t.Errorf("IsOutage(%v) = true: another service's unavailability is not the database's", other)
	}
}
