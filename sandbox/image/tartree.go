package image

import (
	"archive/tar"
	"io"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

// treeWriter turns the files of an overlay-format tree into tar entries.
type treeWriter struct {
	*tar.Writer
	links map[[2]uint64]string // (dev, ino) -> first name, for hard links
}

func newTreeWriter(w io.Writer) *treeWriter {
	return &treeWriter{Writer: tar.NewWriter(w), links: map[[2]uint64]string{}}
}

// add writes the entry for the file at p, named rel in the tar.
func (tw *treeWriter) add(p, rel string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &os.PathError{Op: "stat", Path: p, Err: syscall.ENOTSUP}
	}
	mtime := fi.ModTime().Truncate(1e9)
	if isWhiteout(fi) {
		dir, base := path.Split(rel)
		return tw.WriteHeader(&tar.Header{Name: dir + whPrefix + base, Typeflag: tar.TypeReg, Mode: 0o600, ModTime: mtime, Format: tar.FormatPAX})
	}
	hdr := &tar.Header{
		Name:    rel,
		Mode:    int64(st.Mode & 0o7777),
		Uid:     int(st.Uid),
		Gid:     int(st.Gid),
		ModTime: mtime,
		Format:  tar.FormatPAX,
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, rel+"/"
	case mode.IsRegular():
		key := [2]uint64{uint64(st.Dev), st.Ino}
		if first, ok := tw.links[key]; ok && st.Nlink > 1 {
			hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
			return tw.WriteHeader(hdr)
		}
		tw.links[key] = rel
		hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
	case mode&os.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
	case mode&os.ModeNamedPipe != 0:
		hdr.Typeflag = tar.TypeFifo
	default:
		return nil // devices and sockets: not part of an image
	}
	opaque, err := tw.xattrs(p, hdr)
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if hdr.Typeflag == tar.TypeReg && hdr.Size > 0 {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.CopyN(tw, f, hdr.Size)
		f.Close()
		if err != nil {
			return err
		}
	}
	if opaque {
		return tw.WriteHeader(&tar.Header{Name: rel + "/" + whOpaque, Typeflag: tar.TypeReg, Mode: 0o600, ModTime: mtime, Format: tar.FormatPAX})
	}
	return nil
}

// xattrs copies p's extended attributes into hdr, leaving out overlayfs's
// own (trusted.overlay.* or, with the userxattr mount option,
// user.overlay.*) and other trusted.* ones. It reports whether p is an
// opaque directory, and refuses redirects and metacopy files, which only an
// overlay mounted with redirect_dir or metacopy makes.
func (tw *treeWriter) xattrs(p string, hdr *tar.Header) (opaque bool, err error) {
	names, err := listXattrs(p)
	if err != nil {
		return false, err
	}
	for _, n := range names {
		ov, isOverlay := strings.CutPrefix(n, "trusted.overlay.")
		if !isOverlay {
			ov, isOverlay = strings.CutPrefix(n, "user.overlay.")
		}
		if !isOverlay && strings.HasPrefix(n, "trusted.") {
			continue
		}
		v, err := getXattr(p, n)
		if err != nil {
			return false, err
		}
		switch {
		case !isOverlay:
			if hdr.PAXRecords == nil {
				hdr.PAXRecords = map[string]string{}
			}
			hdr.PAXRecords[paxXattr+n] = string(v)
		case ov == "opaque":
			opaque = hdr.Typeflag == tar.TypeDir && string(v) == "y"
		case ov == "redirect", ov == "metacopy":
			return false, bullpen.Errorf(bullpen.EUNSUPPORTED, "%q uses overlay %s; mount the overlay with redirect_dir=off,metacopy=off", hdr.Name, ov)
		}
	}
	return opaque, nil
}

func listXattrs(p string) ([]string, error) {
	size, err := unix.Llistxattr(p, nil)
	for err == nil {
		if size == 0 {
			return nil, nil
		}
		buf := make([]byte, size)
		var n int
		n, err = unix.Llistxattr(p, buf)
		if err == unix.ERANGE {
			size, err = unix.Llistxattr(p, nil) // grew meanwhile
			continue
		}
		if err != nil {
			break
		}
		return strings.FieldsFunc(string(buf[:n]), func(r rune) bool { return r == 0 }), nil
	}
	if err == unix.ENOTSUP {
		return nil, nil
	}
	return nil, &os.PathError{Op: "listxattr", Path: p, Err: err}
}

func getXattr(p, name string) ([]byte, error) {
	for {
		size, err := unix.Lgetxattr(p, name, nil)
		if err != nil {
			return nil, &os.PathError{Op: "getxattr " + name, Path: p, Err: err}
		}
		buf := make([]byte, size)
		n, err := unix.Lgetxattr(p, name, buf)
		if err == unix.ERANGE {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "getxattr " + name, Path: p, Err: err}
		}
		return buf[:n], nil
	}
}
