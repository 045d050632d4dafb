package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	bullpen "github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

// The file API works on the host side, on the sandbox's root filesystem
// mount (image layers + writable layer), so it works while the sandbox is
// running, paused or stopped. Every path is resolved with openat2 and
// RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV against the root
// directory: ".." and absolute symlinks the sandbox made stay inside it.
// Host bind mounts of the "host" image (/usr, ...) and the sandbox's /proc
// and /dev are not part of that view.

const resolveFlags = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// cleanPath validates a sandbox path and returns it absolute and clean.
func cleanPath(p, workdir string) (string, error) {
	if p == "" {
		return "", bullpen.Errorf(bullpen.EINVALID, "path is empty")
	}
	if len(p) > 4096 || strings.IndexByte(p, 0) >= 0 {
		return "", bullpen.Errorf(bullpen.EINVALID, "invalid path")
	}
	if !path.IsAbs(p) {
		p = path.Join(workdir, p)
	}
	return path.Clean(p), nil
}

// fsRoot is an open sandbox root directory.
type fsRoot struct {
	fd  int
	uid int // host uid/gid for files the API creates
}

func openRoot(dir string, uid int) (*fsRoot, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: open root: %w", err)
	}
	return &fsRoot{fd: fd, uid: uid}, nil
}

// Close closes the root directory.
func (r *fsRoot) Close() { unix.Close(r.fd) }

func (r *fsRoot) open(p string, flags uint64, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat2(r.fd, p, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: uint64(mode), Resolve: resolveFlags})
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		return fd, err
	}
}

// parent opens the directory containing p and returns it with p's base name.
func (r *fsRoot) parent(p string) (int, string, error) {
	dir, name := path.Split(p)
	if name == "" || name == "." || name == ".." {
		return -1, "", bullpen.Errorf(bullpen.EINVALID, "invalid path %q", p)
	}
	fd, err := r.open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, "", fileErr("open parent of "+p, err)
	}
	return fd, name, nil
}

// fileErr maps errno values to Bullpen error codes.
func fileErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOENT):
		return &bullpen.Error{Code: bullpen.ENOTFOUND, Message: op + ": no such file or directory", Err: err}
	case errors.Is(err, unix.EEXIST), errors.Is(err, unix.ENOTEMPTY):
		return &bullpen.Error{Code: bullpen.ECONFLICT, Message: op + ": " + err.Error(), Err: err}
	case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.EISDIR), errors.Is(err, unix.ELOOP),
		errors.Is(err, unix.EXDEV), errors.Is(err, unix.ENAMETOOLONG), errors.Is(err, unix.EINVAL),
		errors.Is(err, unix.EROFS), errors.Is(err, unix.ENXIO):
		return &bullpen.Error{Code: bullpen.EINVALID, Message: op + ": " + err.Error(), Err: err}
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT), errors.Is(err, unix.EFBIG):
		return &bullpen.Error{Code: bullpen.ETOOLARGE, Message: op + ": disk quota exceeded", Err: err}
	}
	return fmt.Errorf("sandbox: %s: %w", op, err)
}

// readFile opens a regular file for reading.
func (r *fsRoot) readFile(p string) (*os.File, error) {
	fd, err := r.open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fileErr("read "+p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, bullpen.Errorf(bullpen.EINVALID, "read %s: not a regular file", p)
	}
	// Regular files ignore O_NONBLOCK, but clear it for clarity.
	_ = unix.SetNonblock(fd, false)
	return os.NewFile(uintptr(fd), p), nil
}

// writeFile creates or truncates p and streams src into it.
func (r *fsRoot) writeFile(p string, src io.Reader, mode os.FileMode) error {
	dfd, name, err := r.parent(p)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return fileErr("write "+p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return bullpen.Errorf(bullpen.EINVALID, "write %s: not a regular file", p)
	}
	_ = unix.SetNonblock(fd, false)
	if err := unix.Fchown(fd, r.uid, r.uid); err != nil {
		return fileErr("chown "+p, err)
	}
	if err := unix.Fchmod(fd, uint32(mode.Perm())); err != nil {
		return fileErr("chmod "+p, err)
	}
	if _, err := io.Copy(f, src); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fileErr("write "+p, pe.Err)
		}
		return fmt.Errorf("sandbox: write %s: %w", p, err)
	}
	return nil
}

