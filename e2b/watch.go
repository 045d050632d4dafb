package e2b

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// WatchInterval is how often a watched directory is looked at. Watching
// is by comparing listings (inotify does not cross the sandbox boundary
// this API reaches it through): changes within one interval coalesce, a
// file made and removed within one is not seen, and a rename shows as a
// remove and a create.
const WatchInterval = 100 * time.Millisecond

// watchDepth bounds a recursive watch.
const watchDepth = 16

// maxWatched bounds the entries one watch follows.
const maxWatched = 10000

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// snapshot lists what a watch follows.
func (s *Server) snapshot(ctx context.Context, me bullpen.Member, id, dir string, recursive bool) (map[string]sandbox.FileInfo, error) {
	depth := 1
	if recursive {
		depth = watchDepth
	}
	out := map[string]sandbox.FileInfo{}
	err := s.walk(ctx, me, id, dir, depth, func(fi sandbox.FileInfo) error {
		if len(out) >= maxWatched {
			return bullpen.Errorf(bullpen.ETOOLARGE, "a watch follows at most %d entries", maxWatched)
		}
		out[fi.Path] = fi
		return nil
	})
	return out, err
}

// watchDir streams the changes under a directory: a start event, then
// create, write and remove events with names relative to it.
func (s *Server) watchDir(ctx context.Context, req *connect.Request[watchDirRequest], stream *connect.ServerStream[watchDirResponse]) error {
	me, id, err := s.sandboxOf(ctx)
	if err != nil {
		return s.rpcError(err)
	}
	in := req.Msg
	dir, err := cleanPath(in.Path)
	if err != nil {
		return s.rpcError(err)
	}
	if fi, err := s.cfg.Boxes.Stat(ctx, me, id, dir); err != nil {
		return s.rpcError(err)
	} else if !fi.IsDir {
		return s.rpcError(bullpen.Errorf(bullpen.EINVALID, "%s is not a directory", dir))
	} else {
		dir = fi.Path
	}
	prev, err := s.snapshot(ctx, me, id, dir, in.Recursive)
	if err != nil {
		return s.rpcError(err)
	}
	if err := stream.Send(&watchDirResponse{Start: &empty{}}); err != nil {
		return err
	}
	t := time.NewTicker(WatchInterval)
	defer t.Stop()
	keep := time.NewTicker(keepalive(req.Header()))
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.ctx.Done():
			return connect.NewError(connect.CodeUnavailable, errors.New("the server is shutting down"))
		case <-keep.C:
			if err := stream.Send(&watchDirResponse{Keepalive: &empty{}}); err != nil {
				return err
			}
		case <-t.C:
			cur, err := s.snapshot(ctx, me, id, dir, in.Recursive)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return s.rpcError(err)
			}
			for _, ev := range diff(dir, prev, cur, in.IncludeEntry) {
				if err := stream.Send(&watchDirResponse{Filesystem: &ev}); err != nil {
					return err
				}
			}
			prev = cur
		}
	}
}

// diff is what changed between two listings: creates, writes, removes.
func diff(dir string, prev, cur map[string]sandbox.FileInfo, withEntry bool) []filesystemEvent {
	var out []filesystemEvent
	name := func(p string) string {
		if len(p) > len(dir) && p[:len(dir)] == dir {
			p = p[len(dir):]
			for len(p) > 0 && p[0] == '/' {
				p = p[1:]
			}
		}
		return p
	}
	for _, p := range sortedKeys(cur) {
		fi := cur[p]
		old, had := prev[p]
		var t eventType
		switch {
		case !had:
			t = evCreate
		case !fi.IsDir && (old.Size != fi.Size || !old.ModTime.Equal(fi.ModTime)):
			t = evWrite
		default:
			continue
		}
		ev := filesystemEvent{Name: name(p), Type: t}
		if withEntry {
			e := entry(fi)
			ev.Entry = &e
		}
		out = append(out, ev)
	}
	for _, p := range sortedKeys(prev) {
		if _, ok := cur[p]; !ok {
			out = append(out, filesystemEvent{Name: name(p), Type: evRemove})
		}
	}
	return out
}
