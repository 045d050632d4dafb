package image

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

const (
	whPrefix     = ".wh."
	whOpaque     = ".wh..wh..opq"
	xattrOpaque  = "trusted.overlay.opaque"
	paxXattr     = "SCHILY.xattr."
	modeSpecials = os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky
)

// unpacker extracts one layer tar into an empty directory in overlayfs
// format. It never follows a symlink: an entry whose parent is a symlink is
// rejected, as are absolute names and ".." components.
type unpacker struct {
	root string
	dirs []dirTime
}

type dirTime struct {
	path  string
	mtime time.Time
}

// unpackTar extracts the layer tar r into the empty directory root.
func unpackTar(r io.Reader, root string) error {
	u := &unpacker{root: root}
	if err := os.Chmod(root, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bullpen.Errorf(bullpen.EINVALID, "layer is not a valid tar: %v", err)
		}
		if err := u.entry(tr, hdr); err != nil {
			return err
		}
	}
	for i := len(u.dirs) - 1; i >= 0; i-- { // children first: creating them touched their parents
		if err := setTimes(u.dirs[i].path, u.dirs[i].mtime); err != nil {
			return err
		}
	}
	return nil
}

func badEntry(name, format string, args ...any) error {
	args = append([]any{name}, args...)
	return bullpen.Errorf(bullpen.EINVALID, "layer entry %q: "+format, args...)
}

// splitName returns the components of a tar entry name, rejecting absolute
// names and "..".
func splitName(name string) ([]string, error) {
	if strings.HasPrefix(name, "/") {
		return nil, badEntry(name, "absolute path not allowed")
	}
	var out []string
	for _, c := range strings.Split(name, "/") {
		switch c {
		case "", ".":
		case "..":
			return nil, badEntry(name, "path traversal (\"..\") not allowed")
		default:
			out = append(out, c)
		}
	}
	return out, nil
}

func isWhiteout(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode()&os.ModeCharDevice != 0 && st.Rdev == 0
}

// parents returns the directory that holds an entry whose parent components
// are comps, creating missing directories. A whiteout in the way becomes an
// opaque directory (the layer hides the lower one and adds to it).
func (u *unpacker) parents(name string, comps []string, create bool) (string, error) {
	p := u.root
	for _, c := range comps {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		switch {
		case os.IsNotExist(err) && create:
			if err := os.Mkdir(p, 0o755); err != nil {
				return "", err
			}
		case err != nil:
			if os.IsNotExist(err) {
				return "", badEntry(name, "%q does not exist in this layer", c)
			}
			return "", err
		case fi.Mode()&os.ModeSymlink != 0:
			return "", badEntry(name, "parent %q is a symlink", c)
		case create && isWhiteout(fi):
			if err := os.Remove(p); err != nil {
				return "", err
			}
			if err := os.Mkdir(p, 0o755); err != nil {
				return "", err
			}
			if err := unix.Lsetxattr(p, xattrOpaque, []byte("y"), 0); err != nil {
				return "", err
			}
		case !fi.IsDir():
			return "", badEntry(name, "parent %q is not a directory", c)
		}
	}
	return p, nil
}

