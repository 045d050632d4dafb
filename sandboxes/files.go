package sandboxes

import (
	"context"
	"io"
	"os"

	"github.com/bullpen-hq/bullpen"
	"github.com/bullpen-hq/bullpen/sandbox"
)

// ReadFile opens a regular file in the sandbox for streaming; the caller
// closes it. Paths are absolute or relative to the sandbox's workdir and
// never leave the sandbox.
func (s *Service) ReadFile(ctx context.Context, actor bullpen.Member, id, path string) (io.ReadCloser, error) {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return nil, err
	}
	return s.m.ReadFile(ctx, in.ID, path)
}

// WriteFile creates or replaces a file with src's contents, streamed.
func (s *Service) WriteFile(ctx context.Context, actor bullpen.Member, id, path string, src io.Reader, mode os.FileMode) error {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return err
	}
	return s.m.WriteFile(ctx, in.ID, path, src, mode)
}

// ListFiles lists a directory.
func (s *Service) ListFiles(ctx context.Context, actor bullpen.Member, id, dir string) ([]sandbox.FileInfo, error) {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return nil, err
	}
	return s.m.ListFiles(ctx, in.ID, dir)
}

// Stat describes a file without following a final symlink.
func (s *Service) Stat(ctx context.Context, actor bullpen.Member, id, path string) (sandbox.FileInfo, error) {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return sandbox.FileInfo{}, err
	}
	return s.m.Stat(ctx, in.ID, path)
}

// Mkdir creates a directory, with parents like mkdir -p.
func (s *Service) Mkdir(ctx context.Context, actor bullpen.Member, id, path string, parents bool) error {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return err
	}
	return s.m.Mkdir(ctx, in.ID, path, parents)
}

// Remove removes a file or an empty directory, or a whole tree with
// recursive.
func (s *Service) Remove(ctx context.Context, actor bullpen.Member, id, path string, recursive bool) error {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return err
	}
	return s.m.Remove(ctx, in.ID, path, recursive)
}

// Rename renames a file or directory within the sandbox.
func (s *Service) Rename(ctx context.Context, actor bullpen.Member, id, from, to string) error {
	in, err := s.lookup(ctx, actor, id)
	if err != nil {
		return err
	}
	return s.m.Rename(ctx, in.ID, from, to)
}
