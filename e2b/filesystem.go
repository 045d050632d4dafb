package e2b

import (
	"context"
	"os"
	"path"

	"connectrpc.com/connect"
	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// filesystemHandlers serves filesystem.Filesystem. Its watchers without a
// stream (CreateWatcher and the like) are not served: the SDKs use
// WatchDir.
func (s *Server) filesystemHandlers(opts []connect.HandlerOption) []route {
	return []route{
		unary(s, "/filesystem.Filesystem/Stat", opts, s.stat),
		unary(s, "/filesystem.Filesystem/MakeDir", opts, s.makeDir),
		unary(s, "/filesystem.Filesystem/Move", opts, s.move),
		unary(s, "/filesystem.Filesystem/ListDir", opts, s.listDir),
		unary(s, "/filesystem.Filesystem/Remove", opts, s.remove),
		{"/filesystem.Filesystem/WatchDir", connect.NewServerStreamHandler("/filesystem.Filesystem/WatchDir", s.watchDir, opts...)},
	}
}

// sandboxUser owns every file a command makes.
const sandboxUser = "sandbox"

// entry is a file as envd describes it.
func entry(fi sandbox.FileInfo) entryInfo {
	e := entryInfo{Name: fi.Name, Type: fileTypeFile, Path: fi.Path, Size: fi.Size, Mode: uint32(fi.Mode.Perm()),
		Permissions: fi.Mode.String(), Owner: sandboxUser, Group: sandboxUser}
	switch {
	case fi.IsDir:
		e.Type, e.Mode = fileTypeDir, e.Mode|uint32(os.ModeDir)
	case fi.Mode&os.ModeSymlink != 0 || fi.LinkTarget != "":
		e.Type = fileTypeSymlink
		t := fi.LinkTarget
		e.SymlinkTarget = &t
	}
	if e.Name == "" {
		e.Name = path.Base(fi.Path)
	}
	if !fi.ModTime.IsZero() {
		t := fi.ModTime.UTC()
		e.ModifiedTime = &t
	}
	return e
}

func (s *Server) stat(ctx context.Context, me bullpen.Member, id string, in *pathRequest) (*entryResponse, error) {
	p, err := cleanPath(in.Path)
	if err != nil {
		return nil, err
	}
	fi, err := s.cfg.Boxes.Stat(ctx, me, id, p)
	if err != nil {
		return nil, err
	}
	e := entry(fi)
	return &entryResponse{Entry: &e}, nil
}

// makeDir makes a directory and its parents; one that exists is
// AlreadyExists, which the SDKs answer false for.
func (s *Server) makeDir(ctx context.Context, me bullpen.Member, id string, in *pathRequest) (*entryResponse, error) {
	p, err := cleanPath(in.Path)
	if err != nil {
		return nil, err
	}
	if _, err := s.cfg.Boxes.Stat(ctx, me, id, p); err == nil {
		return nil, connect.NewError(connect.CodeAlreadyExists, errorf("%s already exists", p))
	}
	if err := s.cfg.Boxes.Mkdir(ctx, me, id, p, true); err != nil {
		return nil, err
	}
	return s.stat(ctx, me, id, in)
}

func (s *Server) move(ctx context.Context, me bullpen.Member, id string, in *moveRequest) (*entryResponse, error) {
	if _, err := cleanPath(in.Source); err != nil {
		return nil, err
	}
	if _, err := cleanPath(in.Destination); err != nil {
		return nil, err
	}
	if err := s.cfg.Boxes.Rename(ctx, me, id, in.Source, in.Destination); err != nil {
		return nil, err
	}
	return s.stat(ctx, me, id, &pathRequest{Path: in.Destination})
}

// remove removes a file or a whole directory, as envd does.
func (s *Server) remove(ctx context.Context, me bullpen.Member, id string, in *pathRequest) (*empty, error) {
	p, err := cleanPath(in.Path)
	if err != nil {
		return nil, err
	}
	return &empty{}, s.cfg.Boxes.Remove(ctx, me, id, p, true)
}

// maxListEntries bounds one ListDir answer.
const maxListEntries = 100000

// listDir lists a directory to depth levels (default 1).
func (s *Server) listDir(ctx context.Context, me bullpen.Member, id string, in *listDirRequest) (*listDirResponse, error) {
	p, err := cleanPath(in.Path)
	if err != nil {
		return nil, err
	}
	depth := int(in.Depth)
	if depth == 0 {
		depth = 1
	}
	out := &listDirResponse{Entries: []entryInfo{}}
	err = s.walk(ctx, me, id, p, depth, func(fi sandbox.FileInfo) error {
		if len(out.Entries) >= maxListEntries {
			return bullpen.Errorf(bullpen.ETOOLARGE, "directory holds more than %d entries to that depth", maxListEntries)
		}
		out.Entries = append(out.Entries, entry(fi))
		return nil
	})
	return out, err
}

// walk calls fn for every entry under dir, to depth levels.
func (s *Server) walk(ctx context.Context, me bullpen.Member, id, dir string, depth int, fn func(sandbox.FileInfo) error) error {
	fis, err := s.cfg.Boxes.ListFiles(ctx, me, id, dir)
	if err != nil {
		return err
	}
	for _, fi := range fis {
		if err := fn(fi); err != nil {
			return err
		}
		if fi.IsDir && depth > 1 {
			if err := s.walk(ctx, me, id, fi.Path, depth-1, fn); err != nil && !bullpen.IsCode(err, bullpen.ENOTFOUND) {
				return err
			}
		}
	}
	return nil
}
