package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	bullpen "github.com/bullpen-hq/bullpen"
	"golang.org/x/sys/unix"
)

// checkSnapshotSize fails with ETOOLARGE when the writable layer's files,
// at their apparent size, exceed the sandbox's disk quota: an image keeps
// them at that size (a layer tar has no holes), so this bounds the host
// disk any snapshot can take. skip holds relative paths left out.
func (m *Manager) checkSnapshotSize(md *meta, skip map[string]bool) error {
	limit, what := md.DiskBytes, "disk quota"
	if limit == 0 {
		limit, what = m.cfg.DefaultDiskBytes, "default disk quota (its own disk is unbounded)"
	}
	size, err := treeSize(md.Upper, "", skip, limit)
	if err != nil {
		return fmt.Errorf("sandbox: snapshot: %w", err)
	}
	if size > limit {
		return bullpen.Errorf(bullpen.ETOOLARGE,
			"snapshot would hold more than %d MiB of files (sparse files count at their apparent size), over the sandbox's %d MiB %s",
			limit>>20, limit>>20, what)
	}
	return nil
}

// treeSize sums the apparent sizes of the regular files and symbolic links
// below dir, stopping early once the sum passes limit.
func treeSize(dir, rel string, skip map[string]bool, limit int64) (int64, error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, n := range names {
		r := filepath.Join(rel, n)
		if skip[r] {
			continue
		}
		var st unix.Stat_t
		p := filepath.Join(dir, n)
		if err := unix.Lstat(p, &st); err != nil {
			return 0, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG, unix.S_IFLNK:
			total += st.Size
		case unix.S_IFDIR:
			sub, err := treeSize(p, r, skip, limit-total)
			if err != nil {
				return 0, err
			}
			total += sub
		}
		if total > limit {
			return total, nil
		}
	}
	return total, nil
}
