package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/store"
	"github.com/bullpen-hq/bullpen/store/storetest"
)

// groupPost is one concurrent writer of TestGroupCommit: a message and its
// event, or a write that fails in one of two ways.
type groupPost struct {
	fail   string // "", "refused" (the writer's own error) or "fk" (a failing insert)
	tx     *store.Tx
	msg    bullpen.Message
	events []bullpen.Event
	err    error
}

var errRefused = errors.New("refused by the writer")

func (p *groupPost) write(ch bullpen.Channel, author int64) func(tx *store.Tx) error {
	return func(tx *store.Tx) error {
		p.tx = tx
		in := bullpen.Message{ChannelID: ch.ID, AuthorID: author, Body: "hello", Source: bullpen.SourceAPI}
		if p.fail == "fk" {
			in.ChannelID = 999999 // no such channel: the insert fails inside the batch
		}
		var err error
		if p.msg, err = tx.CreateMessage(in); err != nil {
			return err
		}
		if _, err := tx.Emit(bullpen.EventMessagePosted, ch.ID, nil, p.msg); err != nil {
			return err
		}
		if p.fail == "refused" {
			return errRefused // after its message and event were written
		}
		return nil
	}
}

// Concurrent grouped writes share one transaction; a write that fails,
// by its own error or by a failing insert, fails alone: its message and
// event are gone, the others commit, and the event sequence stays gap-free,
// each writer's event stored with its message.
func TestGroupCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, err := store.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		ada, _, ch := people(t, db)
		posts := make([]*groupPost, 40)
		for i := range posts {
			posts[i] = &groupPost{}
			switch {
			case i%7 == 3:
				posts[i].fail = "fk"
			case i%5 == 1:
				posts[i].fail = "refused"
			}
		}
		runBatch(t, db, ch, ada.ID, posts)
		checkGroup(t, db, posts, 0)
	})
}

// A batch in which every write succeeds takes no savepoints and one
// transaction; on PostgreSQL its rows are written by one statement.
func TestGroupCommitWithoutFailures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, cfg store.Config) {
		db, err := store.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		ada, _, ch := people(t, db)
		posts := make([]*groupPost, 20)
		for i := range posts {
			posts[i] = &groupPost{}
		}
		// The first event of a channel reads who may see it (once per
		// process: visibility.go); a server has done so long before.
		write(t, db, func(tx *store.Tx) error {
			_, err := tx.Emit(bullpen.EventChannelJoined, ch.ID, nil, bullpen.Membership{ChannelID: ch.ID, Member: ada})
			return err
		})
		stmts0, commits0 := db.Counts()
		runBatch(t, db, ch, ada.ID, posts)
		stmts, commits := db.Counts()
		checkGroup(t, db, posts, 1)
		// SQLite: each post's two inserts, the holding write's one.
		// PostgreSQL: per transaction the lock with the reservation of
		// message IDs and sequence, and one write of all its rows with
		// the notification; nothing per post.
		want := int64(2*len(posts) + 1)
		if db.Dialect() == store.Postgres {
			want = 2 * 2
		}
		if stmts-stmts0 != want || commits-commits0 != 2 {
			t.Errorf("%d posts in a batch: %d statements, %d commits; want %d, 2", len(posts), stmts-stmts0, commits-commits0, want)
		}
	})
}

// runBatch runs posts concurrently behind a first write that holds the
// committer until they have all queued, so that they land in one batch.
func runBatch(t *testing.T, db *store.DB, ch bullpen.Channel, author int64, posts []*groupPost) {
	t.Helper()
	ctx := context.Background()
	release, started := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := db.TransactGrouped(ctx, func(tx *store.Tx) error {
			close(started)
			<-release
			_, err := tx.Emit(testKind, 0, nil, map[string]int{})
			return err
		})
		first <- err
	}()
	<-started
	var wg sync.WaitGroup
	for _, p := range posts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.events, p.err = db.TransactGrouped(ctx, p.write(ch, author))
		}()
	}
	waitQueued(t, db, len(posts))
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("first write: %v", err)
	}
}

func waitQueued(t *testing.T, db *store.DB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for db.QueuedWrites() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d writes queued", db.QueuedWrites(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// checkGroup checks a batch's writes, after earlier events stored before it.
func checkGroup(t *testing.T, db *store.DB, posts []*groupPost, earlier int) {
	t.Helper()
	ctx := context.Background()
	ok := 0
	for i, p := range posts {
		if p.tx != posts[0].tx {
			t.Errorf("write %d ran in another transaction: not grouped", i)
		}
		switch {
		case p.fail == "refused" && !errors.Is(p.err, errRefused):
			t.Errorf("write %d (refused) = %v, want its own error", i, p.err)
		case p.fail == "fk" && p.err == nil:
			t.Errorf("write %d (bad channel) succeeded", i)
		case p.fail == "" && (p.err != nil || len(p.events) != 1):
			t.Errorf("write %d = %d events, %v; want 1 event, nil", i, len(p.events), p.err)
		case p.fail == "":
			ok++
			var got bullpen.Message
			json.Unmarshal(p.events[0].Payload, &got)
			stored, err := db.Message(ctx, p.msg.ID)
			if err != nil || got.ID != p.msg.ID || stored.ID != p.msg.ID {
				t.Errorf("write %d: event names message %d, stored %+v, %v; want %d", i, got.ID, stored, err, p.msg.ID)
			}
		}
	}
	if n, err := db.CountMessages(ctx, 0); err != nil || n != int64(ok) {
		t.Errorf("CountMessages = %d, %v; want %d (the failed writes' messages rolled back)", n, err, ok)
	}
	assertGapFree(t, db, earlier+ok+1) // the successful posts' events and the first write's
}
