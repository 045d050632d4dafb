package sandbox

import (
	"context"
	"io"
	"os"
	"strings"
)

// hostBound reports whether p lies on one of the "host" image's read-only
// host binds (or a top-level symlink into them), which the file API cannot
// reach.
func (m *Manager) hostBound(s *sandbox, p string) bool {
	if !s.meta.HostBase {
		return false
	}
	for _, b := range m.binds {
		if p == b.Dst || strings.HasPrefix(p, b.Dst+"/") {
			return true
		}
	}
	for _, l := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		if p == l || strings.HasPrefix(p, l+"/") {
			return true
		}
	}
	return false
}

// writable checks a path the file API is about to change.
func (m *Manager) writable(s *sandbox, p string) error {
	if m.hostBound(s, p) {
		return invalid("%s is on a read-only host mount", p)
	}
	return nil
}

// ReadFile opens a regular file in the sandbox for streaming. The caller
// closes it. Paths are absolute, or relative to the sandbox's Workdir. The
// file API sees the sandbox's own layers: for the "host" image, the host's
// /usr (and the other read-only binds) are not reachable through it, and
// changing paths there fails with EINVALID.
func (m *Manager) ReadFile(ctx context.Context, id, p string) (io.ReadCloser, error) {
	var f *os.File
	err := m.fileOp(ctx, id, func(r *fsRoot, s *sandbox) error {
		cp, err := cleanPath(p, s.meta.Workdir)
		if err != nil {
			return err
		}
		f, err = r.readFile(cp)
		return err
	})
	return f, err
}

// WriteFile creates or replaces a file in the sandbox with the contents of
// src (streamed; no size cap beyond the sandbox's disk). The file is owned
// by the sandbox user. mode 0 means 0644. Parent directories must exist.
func (m *Manager) WriteFile(ctx context.Context, id, p string, src io.Reader, mode os.FileMode) error {
	if mode == 0 {
		mode = 0o644
	}
	return m.fileOp(ctx, id, func(r *fsRoot, s *sandbox) error {
		cp, err := cleanPath(p, s.meta.Workdir)
		if err != nil {
			return err
		}
		if err := m.writable(s, cp); err != nil {
			return err
		}
		return r.writeFile(cp, ctxReader{ctx, src}, mode)
	})
}

// ListFiles lists a directory in the sandbox (not recursive).
func (m *Manager) ListFiles(ctx context.Context, id, dir string) ([]FileInfo, error) {
	var out []FileInfo
	err := m.fileOp(ctx, id, func(r *fsRoot, s *sandbox) error {
		cp, err := cleanPath(dir, s.meta.Workdir)
		if err != nil {
			return err
		}
		out, err = r.list(cp)
		return err
	})
	return out, err
}

// Stat describes a file in the sandbox without following a final symlink.
func (m *Manager) Stat(ctx context.Context, id, p string) (FileInfo, error) {
	var fi FileInfo
	err := m.fileOp(ctx, id, func(r *fsRoot, s *sandbox) error {
		cp, err := cleanPath(p, s.meta.Workdir)
		if err != nil {
			return err
		}
		fi, err = r.stat(cp)
		return err
	})
	return fi, err
}

// Mkdir creates a directory (mode 0755, owned by the sandbox user), and with
// parents its missing parents, like mkdir -p.
func (m *Manager) Mkdir(ctx context.Context, id, p string, parents bool) error {
	return m.fileOp(ctx, id, func(r *fsRoot, s *sandbox) error {
		cp, err := cleanPath(p, s.meta.Workdir)
		if err != nil {
			return err
		}
		if err := m.writable(s, cp); err != nil {
			return err
		}
		return r.mkdir(cp, parents, 0o755)
	})
}

// Remove removes a file or an empty directory, or with recursive a whole
// tree (never following symlinks).
func (m *Manager) Remove(ctx context.Context, id, p string, recursive bool) error {
	return m.fileOp(ctx, id, func(r *fsRoot, s *sandbox) error {
		cp, err := cleanPath(p, s.meta.Workdir)
		if err != nil {
			return err
		}
		if err := m.writable(s, cp); err != nil {
			return err
		}
		return r.remove(cp, recursive)
	})
}

// Rename renames a file or directory within the sandbox.
func (m *Manager) Rename(ctx context.Context, id, from, to string) error {
	return m.fileOp(ctx, id, func(r *fsRoot, s *sandbox) error {
		f, err := cleanPath(from, s.meta.Workdir)
		if err != nil {
			return err
		}
		t, err := cleanPath(to, s.meta.Workdir)
		if err != nil {
			return err
		}
		if err := m.writable(s, f); err != nil {
			return err
		}
		if err := m.writable(s, t); err != nil {
			return err
		}
		return r.rename(f, t)
	})
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// Read implements io.Reader.
func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
