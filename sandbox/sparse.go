package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// copySparse copies regular file src to a new file dst (mode 0600): a
// reflink where the file system can, else only src's data extents
// (SEEK_DATA/SEEK_HOLE), so holes stay holes and a sparse file takes no
// more space in the copy than in the original.
func copySparse(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := copyExtents(in, out); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}

func copyExtents(in, out *os.File) error {
	if unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) == nil {
		return nil
	}
	st, err := in.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	for off := int64(0); off < size; {
		data, err := unix.Seek(int(in.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole is left
		}
		if err != nil {
			return fmt.Errorf("seek data: %w", err)
		}
		hole, err := unix.Seek(int(in.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			return fmt.Errorf("seek hole: %w", err)
		}
		if err := copyRange(in, out, data, hole-data); err != nil {
			return err
		}
		off = hole
	}
	return out.Truncate(size)
}

// copyRange copies n bytes at off from in to the same offset of out:
// in the kernel when it can, else through a buffer.
func copyRange(in, out *os.File, off, n int64) error {
	ro, wo := off, off
	for n > 0 {
		c, err := unix.CopyFileRange(int(in.Fd()), &ro, int(out.Fd()), &wo, int(min(n, 1<<30)), 0)
		if err != nil || c == 0 {
			break // cross-device or unsupported: copy the rest by hand
		}
		n -= int64(c)
	}
	if n == 0 {
		return nil
	}
	_, err := io.Copy(io.NewOffsetWriter(out, wo), io.NewSectionReader(in, ro, n))
	return err
}
