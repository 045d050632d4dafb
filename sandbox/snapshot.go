package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	bullpen "github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

// Snapshot turns the sandbox's filesystem changes (its writable layer) into
// a new image named name and returns its reference, for Spec.Image. A
// running sandbox is frozen while its layer is copied. The layer's files,
// counted at their apparent size (a sparse file as if it were full, as an
// image layer's tar stores it), must fit the sandbox's disk quota
// (Config.DefaultDiskBytes if it has none), else Snapshot fails with
// ETOOLARGE before it writes anything. Secret files are
// left out. With Config.Images the copy is handed to ImageSource.Commit;
// without, it is kept under StateDir/images/<name> (names must then be new
// and match [a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}; only sandboxes on the host
// base or on such images can be snapshotted that way).
func (m *Manager) Snapshot(ctx context.Context, id, name string) (string, error) {
	// Without an image store the name is a directory name; with one,
	// names may hold slashes (members' images are "handle/…").
	if name == "" || len(name) > 255 || strings.ContainsAny(name, "\x00\n") || (m.cfg.Images == nil && strings.Contains(name, "/")) {
		return "", invalid("invalid image name %q", name)
	}
	if m.cfg.Images == nil && !nameRe.MatchString(name) {
		return "", invalid("invalid image name %q", name)
	}
	if err := os.MkdirAll(m.tmpDir, 0o700); err != nil {
		return "", fmt.Errorf("sandbox: snapshot: %w", err)
	}
	tmp, err := os.MkdirTemp(m.tmpDir, "snap-")
	if err != nil {
		return "", fmt.Errorf("sandbox: snapshot: %w", err)
	}
	defer os.RemoveAll(tmp)
	layer := filepath.Join(tmp, "layer")
	var md meta
	err = m.withSandbox(id, func(s *sandbox) error {
		if s.meta.State == StateRunning {
			if err := m.cg.freeze(s.id, true); err != nil {
				_ = m.cg.freeze(s.id, false)
				return err
			}
			defer func() { _ = m.cg.freeze(s.id, false) }()
		}
		skip := map[string]bool{}
		for _, f := range s.meta.SecretFiles {
			skip[strings.TrimPrefix(filepath.Clean(f), "/")] = true
		}
		md = s.meta
		return m.mnt.do(func() error { // the layer is on the sandbox's disk, mounted there
			if err := m.checkSnapshotSize(&s.meta, skip); err != nil {
				return err
			}
			return copyTree(s.meta.Upper, layer, "", skip)
		})
	})
	if err != nil {
		return "", err
	}
	if m.cfg.Images != nil {
		ref, err := m.cfg.Images.Commit(ctx, name, md.Image, layer)
		if err != nil {
			var be *bullpen.Error
			if errors.As(err, &be) {
				return "", err
			}
			return "", fmt.Errorf("sandbox: snapshot commit: %w", err)
		}
		return ref, nil
	}
	return m.saveLocalImage(name, &md, layer)
}

func (m *Manager) saveLocalImage(name string, md *meta, layer string) (string, error) {
	var below []string
	if md.Image != "host" {
		base, ok := m.localImage(md.Image)
		if !ok {
			return "", bullpen.Errorf(bullpen.EUNSUPPORTED, "snapshots of image %q need an ImageSource", md.Image)
		}
		below = base.Layers
	}
	m.imgMu.Lock()
	defer m.imgMu.Unlock()
	dir := filepath.Join(m.imgDir, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return "", bullpen.Errorf(bullpen.ECONFLICT, "image %q exists", name)
		}
		return "", fmt.Errorf("sandbox: snapshot: %w", err)
	}
	dst := filepath.Join(dir, "layer")
	if err := os.Rename(layer, dst); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("sandbox: snapshot: %w", err)
	}
	img := localImage{Name: name, Base: "host", Layers: append(append([]string(nil), below...), dst),
		Env: md.ImageEnv, Workdir: md.Workdir}
	b, _ := json.MarshalIndent(img, "", "  ")
	if err := writeFileAtomic(filepath.Join(dir, "image.json"), b); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return name, nil
}

// copyTree copies an overlay upper directory, keeping owners, modes,
// times, xattrs (trusted.overlay.* included) and whiteouts (0/0 character
// devices). rel is the path below the root; skip holds relative paths to
// leave out.
func copyTree(src, dst, rel string, skip map[string]bool) error {
	var st unix.Stat_t
	if err := unix.Lstat(src, &st); err != nil {
		return fmt.Errorf("sandbox: snapshot: %w", err)
	}
	mode := st.Mode & 0o7777
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if err := unix.Mkdir(dst, 0o700); err != nil {
			return fmt.Errorf("sandbox: snapshot: %w", err)
		}
		f, err := os.Open(src)
		if err != nil {
			return fmt.Errorf("sandbox: snapshot: %w", err)
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			return fmt.Errorf("sandbox: snapshot: %w", err)
		}
		for _, n := range names {
			r := filepath.Join(rel, n)
			if skip[r] {
				continue
			}
			if err := copyTree(filepath.Join(src, n), filepath.Join(dst, n), r, skip); err != nil {
				return err
			}
		}
	case unix.S_IFREG:
		if err := copyFile(src, dst); err != nil {
			return err
		}
	case unix.S_IFLNK:
		t, err := os.Readlink(src)
		if err != nil {
			return fmt.Errorf("sandbox: snapshot: %w", err)
		}
		if err := os.Symlink(t, dst); err != nil {
			return fmt.Errorf("sandbox: snapshot: %w", err)
		}
	case unix.S_IFCHR, unix.S_IFBLK, unix.S_IFIFO:
		if err := unix.Mknod(dst, st.Mode, int(st.Rdev)); err != nil {
			return fmt.Errorf("sandbox: snapshot: %w", err)
		}
	default:
		return nil // sockets are not copied
	}
	if err := unix.Lchown(dst, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("sandbox: snapshot: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		if err := unix.Chmod(dst, mode); err != nil {
			return fmt.Errorf("sandbox: snapshot: %w", err)
		}
	}
	copyXattrs(src, dst)
	ts := []unix.Timespec{st.Atim, st.Mtim}
	_ = unix.UtimesNanoAt(unix.AT_FDCWD, dst, ts, unix.AT_SYMLINK_NOFOLLOW)
	return nil
}

// copyFile copies a regular file; holes stay holes.
func copyFile(src, dst string) error {
	if err := copySparse(src, dst); err != nil {
		return fmt.Errorf("sandbox: snapshot: %w", err)
	}
	return nil
}

func copyXattrs(src, dst string) {
	buf := make([]byte, 64<<10)
	n, err := unix.Llistxattr(src, buf)
	if err != nil || n <= 0 {
		return
	}
	val := make([]byte, 64<<10)
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		vn, err := unix.Lgetxattr(src, name, val)
		if err != nil {
			continue
		}
		_ = unix.Lsetxattr(dst, name, val[:vn], 0)
	}
}
