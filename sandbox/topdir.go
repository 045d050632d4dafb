package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// fsTopdirFL is FS_TOPDIR_FL, chattr's +T.
const fsTopdirFL = 0x00020000

// spreadChildren marks dir as the top of unrelated directory trees
// (chattr +T): ext4 then places each new subdirectory, and the files in
// it, in a block group of its own choosing rather than beside dir's.
//
// Sandboxes are such trees, made and removed at a high rate. On an ext4
// without a journal, allocating an inode skips the ones deleted in the
// last minutes, reading each from the start of the group: with every
// sandbox's directory in one group, a burst of creates after a few
// hundred deletes spent about a third of the server's CPU time in that
// scan (find_inode_bit, recently_deleted) and queued on it. Spread over
// the file system's groups, each group sees a small share of the churn.
//
// File systems without the flag refuse it; that is not an error here.
func spreadChildren(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", dir, err)
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil || flags&fsTopdirFL != 0 {
		return nil // no flags here (tmpfs, overlay…), or set already
	}
	_ = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|fsTopdirFL))
	return nil
}
