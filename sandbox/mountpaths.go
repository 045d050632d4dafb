package sandbox

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// A sandbox sees its root's mount options in /proc/mounts and
// /proc/self/mountinfo; overlayfs prints the layer paths exactly as they
// were given. To keep the host's data-dir paths out of the sandbox, the
// host names each layer by an fd it holds during the mount:
// "/proc/self/fd/N" resolves to the directory, and the string shown
// inside says nothing about the host.

// fdPaths opens dirs (O_PATH) and returns a /proc/self/fd name for each;
// call done once the mount is made.
func fdPaths(dirs []string) (paths []string, done func(), err error) {
	fds := make([]int, 0, len(dirs))
	done = func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	for _, d := range dirs {
		fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			done()
			return nil, nil, fmt.Errorf("sandbox: open layer %s: %w", d, err)
		}
		fds = append(fds, fd)
		paths = append(paths, "/proc/self/fd/"+strconv.Itoa(fd))
	}
	return paths, done, nil
}