func (r *fsRoot) stat(p string) (FileInfo, error) {
	fd, err := r.open(p, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return FileInfo{}, fileErr("stat "+p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstatat(fd, "", &st, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return FileInfo{}, fileErr("stat "+p, err)
	}
	fi := toFileInfo(path.Base(p), p, &st)
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		buf := make([]byte, 4096)
		if n, err := unix.Readlinkat(fd, "", buf); err == nil {
			fi.LinkTarget = string(buf[:n])
		}
	}
	return fi, nil
}

func toFileInfo(name, p string, st *unix.Stat_t) FileInfo {
	mode := os.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= os.ModeDir
	case unix.S_IFLNK:
		mode |= os.ModeSymlink
	case unix.S_IFIFO:
		mode |= os.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= os.ModeSocket
	case unix.S_IFCHR:
		mode |= os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		mode |= os.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		mode |= os.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		mode |= os.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= os.ModeSticky
	}
	return FileInfo{Name: name, Path: p, Size: st.Size, Mode: mode, IsDir: mode.IsDir(),
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec)}
}

func (r *fsRoot) list(dir string) ([]FileInfo, error) {
	fd, err := r.open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fileErr("list "+dir, err)
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fileErr("list "+dir, err)
	}
	out := make([]FileInfo, 0, len(names))
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		fi := toFileInfo(n, path.Join(dir, n), &st)
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			buf := make([]byte, 4096)
			if k, err := unix.Readlinkat(fd, n, buf); err == nil {
				fi.LinkTarget = string(buf[:k])
			}
		}
		out = append(out, fi)
	}
	return out, nil
}

func (r *fsRoot) mkdir(p string, parents bool, mode os.FileMode) error {
	if p == "/" {
		if parents {
			return nil
		}
		return bullpen.Errorf(bullpen.ECONFLICT, "mkdir /: exists")
	}
	if parents {
		parent := path.Dir(p)
		if _, err := r.stat(parent); err != nil {
			if !bullpen.IsCode(err, bullpen.ENOTFOUND) {
				return err
			}
			if err := r.mkdir(parent, true, mode); err != nil {
				return err
			}
		}
	}
	dfd, name, err := r.parent(p)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Mkdirat(dfd, name, uint32(mode.Perm())); err != nil {
		if parents && errors.Is(err, unix.EEXIST) {
			var st unix.Stat_t
			if unix.Fstatat(dfd, name, &st, 0) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				return nil
			}
		}
		return fileErr("mkdir "+p, err)
	}
	if err := unix.Fchownat(dfd, name, r.uid, r.uid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileErr("chown "+p, err)
	}
	return nil
}

func (r *fsRoot) remove(p string, recursive bool) error {
	if p == "/" {
		return bullpen.Errorf(bullpen.EINVALID, "cannot remove /")
	}
	dfd, name, err := r.parent(p)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileErr("remove "+p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fileErr("remove "+p, unix.Unlinkat(dfd, name, 0))
	}
	if !recursive {
		return fileErr("remove "+p, unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR))
	}
	// os.Root.RemoveAll walks with *at calls and never follows symlinks.
	root, err := os.OpenRoot("/proc/self/fd/" + strconv.Itoa(dfd))
	if err != nil {
		return fileErr("remove "+p, err)
	}
	defer root.Close()
	if err := root.RemoveAll(name); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return fileErr("remove "+p, pe.Err)
		}
		return fmt.Errorf("sandbox: remove %s: %w", p, err)
	}
	return nil
}

func (r *fsRoot) rename(from, to string) error {
	if from == "/" || to == "/" {
		return bullpen.Errorf(bullpen.EINVALID, "cannot rename /")
	}
	ffd, fname, err := r.parent(from)
	if err != nil {
		return err
	}
	defer unix.Close(ffd)
	tfd, tname, err := r.parent(to)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	if err := unix.Renameat2(ffd, fname, tfd, tname, 0); err != nil {
		return fileErr("rename "+from, err)
	}
	return nil
}

// fileOp runs fn on the sandbox's root after the usual checks.
func (m *Manager) fileOp(ctx context.Context, id string, fn func(r *fsRoot, s *sandbox) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s, err := m.lookup(id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.meta.State == StateTerminated {
		s.mu.Unlock()
		return bullpen.Errorf(bullpen.ENOTFOUND, "sandbox %s not found", id)
	}
	s.touch(m.now())
	rootfs := s.rootfs
	s.mu.Unlock()
	// In the mount namespace: the root is the overlay mounted there, and a
	// mount point in it (a Spec.Mounts bind) is one (EBUSY to remove).
	return m.mnt.do(func() error {
		r, err := openRoot(rootfs, int(m.cfg.IDMapBase)+sandboxUID)
		if err != nil {
			return err
		}
		defer r.Close()
		return fn(r, s)
	})
}