func (u *unpacker) entry(r io.Reader, hdr *tar.Header) error {
	comps, err := splitName(hdr.Name)
	if err != nil {
		return err
	}
	if len(comps) == 0 {
		if hdr.Typeflag == tar.TypeDir {
			return u.meta(u.root, hdr)
		}
		return nil
	}
	base := comps[len(comps)-1]
	dir, err := u.parents(hdr.Name, comps[:len(comps)-1], true)
	if err != nil {
		return err
	}
	if base == whOpaque {
		return unix.Lsetxattr(dir, xattrOpaque, []byte("y"), 0)
	}
	if target, ok := strings.CutPrefix(base, whPrefix); ok {
		if target == "" || target == "." || target == ".." {
			return badEntry(hdr.Name, "invalid whiteout")
		}
		p := filepath.Join(dir, target)
		if _, err := os.Lstat(p); err == nil {
			return nil // an entry of this same layer: whiteouts only hide lower layers
		}
		return unix.Mknod(p, unix.S_IFCHR, 0)
	}
	p := filepath.Join(dir, base)
	wasWhiteout := false
	if fi, err := os.Lstat(p); err == nil {
		if hdr.Typeflag == tar.TypeDir && fi.IsDir() {
			return u.meta(p, hdr)
		}
		wasWhiteout = isWhiteout(fi)
		if err := os.RemoveAll(p); err != nil { // a later entry replaces an earlier one
			return err
		}
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
		if wasWhiteout {
			if err := unix.Lsetxattr(p, xattrOpaque, []byte("y"), 0); err != nil {
				return err
			}
		}
	case tar.TypeReg, '\x00': // '\x00' is the old-style regular file flag
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	case tar.TypeSymlink:
		if err := os.Symlink(hdr.Linkname, p); err != nil {
			return err
		}
	case tar.TypeLink:
		return u.link(hdr, p)
	case tar.TypeFifo:
		if err := unix.Mkfifo(p, 0o600); err != nil {
			return err
		}
	default:
		// Devices (the runtime provides /dev), sockets and unknown types are
		// skipped: a layer carries files, never access to host devices.
		return nil
	}
	return u.meta(p, hdr)
}

// link makes p a hard link to an earlier entry of the same layer.
func (u *unpacker) link(hdr *tar.Header, p string) error {
	comps, err := splitName(hdr.Linkname)
	if err != nil {
		return badEntry(hdr.Name, "hard link target %q: %v", hdr.Linkname, bullpen.ErrorMessage(err))
	}
	if len(comps) == 0 {
		return badEntry(hdr.Name, "hard link to the layer root")
	}
	dir, err := u.parents(hdr.Name, comps[:len(comps)-1], false)
	if err != nil {
		return err
	}
	target := filepath.Join(dir, comps[len(comps)-1])
	fi, err := os.Lstat(target)
	if err != nil {
		return badEntry(hdr.Name, "hard link target %q is not in this layer", hdr.Linkname)
	}
	if fi.IsDir() || isWhiteout(fi) {
		return badEntry(hdr.Name, "hard link target %q is not a file", hdr.Linkname)
	}
	return os.Link(target, p) // linkat(2) without AT_SYMLINK_FOLLOW: never follows
}

// meta applies owner, mode, xattrs and mtime from hdr to p, in that order
// (chown clears set-id bits and file capabilities).
func (u *unpacker) meta(p string, hdr *tar.Header) error {
	if err := os.Lchown(p, hdr.Uid, hdr.Gid); err != nil {
		return err
	}
	symlink := hdr.Typeflag == tar.TypeSymlink
	if !symlink {
		if err := os.Chmod(p, hdr.FileInfo().Mode()&modeSpecials); err != nil {
			return err
		}
		for k, v := range hdr.PAXRecords {
			name, ok := strings.CutPrefix(k, paxXattr)
			if !ok || strings.HasPrefix(name, "trusted.") || strings.HasPrefix(name, "user.overlay.") {
				continue // overlay and host-reserved attributes never come from a layer
			}
			if err := unix.Lsetxattr(p, name, []byte(v), 0); err != nil {
				return &os.PathError{Op: "setxattr " + name, Path: p, Err: err}
			}
		}
	}
	if hdr.Typeflag == tar.TypeDir {
		u.dirs = append(u.dirs, dirTime{p, hdr.ModTime})
		return nil
	}
	return setTimes(p, hdr.ModTime)
}

// setTimes sets p's atime and mtime to t without following a symlink.
func setTimes(p string, t time.Time) error {
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	ts := unix.NsecToTimespec(t.UnixNano())
	err := unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return &os.PathError{Op: "utimes", Path: p, Err: err}
	}
	return nil
}

var errDiffID = errors.New("layer content does not match its diff id")
